//! One OpenFlow table's classifier and the un-wildcarding of its lookups, as OVS's
//! lib/classifier.c does it (`classifier_lookup__`, `find_match_wc`, `check_tries`), and the
//! turn of a finished lookup's wildcards into a megaflow ([`to_dp_flow`]).
//!
//! - Rules with the same mask form a subtable; subtables are probed in decreasing order of
//!   their highest rule priority and the probe stops as soon as no remaining subtable can hold
//!   a rule above the best match so far (`max_priority` early exit): skipped subtables
//!   un-wildcard nothing. Subtables of equal `max_priority` are probed in creation order (OVS's
//!   pvector sorts with qsort, so OVS leaves their order unspecified).
//! - **Staged lookup** (`staged_lookup`): a subtable's fields are split into the stages
//!   metadata → L2 → L3 → L4 (struct flow's segments, `flow_segment_u64s`); a stage whose
//!   fields no rule of the subtable has (for this packet's values) ends the probe and only the
//!   stages so far are un-wildcarded. A miss in the last stage un-wildcards the whole mask.
//! - **Prefix tries** (`prefix_tries`, fields `prefix_fields`, OVS's default `nw_dst,nw_src`):
//!   when the stage holding the field is reached and no rule of the classifier has the
//!   subtable's prefix length containing the packet's address, only the address bits the trie
//!   walk needed are un-wildcarded and the subtable is skipped.
//! - **Ports trie** (`ports_trie`): a miss in the final stage of a subtable that matches
//!   `tp_src`/`tp_dst` un-wildcards only the port bits the subtable's ports trie needed,
//!   plus the earlier stages.
//!
//! Invariant: the un-wildcarded mask only grows (`wc |= ...`), as in OVS.

use std::collections::{HashMap, HashSet};

use nicbench_rules::openflow::{DpAction, DpFlow, FieldMatch, OfField};
use serde::{Deserialize, Serialize};

use super::key::{self, Fields, FIELDS};
use super::trie::{cidr_len, prefix_mask, PrefixSet, TrieAnswer};

/// How the classifier un-wildcards; the defaults are OVS 3.1's.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LookupConfig {
    /// Segmented (staged) subtable lookup (OVS: always on; ofproto passes `flow_segment_u64s`).
    pub staged_lookup: bool,
    /// Prefix tries on `prefix_fields` (OVS: on, `Flow_Table:prefixes`).
    pub prefix_tries: bool,
    /// The fields with a prefix trie, checked in this order (OVS default: nw_dst, nw_src).
    #[schemars(with = "Vec<String>")]
    pub prefix_fields: Vec<OfField>,
    /// Per-subtable ports trie for `tp_src`/`tp_dst` (OVS: always on).
    pub ports_trie: bool,
}

impl Default for LookupConfig {
    fn default() -> LookupConfig {
        LookupConfig {
            staged_lookup: true,
            prefix_tries: true,
            prefix_fields: vec![OfField::NwDst, OfField::NwSrc],
            ports_trie: true,
        }
    }
}

/// The lookup stage of a field: struct flow's segments (lib/flow.h `FLOW_SEGMENT_*_ENDS_AT`):
/// metadata up to `dl_dst`, L2 up to `nw_src`, L3 up to `tp_src` (`tcp_flags` lives with L3),
/// L4 after.
pub fn stage_of(field: OfField) -> usize {
    use OfField::*;
    match field {
        RecircId | InPort | TunId | TunSrc | TunDst | CtState | CtZone | CtMark | Metadata => 0,
        DlSrc | DlDst | DlType | VlanTci => 1,
        NwSrc | NwDst | Ipv6Src | Ipv6Dst | NwProto | NwTos | NwTtl | NwFrag | TcpFlags => 2,
        TpSrc | TpDst => 3,
    }
}

fn restrict(mask: &Fields, keep: impl Fn(OfField) -> bool) -> Fields {
    let mut out = Fields::default();
    for f in FIELDS {
        if keep(f) {
            out[f] = mask[f];
        }
    }
    out
}

