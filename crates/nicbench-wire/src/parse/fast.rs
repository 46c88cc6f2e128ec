//! Hand-written fast paths for the common case.
//!
//! - [`flow_key`] reads Ethernet / up to two VLAN tags / IPv4 (any options,
//!   any fragment) or IPv6 without extension headers / TCP or UDP, optionally
//!   VXLAN around such a frame, straight from the bytes, without building a
//!   [`ParsedFrame`].
//! - [`parse_common`] builds the full [`ParsedFrame`] for Ethernet / ≤ 2 VLAN
//!   tags / unfragmented IPv4 or IPv6 without extension headers / TCP or UDP,
//!   optionally VXLAN around such a frame.
//! - [`flow_headers`] reads what a flow meter needs ([`FlowHeaders`]: key,
//!   TCP flags, ICMP type and code, the transport bytes) from Ethernet / ≤ 2
//!   VLAN tags / unfragmented IPv4 or IPv6 without extension headers / TCP,
//!   UDP (not to the VXLAN port), ICMP or ICMPv6, without building a
//!   [`ParsedFrame`].
//!
//! All decline (return `None` / fall back) on anything else — other
//! protocols, extension headers, truncated or odd headers — and the general
//! parser (`engine`) takes over. Invariant, tested with the general parser and
//! etherparse as oracles in `parse::tests` (and fuzzed): when a fast path
//! answers, its answer equals the general parser's, field for field — with
//! one documented exception in [`flow_headers`] (ICMP timestamps of the
//! wrong size).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::encap::VXLAN_HEADER_LEN;
use super::encap::VXLAN_UDP_PORT;
use super::{
    ethertype as et, ip_proto as ipp, parse_ethernet, Eth, Ip, Ipv4, Ipv6, Layer, Layers, ParseStop, ParsedFrame,
    StopReason, Tcp, Tunnel, Udp, Vlan, L4,
};
use crate::FlowKey;

const ETH_HEADER_LEN: usize = 14;
const VLAN_TAG_LEN: usize = 4;
const IPV4_MIN_HEADER_LEN: usize = 20;
const IPV6_HEADER_LEN: usize = 40;
const TCP_MIN_HEADER_LEN: usize = 20;
const UDP_HEADER_LEN: usize = 8;
const ICMP_HEADER_LEN: usize = 8;

/// The [`FlowKey`] of an Ethernet frame, or why there is none.
///
/// Same result as `FlowKey::from_frame(&parse_ethernet(frame))`, with the
/// parse stop as error when there is no key; several times faster on plain
/// TCP/UDP frames.
#[inline]
pub fn flow_key(frame: &[u8]) -> Result<FlowKey, ParseStop> {
    match fast_key(frame) {
        Some(key) => Ok(key),
        None => general_key(frame),
    }
}

#[cold]
#[inline(never)]
fn general_key(frame: &[u8]) -> Result<FlowKey, ParseStop> {
    let parsed = parse_ethernet(frame);
    FlowKey::from_frame(&parsed).ok_or(parsed.stop.unwrap_or(ParseStop {
        // Unreachable in practice: without an IP header the chain always stops.
        layer: Layer::Ethernet,
        offset: 0,
        reason: StopReason::Unsupported,
    }))
}

#[inline(always)]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    match b.get(at..at + 2) {
        Some(&[x, y]) => Some(u16::from_be_bytes([x, y])),
        _ => None,
    }
}

#[inline(always)]
fn is_vlan_tpid(ethertype: u16) -> bool {
    matches!(ethertype, et::VLAN | et::QINQ | et::QINQ_LEGACY)
}

/// Same lax length rule as the general parser (see `engine::lax_end`).
#[inline(always)]
fn lax_end(declared_total: usize, header_len: usize, available: usize) -> usize {
    if declared_total < header_len || declared_total > available {
        available
    } else {
        declared_total
    }
}

/// What a TCP or UDP header that the general parser would decode fully says.
enum Ports<'a> {
    Plain(u16, u16),
    /// UDP to the VXLAN port: the UDP payload.
    Vxlan(&'a [u8]),
}

