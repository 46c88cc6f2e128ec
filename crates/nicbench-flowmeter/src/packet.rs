//! Per-packet extraction: everything the flow table needs from one frame
//! (addresses, ports, protocol, VLAN, VNI, TCP flags, ICMP type/code, DNS
//! transaction id), plus the table's compact, canonical key.
//!
//! A hand-written fast path reads the common case (Ethernet, ≤ 2 VLAN tags,
//! IPv4 not fragmented / IPv6 without extension headers, TCP / UDP / ICMP /
//! ICMPv6) straight from the bytes; everything else (VXLAN, fragments,
//! extension headers, truncation, raw IP link types) goes through
//! `nicbench_wire::parse_ethernet` / `parse_ip`. Invariant (tested): when the
//! fast path answers, it equals the general path.

use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nicbench_wire::parse::{ip_proto, Layers, ParsedFrame, Tunnel, L4};
use nicbench_wire::{parse_ethernet_into, parse_ip, FlowKey};

/// Where the network layer starts in a captured frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum L2 {
    Ethernet,
    /// Raw IP (pcap LINKTYPE_RAW, Linux SLL…) at this byte offset.
    Ip(u16),
}

const DNS_PORT: u16 = 53;

/// What one packet contributes to a flow, as seen on the wire (not canonical).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PacketInfo {
    /// Addresses, IPv4 in the first 4 bytes (rest 0).
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub v6: bool,
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    pub vlan: Option<u16>,
    pub vni: Option<u32>,
    /// TCP flags byte (0 for non-TCP).
    pub tcp_flags: u8,
    pub icmp: Option<(u8, u8)>,
    /// First two payload bytes of a UDP packet with port 53 on either side.
    pub dns_txid: Option<u16>,
    /// Identifier of an ICMP/ICMPv6 echo request or reply.
    pub icmp_echo_id: Option<u16>,
    /// Its sequence number (0 when not an echo).
    pub icmp_echo_seq: u16,
}

/// Echo request/reply types: ICMP 8/0, ICMPv6 128/129.
fn is_echo(v6: bool, icmp_type: u8) -> bool {
    if v6 {
        matches!(icmp_type, 128 | 129)
    } else {
        matches!(icmp_type, 8 | 0)
    }
}

/// Reads the packet's fields; `None` when there is no IP header (non-IP).
#[inline]
pub(crate) fn extract(data: &[u8], l2: L2, scratch: &mut ParsedFrame) -> Option<PacketInfo> {
    if l2 == L2::Ethernet {
        if let Some(info) = fast_extract(data) {
            return Some(info);
        }
    }
    general_extract(data, l2, scratch)
}

#[inline(always)]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

/// Same lax length rule as the wire parser: a length field beyond the
/// capture (or below the header) falls back to the capture.
#[inline(always)]
fn lax_end(declared_total: usize, header_len: usize, available: usize) -> usize {
    if declared_total < header_len || declared_total > available {
        available
    } else {
        declared_total
    }
}

