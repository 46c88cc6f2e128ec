//! The flow table's key: a packet's canonical (direction-independent)
//! 5-tuple plus VLAN, VNI and the DNS id / ICMP echo id it is keyed by, in 52
//! bytes without enums, and its 32-bit hash.

use std::hash::{Hash, Hasher};

use nicbench_wire::parse::ip_proto;
use nicbench_wire::FlowKey;

use crate::packet::{to_ip, PacketInfo};

/// Sentinel for "no VLAN / VNI / DNS id" in [`TableKey`] (VLAN ids are 12 bit,
/// VNIs 24 bit, DNS ids 16 bit, so `u32::MAX` never collides).
const ABSENT: u32 = u32::MAX;

/// The flow table's key: canonical (the endpoint with the smaller
/// (address, port) is `lo`), 48 bytes, no enums, cheap to hash and compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TableKey {
    pub lo: [u8; 16],
    pub hi: [u8; 16],
    pub lo_port: u16,
    pub hi_port: u16,
    pub proto: u8,
    pub v6: bool,
    pub vlan: u32,
    pub vni: u32,
    /// DNS transaction id (UDP) or ICMP echo identifier << 16 | sequence
    /// number (ICMP), when keyed by them (an echo with both 0xffff counts as unkeyed).
    pub aux: u32,
}

/// Which key fields a table uses (from `MeterConfig`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeyFields {
    pub vlan: bool,
    pub vni: bool,
    pub dns_txid: bool,
    pub icmp_echo_id: bool,
}

impl TableKey {
    /// The canonical key of a packet and whether the packet was sent by `hi`.
    #[inline(always)]
    pub fn of(info: &PacketInfo, fields: KeyFields) -> (TableKey, bool) {
        // Big-endian words compare like the bytes (lexicographic order). The
        // addresses are read as 8-byte halves and the key's arrays rebuilt from
        // registers: the parser stores them as 8-byte words, and a 16-byte load
        // spanning two such stores stalls (no store-to-load forwarding).
        let halves = |a: &[u8; 16]| {
            let (h, l) = a.split_at(8);
            let word = |b: &[u8]| b.try_into().map_or(0, u64::from_be_bytes);
            (word(h), word(l))
        };
        let join = |(h, l): (u64, u64)| (u128::from(h) << 64 | u128::from(l)).to_be_bytes();
        let src = (halves(&info.src), info.src_port);
        let dst = (halves(&info.dst), info.dst_port);
        let sent_by_hi = src > dst;
        // Branch-free swap: the direction is as good as random per packet
        // (a branch on it mispredicts about every other packet).
        let mask = u64::from(sent_by_hi).wrapping_neg();
        let pick = |a: u64, b: u64| a ^ ((a ^ b) & mask);
        let (((src_h, src_l), src_port), ((dst_h, dst_l), dst_port)) = (src, dst);
        let lo = join((pick(src_h, dst_h), pick(src_l, dst_l)));
        let hi = join((pick(dst_h, src_h), pick(dst_l, src_l)));
        let lo_port = pick(u64::from(src_port), u64::from(dst_port)) as u16;
        let hi_port = pick(u64::from(dst_port), u64::from(src_port)) as u16;
        let opt = |on: bool, value: Option<u32>| if on { value.unwrap_or(ABSENT) } else { ABSENT };
        let key = TableKey {
            lo,
            hi,
            lo_port,
            hi_port,
            proto: info.proto,
            v6: info.v6,
            vlan: opt(fields.vlan, info.vlan.map(u32::from)),
            vni: opt(fields.vni, info.vni),
            aux: match info.proto {
                ip_proto::UDP => opt(fields.dns_txid, info.dns_txid.map(u32::from)),
                // Argus keys an echo by identifier and sequence number: one flow per request/reply.
                ip_proto::ICMP | ip_proto::ICMPV6 => opt(
                    fields.icmp_echo_id,
                    info.icmp_echo_id
                        .map(|id| u32::from(id) << 16 | u32::from(info.icmp_echo_seq)),
                ),
                _ => ABSENT,
            },
        };
        (key, sent_by_hi)
    }

    /// The record's key, oriented with `hi` as source when `hi_is_src`.
    pub fn flow_key(&self, hi_is_src: bool) -> FlowKey {
        let lo = to_ip(&self.lo, self.v6);
        let hi = to_ip(&self.hi, self.v6);
        let (src, src_port, dst, dst_port) = if hi_is_src {
            (hi, self.hi_port, lo, self.lo_port)
        } else {
            (lo, self.lo_port, hi, self.hi_port)
        };
        let present = |v: u32| (v != ABSENT).then_some(v);
        FlowKey {
            src,
            dst,
            proto: self.proto,
            src_port,
            dst_port,
            vlan: present(self.vlan).map(|v| v as u16),
            vni: present(self.vni),
        }
    }