/// `None` for anything the general parser would treat differently
/// (truncation, other protocols).
#[inline(always)]
fn transport_ports(proto: u8, l4: &[u8]) -> Option<Ports<'_>> {
    let (src_port, dst_port) = (be16(l4, 0)?, be16(l4, 2)?);
    match proto {
        ipp::TCP => {
            let header_len = usize::from(*l4.get(12)? >> 4) * 4;
            (header_len >= TCP_MIN_HEADER_LEN && l4.len() >= header_len).then_some(Ports::Plain(src_port, dst_port))
        }
        ipp::UDP if dst_port == VXLAN_UDP_PORT => l4.get(UDP_HEADER_LEN..).map(Ports::Vxlan),
        ipp::UDP => (l4.len() >= UDP_HEADER_LEN).then_some(Ports::Plain(src_port, dst_port)),
        _ => None,
    }
}

#[inline(always)]
fn fast_key(frame: &[u8]) -> Option<FlowKey> {
    key_of::<true>(frame)
}

/// The key of a VXLAN payload: the inner frame's, with the outer VLAN.
#[inline(always)]
fn vxlan_key(udp_payload: &[u8], vlan: Option<u16>) -> Option<FlowKey> {
    let header = udp_payload.get(..VXLAN_HEADER_LEN)?;
    if header[0] & 0x08 == 0 {
        return None;
    }
    let vni = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) >> 8;
    let inner = key_of::<false>(udp_payload.get(VXLAN_HEADER_LEN..)?)?;
    Some(FlowKey {
        vlan,
        vni: Some(vni),
        ..inner
    })
}

/// The Ethernet header and up to two VLAN tags: (EtherType of the network
/// layer, its offset, outermost VLAN id); `None` for a third tag or a frame
/// too short for the tags it announces.
#[inline(always)]
fn ethernet_vlans(frame: &[u8]) -> Option<(u16, usize, Option<u16>)> {
    let mut ethertype = be16(frame, 12)?;
    let mut at = ETH_HEADER_LEN;
    let mut vlan = None;
    if is_vlan_tpid(ethertype) {
        vlan = Some(be16(frame, at)? & 0x0fff);
        ethertype = be16(frame, at + 2)?;
        at += VLAN_TAG_LEN;
        if is_vlan_tpid(ethertype) {
            ethertype = be16(frame, at + 2)?;
            at += VLAN_TAG_LEN;
            if is_vlan_tpid(ethertype) {
                return None;
            }
        }
    }
    Some((ethertype, at, vlan))
}

/// An IPv4 header at the start of `ip` (version 4, a header length of at least
/// 20 bytes that the capture holds): its fixed 20 bytes and its length.
#[inline(always)]
fn ipv4_header(ip: &[u8]) -> Option<(&[u8; IPV4_MIN_HEADER_LEN], usize)> {
    let header: &[u8; IPV4_MIN_HEADER_LEN] = ip.get(..IPV4_MIN_HEADER_LEN)?.try_into().ok()?;
    if header[0] >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(header[0] & 0x0f) * 4;
    if header_len < IPV4_MIN_HEADER_LEN || ip.len() < header_len {
        return None;
    }
    Some((header, header_len))
}