/// The 32-bit `tp_src << 16 | tp_dst` word the ports trie works on.
fn ports_word(fields: &Fields) -> u128 {
    (fields[OfField::TpSrc] << 16) | fields[OfField::TpDst]
}

/// A rule as the classifier holds it (values already masked).
#[derive(Clone, Debug)]
pub struct ClsRule {
    pub priority: u16,
    pub value: Fields,
    pub mask: Fields,
    /// The caller's index of this rule (its position in its table).
    pub id: usize,
}

#[derive(Debug)]
struct Subtable {
    mask: Fields,
    rules: Vec<usize>,
    max_priority: u16,
    /// Stage masks; the last one is the final stage (`index_maps[n_indices]`).
    stages: Vec<Fields>,
    /// For each non-final stage: the rules' values over the stages so far (`indices[i]`).
    stage_index: Vec<HashSet<Fields>>,
    /// Full masked value → rules (in insertion order).
    by_value: HashMap<Fields, Vec<usize>>,
    /// Prefix length of the mask per configured trie field (0: trie not used).
    trie_plen: Vec<u32>,
    ports_mask_len: u32,
    ports_trie: PrefixSet,
    created: usize,
}

/// One table's classifier.
#[derive(Debug)]
pub struct Classifier {
    config: LookupConfig,
    rules: Vec<ClsRule>,
    subtables: Vec<Subtable>,
    /// Subtable indices in probe order.
    order: Vec<usize>,
    tries: Vec<(OfField, PrefixSet)>,
}

impl Classifier {
    pub fn new(config: &LookupConfig, rules: Vec<ClsRule>) -> Classifier {
        let config = config.clone();
        let tries = if config.prefix_tries {
            config
                .prefix_fields
                .iter()
                .map(|f| (*f, PrefixSet::new(f.bits())))
                .collect()
        } else {
            Vec::new()
        };
        let mut cls = Classifier {
            config,
            rules: Vec::new(),
            subtables: Vec::new(),
            order: Vec::new(),
            tries,
        };
        for rule in rules {
            cls.insert(rule);
        }
        cls.finish();
        cls
    }

    fn insert(&mut self, mut rule: ClsRule) {
        rule.value = rule.value.and(&rule.mask);
        let pos = self.subtables.iter().position(|s| s.mask == rule.mask);
        let st_index = pos.unwrap_or_else(|| {
            let st = self.new_subtable(rule.mask);
            self.subtables.push(st);
            self.subtables.len() - 1
        });
        let idx = self.rules.len();
        let st = &mut self.subtables[st_index];
        st.rules.push(idx);
        st.max_priority = if st.rules.len() == 1 {
            rule.priority
        } else {
            st.max_priority.max(rule.priority)
        };
        let mut so_far = Fields::default();
        for (i, stage) in st.stages.iter().enumerate().take(st.stages.len() - 1) {
            so_far.or_assign(stage);
            st.stage_index[i].insert(rule.value.and(&so_far));
        }
        st.by_value.entry(rule.value).or_default().push(idx);
        if st.ports_mask_len > 0 {
            st.ports_trie.insert(ports_word(&rule.value), st.ports_mask_len);
        }
        for (j, (field, trie)) in self.tries.iter_mut().enumerate() {
            let plen = st.trie_plen[j];
            if plen > 0 {
                trie.insert(rule.value[*field], plen);
            }
        }
        self.rules.push(rule);
    }

    fn new_subtable(&self, mask: Fields) -> Subtable {
        let mut stages = Vec::new();
        if self.config.staged_lookup {
            for s in 0..3 {
                let m = restrict(&mask, |f| stage_of(f) == s);
                if !m.is_zero() {
                    stages.push(m);
                }
            }
            let last = restrict(&mask, |f| stage_of(f) == 3);
            // An empty final stage: the last index becomes the final stage.
            if stages.is_empty() || !last.is_zero() {
                stages.push(last);
            }
        } else {
            stages.push(mask);
        }
        let ports_mask = ports_word(&mask) as u32;
        let ports_mask_len = if self.config.ports_trie && ports_mask != 0 {
            32 - ports_mask.trailing_zeros()
        } else {
            0
        };
        Subtable {
            mask,
            rules: Vec::new(),
            max_priority: 0,
            stage_index: vec![HashSet::new(); stages.len() - 1],
            stages,
            by_value: HashMap::new(),
            trie_plen: self.tries.iter().map(|(f, _)| cidr_len(f.bits(), mask[*f])).collect(),
            ports_mask_len,
            ports_trie: PrefixSet::new(32),
            created: self.subtables.len(),
        }
    }

