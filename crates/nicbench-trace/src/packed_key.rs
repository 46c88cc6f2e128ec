//! [`PackedKey`]: a [`FlowKey`] as three machine words, for the per-packet flow sets.
//!
//! Hashing a `FlowKey` through its derived `Hash` feeds the hasher every enum tag, octet
//! array and `Option` one by one (~60 instructions a packet); the same key packed into
//! 48 bytes is hashed in a few multiplications. Packing is one-to-one (tested), so a set of
//! packed keys has exactly as many members as the set of the keys.

use std::hash::{Hash, Hasher};
use std::net::IpAddr;

use nicbench_wire::FlowKey;

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
        let ports = u64::from(key.proto)
            | (u64::from(key.src_port) << 8)
            | (u64::from(key.dst_port) << 24)
            | vlan
            | family;
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
                            out.push(FlowKey { src, dst, proto, src_port, dst_port, vlan, vni });
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
    }
}
