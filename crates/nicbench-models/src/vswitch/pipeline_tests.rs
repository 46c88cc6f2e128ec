//! Hand-worked pipeline walks.

use super::*;
use nicbench_rules::openflow::{FieldMatch, OfMatch};
use OfField::*;

pub(crate) fn fm(field: OfField, value: u128, mask: u128) -> FieldMatch {
    FieldMatch { field, value, mask }
}

pub(crate) fn of_rule(
    table: u8,
    priority: u16,
    in_port: Option<&str>,
    fields: Vec<FieldMatch>,
    actions: Vec<OfAction>,
) -> OfRule {
    let mut fields = fields;
    fields.sort_by_key(|f| f.field);
    OfRule {
        table,
        priority,
        cookie: 0,
        idle_timeout_s: 0,
        hard_timeout_s: 0,
        matches: OfMatch {
            in_port: in_port.map(|p| PortRef::Name(p.into())),
            fields,
        },
        actions,
    }
}

pub(crate) fn out(name: &str) -> OfAction {
    OfAction::Output {
        port: PortRef::Name(name.into()),
    }
}

/// The dummy bridge of the OVS oracle: br0 LOCAL (dp 1), p0 (of 1, dp 2), p1 (of 2, dp 3).
pub(crate) fn ports() -> Vec<PortInfo> {
    vec![
        PortInfo {
            name: "br0".into(),
            ofport: OFPP_LOCAL,
            dp_port: 1,
            tunnel: None,
        },
        PortInfo {
            name: "p0".into(),
            ofport: 1,
            dp_port: 2,
            tunnel: None,
        },
        PortInfo {
            name: "p1".into(),
            ofport: 2,
            dp_port: 3,
            tunnel: None,
        },
    ]
}

fn udp_key(src: u32, dst: u32, dport: u16) -> Fields {
    let mut k = Fields::default();
    k[InPort] = 1;
    k[DlType] = 0x0800;
    k[NwSrc] = u128::from(src);
    k[NwDst] = u128::from(dst);
    k[NwProto] = 17;
    k[TpDst] = u128::from(dport);
    k
}

#[test]
fn test_table_miss_is_drop_and_still_unwildcards_the_always_fields() {
    let mut b = Bridge::new(&[], &ports(), &LookupConfig::default()).expect("bridge");
    let x = b.xlate(&udp_key(1, 2, 3));
    assert_eq!(x.actions, vec![DpAction::Drop]);
    let wc: Vec<_> = x.wc.nonzero().collect();
    assert_eq!(
        wc,
        vec![
            (RecircId, 0xffff_ffff),
            (InPort, 0xffff_ffff),
            (DlType, 0xffff),
            (NwFrag, 3)
        ]
    );
}

#[test]
fn test_resubmit_and_set_field_change_the_next_lookup() {
    // table 0: udp → set nw_dst 10.9.9.9, resubmit(,1); table 1: nw_dst=10.9.9.9 → p1.
    let rules = vec![
        of_rule(
            0,
            100,
            Some("p0"),
            vec![fm(DlType, 0x0800, 0xffff), fm(NwProto, 17, 0xff)],
            vec![
                OfAction::SetField {
                    field: NwDst,
                    value: 0x0a09_0909,
                    mask: 0xffff_ffff,
                },
                OfAction::Resubmit {
                    port: None,
                    table: Some(1),
                },
            ],
        ),
        of_rule(
            1,
            100,
            None,
            vec![fm(DlType, 0x0800, 0xffff), fm(NwDst, 0x0a09_0909, 0xffff_ffff)],
            vec![out("p1")],
        ),
    ];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let x = b.xlate(&udp_key(0x0a00_0001, 0x0a00_0002, 53));
    assert_eq!(x.rules, vec![(0, 0), (1, 1)]);
    assert_eq!(
        x.actions,
        vec![
            DpAction::Set {
                field: NwDst,
                value: 0x0a09_0909,
                mask: 0xffff_ffff
            },
            DpAction::Output { port: 3 }
        ]
    );
    assert_eq!(x.wc[NwDst], 0xffff_ffff, "set_field un-wildcards what it sets");
    assert_eq!(x.wc[NwProto], 0xff);
}