/// `OUTER`: whether a VXLAN payload may be followed (one level only).
#[inline(always)]
fn key_of<const OUTER: bool>(frame: &[u8]) -> Option<FlowKey> {
    let (ethertype, at, vlan) = ethernet_vlans(frame)?;
    let ip = frame.get(at..)?;
    match ethertype {
        et::IPV4 => {
            let (header, header_len) = ipv4_header(ip)?;
            let proto = header[9];
            let src = IpAddr::V4(Ipv4Addr::new(header[12], header[13], header[14], header[15]));
            let dst = IpAddr::V4(Ipv4Addr::new(header[16], header[17], header[18], header[19]));
            let frag_offset = u16::from_be_bytes([header[6], header[7]]) & 0x1fff;
            let (src_port, dst_port) = if frag_offset != 0 {
                // Non-first fragment: no transport header, whatever the protocol.
                (0, 0)
            } else {
                let total = usize::from(u16::from_be_bytes([header[2], header[3]]));
                let end = lax_end(total, header_len, ip.len());
                match transport_ports(proto, ip.get(header_len..end)?)? {
                    Ports::Plain(src_port, dst_port) => (src_port, dst_port),
                    Ports::Vxlan(payload) if OUTER => return vxlan_key(payload, vlan),
                    Ports::Vxlan(_) => return None,
                }
            };
            Some(FlowKey {
                src,
                dst,
                proto,
                src_port,
                dst_port,
                vlan,
                vni: None,
            })
        }
        et::IPV6 => {
            let header: &[u8; IPV6_HEADER_LEN] = ip.get(..IPV6_HEADER_LEN)?.try_into().ok()?;
            if header[0] >> 4 != 6 {
                return None;
            }
            let proto = header[6];
            let payload_len = usize::from(u16::from_be_bytes([header[4], header[5]]));
            // Payload length 0 (jumbogram / TSO) falls back to the capture.
            let end = lax_end(IPV6_HEADER_LEN + payload_len, IPV6_HEADER_LEN + 1, ip.len());
            let (src_port, dst_port) = match transport_ports(proto, ip.get(IPV6_HEADER_LEN..end)?)? {
                Ports::Plain(src_port, dst_port) => (src_port, dst_port),
                Ports::Vxlan(payload) if OUTER => return vxlan_key(payload, vlan),
                Ports::Vxlan(_) => return None,
            };
            let addr = |at: usize| -> Option<IpAddr> {
                let bytes: [u8; 16] = header.get(at..at + 16)?.try_into().ok()?;
                Some(IpAddr::V6(Ipv6Addr::from(bytes)))
            };
            Some(FlowKey {
                src: addr(8)?,
                dst: addr(24)?,
                proto,
                src_port,
                dst_port,
                vlan,
                vni: None,
            })
        }
        _ => None,
    }
}

/// The Toeplitz fields of an IPv4 frame, as they lie in it (network byte order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4RssFields {
    /// Source address in the high 32 bits, destination address in the low 32.
    pub addrs: u64,
    /// Source port in the high 16 bits, destination port in the low 16; 0 for
    /// a non-first fragment.
    pub ports: u32,
    /// IP protocol.
    pub proto: u8,
}

/// What [`flow_key`] would put in the key of an IPv4 frame, read in place for
/// the RSS hash: no [`FlowKey`] is built (its `IpAddr`s are 17 bytes each and
/// were a third of the pipeline's instructions, moved around). `None` wherever
/// [`flow_key`]'s fast path would not answer with an IPv4 key of its own (not
/// IPv4, bad or truncated headers, other protocols) and for VXLAN, whose key is
/// the inner frame's; the caller then asks [`flow_key`]. Where it answers,
/// addresses, protocol and ports equal [`flow_key`]'s (tested in `parse::tests`).
#[inline(always)]
pub fn ipv4_rss_fields(frame: &[u8]) -> Option<Ipv4RssFields> {
    let (ethertype, at, _vlan) = ethernet_vlans(frame)?;
    if ethertype != et::IPV4 {
        return None;
    }
    let ip = frame.get(at..)?;
    // The same header checks as `key_of`'s IPv4 arm.
    let (header, header_len) = ipv4_header(ip)?;
    let proto = header[9];
    // One 8-byte and one 4-byte load: assembling them byte by byte cost ~30
    // instructions a packet (callgrind).
    let addrs: &[u8; 8] = header[12..20].try_into().ok()?;
    let addrs = u64::from_be_bytes(*addrs);
    let frag_offset = u16::from_be_bytes([header[6], header[7]]) & 0x1fff;
    let ports = if frag_offset != 0 {
        0
    } else {
        let total = usize::from(u16::from_be_bytes([header[2], header[3]]));
        let end = lax_end(total, header_len, ip.len());
        let l4 = ip.get(header_len..end)?;
        let words: &[u8; 4] = l4.get(..4)?.try_into().ok()?;
        let ports = u32::from_be_bytes(*words);
        // What `transport_ports` accepts as `Ports::Plain`: a whole TCP header,
        // or a whole UDP header not to the VXLAN port.
        match proto {
            ipp::TCP => {
                let header_len = usize::from(*l4.get(12)? >> 4) * 4;
                if header_len < TCP_MIN_HEADER_LEN || l4.len() < header_len {
                    return None;
                }
            }
            ipp::UDP => {
                if ports as u16 == VXLAN_UDP_PORT || l4.len() < UDP_HEADER_LEN {
                    return None;
                }
            }
            _ => return None,
        }
        ports
    };
    Some(Ipv4RssFields { addrs, ports, proto })
}