    pub fn dns_txid(&self) -> Option<u16> {
        (self.proto == ip_proto::UDP && self.aux != ABSENT).then_some(self.aux as u16)
    }

    pub fn icmp_echo_id(&self) -> Option<u16> {
        (matches!(self.proto, ip_proto::ICMP | ip_proto::ICMPV6) && self.aux != ABSENT)
            .then_some((self.aux >> 16) as u16)
    }
}

/// wyhash's folded multiply: the 128-bit product's halves xored.
#[inline(always)]
fn fold_mul(a: u64, b: u64) -> u64 {
    let p = u128::from(a) * u128::from(b);
    (p as u64) ^ ((p >> 64) as u64)
}

impl TableKey {
    /// The table's 32-bit hash (bucket home = low bits, tag = all 32): four
    /// folded multiplies over the key's words (wyhash-style mixing; cheaper
    /// than a general `Hasher` over 52 bytes). Fixed constants: a run is
    /// reproducible (flow keys are not attacker-chosen here).
    #[inline(always)]
    pub fn hash32(&self) -> u32 {
        const K: [u64; 7] = [
            0xa076_1d64_78bd_642f,
            0xe703_7ed1_a0b4_28db,
            0x8ebc_6af0_9c88_c6e3,
            0x5899_65cc_7537_4cc3,
            0x1d8e_4e27_c47d_124f,
            0x6e69_6362_656e_6368,
            0x666c_6f77_6d65_7472,
        ];
        let lo = u128::from_ne_bytes(self.lo);
        let hi = u128::from_ne_bytes(self.hi);
        let ports = u64::from(self.lo_port) << 48
            | u64::from(self.hi_port) << 32
            | u64::from(self.proto) << 8
            | u64::from(self.v6);
        let extra = u64::from(self.vni) << 32 | u64::from(self.aux);
        let m1 = fold_mul(lo as u64 ^ K[0], hi as u64 ^ K[1]);
        let m2 = fold_mul((lo >> 64) as u64 ^ K[2], (hi >> 64) as u64 ^ K[3]);
        let m3 = fold_mul(ports ^ u64::from(self.vlan) ^ K[4], extra ^ K[5]);
        let h = fold_mul(m1 ^ m3, m2 ^ K[6]);
        (h ^ (h >> 32)) as u32
    }
}

impl Hash for TableKey {
    #[inline(always)]
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u128(u128::from_ne_bytes(self.lo));
        state.write_u128(u128::from_ne_bytes(self.hi));
        let ports = u64::from(self.lo_port) << 48
            | u64::from(self.hi_port) << 32
            | u64::from(self.proto) << 8
            | u64::from(self.v6);
        state.write_u64(ports ^ u64::from(self.vlan));
        state.write_u64(u64::from(self.vni) << 32 | u64::from(self.aux));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{extract, L2};
    use nicbench_wire::builder::{FrameSpec, L4Spec};
    use nicbench_wire::ParsedFrame;

    #[test]
    fn test_table_key_is_canonical_and_round_trips() {
        let mut scratch = ParsedFrame::default();
        let fields = KeyFields {
            vlan: true,
            vni: true,
            dns_txid: true,
            icmp_echo_id: true,
        };
        let frame = FrameSpec {
            vlan: nicbench_wire::VlanTags::Single(7),
            l4: L4Spec::udp(53, 999),
            ..FrameSpec::default()
        }
        .build()
        .unwrap();
        let fwd = extract(&frame, L2::Ethernet, &mut scratch).unwrap();
        let rev = PacketInfo {
            src: fwd.dst,
            dst: fwd.src,
            src_port: fwd.dst_port,
            dst_port: fwd.src_port,
            ..fwd
        };
        let (k1, hi1) = TableKey::of(&fwd, fields);
        let (k2, hi2) = TableKey::of(&rev, fields);
        assert_eq!(k1, k2);
        assert_ne!(hi1, hi2);
        let key = k1.flow_key(hi1);
        assert_eq!((key.src_port, key.dst_port, key.vlan), (53, 999, Some(7)));
        assert_eq!(k1.dns_txid(), Some(0));
        let (k3, _) = TableKey::of(
            &fwd,
            KeyFields {
                vlan: false,
                vni: false,
                dns_txid: false,
                icmp_echo_id: false,
            },
        );
        assert_eq!((k3.flow_key(false).vlan, k3.dns_txid()), (None, None));
    }
}
