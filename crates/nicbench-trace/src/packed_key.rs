//! [`FlowSet`]: the distinct flow keys of a trace, as compact words, for per-packet inserts.
//!
//! Hashing a `FlowKey` through its derived `Hash` feeds the hasher every enum tag, octet
//! array and `Option` one by one (~60 instructions a packet), and a set of them takes ~50 B
//! an entry, more than a core's L2 cache at 16K flows. The usual key (IPv4, no VXLAN) packs
//! one-to-one into 16 bytes ([`pack_v4`]); any other key into 48 ([`PackedKey`]). Both
//! packings are one-to-one and the two kinds of keys never meet (tested), so the set has
//! exactly as many members as a set of the keys would.

use std::hash::{Hash, Hasher};
use std::net::IpAddr;

use ahash::AHashSet;
use nicbench_wire::FlowKey;

/// A set of flow keys (see the module doc).
#[derive(Debug, Default)]
pub struct FlowSet {
    v4: AHashSet<u128>,
    other: AHashSet<PackedKey>,
}

impl FlowSet {
    /// Adds `key`; true if it was not there yet.
    #[inline]
    pub fn insert(&mut self, key: &FlowKey) -> bool {
        match pack_v4(key) {
            Some(word) => self.v4.insert(word),
            None => self.other.insert(PackedKey::new(key)),
        }
    }

    pub fn len(&self) -> usize {
        self.v4.len() + self.other.len()
    }
}

/// An IPv4 key without VNI in 113 bits: src (32) | dst (32) | src port (16) | dst port (16)
/// | proto (8) | VLAN present (1) | VLAN id (12 bits, as parsed: a VLAN id never has more).
/// `None` for anything else, including a VLAN id over 12 bits (only a hand-built key has one).
#[inline]
pub fn pack_v4(key: &FlowKey) -> Option<u128> {
    let (IpAddr::V4(src), IpAddr::V4(dst)) = (&key.src, &key.dst) else {
        return None;
    };
    if key.vni.is_some() {
        return None;
    }
    let vlan = match key.vlan {
        None => 0u128,
        Some(vid) if vid < 1 << 12 => (1 << 12) | u128::from(vid),
        Some(_) => return None,
    };
    Some(
        u128::from(u32::from(*src))
            | (u128::from(u32::from(*dst)) << 32)
            | (u128::from(key.src_port) << 64)
            | (u128::from(key.dst_port) << 80)
            | (u128::from(key.proto) << 96)
            | (vlan << 104),
    )
}

/// A [`FlowKey`] packed one-to-one: addresses as 128-bit words (IPv4 in the low 32 bits,
/// the family in `meta`), the rest bit-packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedKey {
    src: u128,
    dst: u128,
    /// proto (8 bits) | src_port (16) | dst_port (16) | vlan present (1) | vlan id (16)
    /// | IPv6 (1) at bit 57.
    ports: u64,
    /// vni present (1) | vni (32, so no value is lost).
    vni: u64,
}

const VLAN_PRESENT_BIT: u32 = 40;
const VLAN_SHIFT: u32 = 41;
const IPV6_BIT: u32 = 57;

fn addr_word(addr: IpAddr) -> (u128, bool) {
    match addr {
        IpAddr::V4(a) => (u128::from(u32::from(a)), false),
        IpAddr::V6(a) => (u128::from(a), true),
    }
}

impl PackedKey {
    #[inline]
    pub fn new(key: &FlowKey) -> PackedKey {
        let (src, src_v6) = addr_word(key.src);
        let (dst, dst_v6) = addr_word(key.dst);
        let vlan = key
            .vlan
            .map_or(0, |vid| (1u64 << VLAN_PRESENT_BIT) | (u64::from(vid) << VLAN_SHIFT));
        // A key mixes families only if built by hand; keep both flags apart so packing stays one-to-one.
        let family = (u64::from(src_v6) << IPV6_BIT) | (u64::from(dst_v6) << (IPV6_BIT + 1));
        let ports =
            u64::from(key.proto) | (u64::from(key.src_port) << 8) | (u64::from(key.dst_port) << 24) | vlan | family;
        let vni = key.vni.map_or(0, |v| (1u64 << 32) | u64::from(v));
        PackedKey { src, dst, ports, vni }
    }
}

impl Hash for PackedKey {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Fold to three words first: one hasher round each instead of six.
        state.write_u64((self.src as u64) ^ ((self.src >> 64) as u64).rotate_left(17));
        state.write_u64((self.dst as u64) ^ ((self.dst >> 64) as u64).rotate_left(17));
        state.write_u64(self.ports ^ self.vni.rotate_left(7));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn keys() -> Vec<FlowKey> {
        let v4 = |x: u32| IpAddr::V4(Ipv4Addr::from(x));
        let v6 = |x: u128| IpAddr::V6(Ipv6Addr::from(x));
        let mut out = Vec::new();
        let addrs = [
            (v4(0), v4(0)),
            (v4(1), v4(2)),
            (v4(2), v4(1)),
            (v4(u32::MAX), v4(1)),
            (v6(1), v6(2)),
            (v6(u128::from(u32::MAX)), v6(1)),
            (v6(u128::MAX), v6(1 << 64)),
            (v4(1), v6(1)),
            (v6(1), v4(1)),
        ];
        for (src, dst) in addrs {
            for proto in [0u8, 6, 17, 255] {
                for (src_port, dst_port) in [(0u16, 0u16), (1, 0), (0, 1), (u16::MAX, 80)] {
                    for vlan in [None, Some(0u16), Some(4095), Some(u16::MAX)] {
                        for vni in [None, Some(0u32), Some(1 << 23), Some(u32::MAX)] {
                            out.push(FlowKey {
                                src,
                                dst,
                                proto,
                                src_port,
                                dst_port,
                                vlan,
                                vni,
                            });
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn test_packing_is_one_to_one() {
        let keys = keys();
        let distinct: HashSet<FlowKey> = keys.iter().copied().collect();
        let packed: HashSet<PackedKey> = keys.iter().map(PackedKey::new).collect();
        assert_eq!(distinct.len(), keys.len(), "the fixture has no duplicates");
        assert_eq!(packed.len(), distinct.len());
        let v4: Vec<&FlowKey> = keys.iter().filter(|k| pack_v4(k).is_some()).collect();
        let packed_v4: HashSet<u128> = v4.iter().filter_map(|k| pack_v4(k)).collect();
        // 4 IPv4 address pairs × 4 protocols × 4 port pairs × 3 VLANs of 12 bits, no VNI.
        assert_eq!(v4.len(), 4 * 4 * 4 * 3, "the compact keys of the fixture");
        assert_eq!(packed_v4.len(), v4.len());
    }

    #[test]
    fn test_flow_set_counts_distinct_keys() {
        let keys = keys();
        let mut set = FlowSet::default();
        // Every key twice, in two orders: the second pass adds nothing.
        let news = keys.iter().filter(|k| set.insert(k)).count();
        let again = keys.iter().rev().filter(|k| set.insert(k)).count();
        assert_eq!((news, again, set.len()), (keys.len(), 0, keys.len()));
    }
}
