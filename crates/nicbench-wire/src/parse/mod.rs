//! Lenient, never-panicking frame parser.
//!
//! [`parse_ethernet`] (and [`parse_ip`] for raw-IP link types) decode a frame
//! into a small, `Copy`, heap-free [`ParsedFrame`]: the outer header stack
//! ([`Layers`]: Ethernet, up to two recorded VLAN tags, MPLS labels, IPv4 with
//! options / IPv6 with extension headers, TCP / UDP / ICMP / ICMPv6 / SCTP), an
//! optional [`Tunnel`] (VXLAN on UDP port 4789, GRE) and the encapsulated
//! frame's header stack.
//!
//! Invariants:
//! - Malformed or truncated input never panics. Parsing goes as far as it can;
//!   everything decoded up to that point is kept, and [`ParsedFrame::stop`] says
//!   where (layer, absolute byte offset) and why it stopped.
//! - `stop` is `None` iff every header the frame announces was decoded, up to
//!   the transport payload (or up to a non-first fragment's payload, which has
//!   no transport header). Unknown EtherTypes / IP protocols are not errors:
//!   their numbers are kept in [`Layers::ethertype`] / the IP header and the
//!   stop reason is [`StopReason::Unsupported`].
//! - Lengths follow the lax rules of `etherparse::LaxSlicedPacket`: an IPv4
//!   total length / IPv6 payload length that is larger than the capture (or
//!   smaller than the header, or 0) falls back to the captured length; a
//!   smaller one cuts off Ethernet padding.
//! - Only one level of encapsulation is decoded; a tunnel inside the inner frame
//!   stops with `Unsupported` at that tunnel header.
//!
//! Headers etherparse knows (Ethernet II, VLAN, IPv4, IPv6 + extension
//! headers, IP AH, TCP, UDP, ICMPv4/v6) are decoded with its header slices;
//! MPLS, GRE, VXLAN and SCTP, which it lacks, are hand-written in `encap`.
//! A hand-written fast path for the common case lives in `fast` and is tested
//! against the general path (and etherparse) as an oracle.

#[cfg(test)]
mod builder_tests;
mod decap;
mod encap;
mod engine;
mod fast;
#[cfg(test)]
mod tests;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub use decap::{decapsulate_vxlan, Vxlan};
pub use encap::VXLAN_UDP_PORT;
pub use fast::{flow_headers, flow_key, ipv4_rss_fields, FlowHeaders, Ipv4RssFields};

/// EtherTypes the parser follows.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const IPV6: u16 = 0x86dd;
    pub const ARP: u16 = 0x0806;
    /// 802.1Q customer VLAN tag.
    pub const VLAN: u16 = 0x8100;
    /// 802.1ad service VLAN tag (QinQ outer tag).
    pub const QINQ: u16 = 0x88a8;
    /// Pre-standard QinQ outer tag still used by some switches.
    pub const QINQ_LEGACY: u16 = 0x9100;
    pub const MPLS_UNICAST: u16 = 0x8847;
    pub const MPLS_MULTICAST: u16 = 0x8848;
    /// Transparent Ethernet Bridging: GRE carrying a full Ethernet frame.
    pub const TEB: u16 = 0x6558;
}

/// IP protocol numbers the parser follows.
pub mod ip_proto {
    pub const HOP_BY_HOP: u8 = 0;
    pub const ICMP: u8 = 1;
    pub const TCP: u8 = 6;
    pub const UDP: u8 = 17;
    pub const IPV6_ROUTE: u8 = 43;
    pub const IPV6_FRAG: u8 = 44;
    pub const GRE: u8 = 47;
    pub const ESP: u8 = 50;
    pub const AH: u8 = 51;
    pub const ICMPV6: u8 = 58;
    pub const IPV6_NO_NEXT: u8 = 59;
    pub const IPV6_DEST_OPTS: u8 = 60;
    pub const SCTP: u8 = 132;
    pub const MOBILITY: u8 = 135;
    pub const HIP: u8 = 139;
    pub const SHIM6: u8 = 140;
}

