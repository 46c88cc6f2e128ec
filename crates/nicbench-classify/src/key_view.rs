//! What the burst lookups of the decision tree and the exact tables read of a key: the
//! outer IPv4 5-tuple words (source, destination, L4 word), plus a way to run a rule's full
//! check when the tree's inline check does not cover the whole rule.
//!
//! Two kinds of keys implement it: a full [`PacketKey`] (its words are read in place) and
//! [`Tuple5`], the compact form of a [`FiveTuple`] that the tuple fast path extracts once
//! per packet ([`crate::Reader::lookup_burst_tuples`]): 16 bytes instead of a 216-byte key
//! written per packet, with the L4 word computed once instead of by every reader of it.

use crate::compile::CompiledRule;
use crate::key::{FiveTuple, PacketKey, W_DST_LO, W_L4, W_SRC_LO};

/// A key as the tree and the exact tables read it (see the module doc).
pub(crate) trait BurstKey {
    /// Outer IPv4 source address (the key's `W_SRC_LO` word, low half).
    fn src(&self) -> u32;
    /// Outer IPv4 destination address.
    fn dst(&self) -> u32;
    /// The outer L4 word (ports, protocol, presence bits, TCP flags).
    fn l4(&self) -> u64;
    /// Whether the whole `rule` matches this key (the slow check, for rules the tree's
    /// inline check does not cover entirely).
    fn full_match(&self, rule: &CompiledRule) -> bool;
}

impl BurstKey for PacketKey {
    #[inline(always)]
    fn src(&self) -> u32 {
        self.words[W_SRC_LO] as u32
    }
    #[inline(always)]
    fn dst(&self) -> u32 {
        self.words[W_DST_LO] as u32
    }
    #[inline(always)]
    fn l4(&self) -> u64 {
        self.words[W_L4]
    }
    #[inline(always)]
    fn full_match(&self, rule: &CompiledRule) -> bool {
        rule.matches(self)
    }
}

impl<K: BurstKey> BurstKey for &K {
    #[inline(always)]
    fn src(&self) -> u32 {
        (**self).src()
    }
    #[inline(always)]
    fn dst(&self) -> u32 {
        (**self).dst()
    }
    #[inline(always)]
    fn l4(&self) -> u64 {
        (**self).l4()
    }
    #[inline(always)]
    fn full_match(&self, rule: &CompiledRule) -> bool {
        (**self).full_match(rule)
    }
}

/// The key of an IPv4 5-tuple packet ([`FiveTuple::key`]) in 16 bytes: the only words of
/// it that are not constant. A full check (rare: ClassBench-style rules are covered by the
/// tree's inline check) rebuilds the whole key.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tuple5 {
    pub src: u32,
    pub dst: u32,
    pub l4: u64,
}

impl Tuple5 {
    #[inline(always)]
    pub fn of(t: &FiveTuple) -> Tuple5 {
        Tuple5 {
            src: t.src,
            dst: t.dst,
            l4: t.l4_word(),
        }
    }
}

impl BurstKey for Tuple5 {
    #[inline(always)]
    fn src(&self) -> u32 {
        self.src
    }
    #[inline(always)]
    fn dst(&self) -> u32 {
        self.dst
    }
    #[inline(always)]
    fn l4(&self) -> u64 {
        self.l4
    }
    #[cold]
    fn full_match(&self, rule: &CompiledRule) -> bool {
        let mut key = PacketKey::default();
        crate::key::set_ipv4_words(&mut key.words, self.src, self.dst, self.l4);
        rule.matches(&key)
    }
}