/// An IPv4 address in the first 4 bytes of 16, rest 0, built in a register:
/// one 16-byte store, so the 16-byte loads of `TableKey::of` are forwarded
/// from it (a zeroed array patched by a 4-byte store would stall them).
#[inline(always)]
fn v4_wide(addr: &[u8]) -> [u8; 16] {
    let word = match addr {
        &[a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    };
    u128::from(word).to_le_bytes()
}

#[inline(always)]
fn fast_extract(frame: &[u8]) -> Option<PacketInfo> {
    let mut ethertype = be16(frame, 12)?;
    let mut at = 14;
    let mut vlan = None;
    if matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
        vlan = Some(be16(frame, at)? & 0x0fff);
        ethertype = be16(frame, at + 2)?;
        at += 4;
        if matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
            ethertype = be16(frame, at + 2)?;
            at += 4;
            if matches!(ethertype, 0x8100 | 0x88a8 | 0x9100) {
                return None;
            }
        }
    }
    let ip = frame.get(at..)?;
    let (v6, proto, l4, src, dst) = match ethertype {
        0x0800 => {
            let h: &[u8; 20] = ip.get(..20)?.try_into().ok()?;
            let header_len = usize::from(h[0] & 0x0f) * 4;
            // Fragments (any) and odd headers: general path.
            if h[0] >> 4 != 4 || header_len < 20 || ip.len() < header_len || (h[6] & 0x3f) != 0 || h[7] != 0 {
                return None;
            }
            let end = lax_end(usize::from(u16::from_be_bytes([h[2], h[3]])), header_len, ip.len());
            (false, h[9], ip.get(header_len..end)?, v4_wide(&h[12..16]), v4_wide(&h[16..20]))
        }
        0x86dd => {
            let h: &[u8; 40] = ip.get(..40)?.try_into().ok()?;
            if h[0] >> 4 != 6 {
                return None;
            }
            let end = lax_end(40 + usize::from(u16::from_be_bytes([h[4], h[5]])), 41, ip.len());
            let src: [u8; 16] = h[8..24].try_into().ok()?;
            let dst: [u8; 16] = h[24..40].try_into().ok()?;
            (true, h[6], ip.get(40..end)?, src, dst)
        }
        _ => return None,
    };
    let mut info = PacketInfo {
        src,
        dst,
        v6,
        proto,
        src_port: 0,
        dst_port: 0,
        vlan,
        vni: None,
        tcp_flags: 0,
        icmp: None,
        dns_txid: None,
        icmp_echo_id: None,
        icmp_echo_seq: 0,
    };
    match proto {
        ip_proto::TCP => {
            let h: &[u8; 20] = l4.get(..20)?.try_into().ok()?;
            let header_len = usize::from(h[12] >> 4) * 4;
            if header_len < 20 || l4.len() < header_len {
                return None;
            }
            info.src_port = u16::from_be_bytes([h[0], h[1]]);
            info.dst_port = u16::from_be_bytes([h[2], h[3]]);
            info.tcp_flags = h[13];
        }
        ip_proto::UDP => {
            let h: &[u8; 8] = l4.get(..8)?.try_into().ok()?;
            info.src_port = u16::from_be_bytes([h[0], h[1]]);
            info.dst_port = u16::from_be_bytes([h[2], h[3]]);
            if info.dst_port == nicbench_wire::parse::VXLAN_UDP_PORT {
                return None;
            }
            if info.src_port == DNS_PORT || info.dst_port == DNS_PORT {
                info.dns_txid = be16(l4, 8);
            }
        }
        // ICMP needs type and code (4 bytes incl. checksum, as the wire parser requires 8? no:
        // the general parser decodes ICMP headers of 8 bytes); decline short ones.
        ip_proto::ICMP | ip_proto::ICMPV6 if v6 == (proto == ip_proto::ICMPV6) => {
            let h = l4.get(..8)?;
            info.icmp = Some((h[0], h[1]));
            if is_echo(v6, h[0]) {
                info.icmp_echo_id = Some(u16::from_be_bytes([h[4], h[5]]));
                info.icmp_echo_seq = u16::from_be_bytes([h[6], h[7]]);
            }
        }
        _ => return None,
    }
    Some(info)
}

#[cold]
#[inline(never)]
fn general_extract(data: &[u8], l2: L2, scratch: &mut ParsedFrame) -> Option<PacketInfo> {
    match l2 {
        L2::Ethernet => parse_ethernet_into(data, scratch),
        L2::Ip(offset) => *scratch = parse_ip(data.get(usize::from(offset)..)?),
    }
    let frame = &*scratch;
    let key = FlowKey::from_frame(frame)?;
    // The header stack the key came from: the inner one for VXLAN with inner IP.
    let layers: &Layers = match (frame.tunnel, frame.inner.as_ref()) {
        (Some(Tunnel::Vxlan { .. }), Some(inner)) if inner.ip.is_some() => inner,
        _ => &frame.outer,
    };
    let (v6, src, dst) = match (key.src, key.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => (false, v4_bytes(s), v4_bytes(d)),
        (s, d) => (true, v6_bytes(s), v6_bytes(d)),
    };
    let mut info = PacketInfo {
        src,
        dst,
        v6,
        proto: key.proto,
        src_port: key.src_port,
        dst_port: key.dst_port,
        vlan: key.vlan,
        vni: key.vni,
        tcp_flags: 0,
        icmp: None,
        dns_txid: None,
        icmp_echo_id: None,
        icmp_echo_seq: 0,
    };
    let first_fragment = layers.ip.is_some_and(|ip| !ip.is_non_first_fragment());
    match layers.l4 {
        Some(L4::Tcp(t)) if first_fragment => info.tcp_flags = t.flags,
        Some(L4::Icmpv4(i)) | Some(L4::Icmpv6(i)) if first_fragment => {
            info.icmp = Some((i.icmp_type, i.code));
            if is_echo(v6, i.icmp_type) {
                let at = layers.l4_offset + l2_offset(l2);
                info.icmp_echo_id = be16(data, at + 4);
                info.icmp_echo_seq = be16(data, at + 6).unwrap_or(0);
            }
        }
        Some(L4::Udp(u)) if first_fragment && (u.src_port == DNS_PORT || u.dst_port == DNS_PORT) => {
            info.dns_txid = be16(data, layers.payload_offset + l2_offset(l2));
        }
        _ => {}
    }
    Some(info)
}

fn l2_offset(l2: L2) -> usize {
    match l2 {
        L2::Ethernet => 0,
        L2::Ip(offset) => usize::from(offset),
    }
}

fn v4_bytes(a: Ipv4Addr) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..4].copy_from_slice(&a.octets());
    out
}

fn v6_bytes(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V6(a) => a.octets(),
        // Mixed families cannot come from the parser; map to keep a total function.
        IpAddr::V4(a) => a.to_ipv6_mapped().octets(),
    }
}