/// TCP flag bits as found in [`Tcp::flags`] (byte 13 of the header).
pub mod tcp_flags {
    pub const FIN: u8 = 0x01;
    pub const SYN: u8 = 0x02;
    pub const RST: u8 = 0x04;
    pub const PSH: u8 = 0x08;
    pub const ACK: u8 = 0x10;
    pub const URG: u8 = 0x20;
    pub const ECE: u8 = 0x40;
    pub const CWR: u8 = 0x80;
}

/// The protocol layer a [`ParseStop`] refers to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Layer {
    Ethernet,
    Vlan,
    Mpls,
    Ipv4,
    Ipv6,
    /// An IPv6 extension header (hop-by-hop, routing, fragment, destination options…).
    Ipv6Ext,
    /// IP Authentication Header (IPv4 or IPv6).
    IpAuth,
    Tcp,
    Udp,
    Icmpv4,
    Icmpv6,
    Sctp,
    Gre,
    Vxlan,
}

/// Why parsing stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum StopReason {
    /// The header needs more bytes than the frame (or the enclosing length
    /// field) provides.
    Truncated {
        needed_bytes: usize,
        available_bytes: usize,
    },
    /// A header field makes the header impossible to decode.
    Malformed(&'static str),
    /// The next header type is one this parser does not decode (its number is
    /// kept in the parsed layers); not an error in the frame.
    Unsupported,
}

/// Where and why parsing stopped before the end of the announced headers.
///
/// For `Truncated` and `Malformed`, `layer` is the header that could not be
/// decoded and `offset` its first byte. For `Unsupported`, `layer` is the
/// header whose next-type field names the unknown protocol (e.g. `Ethernet`
/// for ARP, `Ipv4` for OSPF) and `offset` the first undecoded byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ParseStop {
    pub layer: Layer,
    /// Absolute byte offset in the frame.
    pub offset: usize,
    pub reason: StopReason,
}

impl ParseStop {
    /// True when the frame is cut short (capture snap length, short buffer).
    pub fn is_truncated(&self) -> bool {
        matches!(self.reason, StopReason::Truncated { .. })
    }
}

impl fmt::Display for ParseStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.reason {
            StopReason::Truncated {
                needed_bytes,
                available_bytes,
            } => write!(
                f,
                "{:?} header at byte {} truncated: needs {} bytes, {} available",
                self.layer, self.offset, needed_bytes, available_bytes
            ),
            StopReason::Malformed(why) => {
                write!(f, "{:?} header at byte {} malformed: {}", self.layer, self.offset, why)
            }
            StopReason::Unsupported => write!(
                f,
                "payload of {:?} at byte {} has a type this parser does not decode",
                self.layer, self.offset
            ),
        }
    }
}

impl std::error::Error for ParseStop {}

/// Ethernet II header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Eth {
    pub dst: [u8; 6],
    pub src: [u8; 6],
    /// The EtherType field of the Ethernet header itself (a TPID when tagged).
    pub ethertype: u16,
}

/// One VLAN tag (802.1Q / 802.1ad).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Vlan {
    /// Tag protocol identifier: 0x8100, 0x88a8 or 0x9100.
    pub tpid: u16,
    /// VLAN id (12 bit).
    pub vid: u16,
    /// Priority code point (3 bit).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// EtherType following this tag.
    pub inner_ethertype: u16,
}

/// One MPLS label stack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct MplsEntry {
    /// Label (20 bit).
    pub label: u32,
    /// Traffic class (3 bit).
    pub tc: u8,
    pub bottom_of_stack: bool,
    pub ttl: u8,
}

/// IPv4 header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Ipv4 {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    /// The header's protocol field.
    pub proto: u8,
    /// Upper-layer protocol: `proto`, or the next header of an IP AH.
    pub upper_proto: u8,
    /// DSCP (6 bit) << 2 | ECN (2 bit).
    pub tos: u8,
    pub ttl: u8,
    /// Header length in 32-bit words (5 = no options).
    pub ihl: u8,
    /// Total length field \[bytes\] as found in the header.
    pub total_len: u16,
    pub id: u16,
    pub dont_frag: bool,
    pub more_frags: bool,
    /// Fragment offset in 8-byte units.
    pub frag_offset: u16,
}