/// What a flow meter reads from a common-case frame ([`flow_headers`]).
///
/// Addresses are 16 bytes for both families (IPv4 in the first 4, the rest
/// 0), so a consumer can compare and hash them without branching on the family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowHeaders<'a> {
    pub src: [u8; 16],
    pub dst: [u8; 16],
    pub v6: bool,
    /// IP protocol (IPv6: the fixed header's next header; there are no
    /// extension headers on this path).
    pub proto: u8,
    /// Outermost VLAN id, where tagged.
    pub vlan: Option<u16>,
    /// TCP or UDP ports; 0 for ICMP / ICMPv6.
    pub src_port: u16,
    pub dst_port: u16,
    /// TCP flags byte (see [`super::tcp_flags`]); 0 for other protocols.
    pub tcp_flags: u8,
    /// ICMP / ICMPv6 type and code.
    pub icmp: Option<(u8, u8)>,
    /// The transport header and its payload, up to the end the IP length
    /// field gives (Ethernet padding excluded; lax rule as the general parser).
    pub l4: &'a [u8],
}

/// An IPv4 address in the first 4 bytes of 16, rest 0, built in a register:
/// one 16-byte store, so a consumer's 16-byte (or 8-byte) loads of it are
/// forwarded from the store (a zeroed array patched by a 4-byte store stalls them).
#[inline(always)]
fn v4_wide(addr: &[u8]) -> [u8; 16] {
    let word = match addr {
        &[a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    };
    u128::from(word).to_le_bytes()
}

/// The [`FlowHeaders`] of a common-case Ethernet frame (see the module doc),
/// or `None` when the general parser must decide: more than two VLAN tags,
/// no IPv4/IPv6, IPv4 fragments (first or not), IPv6 extension headers,
/// truncated transport headers, ICMP shorter than its 8-byte header, UDP to
/// the VXLAN port (the general parser decodes the inner frame), any other
/// protocol.
///
/// Where it answers, it agrees with [`super::parse_ethernet`] and
/// [`FlowKey::from_frame`] (tested): same addresses, protocol, ports, VLAN,
/// flags, ICMP type/code, transport offset; VNI is never set. One exception:
/// an ICMP timestamp request or reply (type 13/14, code 0) that is not
/// exactly 20 bytes long is malformed to the general parser (etherparse
/// checks that size; no ICMP header there), while this path reads its type
/// and code like any other ICMP header's. The flow meter, whose records
/// come from this path, always counted such packets that way.
#[inline(always)]
pub fn flow_headers(frame: &[u8]) -> Option<FlowHeaders<'_>> {
    let (ethertype, at, vlan) = ethernet_vlans(frame)?;
    let ip = frame.get(at..)?;
    let (v6, proto, l4, src, dst) = match ethertype {
        et::IPV4 => {
            let h: &[u8; IPV4_MIN_HEADER_LEN] = ip.get(..IPV4_MIN_HEADER_LEN)?.try_into().ok()?;
            let header_len = usize::from(h[0] & 0x0f) * 4;
            // Any fragment (MF set or an offset): the general path.
            if h[0] >> 4 != 4
                || header_len < IPV4_MIN_HEADER_LEN
                || ip.len() < header_len
                || (h[6] & 0x3f) != 0
                || h[7] != 0
            {
                return None;
            }
            let end = lax_end(usize::from(u16::from_be_bytes([h[2], h[3]])), header_len, ip.len());
            (
                false,
                h[9],
                ip.get(header_len..end)?,
                v4_wide(&h[12..16]),
                v4_wide(&h[16..20]),
            )
        }
        et::IPV6 => {
            let h: &[u8; IPV6_HEADER_LEN] = ip.get(..IPV6_HEADER_LEN)?.try_into().ok()?;
            if h[0] >> 4 != 6 {
                return None;
            }
            // Payload length 0 (jumbogram / TSO) falls back to the capture.
            let end = lax_end(
                IPV6_HEADER_LEN + usize::from(u16::from_be_bytes([h[4], h[5]])),
                IPV6_HEADER_LEN + 1,
                ip.len(),
            );
            let src: [u8; 16] = h[8..24].try_into().ok()?;
            let dst: [u8; 16] = h[24..40].try_into().ok()?;
            (true, h[6], ip.get(IPV6_HEADER_LEN..end)?, src, dst)
        }
        _ => return None,
    };
    let mut out = FlowHeaders {
        src,
        dst,
        v6,
        proto,
        vlan,
        src_port: 0,
        dst_port: 0,
        tcp_flags: 0,
        icmp: None,
        l4,
    };
    match proto {
        ipp::TCP => {
            let h: &[u8; TCP_MIN_HEADER_LEN] = l4.get(..TCP_MIN_HEADER_LEN)?.try_into().ok()?;
            let header_len = usize::from(h[12] >> 4) * 4;
            if header_len < TCP_MIN_HEADER_LEN || l4.len() < header_len {
                return None;
            }
            out.src_port = u16::from_be_bytes([h[0], h[1]]);
            out.dst_port = u16::from_be_bytes([h[2], h[3]]);
            out.tcp_flags = h[13];
        }
        ipp::UDP => {
            let h: &[u8; UDP_HEADER_LEN] = l4.get(..UDP_HEADER_LEN)?.try_into().ok()?;
            out.src_port = u16::from_be_bytes([h[0], h[1]]);
            out.dst_port = u16::from_be_bytes([h[2], h[3]]);
            if out.dst_port == VXLAN_UDP_PORT {
                return None;
            }
        }
        // ICMP only over IPv4, ICMPv6 only over IPv6: anything else is the general parser's.
        ipp::ICMP | ipp::ICMPV6 if v6 == (proto == ipp::ICMPV6) => {
            let h = l4.get(..ICMP_HEADER_LEN)?;
            out.icmp = Some((h[0], h[1]));
        }
        _ => return None,
    }
    Some(out)
}