#[test]
fn test_goto_table_and_output_to_in_port_is_skipped() {
    let rules = vec![
        of_rule(0, 1, None, vec![], vec![OfAction::GotoTable { table: 3 }]),
        of_rule(3, 1, None, vec![], vec![out("p0"), out("p1")]),
    ];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let x = b.xlate(&udp_key(1, 2, 3));
    assert_eq!(x.actions, vec![DpAction::Output { port: 3 }], "p0 is the ingress port");
}

#[test]
fn test_vlan_push_pop_and_mod_vid() {
    let rules = vec![of_rule(
        0,
        1,
        None,
        vec![],
        vec![
            OfAction::PushVlan { tpid: 0x8100 },
            OfAction::SetField {
                field: VlanTci,
                value: 0x1000 | 20,
                mask: 0x1fff,
            },
            out("p1"),
        ],
    )];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let x = b.xlate(&udp_key(1, 2, 3));
    assert_eq!(
        x.actions,
        vec![
            DpAction::PushVlan {
                tpid: 0x8100,
                tci: 0x1000 | 20
            },
            DpAction::Output { port: 3 }
        ]
    );
    let rules = vec![of_rule(0, 1, None, vec![], vec![OfAction::PopVlan, out("p1")])];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let mut tagged = udp_key(1, 2, 3);
    tagged[VlanTci] = 0x1000 | 10;
    let x = b.xlate(&tagged);
    assert_eq!(x.actions, vec![DpAction::PopVlan, DpAction::Output { port: 3 }]);
    assert_eq!(x.wc[VlanTci], 0xffff, "popping a tag needs the whole TCI");
}

#[test]
fn test_unknown_port_name_is_an_error_naming_the_rule() {
    let rules = vec![of_rule(0, 1, None, vec![], vec![out("nope")])];
    let err = Bridge::new(&rules, &ports(), &LookupConfig::default())
        .err()
        .expect("error")
        .to_string();
    assert!(
        err.contains("rule 0") && err.contains("'nope'") && err.contains("p0"),
        "{err}"
    );
}

#[test]
fn test_normal_floods_then_learns() {
    let rules = vec![of_rule(0, 0, None, vec![], vec![OfAction::Normal])];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let mut a_to_b = udp_key(1, 2, 3);
    a_to_b[DlSrc] = 0x02_00_00_00_00_0a;
    a_to_b[DlDst] = 0x02_00_00_00_00_0b;
    let x = b.xlate(&a_to_b);
    assert_eq!(
        x.actions,
        vec![DpAction::Output { port: 1 }, DpAction::Output { port: 3 }],
        "flood: LOCAL and p1"
    );
    let mut b_to_a = a_to_b;
    b_to_a[InPort] = 2;
    b_to_a[DlSrc] = a_to_b[DlDst];
    b_to_a[DlDst] = a_to_b[DlSrc];
    let x = b.xlate(&b_to_a);
    assert_eq!(x.actions, vec![DpAction::Output { port: 2 }], "a was learned on p0");
    assert_eq!(x.wc[VlanTci], 0x1fff);
}

#[test]
fn test_same_match_and_priority_replaces_the_earlier_rule() {
    let m = || vec![fm(DlType, 0x0800, 0xffff)];
    let rules = vec![
        of_rule(0, 5, None, m(), vec![OfAction::Drop]),
        of_rule(0, 5, None, m(), vec![out("p1")]),
    ];
    let mut b = Bridge::new(&rules, &ports(), &LookupConfig::default()).expect("bridge");
    let x = b.xlate(&udp_key(1, 2, 3));
    assert_eq!((x.rules, x.actions), (vec![(0, 1)], vec![DpAction::Output { port: 3 }]));
}
