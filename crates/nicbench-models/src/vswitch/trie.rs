//! The answer of OVS's prefix tries (lib/classifier.c `trie_lookup_value`) for one value,
//! computed from the set of prefixes the trie holds, kept as hash sets of trie nodes per depth
//! (no path-compressed tree is built: the classifier's rule set is fixed for a run).
//!
//! `trie_lookup_value` walks the path-compressed binary trie along the value and returns how
//! many leading bits decided the answer ("maskbits"): the depth `d` it could follow, plus one
//! when some prefix continues below `d` (the bit where the value left that branch had to be
//! looked at), capped at the field width; and, as a bit set, the prefix lengths of the rules
//! whose prefix contains the value ("match_plens"). Both follow from the prefix set alone:
//! `d = max over prefixes p of min(len(p), common_prefix(value, p))`.

use std::collections::{BTreeMap, HashMap, HashSet};

/// The prefixes of one field (values right-aligned in `bits`, cleared below their length), kept
/// as the trie's nodes by depth, so a lookup costs at most `bits + 1` hash probes.
#[derive(Clone, Debug, Default)]
pub struct PrefixSet {
    bits: u32,
    /// Per depth `l`: the first `l` bits of every prefix at least `l` long → some prefix is longer.
    nodes: Vec<HashMap<u128, bool>>,
    /// Per prefix length: the prefixes of that length.
    exact: BTreeMap<u32, HashSet<u128>>,
}

/// A trie lookup's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrieAnswer {
    /// Leading bits of the field the lookup needed \[bits\].
    pub maskbits: u32,
    /// Bit `len - 1` set for every prefix length `len` with a rule containing the value.
    pub match_plens: u128,
}

/// The mask of the first `len` bits of a `bits`-wide field.
pub fn prefix_mask(bits: u32, len: u32) -> u128 {
    let full = if bits == 128 { u128::MAX } else { (1u128 << bits) - 1 };
    if len == 0 {
        0
    } else if len >= bits {
        full
    } else {
        full & !(full >> len)
    }
}

/// The prefix length of a CIDR mask in a `bits`-wide field; 0 when the mask is empty or not
/// contiguous (`minimask_get_prefix_len`: such a subtable does not use the trie).
pub fn cidr_len(bits: u32, mask: u128) -> u32 {
    let len = (mask << (128 - bits)).leading_ones();
    if prefix_mask(bits, len) == mask {
        len
    } else {
        0
    }
}

impl PrefixSet {
    pub fn new(bits: u32) -> PrefixSet {
        PrefixSet {
            bits,
            nodes: vec![HashMap::new(); bits as usize + 1],
            exact: BTreeMap::new(),
        }
    }

    /// Adds one rule's prefix (`len` > 0; duplicates count once, as a trie node with n_rules > 1).
    pub fn insert(&mut self, value: u128, len: u32) {
        if len == 0 {
            return;
        }
        let len = len.min(self.bits);
        for l in 0..=len {
            let longer = self.nodes[l as usize]
                .entry(value & prefix_mask(self.bits, l))
                .or_insert(false);
            *longer |= len > l;
        }
        self.exact
            .entry(len)
            .or_default()
            .insert(value & prefix_mask(self.bits, len));
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty()
    }