/// Fills `out` (which must be `ParsedFrame::default()`) with a common-case
/// frame (see the module doc); returns false, with `out` partly written, when
/// the general parser is needed.
#[inline(always)]
pub(super) fn parse_common(frame: &[u8], out: &mut ParsedFrame) -> bool {
    out.frame_len = frame.len();
    let Some(vxlan) = common_layers(frame, 0, &mut out.outer) else {
        return false;
    };
    let Some(udp_payload) = vxlan else {
        return true;
    };
    let Some(header) = udp_payload.get(..VXLAN_HEADER_LEN) else {
        return false;
    };
    let flags = header[0];
    if flags & 0x08 == 0 {
        return false;
    }
    let vni = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) >> 8;
    out.tunnel = Some(Tunnel::Vxlan { vni, flags });
    let inner_at = out.outer.payload_offset + VXLAN_HEADER_LEN;
    out.inner_offset = inner_at;
    let inner = out.inner.insert(Layers {
        payload_offset: inner_at,
        ..Layers::default()
    });
    let inner_bytes = udp_payload.get(VXLAN_HEADER_LEN..).unwrap_or(&[]);
    // VXLAN in VXLAN is left to the general parser, which reports it.
    matches!(common_layers(inner_bytes, inner_at, inner), Some(None))
}