/// IPv6 fragment extension header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Ipv6Frag {
    /// Fragment offset in 8-byte units.
    pub offset: u16,
    pub more_frags: bool,
    pub id: u32,
}

/// IPv6 header fields (plus what the extension headers said).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Ipv6 {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    /// Upper-layer protocol after all extension headers (when an extension
    /// header is truncated: the type of that header).
    pub next_header: u8,
    /// The fixed header's next-header field.
    pub header_next_header: u8,
    pub traffic_class: u8,
    /// Flow label (20 bit).
    pub flow_label: u32,
    pub hop_limit: u8,
    /// Payload length field \[bytes\] as found in the header.
    pub payload_len: u16,
    /// Total length of the decoded extension headers \[bytes\].
    pub ext_headers_len: u16,
    /// The fragment header, where present.
    pub fragment: Option<Ipv6Frag>,
}

/// Network-layer header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Ip {
    V4(Ipv4),
    V6(Ipv6),
}

impl Ip {
    pub fn src(&self) -> IpAddr {
        match self {
            Ip::V4(h) => IpAddr::V4(h.src),
            Ip::V6(h) => IpAddr::V6(h.src),
        }
    }
    pub fn dst(&self) -> IpAddr {
        match self {
            Ip::V4(h) => IpAddr::V4(h.dst),
            Ip::V6(h) => IpAddr::V6(h.dst),
        }
    }
    /// Upper-layer protocol (after IPv4 AH / IPv6 extension headers).
    pub fn upper_proto(&self) -> u8 {
        match self {
            Ip::V4(h) => h.upper_proto,
            Ip::V6(h) => h.next_header,
        }
    }
    /// True for any fragment (first or not).
    pub fn is_fragment(&self) -> bool {
        match self {
            Ip::V4(h) => h.more_frags || h.frag_offset != 0,
            Ip::V6(h) => h.fragment.is_some_and(|f| f.more_frags || f.offset != 0),
        }
    }
    /// True for fragments other than the first: they carry no transport header.
    pub fn is_non_first_fragment(&self) -> bool {
        match self {
            Ip::V4(h) => h.frag_offset != 0,
            Ip::V6(h) => h.fragment.is_some_and(|f| f.offset != 0),
        }
    }
}

/// TCP header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Tcp {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    /// Flags byte (CWR … FIN), see [`tcp_flags`].
    pub flags: u8,
    /// Header length including options \[bytes\].
    pub header_len: u8,
    pub window: u16,
}

/// UDP header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Udp {
    pub src_port: u16,
    pub dst_port: u16,
    /// Length field \[bytes\] (header + payload).
    pub len: u16,
}

/// ICMP or ICMPv6 type and code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Icmp {
    pub icmp_type: u8,
    pub code: u8,
}

/// SCTP common header fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Sctp {
    pub src_port: u16,
    pub dst_port: u16,
    /// Verification tag.
    pub vtag: u32,
}

/// Transport-layer header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum L4 {
    Tcp(Tcp),
    Udp(Udp),
    Icmpv4(Icmp),
    Icmpv6(Icmp),
    Sctp(Sctp),
}

impl L4 {
    /// (source, destination) ports; `None` for ICMP/ICMPv6.
    pub fn ports(&self) -> Option<(u16, u16)> {
        match self {
            L4::Tcp(h) => Some((h.src_port, h.dst_port)),
            L4::Udp(h) => Some((h.src_port, h.dst_port)),
            L4::Sctp(h) => Some((h.src_port, h.dst_port)),
            L4::Icmpv4(_) | L4::Icmpv6(_) => None,
        }
    }
}

/// GRE header fields (RFC 2784 / RFC 2890; version 1 = PPTP, RFC 2637).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Gre {
    /// Protocol type of the payload (an EtherType).
    pub protocol: u16,
    /// Key (RFC 2890), where the K bit is set. Version 1: payload length << 16 | call id.
    pub key: Option<u32>,
    /// Sequence number (RFC 2890), where the S bit is set.
    pub seq: Option<u32>,
    /// The C bit: a checksum field is present.
    pub checksum_present: bool,
    /// 0 = GRE, 1 = enhanced GRE (PPTP).
    pub version: u8,
}

