//! Hand-worked lookups: which bits each refinement un-wildcards.

use super::*;
use nicbench_rules::openflow::OfField::*;

fn rule(id: usize, priority: u16, fields: &[(OfField, u128, u128)]) -> ClsRule {
    let mut value = Fields::default();
    let mut mask = Fields::default();
    for &(f, v, m) in fields {
        value[f] = v & m;
        mask[f] = m;
    }
    ClsRule {
        priority,
        value,
        mask,
        id,
    }
}

fn key(fields: &[(OfField, u128)]) -> Fields {
    let mut k = Fields::default();
    for &(f, v) in fields {
        k[f] = v;
    }
    k
}

fn cfg(staged: bool, tries: bool, ports: bool) -> LookupConfig {
    LookupConfig {
        staged_lookup: staged,
        prefix_tries: tries,
        ports_trie: ports,
        ..LookupConfig::default()
    }
}

fn nonzero(wc: &Fields) -> Vec<(OfField, u128)> {
    wc.nonzero().collect()
}

const IP: u128 = 0x0800;

fn tcp80() -> Vec<ClsRule> {
    vec![rule(
        0,
        100,
        &[(DlType, IP, 0xffff), (NwProto, 6, 0xff), (TpDst, 80, 0xffff)],
    )]
}

#[test]
fn test_staged_lookup_miss_in_l3_unwildcards_l2_and_l3_only() {
    let cls = Classifier::new(&cfg(true, true, true), tcp80());
    let udp = key(&[(DlType, IP), (NwProto, 17), (TpDst, 53)]);
    let mut wc = Fields::default();
    assert_eq!(cls.lookup(&udp, &mut wc), None);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwProto, 0xff)]);
}

#[test]
fn test_final_stage_miss_uses_the_ports_trie() {
    // 53 and 80 share the 25 leading bits of the 32-bit ports word (tp_src = 0, 80 = 0b1010000
    // has bit 6 set, 53 < 64 does not): 26 bits decide, i.e. tp_dst mask 0xffc0.
    let cls = Classifier::new(&cfg(true, true, true), tcp80());
    let tcp53 = key(&[(DlType, IP), (NwProto, 6), (TpDst, 53)]);
    let mut wc = Fields::default();
    assert_eq!(cls.lookup(&tcp53, &mut wc), None);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwProto, 0xff), (TpDst, 0xffc0)]);

    // Without the ports trie the final-stage miss folds the whole mask.
    let cls = Classifier::new(&cfg(true, true, false), tcp80());
    let mut wc = Fields::default();
    cls.lookup(&tcp53, &mut wc);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwProto, 0xff), (TpDst, 0xffff)]);
}

#[test]
fn test_without_staging_a_miss_is_only_the_ports_trie_or_the_whole_mask() {
    let udp = key(&[(DlType, IP), (NwProto, 17), (TpDst, 53)]);
    // One stage, no earlier stages to fold: only the port bits the trie needed.
    let cls = Classifier::new(&cfg(false, true, true), tcp80());
    let mut wc = Fields::default();
    cls.lookup(&udp, &mut wc);
    assert_eq!(nonzero(&wc), vec![(TpDst, 0xffc0)]);
    let cls = Classifier::new(&cfg(false, true, false), tcp80());
    let mut wc = Fields::default();
    cls.lookup(&udp, &mut wc);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwProto, 0xff), (TpDst, 0xffff)]);
}

#[test]
fn test_prefix_trie_unwildcards_only_the_deciding_bits() {
    let rules = vec![rule(0, 10, &[(DlType, IP, 0xffff), (NwSrc, 0x0a00_0000, 0xff00_0000)])];
    let k = key(&[(DlType, IP), (NwSrc, 0xc0a8_0001)]); // 192.168.0.1: the first bit decides
    let cls = Classifier::new(&cfg(true, true, true), rules.clone());
    let mut wc = Fields::default();
    assert_eq!(cls.lookup(&k, &mut wc), None);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwSrc, 0x8000_0000)]);
    let cls = Classifier::new(&cfg(true, false, true), rules);
    let mut wc = Fields::default();
    cls.lookup(&k, &mut wc);
    assert_eq!(nonzero(&wc), vec![(DlType, 0xffff), (NwSrc, 0xff00_0000)]);
}

#[test]
fn test_a_match_stops_the_probe_of_lower_subtables() {
    let rules = vec![
        rule(0, 50, &[(DlType, IP, 0xffff), (NwProto, 6, 0xff), (TpDst, 80, 0xffff)]),
        rule(1, 100, &[(DlType, IP, 0xffff), (NwSrc, 0x0a00_0000, 0xff00_0000)]),
    ];
    let cls = Classifier::new(&LookupConfig::default(), rules);
    let k = key(&[(DlType, IP), (NwSrc, 0x0a01_0101), (NwProto, 6), (TpDst, 80)]);
    let mut wc = Fields::default();
    let hit = cls.lookup(&k, &mut wc).map(|r| cls.rule(r).id);
    assert_eq!(hit, Some(1));
    assert_eq!(
        nonzero(&wc),
        vec![(DlType, 0xffff), (NwSrc, 0xff00_0000)],
        "the priority-50 subtable was never probed"
    );
    // A packet outside 10/8 probes both subtables and matches the lower one.
    let k = key(&[(DlType, IP), (NwSrc, 0x0b01_0101), (NwProto, 6), (TpDst, 80)]);
    let mut wc = Fields::default();
    assert_eq!(cls.lookup(&k, &mut wc).map(|r| cls.rule(r).id), Some(0));
    // 11.x differs from 10/8 in bit 7: 8 bits of nw_src; the tcp subtable matched in full.
    assert_eq!(
        nonzero(&wc),
        vec![(DlType, 0xffff), (NwSrc, 0xff00_0000), (NwProto, 0xff), (TpDst, 0xffff)]
    );
}

#[test]
fn test_higher_priority_wins_in_one_subtable_and_across() {
    let rules = vec![
        rule(0, 10, &[(DlType, IP, 0xffff)]),
        rule(1, 20, &[(DlType, IP, 0xffff), (NwProto, 17, 0xff)]),
    ];
    let cls = Classifier::new(&LookupConfig::default(), rules);
    let mut wc = Fields::default();
    assert_eq!(
        cls.lookup(&key(&[(DlType, IP), (NwProto, 17)]), &mut wc)
            .map(|r| cls.rule(r).id),
        Some(1)
    );
    let mut wc = Fields::default();
    assert_eq!(
        cls.lookup(&key(&[(DlType, IP), (NwProto, 6)]), &mut wc)
            .map(|r| cls.rule(r).id),
        Some(0)
    );
}

#[test]
fn test_finish_wildcards_drops_absent_layers_and_adds_cfi() {
    let k = key(&[(DlType, 0x0806)]); // ARP
    let mut wc = Fields::default();
    wc[DlType] = 0xffff;
    wc[NwSrc] = 0xffff_ffff;
    wc[TpDst] = 0xffff;
    wc[VlanTci] = 0x0fff;
    let m = finish_wildcards(&k, &wc);
    assert_eq!(nonzero(&m), vec![(DlType, 0xffff), (VlanTci, 0x1fff)]);
    // Nothing consulted the TCI: still the CFI bit (tagged and untagged never share a megaflow).
    let m = finish_wildcards(&k, &Fields::default());
    assert_eq!(nonzero(&m), vec![(VlanTci, 0x1000)]);
}