/// Decodes Ethernet / ≤ 2 VLAN / IPv4 | IPv6 / TCP | UDP from `data` (whose
/// first byte is at absolute offset `base`) into `layers`. Returns
/// `Some(Some(udp_payload))` when the UDP destination port is VXLAN's (the
/// payload bounded by the IP length), `Some(None)` when done, and `None` when
/// the general parser must decide.
#[inline(always)]
fn common_layers<'a>(data: &'a [u8], base: usize, layers: &mut Layers) -> Option<Option<&'a [u8]>> {
    let eth: &[u8; ETH_HEADER_LEN] = data.get(..ETH_HEADER_LEN)?.try_into().ok()?;
    let mut ethertype = u16::from_be_bytes([eth[12], eth[13]]);
    layers.eth = Some(Eth {
        dst: [eth[0], eth[1], eth[2], eth[3], eth[4], eth[5]],
        src: [eth[6], eth[7], eth[8], eth[9], eth[10], eth[11]],
        ethertype,
    });
    let mut at = ETH_HEADER_LEN;
    while is_vlan_tpid(ethertype) {
        let index = usize::from(layers.vlan_count);
        if index >= 2 {
            return None;
        }
        let tci = be16(data, at)?;
        let next = be16(data, at + 2)?;
        layers.vlans[index] = Some(Vlan {
            tpid: ethertype,
            vid: tci & 0x0fff,
            pcp: (tci >> 13) as u8,
            dei: tci & 0x1000 != 0,
            inner_ethertype: next,
        });
        layers.vlan_count += 1;
        ethertype = next;
        at += VLAN_TAG_LEN;
    }
    layers.ethertype = ethertype;
    let ip = data.get(at..)?;
    let (proto, l4_rel, l4) = match ethertype {
        et::IPV4 => {
            let h: &[u8; IPV4_MIN_HEADER_LEN] = ip.get(..IPV4_MIN_HEADER_LEN)?.try_into().ok()?;
            let header_len = usize::from(h[0] & 0x0f) * 4;
            let frag = u16::from_be_bytes([h[6], h[7]]);
            let proto = h[9];
            if h[0] >> 4 != 4
                || header_len < IPV4_MIN_HEADER_LEN
                || ip.len() < header_len
                || frag & 0x1fff != 0
                || !matches!(proto, ipp::TCP | ipp::UDP)
            {
                return None;
            }
            let total_len = u16::from_be_bytes([h[2], h[3]]);
            let end = lax_end(usize::from(total_len), header_len, ip.len());
            layers.ip = Some(Ip::V4(Ipv4 {
                src: Ipv4Addr::new(h[12], h[13], h[14], h[15]),
                dst: Ipv4Addr::new(h[16], h[17], h[18], h[19]),
                proto,
                upper_proto: proto,
                tos: h[1],
                ttl: h[8],
                ihl: h[0] & 0x0f,
                total_len,
                id: u16::from_be_bytes([h[4], h[5]]),
                dont_frag: frag & 0x4000 != 0,
                more_frags: frag & 0x2000 != 0,
                frag_offset: 0,
            }));
            (proto, at + header_len, ip.get(header_len..end)?)
        }
        et::IPV6 => {
            let h: &[u8; IPV6_HEADER_LEN] = ip.get(..IPV6_HEADER_LEN)?.try_into().ok()?;
            let proto = h[6];
            if h[0] >> 4 != 6 || !matches!(proto, ipp::TCP | ipp::UDP) {
                return None;
            }
            let payload_len = u16::from_be_bytes([h[4], h[5]]);
            let end = lax_end(
                IPV6_HEADER_LEN + usize::from(payload_len),
                IPV6_HEADER_LEN + 1,
                ip.len(),
            );
            let mut src = [0u8; 16];
            let mut dst = [0u8; 16];
            src.copy_from_slice(&h[8..24]);
            dst.copy_from_slice(&h[24..40]);
            layers.ip = Some(Ip::V6(Ipv6 {
                src: Ipv6Addr::from(src),
                dst: Ipv6Addr::from(dst),
                next_header: proto,
                header_next_header: proto,
                traffic_class: (h[0] << 4) | (h[1] >> 4),
                flow_label: u32::from_be_bytes([0, h[1] & 0x0f, h[2], h[3]]),
                hop_limit: h[7],
                payload_len,
                ext_headers_len: 0,
                fragment: None,
            }));
            (proto, at + IPV6_HEADER_LEN, ip.get(IPV6_HEADER_LEN..end)?)
        }
        _ => return None,
    };
    layers.l3_offset = base + at;
    let l4_at = base + l4_rel;
    layers.l4_offset = l4_at;
    if proto == ipp::TCP {
        let h: &[u8; TCP_MIN_HEADER_LEN] = l4.get(..TCP_MIN_HEADER_LEN)?.try_into().ok()?;
        let header_len = usize::from(h[12] >> 4) * 4;
        if header_len < TCP_MIN_HEADER_LEN || l4.len() < header_len {
            return None;
        }
        layers.l4 = Some(L4::Tcp(Tcp {
            src_port: u16::from_be_bytes([h[0], h[1]]),
            dst_port: u16::from_be_bytes([h[2], h[3]]),
            seq: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
            ack: u32::from_be_bytes([h[8], h[9], h[10], h[11]]),
            flags: h[13],
            header_len: header_len as u8,
            window: u16::from_be_bytes([h[14], h[15]]),
        }));
        layers.payload_offset = l4_at + header_len;
        Some(None)
    } else {
        let h: &[u8; UDP_HEADER_LEN] = l4.get(..UDP_HEADER_LEN)?.try_into().ok()?;
        let dst_port = u16::from_be_bytes([h[2], h[3]]);
        layers.l4 = Some(L4::Udp(Udp {
            src_port: u16::from_be_bytes([h[0], h[1]]),
            dst_port,
            len: u16::from_be_bytes([h[4], h[5]]),
        }));
        layers.payload_offset = l4_at + UDP_HEADER_LEN;
        Some((dst_port == VXLAN_UDP_PORT).then(|| l4.get(UDP_HEADER_LEN..).unwrap_or(&[])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eth / VLAN 100 / IPv4 10.0.0.1 -> 10.0.0.2 / UDP 1000 -> 2000, 4 payload bytes.
    fn vlan_udp_frame() -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&[0x81, 0x00, 0x00, 100, 0x08, 0x00]);
        f.extend_from_slice(&[0x45, 0, 0, 32, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2]);
        f.extend_from_slice(&[0x03, 0xe8, 0x07, 0xd0, 0, 12, 0, 0, 1, 2, 3, 4]);
        f
    }

    #[test]
    fn test_fast_path_reads_vlan_udp() {
        let f = vlan_udp_frame();
        let k = fast_key(&f).expect("fast path takes plain VLAN/UDP");
        assert_eq!(k.to_string(), "10.0.0.1:1000 -> 10.0.0.2:2000 proto 17 vlan 100");
        assert_eq!(flow_key(&f), Ok(k));
    }

    #[test]
    fn test_fast_path_declines_what_it_does_not_handle() {
        let mut f = vlan_udp_frame();
        // VXLAN port with a payload that is no VXLAN header: general parser.
        f[40..42].copy_from_slice(&VXLAN_UDP_PORT.to_be_bytes());
        assert_eq!(fast_key(&f), None);
        assert_eq!(flow_key(&f).map(|k| k.vni), Ok(None));
        // UDP header cut by the IPv4 total length (28 = IP + 8): still plain.
        let mut f = vlan_udp_frame();
        f[20..22].copy_from_slice(&27u16.to_be_bytes());
        assert_eq!(fast_key(&f), None);
        // Truncated frame: general path reports the stop.
        let f = vlan_udp_frame();
        let err = flow_key(&f[..30]).unwrap_err();
        assert_eq!((err.layer, err.offset), (Layer::Ipv4, 18));
    }
}