    fn finish(&mut self) {
        let mut order: Vec<usize> = (0..self.subtables.len()).collect();
        order.sort_by_key(|i| {
            (
                std::cmp::Reverse(self.subtables[*i].max_priority),
                self.subtables[*i].created,
            )
        });
        self.order = order;
    }

    pub fn rule(&self, idx: usize) -> &ClsRule {
        &self.rules[idx]
    }

    /// The highest-priority rule matching `key` (its index in this classifier), un-wildcarding
    /// in `wc` every bit the lookup consulted.
    pub fn lookup(&self, key: &Fields, wc: &mut Fields) -> Option<usize> {
        let mut tries: Vec<Option<TrieAnswer>> = vec![None; self.tries.len()];
        let mut best: Option<usize> = None;
        for &si in &self.order {
            let st = &self.subtables[si];
            if best.is_some_and(|b| st.max_priority <= self.rules[b].priority) {
                break;
            }
            if let Some(r) = self.find_match_wc(st, key, &mut tries, wc) {
                if best.is_none_or(|b| self.rules[r].priority > self.rules[b].priority) {
                    best = Some(r);
                }
            }
        }
        best
    }

    fn find_match_wc(
        &self,
        st: &Subtable,
        key: &Fields,
        tries: &mut [Option<TrieAnswer>],
        wc: &mut Fields,
    ) -> Option<usize> {
        let mut so_far = Fields::default();
        let last = st.stages.len() - 1;
        for i in 0..last {
            if self.check_tries(st, &st.stages[i], key, tries, wc) {
                wc.or_assign(&so_far);
                return None;
            }
            so_far.or_assign(&st.stages[i]);
            if !st.stage_index[i].contains(&key.and(&so_far)) {
                wc.or_assign(&so_far);
                return None;
            }
        }
        if self.check_tries(st, &st.stages[last], key, tries, wc) {
            wc.or_assign(&so_far);
            return None;
        }
        let found = st.by_value.get(&key.and(&st.mask)).and_then(|rs| {
            rs.iter()
                .copied()
                .max_by_key(|r| (self.rules[*r].priority, std::cmp::Reverse(*r)))
        });
        if found.is_none() && st.ports_mask_len > 0 {
            let ports_mask = ports_word(&st.mask);
            let needed = st.ports_trie.lookup(ports_word(key) & ports_mask).maskbits;
            let bits = ports_mask & prefix_mask(32, needed);
            wc[OfField::TpSrc] |= bits >> 16;
            wc[OfField::TpDst] |= bits & 0xffff;
            wc.or_assign(&so_far);
            return None;
        }
        wc.or_assign(&st.mask);
        found
    }

    /// `check_tries`: true when a trie shows the subtable cannot match (bits un-wildcarded).
    fn check_tries(
        &self,
        st: &Subtable,
        stage: &Fields,
        key: &Fields,
        answers: &mut [Option<TrieAnswer>],
        wc: &mut Fields,
    ) -> bool {
        for (j, (field, trie)) in self.tries.iter().enumerate() {
            let plen = st.trie_plen[j];
            if plen == 0 || stage[*field] == 0 {
                continue;
            }
            let answer = *answers[j].get_or_insert_with(|| {
                // The trie fields' prerequisite is the IP ethertype (always un-wildcarded).
                let ok = match field {
                    OfField::NwSrc | OfField::NwDst => key[OfField::DlType] == key::ETH_TYPE_IP,
                    OfField::Ipv6Src | OfField::Ipv6Dst => key[OfField::DlType] == key::ETH_TYPE_IPV6,
                    _ => true,
                };
                if ok {
                    trie.lookup(key[*field])
                } else {
                    TrieAnswer {
                        maskbits: 0,
                        match_plens: u128::MAX,
                    }
                }
            });
            if answer.match_plens & (1u128 << (plen - 1)) == 0 {
                let bits = prefix_mask(field.bits(), answer.maskbits);
                if answer.maskbits <= plen {
                    wc[*field] |= bits;
                    return true;
                }
                if wc[*field] & bits == bits {
                    return true;
                }
            }
        }
        false
    }
}

