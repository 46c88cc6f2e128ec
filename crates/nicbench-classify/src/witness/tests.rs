use nicbench_rules::generate::{generate, RuleSetKind};
use nicbench_rules::ruleset::{self, Syntax};
use nicbench_rules::Rule;

use super::*;
use crate::classifier::ClassifierConfig;

fn rules(text: &str) -> Vec<Rule> {
    ruleset::load(text, "t", Syntax::Testpmd, false)
        .map(|f| f.rules.into_iter().map(|n| n.rule).collect())
        .unwrap_or_else(|e| panic!("{e:?}"))
}

fn run(rules: &[Rule]) -> Vec<Result<Witness, Miss>> {
    let (classifier, ids) = Classifier::with_rules(ClassifierConfig::default(), rules.iter().cloned()).expect("rules");
    witnesses(&classifier, rules, &ids, 7)
}

#[test]
fn test_every_rule_of_a_generated_set_gets_a_frame_that_meets_it_unless_an_earlier_rule_covers_it() {
    for kind in [RuleSetKind::Exact5, RuleSetKind::Acl, RuleSetKind::Fw] {
        let set = generate(kind, 300, if kind == RuleSetKind::Exact5 { 4 } else { 0 }, 3);
        let found = run(&set);
        for (i, w) in found.iter().enumerate() {
            match w {
                Ok(w) => assert!(w.met.contains(&i), "{kind:?} rule {i}: {:?}", w.met),
                // The fw-like set has catch-alls part-way (`eth / ipv4 / end` at priority 78 for
                // this seed): what follows them is dead, and only that may be missed.
                Err(Miss::Shadowed { by }) if kind == RuleSetKind::Fw => {
                    assert!(
                        set[*by].attr.priority < set[i].attr.priority,
                        "{kind:?} rule {i} by {by}"
                    )
                }
                Err(miss) => panic!("{kind:?} rule {i} ({}): {miss}", set[i]),
            }
        }
        let met = found.iter().filter(|w| w.is_ok()).count();
        if kind != RuleSetKind::Fw {
            assert_eq!(met, set.len(), "{kind:?}");
        }
    }
}

#[test]
fn test_each_reason_a_rule_cannot_be_met_is_named() {
    let set = rules(
        "flow create 0 ingress pattern eth / ipv4 src spec 10.0.0.0 src prefix 8 / end actions queue index 0 / end\n\
         flow create 0 priority 1 ingress pattern eth / ipv4 src spec 10.1.0.0 src prefix 16 / end actions queue index 1 / end\n\
         flow create 0 group 5 ingress pattern eth / ipv4 / end actions drop / end\n\
         flow create 0 priority 2 ingress pattern eth / ipv4 / sctp / end actions drop / end\n\
         flow create 0 priority 3 ingress pattern eth / ipv4 dst spec 192.168.0.0 dst prefix 16 / end actions jump group 1 / end\n\
         flow create 0 group 1 ingress pattern eth / ipv4 dst is 10.0.0.1 / end actions drop / end\n\
         flow create 0 priority 4 ingress pattern eth / ipv4 packet_id is 5 / end actions drop / end\n",
    );
    let found = run(&set);
    assert!(found[0].is_ok());
    assert_eq!(found[1].as_ref().err(), Some(&Miss::Shadowed { by: 0 }));
    assert_eq!(found[2].as_ref().err(), Some(&Miss::Unreachable { group: 5 }));
    assert!(matches!(found[3].as_ref().err(), Some(Miss::Header { item }) if item == "SCTP"));
    assert!(found[4].is_ok());
    assert!(matches!(found[5].as_ref().err(), Some(Miss::Conflict { what }) if what.contains("ipv4.dst")));
    assert!(
        matches!(found[6].as_ref().err(), Some(Miss::Fixed { fields }) if fields == &["ipv4.packet_id".to_string()]),
        "{:?}",
        found[6]
    );
}

#[test]
fn test_frames_follow_vlan_vxlan_and_l4_constraints() {
    let set = rules(
        "flow create 0 ingress pattern eth / vlan vid is 42 / ipv6 / tcp dst spec 1000 dst last 1010 / end actions queue index 0 / end\n\
         flow create 0 ingress pattern eth / ipv4 / udp dst is 4789 / vxlan vni is 77 / eth / ipv4 src is 1.2.3.4 / udp / end actions drop / end\n\
         flow create 0 ingress pattern eth / ipv4 proto is 1 / end actions drop / end\n",
    );
    let found = run(&set);
    let spec = found[0].as_ref().map(|w| w.spec).expect("vlan rule met");
    assert_eq!(spec.vlan, VlanTags::Single(42));
    assert!(spec.ip_src.is_ipv6());
    assert!(matches!(spec.l4, L4Spec::Tcp { dst_port, .. } if (1000..=1010).contains(&dst_port)));
    let spec = found[1].as_ref().map(|w| w.spec).expect("vxlan rule met");
    assert_eq!(spec.vxlan.map(|v| v.vni), Some(77));
    assert_eq!(spec.ip_src, IpAddr::V4(Ipv4Addr::new(1, 2, 3, 4)));
    assert!(matches!(
        found[2].as_ref().map(|w| w.spec.l4),
        Ok(L4Spec::IcmpEcho { .. })
    ));
}

use std::net::{IpAddr, Ipv4Addr};

use nicbench_wire::builder::{L4Spec, VlanTags};

#[test]
fn test_targets_meet_the_share_asked_and_no_more_than_the_witnesses_allow() {
    let set = generate(RuleSetKind::Exact5, 200, 2, 1);
    let found = run(&set);
    let n = set.len();
    for share in [0.0, 0.1, 0.5, 1.0] {
        let (targets, met) = pick_targets(&found, share, 3);
        let want = (share * n as f64).ceil() as usize;
        // The last target's path may add its jump rules (two groups: at most two more).
        assert!(
            met >= want && met <= want + 2,
            "share {share}: {met} met of {n}, wanted {want}"
        );
        let mut union: Vec<usize> = targets
            .iter()
            .flat_map(|&t| found[t].as_ref().map(|w| w.met.clone()).unwrap_or_default())
            .collect();
        union.sort_unstable();
        union.dedup();
        assert_eq!(union.len(), met);
    }
    // Rules no frame meets cap the share.
    let set = rules(
        "flow create 0 ingress pattern eth / ipv4 / end actions queue index 0 / end\n\
         flow create 0 priority 1 ingress pattern eth / ipv4 / end actions queue index 1 / end\n",
    );
    let found = run(&set);
    assert_eq!(pick_targets(&found, 1.0, 1), (vec![0], 1));
}