pub(crate) fn to_ip(bytes: &[u8; 16], v6: bool) -> IpAddr {
    if v6 {
        IpAddr::V6(Ipv6Addr::from(*bytes))
    } else {
        IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3]))
    }
}

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
    use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags, VlanTags, VxlanSpec};

    fn frames() -> Vec<Vec<u8>> {
        let v6a: IpAddr = "2001:db8::1".parse().unwrap();
        let v6b: IpAddr = "2001:db8::2".parse().unwrap();
        let specs = [
            FrameSpec::default(),
            FrameSpec {
                l4: L4Spec::tcp(1234, 80, TcpFlags::SYN | TcpFlags::ACK),
                ..FrameSpec::default()
            },
            FrameSpec {
                vlan: VlanTags::Single(7),
                l4: L4Spec::udp(53, 999),
                ..FrameSpec::default()
            },
            FrameSpec {
                vlan: VlanTags::Double { outer: 5, inner: 6 },
                ..FrameSpec::default()
            },
            FrameSpec {
                l4: L4Spec::IcmpEcho { id: 1, seq: 2 },
                ..FrameSpec::default()
            },
            FrameSpec {
                ip_src: v6a,
                ip_dst: v6b,
                l4: L4Spec::IcmpEcho { id: 1, seq: 2 },
                frame_size_bytes: 90,
                ..FrameSpec::default()
            },
            FrameSpec {
                ip_src: v6a,
                ip_dst: v6b,
                l4: L4Spec::tcp(5, 6, TcpFlags::FIN),
                frame_size_bytes: 90,
                ..FrameSpec::default()
            },
            FrameSpec {
                vxlan: Some(VxlanSpec::new(42)),
                frame_size_bytes: 120,
                ..FrameSpec::default()
            },
        ];
        specs.iter().map(|s| s.build().unwrap()).collect()
    }

    #[test]
    fn test_fast_path_agrees_with_general_path() {
        let mut scratch = ParsedFrame::default();
        for (i, f) in frames().into_iter().enumerate() {
            let general = general_extract(&f, L2::Ethernet, &mut scratch).expect("IP frame");
            if let Some(fast) = fast_extract(&f) {
                assert_eq!(fast, general, "frame {i}");
            }
            // Every prefix: never panics, and agreement whenever the fast path answers.
            for cut in 0..f.len() {
                let prefix = &f[..cut];
                if let Some(fast) = fast_extract(prefix) {
                    assert_eq!(
                        Some(fast),
                        general_extract(prefix, L2::Ethernet, &mut scratch),
                        "frame {i} cut {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn test_extract_fields() {
        let mut scratch = ParsedFrame::default();
        let f = frames();
        let syn_ack = extract(&f[1], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(
            (syn_ack.proto, syn_ack.src_port, syn_ack.dst_port, syn_ack.tcp_flags),
            (6, 1234, 80, 0x12)
        );
        let dns = extract(&f[2], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((dns.vlan, dns.dns_txid), (Some(7), Some(0)));
        let qinq = extract(&f[3], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(qinq.vlan, Some(5));
        let icmp = extract(&f[4], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((icmp.icmp, icmp.icmp_echo_id), (Some((8, 0)), Some(1)));
        assert_eq!(
            general_extract(&f[4], L2::Ethernet, &mut scratch).unwrap().icmp_echo_id,
            Some(1)
        );
        let icmp6 = extract(&f[5], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!(
            (icmp6.v6, icmp6.icmp, icmp6.icmp_echo_id),
            (true, Some((128, 0)), Some(1))
        );
        let vx = extract(&f[7], L2::Ethernet, &mut scratch).unwrap();
        assert_eq!((vx.vni, vx.src_port), (Some(42), 1024));
        // Raw IP at an offset: the IPv4 packet of frame 0 behind a fake 16-byte header.
        let mut raw = vec![0u8; 16];
        raw.extend_from_slice(&f[1][14..]);
        let r = extract(&raw, L2::Ip(16), &mut scratch).unwrap();
        assert_eq!((r.src_port, r.tcp_flags), (1234, 0x12));
        // ARP and garbage: non-IP.
        let mut arp = f[0].clone();
        arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
        assert_eq!(extract(&arp, L2::Ethernet, &mut scratch), None);
        assert_eq!(extract(&[1, 2, 3], L2::Ethernet, &mut scratch), None);
        assert_eq!(extract(&[], L2::Ip(16), &mut scratch), None);
    }

    #[test]
    fn test_table_key_is_canonical_and_round_trips() {
        let mut scratch = ParsedFrame::default();
        let fields = KeyFields {
            vlan: true,
            vni: true,
            dns_txid: true,
            icmp_echo_id: true,
        };
        let f = frames();
        let fwd = extract(&f[2], L2::Ethernet, &mut scratch).unwrap();
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