/// What `xlate_wc_finish` (ofproto-dpif-xlate.c) and the datapath key layout leave of the
/// wildcards: no pipeline metadata; ICMP type/code are 8 bits; any VLAN TCI bit brings the CFI
/// bit (always matched); later fragments have no ports; fields of headers the packet does not have are dropped
/// (the datapath key has no attribute for them; `dl_type` is always exact, so nothing widens).
pub fn finish_wildcards(key: &Fields, wc: &Fields) -> Fields {
    use OfField::*;
    let mut m = *wc;
    m[Metadata] = 0;
    if key::is_icmp_any(key) {
        m[TpSrc] &= 0xff;
        m[TpDst] &= 0xff;
    }
    // The CFI/present bit is always matched: in the datapath the outer eth_type (0x8100 or not)
    // is exact, so no megaflow covers tagged and untagged packets (xlate_wc_finish also adds
    // CFI to any consulted TCI bit).
    m[VlanTci] |= key::VLAN_CFI;
    if key[NwFrag] & key::NW_FRAG_LATER != 0 {
        m[TpSrc] = 0;
        m[TpDst] = 0;
    }
    let v4 = key[DlType] == key::ETH_TYPE_IP;
    let v6 = key[DlType] == key::ETH_TYPE_IPV6;
    for f in [NwSrc, NwDst] {
        if !v4 {
            m[f] = 0;
        }
    }
    for f in [Ipv6Src, Ipv6Dst] {
        if !v6 {
            m[f] = 0;
        }
    }
    if !v4 && !v6 {
        for f in [NwProto, NwTos, NwTtl, NwFrag] {
            m[f] = 0;
        }
    }
    if !(key::has_ports(key) || key::is_icmp_any(key)) {
        m[TpSrc] = 0;
        m[TpDst] = 0;
    }
    if !(key::is_ip_any(key) && key[NwProto] == key::IPPROTO_TCP) {
        m[TcpFlags] = 0;
    }
    // A packet from a non-tunnel port has no tunnel key to match on.
    if key[TunSrc] == 0 && key[TunDst] == 0 {
        for f in [TunId, TunSrc, TunDst] {
            m[f] = 0;
        }
    }
    // A datapath L4 key sits under its IP protocol (`ipv4(proto=6),tcp(dst=..)`). OVS's staged
    // lookup always folds nw_proto with the ports (they share a subtable's L4 stage); only the
    // non-OVS `staged_lookup = false` can leave ports without it, and the flow would not be
    // expressible: keep nw_proto exact there.
    if m[TpSrc] != 0 || m[TpDst] != 0 {
        m[NwProto] = OfField::NwProto.full_mask();
    }
    m
}

/// The megaflow of a packet: keys = `key & mask` for every field in `mask` (the in_port as the
/// datapath port `in_dp_port`), and the datapath actions.
pub fn to_dp_flow(key: &Fields, mask: &Fields, in_dp_port: u32, actions: Vec<DpAction>) -> DpFlow {
    let keys = FIELDS
        .iter()
        .filter(|f| mask[**f] != 0)
        // An untagged packet's key has no VLAN attribute: "no tag" is its exact eth_type.
        .filter(|f| **f != OfField::VlanTci || key[OfField::VlanTci] & key::VLAN_CFI != 0)
        .map(|&field| {
            let value = if field == OfField::InPort {
                u128::from(in_dp_port)
            } else {
                key[field] & mask[field]
            };
            FieldMatch {
                field,
                value,
                mask: mask[field],
            }
        })
        .collect();
    DpFlow {
        keys,
        actions,
        ..DpFlow::default()
    }
}

#[cfg(test)]
mod tests {
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
}