/// The tunnel an outer frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Tunnel {
    /// VXLAN (RFC 7348) on UDP destination port [`VXLAN_UDP_PORT`].
    Vxlan {
        /// VXLAN network identifier (24 bit).
        vni: u32,
        /// The flags byte (0x08 = VNI valid).
        flags: u8,
    },
    Gre(Gre),
}

/// The header stack of one frame (outer, or the encapsulated one).
///
/// Offsets are absolute byte offsets in the frame; `l3_offset` is meaningful
/// only when `ip` is set, `l4_offset` only when the IP payload was reached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Layers {
    /// Ethernet header (absent for raw IP and GRE-carried IP).
    pub eth: Option<Eth>,
    /// The two outermost VLAN tags, outermost first.
    pub vlans: [Option<Vlan>; 2],
    /// Number of VLAN tags in the frame (may exceed 2; deeper tags are skipped).
    pub vlan_count: u8,
    /// The two outermost MPLS label stack entries.
    pub mpls: [Option<MplsEntry>; 2],
    /// Number of MPLS label stack entries decoded (may exceed 2).
    pub mpls_count: u8,
    /// EtherType of the network layer (after VLAN tags; for an MPLS frame
    /// the MPLS EtherType); 0 where there is none (raw IP sets 0x0800/0x86dd).
    pub ethertype: u16,
    pub ip: Option<Ip>,
    pub l4: Option<L4>,
    pub l3_offset: usize,
    pub l4_offset: usize,
    /// First byte after the last decoded header of this stack.
    pub payload_offset: usize,
}

impl Layers {
    /// The outermost VLAN id, if tagged.
    pub fn outer_vid(&self) -> Option<u16> {
        self.vlans[0].map(|v| v.vid)
    }
}

/// A parsed frame. Cheap to copy, no heap allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ParsedFrame {
    /// Headers of the outer frame.
    pub outer: Layers,
    /// The tunnel the outer frame carries, if any.
    pub tunnel: Option<Tunnel>,
    /// Headers of the encapsulated frame (VXLAN / GRE-TEB: from Ethernet; GRE
    /// with IP or MPLS payload: from that layer).
    pub inner: Option<Layers>,
    /// Absolute offset of the encapsulated frame (valid when `inner` is set).
    pub inner_offset: usize,
    /// Why parsing stopped early, if it did.
    pub stop: Option<ParseStop>,
    /// Length of the frame as given \[bytes\].
    pub frame_len: usize,
}

impl ParsedFrame {
    /// The innermost decoded header stack (`inner` if present, else `outer`).
    pub fn innermost(&self) -> &Layers {
        self.inner.as_ref().unwrap_or(&self.outer)
    }
    /// True when every announced header was decoded.
    pub fn is_complete(&self) -> bool {
        self.stop.is_none()
    }
}

/// Parses an Ethernet II frame (no FCS).
#[inline(always)]
pub fn parse_ethernet(frame: &[u8]) -> ParsedFrame {
    let mut out = ParsedFrame::default();
    parse_ethernet_into(frame, &mut out);
    out
}

/// [`parse_ethernet`] into a caller-provided `ParsedFrame` (all of it is
/// overwritten): saves a copy of the result in hot loops.
#[inline(always)]
pub fn parse_ethernet_into(frame: &[u8], out: &mut ParsedFrame) {
    *out = ParsedFrame::default();
    if !fast::parse_common(frame, out) {
        slow_parse_ethernet_into(frame, out);
    }
}

// Out of line: keeps the inlined fast path small.
#[inline(never)]
fn slow_parse_ethernet_into(frame: &[u8], out: &mut ParsedFrame) {
    engine::parse_into(frame, engine::Start::Ethernet, out);
}

/// Parses a raw IP packet (IPv4 or IPv6, by the version nibble), for raw-IP
/// link types (pcap LINKTYPE_RAW / IPV4 / IPV6).
pub fn parse_ip(packet: &[u8]) -> ParsedFrame {
    let mut out = ParsedFrame::default();
    engine::parse_into(packet, engine::Start::Ip, &mut out);
    out
}