    /// `trie_lookup_value` for `value`.
    pub fn lookup(&self, value: u128) -> TrieAnswer {
        let top = |l: u32| value & prefix_mask(self.bits, l);
        // The depth the walk follows: node sets shrink with depth, so the first miss ends it.
        let mut depth = None;
        for l in 0..=self.bits {
            if self.nodes[l as usize].contains_key(&top(l)) {
                depth = Some(l);
            } else {
                break;
            }
        }
        let mut match_plens = 0u128;
        let Some(depth) = depth else {
            return TrieAnswer {
                maskbits: 0,
                match_plens,
            };
        };
        for (len, set) in self.exact.range(..=depth) {
            if set.contains(&top(*len)) {
                match_plens |= 1u128 << (len - 1);
            }
        }
        if depth >= self.bits {
            return TrieAnswer {
                maskbits: self.bits,
                match_plens,
            };
        }
        let continues = self.nodes[depth as usize].get(&top(depth)).copied().unwrap_or(false);
        TrieAnswer {
            maskbits: depth + u32::from(continues),
            match_plens,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(a: u8, b: u8, c: u8, d: u8) -> u128 {
        u128::from(u32::from_be_bytes([a, b, c, d]))
    }

    #[test]
    fn test_prefix_mask_and_cidr_len() {
        assert_eq!(prefix_mask(32, 8), 0xff00_0000);
        assert_eq!(prefix_mask(32, 0), 0);
        assert_eq!(prefix_mask(32, 32), 0xffff_ffff);
        assert_eq!(prefix_mask(128, 1), 1u128 << 127);
        assert_eq!(cidr_len(32, 0xffff_0000), 16);
        assert_eq!(cidr_len(32, 0xff00_ff00), 0, "not contiguous");
        assert_eq!(cidr_len(32, 0), 0);
        assert_eq!(cidr_len(16, 0xffff), 16);
    }

    #[test]
    fn test_lookup_by_hand() {
        // Rules 10.0.0.0/8 and 10.1.0.0/16.
        let mut t = PrefixSet::new(32);
        t.insert(ip(10, 0, 0, 0), 8);
        t.insert(ip(10, 1, 0, 0), 16);
        // 10.1.2.3 follows both prefixes to depth 16, the 10.1/16 node is a leaf: 16 bits.
        let a = t.lookup(ip(10, 1, 2, 3));
        assert_eq!(
            a,
            TrieAnswer {
                maskbits: 16,
                match_plens: (1 << 7) | (1 << 15)
            }
        );
        // 10.2.0.0 = 00001010.00000010: leaves the /16 branch at bit 14 (10.1 = ...00000001):
        // common 14 bits with 10.1, so depth max(8, min(16,14)) = 14, the /16 continues: 15 bits.
        let b = t.lookup(ip(10, 2, 0, 0));
        assert_eq!(
            b,
            TrieAnswer {
                maskbits: 15,
                match_plens: 1 << 7
            }
        );
        // 11.0.0.0 differs from 10/8 at bit 7 (00001011 vs 00001010): 7 common, +1 = 8 bits.
        let c = t.lookup(ip(11, 0, 0, 0));
        assert_eq!(
            c,
            TrieAnswer {
                maskbits: 8,
                match_plens: 0
            }
        );
        // 192.168.0.1 differs at bit 0: 1 bit decides.
        assert_eq!(t.lookup(ip(192, 168, 0, 1)).maskbits, 1);
        // An empty trie needs no bits.
        assert_eq!(
            PrefixSet::new(32).lookup(ip(1, 2, 3, 4)),
            TrieAnswer {
                maskbits: 0,
                match_plens: 0
            }
        );
    }

    #[test]
    fn test_full_width_match_stops_at_width() {
        let mut t = PrefixSet::new(32);
        t.insert(ip(10, 0, 0, 5), 32);
        assert_eq!(
            t.lookup(ip(10, 0, 0, 5)),
            TrieAnswer {
                maskbits: 32,
                match_plens: 1 << 31
            }
        );
        // 10.0.0.4 differs in the last bit: all 32 bits were needed.
        assert_eq!(t.lookup(ip(10, 0, 0, 4)).maskbits, 32);
    }

    /// The definition (max over prefixes of min(len, common bits), +1 if a prefix continues) by
    /// brute force, against the node sets, on random prefixes and values.
    #[test]
    fn test_node_sets_agree_with_the_definition() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..200 {
            let mut t = PrefixSet::new(32);
            let mut all = Vec::new();
            for _ in 0..rng.random_range(0..12) {
                let len = rng.random_range(1..=32u32);
                let v = u128::from(rng.random::<u32>() & 0xf0f0_ffff) & prefix_mask(32, len);
                t.insert(v, len);
                all.push((v, len));
            }
            for _ in 0..20 {
                let value = u128::from(rng.random::<u32>() & 0xf0f0_ffff);
                let common = |p: u128| ((value ^ p) << 96).leading_zeros().min(32);
                let depth = all.iter().map(|&(p, len)| common(p).min(len)).max();
                let want = match depth {
                    None => 0,
                    Some(32) => 32,
                    Some(d) => d + u32::from(all.iter().any(|&(p, len)| len > d && common(p) >= d)),
                };
                let plens = all
                    .iter()
                    .filter(|&&(p, len)| common(p) >= len)
                    .fold(0u128, |acc, &(_, len)| acc | 1u128 << (len - 1));
                assert_eq!(
                    t.lookup(value),
                    TrieAnswer {
                        maskbits: want,
                        match_plens: plens
                    },
                    "{all:?} {value:#x}"
                );
            }
        }
    }
}
