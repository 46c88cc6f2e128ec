//! Frame builder: turns a [`FrameSpec`] (addresses, ports, VLAN tags, optional
//! VXLAN encapsulation, frame size) into the bytes of one Ethernet frame, and
//! into a [`FrameTemplate`] that re-emits that frame at any size in a few
//! nanoseconds. The traffic generator builds one template per flow.
//!
//! # Frame size convention
//!
//! `frame_size_bytes` is the Ethernet frame size **including the 4-byte FCS**,
//! as in RFC 2544 (64 B … 1518 B; jumbo frames up to [`MAX_FRAME_SIZE_BYTES`]
//! = 9018 B). The bytes we emit — and that a pcap holds — are
//! `frame_size_bytes - 4` ([`captured_len`]): pcap files carry no FCS. On the
//! wire every frame also costs 8 B preamble+SFD and 12 B interPacketGap
//! ([`WIRE_OVERHEAD_BYTES`] = 20 B), so a 64 B frame occupies 84 B of line time.
//!
//! A spec whose headers do not fit in the requested size is an error naming
//! both numbers, e.g. "64 B frame cannot hold IPv6+TCP+VXLAN headers (124 B)".
//! The payload after the headers is zero-filled.
//!
//! # Layout and invariants
//!
//! - Header bytes and checksums come from etherparse (`PacketBuilder`); this
//!   module writes no checksum from scratch. The only hand-written checksum
//!   arithmetic is the RFC 1624 incremental update in `template`, which is
//!   tested against etherparse-built frames as the oracle.
//! - VLAN tags go on the **outermost** Ethernet header (the underlay when the
//!   frame is VXLAN-encapsulated), matching `FlowKey::vlan` = outermost VLAN id.
//!   Two tags are QinQ: outer TPID 0x88A8, inner 0x8100.
//! - VXLAN: outer Ethernet / IPv4 / UDP (dst port 4789) / VXLAN (8 B, I flag +
//!   24-bit VNI) around the whole inner frame. The outer UDP checksum is 0, as
//!   RFC 7348 §5 recommends for IPv4 underlays; that also keeps the outer
//!   headers independent of the inner bytes, so size changes patch cheaply.
//! - The payload is all zeros. Zero payload contributes nothing to the L4
//!   checksums, which is what lets a template change the frame size by
//!   patching only length fields and their checksums (see `template`).

mod template;
#[cfg(test)]
mod tests;

pub use template::{FrameTemplate, PatchPlan, TemplateSet};

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use etherparse::{
    DoubleVlanHeader, EtherType, IpDscp, IpEcn, IpHeaders, IpNumber, Ipv4Header, Ipv6FlowLabel, Ipv6Header,
    PacketBuilder, PacketBuilderStep, SingleVlanHeader, TcpHeader, VlanHeader, VlanId, VlanPcp,
};

use crate::flowkey::FlowKey;

/// Bytes of Ethernet FCS counted in `frame_size_bytes` but absent from captures.
pub const FCS_BYTES: u32 = 4;
/// Line time every Ethernet frame costs besides its own bytes (IEEE 802.3): the preamble and the
/// start frame delimiter (SFD) before it (clauses 3.2.1, 3.2.2) and the minimum interPacketGap
/// after it (96 bit times, clause 4.4.2; often called the inter-frame gap, IFG): 7 + 1 + 12 = 20 B.
/// The one definition: every crate reads it, and Python reads it through the binding.
pub const WIRE_OVERHEAD_BYTES: u32 = PREAMBLE_BYTES + SFD_BYTES + INTER_PACKET_GAP_BYTES;
const PREAMBLE_BYTES: u32 = 7;
const SFD_BYTES: u32 = 1;
const INTER_PACKET_GAP_BYTES: u32 = 12;
/// Smallest legal Ethernet frame (incl. FCS).
pub const MIN_FRAME_SIZE_BYTES: u32 = 64;
/// Largest frame we build (incl. FCS): 9000 B jumbo MTU + 14 B Ethernet + 4 B FCS.
pub const MAX_FRAME_SIZE_BYTES: u32 = 9018;
/// IANA-assigned VXLAN UDP destination port (RFC 7348).
pub const VXLAN_UDP_PORT: u16 = 4789;
/// VXLAN header length: flags, 24 reserved bits, 24-bit VNI, 8 reserved bits.
pub const VXLAN_HEADER_BYTES: usize = 8;
/// Largest valid VXLAN network identifier (24 bit).
pub const MAX_VNI: u32 = 0x00FF_FFFF;
/// Largest valid 802.1Q VLAN id (12 bit).
pub const MAX_VLAN_ID: u16 = 0x0FFF;

/// Bytes a frame of `frame_size_bytes` (incl. FCS) occupies in a capture.
#[inline]
pub const fn captured_len(frame_size_bytes: u32) -> usize {
    frame_size_bytes.saturating_sub(FCS_BYTES) as usize
}

/// Line time a frame occupies, in bytes: frame (incl. FCS) + preamble/SFD + IFG.
#[inline]
pub const fn wire_bytes(frame_size_bytes: u32) -> u64 {
    frame_size_bytes as u64 + WIRE_OVERHEAD_BYTES as u64
}

/// Why a frame could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    #[error("frame size {frame_size_bytes} B is outside {MIN_FRAME_SIZE_BYTES}-{MAX_FRAME_SIZE_BYTES} B (sizes include the 4 B FCS)")]
    FrameSizeOutOfRange { frame_size_bytes: u32 },
    #[error("{frame_size_bytes} B frame cannot hold {headers} headers ({header_bytes} B); the smallest frame for them is {min_frame_size_bytes} B incl. FCS")]
    FrameTooSmall {
        frame_size_bytes: u32,
        /// Human-readable header stack, e.g. "IPv6+TCP+VXLAN".
        headers: String,
        header_bytes: usize,
        min_frame_size_bytes: u32,
    },
    #[error("source {src} and destination {dst} are of different IP families")]
    MixedIpFamilies { src: IpAddr, dst: IpAddr },
    #[error("VLAN id {0} is out of range (0..=4095)")]
    VlanIdOutOfRange(u16),
    #[error("VXLAN VNI {0} is out of range (0..=16777215)")]
    VniOutOfRange(u32),
    #[error("output buffer of {got_bytes} B cannot hold a {needed_bytes} B frame")]
    BufferTooSmall { needed_bytes: usize, got_bytes: usize },
    #[error("flow {index} does not have the header layout and frame size of flow 0 (or the set is empty)")]
    ShapeMismatch { index: usize },
    #[error("no template with index {index}")]
    IndexOutOfRange { index: usize },
    /// etherparse refused to serialize (should not happen for validated specs).
    #[error("etherparse could not write the frame: {0}")]
    Write(String),
}

/// 802.1Q tags on the outermost Ethernet header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VlanTags {
    #[default]
    None,
    /// One 802.1Q tag (TPID 0x8100).
    Single(u16),
    /// QinQ: service tag (TPID 0x88A8) then customer tag (TPID 0x8100).
    Double { outer: u16, inner: u16 },
}

impl VlanTags {
    /// Number of tag bytes on the wire.
    pub const fn len_bytes(&self) -> usize {
        match self {
            VlanTags::None => 0,
            VlanTags::Single(_) => 4,
            VlanTags::Double { .. } => 8,
        }
    }

    /// The outermost VLAN id, as `FlowKey::vlan` reports it.
    pub const fn outermost(&self) -> Option<u16> {
        match self {
            VlanTags::None => None,
            VlanTags::Single(id) => Some(*id),
            VlanTags::Double { outer, .. } => Some(*outer),
        }
    }
}

/// TCP control bits as on the wire (byte 13 of the TCP header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);

    pub const fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

/// The transport layer of the (inner) frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum L4Spec {
    Udp {
        src_port: u16,
        dst_port: u16,
    },
    Tcp {
        src_port: u16,
        dst_port: u16,
        flags: TcpFlags,
        seq: u32,
        ack: u32,
        window: u16,
    },
    /// ICMP (IPv4) or ICMPv6 (IPv6) echo request.
    IcmpEcho {
        id: u16,
        seq: u16,
    },
}

impl L4Spec {
    pub const fn udp(src_port: u16, dst_port: u16) -> L4Spec {
        L4Spec::Udp { src_port, dst_port }
    }

    /// A TCP segment with the given flags, sequence number 1, ack 0, window 65535.
    pub const fn tcp(src_port: u16, dst_port: u16, flags: TcpFlags) -> L4Spec {
        L4Spec::Tcp {
            src_port,
            dst_port,
            flags,
            seq: 1,
            ack: 0,
            window: 0xFFFF,
        }
    }

    /// Header length in bytes (TCP without options).
    pub const fn len_bytes(&self) -> usize {
        match self {
            L4Spec::Udp { .. } | L4Spec::IcmpEcho { .. } => 8,
            L4Spec::Tcp { .. } => 20,
        }
    }

    /// IP protocol number for the given family.
    pub const fn ip_proto(&self, ipv6: bool) -> u8 {
        match self {
            L4Spec::Udp { .. } => 17,
            L4Spec::Tcp { .. } => 6,
            L4Spec::IcmpEcho { .. } if ipv6 => 58,
            L4Spec::IcmpEcho { .. } => 1,
        }
    }

    const fn name(&self, ipv6: bool) -> &'static str {
        match self {
            L4Spec::Udp { .. } => "UDP",
            L4Spec::Tcp { .. } => "TCP",
            L4Spec::IcmpEcho { .. } if ipv6 => "ICMPv6",
            L4Spec::IcmpEcho { .. } => "ICMP",
        }
    }
}

/// VXLAN underlay (outer headers). The outer frame is always IPv4/UDP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct VxlanSpec {
    /// VXLAN network identifier (24 bit).
    pub vni: u32,
    pub outer_eth_src: [u8; 6],
    pub outer_eth_dst: [u8; 6],
    /// Source VTEP.
    pub outer_ip_src: Ipv4Addr,
    /// Destination VTEP.
    pub outer_ip_dst: Ipv4Addr,
    /// Outer UDP source port; RFC 7348 suggests a hash of the inner flow
    /// (49152..=65535) so that underlay ECMP/RSS spreads tunnels.
    pub outer_src_port: u16,
    pub outer_ttl: u8,
}

impl VxlanSpec {
    /// Defaults: VTEPs 192.168.0.1 → 192.168.0.2, source port 49152, TTL 64.
    pub const fn new(vni: u32) -> VxlanSpec {
        VxlanSpec {
            vni,
            outer_eth_src: [0x02, 0, 0, 0, 0x01, 0x01],
            outer_eth_dst: [0x02, 0, 0, 0, 0x01, 0x02],
            outer_ip_src: Ipv4Addr::new(192, 168, 0, 1),
            outer_ip_dst: Ipv4Addr::new(192, 168, 0, 2),
            outer_src_port: 49152,
            outer_ttl: 64,
        }
    }

    /// Outer headers in bytes: Ethernet 14 + IPv4 20 + UDP 8 + VXLAN 8 (tags not included).
    pub const OUTER_LEN_BYTES: usize = 14 + 20 + 8 + VXLAN_HEADER_BYTES;
}

/// Everything needed to build one frame. See the module doc for conventions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct FrameSpec {
    /// MACs of the (inner, if VXLAN) Ethernet header.
    pub eth_src: [u8; 6],
    pub eth_dst: [u8; 6],
    /// Tags on the outermost Ethernet header.
    pub vlan: VlanTags,
    /// Both addresses must be of the same family; it selects IPv4 or IPv6.
    pub ip_src: IpAddr,
    pub ip_dst: IpAddr,
    /// IPv4 TTL / IPv6 hop limit.
    pub ttl: u8,
    /// IPv4 TOS byte / IPv6 traffic class: DSCP << 2 | ECN.
    pub tos: u8,
    pub l4: L4Spec,
    pub vxlan: Option<VxlanSpec>,
    /// Ethernet frame size including FCS \[B\].
    pub frame_size_bytes: u32,
}

impl Default for FrameSpec {
    /// 64 B IPv4/UDP frame 10.0.0.1:1024 → 10.0.0.2:1024, TTL 64, locally
    /// administered MACs 02:00:00:00:00:01 → 02:00:00:00:00:02.
    fn default() -> Self {
        FrameSpec {
            eth_src: [0x02, 0, 0, 0, 0, 0x01],
            eth_dst: [0x02, 0, 0, 0, 0, 0x02],
            vlan: VlanTags::None,
            ip_src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            ip_dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            ttl: 64,
            tos: 0,
            l4: L4Spec::udp(1024, 1024),
            vxlan: None,
            frame_size_bytes: MIN_FRAME_SIZE_BYTES,
        }
    }
}

/// Name of a header stack for error messages, e.g. "IPv4+UDP+VLAN".
struct StackName<'a>(&'a FrameSpec);

impl fmt::Display for StackName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = self.0;
        let ipv6 = spec.is_ipv6();
        write!(f, "{}+{}", if ipv6 { "IPv6" } else { "IPv4" }, spec.l4.name(ipv6))?;
        match spec.vlan {
            VlanTags::None => {}
            VlanTags::Single(_) => f.write_str("+VLAN")?,
            VlanTags::Double { .. } => f.write_str("+QinQ")?,
        }
        if spec.vxlan.is_some() {
            f.write_str("+VXLAN")?;
        }
        Ok(())
    }
}

impl FrameSpec {
    pub const fn is_ipv6(&self) -> bool {
        matches!(self.ip_src, IpAddr::V6(_))
    }

    /// Bytes of all headers (outer and inner), i.e. the smallest capture this spec allows.
    pub const fn header_len_bytes(&self) -> usize {
        let ip = if self.is_ipv6() { 40 } else { 20 };
        let outer = if self.vxlan.is_some() {
            VxlanSpec::OUTER_LEN_BYTES
        } else {
            0
        };
        outer + self.vlan.len_bytes() + 14 + ip + self.l4.len_bytes()
    }

    /// Smallest frame size (incl. FCS) that holds these headers, at least 64 B.
    pub const fn min_frame_size_bytes(&self) -> u32 {
        let needed = self.header_len_bytes() as u32 + FCS_BYTES;
        if needed < MIN_FRAME_SIZE_BYTES {
            MIN_FRAME_SIZE_BYTES
        } else {
            needed
        }
    }

    /// The flow key a parser should extract from this frame: inner addresses
    /// and ports (0/0 for ICMP echo), outermost VLAN, VNI.
    pub fn flow_key(&self) -> FlowKey {
        let (src_port, dst_port) = match self.l4 {
            L4Spec::Udp { src_port, dst_port } | L4Spec::Tcp { src_port, dst_port, .. } => (src_port, dst_port),
            L4Spec::IcmpEcho { .. } => (0, 0),
        };
        FlowKey {
            src: self.ip_src,
            dst: self.ip_dst,
            proto: self.l4.ip_proto(self.is_ipv6()),
            src_port,
            dst_port,
            vlan: self.vlan.outermost(),
            vni: self.vxlan.map(|v| v.vni),
        }
    }

    /// Checks everything but the frame size against the header stack.
    fn validate_fields(&self) -> Result<(), BuildError> {
        if self.ip_src.is_ipv4() != self.ip_dst.is_ipv4() {
            return Err(BuildError::MixedIpFamilies {
                src: self.ip_src,
                dst: self.ip_dst,
            });
        }
        match self.vlan {
            VlanTags::None => {}
            VlanTags::Single(id) => check_vlan(id)?,
            VlanTags::Double { outer, inner } => {
                check_vlan(outer)?;
                check_vlan(inner)?;
            }
        }
        if let Some(vx) = &self.vxlan {
            if vx.vni > MAX_VNI {
                return Err(BuildError::VniOutOfRange(vx.vni));
            }
        }
        Ok(())
    }

    /// Checks that `frame_size_bytes` is legal and holds this spec's headers.
    pub fn check_size(&self, frame_size_bytes: u32) -> Result<(), BuildError> {
        if !(MIN_FRAME_SIZE_BYTES..=MAX_FRAME_SIZE_BYTES).contains(&frame_size_bytes) {
            return Err(BuildError::FrameSizeOutOfRange { frame_size_bytes });
        }
        let header_bytes = self.header_len_bytes();
        if header_bytes > captured_len(frame_size_bytes) {
            return Err(BuildError::FrameTooSmall {
                frame_size_bytes,
                headers: StackName(self).to_string(),
                header_bytes,
                min_frame_size_bytes: self.min_frame_size_bytes(),
            });
        }
        Ok(())
    }

    /// Validates the spec and returns the frame's bytes (`frame_size_bytes - 4`
    /// of them, no FCS). For many frames of one flow use [`FrameTemplate`].
    pub fn build(&self) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::with_capacity(captured_len(self.frame_size_bytes));
        self.build_into(&mut out)?;
        Ok(out)
    }

    /// Like [`FrameSpec::build`] but appends to `out` (which is not cleared).
    pub fn build_into(&self, out: &mut Vec<u8>) -> Result<(), BuildError> {
        self.validate_fields()?;
        self.check_size(self.frame_size_bytes)?;
        let total = captured_len(self.frame_size_bytes);
        match &self.vxlan {
            None => {
                let payload = vec![0u8; total - self.header_len_bytes()];
                write_l2_to_l4(
                    out,
                    self.eth_src,
                    self.eth_dst,
                    self.vlan,
                    self.ip_headers(),
                    &self.l4,
                    &payload,
                )
            }
            Some(vx) => {
                // Inner frame (untagged), then wrap it: VXLAN header + inner is the outer UDP payload.
                let inner_len = total - VxlanSpec::OUTER_LEN_BYTES - self.vlan.len_bytes();
                let inner_header_len = self.header_len_bytes() - VxlanSpec::OUTER_LEN_BYTES - self.vlan.len_bytes();
                let mut udp_payload = Vec::with_capacity(VXLAN_HEADER_BYTES + inner_len);
                udp_payload.extend_from_slice(&vxlan_header(vx.vni));
                let zeros = vec![0u8; inner_len - inner_header_len];
                write_l2_to_l4(
                    &mut udp_payload,
                    self.eth_src,
                    self.eth_dst,
                    VlanTags::None,
                    self.ip_headers(),
                    &self.l4,
                    &zeros,
                )?;
                let outer_start = out.len();
                let outer_ip = ipv4_header(vx.outer_ip_src, vx.outer_ip_dst, vx.outer_ttl, 0)?;
                write_l2_to_l4(
                    out,
                    vx.outer_eth_src,
                    vx.outer_eth_dst,
                    self.vlan,
                    outer_ip,
                    &L4Spec::udp(vx.outer_src_port, VXLAN_UDP_PORT),
                    &udp_payload,
                )?;
                // RFC 7348 §5: outer UDP checksum SHOULD be zero over IPv4; etherparse
                // always computes one, so clear it (0 = "no checksum", legal for IPv4).
                let csum_at = outer_start + 14 + self.vlan.len_bytes() + 20 + 6;
                out[csum_at..csum_at + 2].copy_from_slice(&[0, 0]);
                Ok(())
            }
        }
    }

    fn ip_headers(&self) -> IpHeaders {
        match (self.ip_src, self.ip_dst) {
            (IpAddr::V6(src), IpAddr::V6(dst)) => IpHeaders::Ipv6(
                Ipv6Header {
                    traffic_class: self.tos,
                    flow_label: Ipv6FlowLabel::ZERO,
                    payload_length: 0, // set by PacketBuilder
                    next_header: IpNumber(0),
                    hop_limit: self.ttl,
                    source: src.octets(),
                    destination: dst.octets(),
                },
                Default::default(),
            ),
            (src, dst) => {
                // validate_fields guarantees both are V4 here.
                let v4 = |a: IpAddr| match a {
                    IpAddr::V4(a) => a,
                    IpAddr::V6(_) => Ipv4Addr::UNSPECIFIED,
                };
                let mut h = Ipv4Header {
                    time_to_live: self.ttl,
                    source: v4(src).octets(),
                    destination: v4(dst).octets(),
                    dont_fragment: true,
                    ..Default::default()
                };
                h.dscp = IpDscp::try_new(self.tos >> 2).unwrap_or(IpDscp::ZERO);
                h.ecn = IpEcn::try_new(self.tos & 0b11).unwrap_or(IpEcn::ZERO);
                IpHeaders::Ipv4(h, Default::default())
            }
        }
    }
}

fn check_vlan(id: u16) -> Result<(), BuildError> {
    if id > MAX_VLAN_ID {
        Err(BuildError::VlanIdOutOfRange(id))
    } else {
        Ok(())
    }
}

fn vxlan_header(vni: u32) -> [u8; VXLAN_HEADER_BYTES] {
    let v = vni.to_be_bytes();
    // Flags byte 0x08 = "I" (VNI valid); the rest reserved (zero).
    [0x08, 0, 0, 0, v[1], v[2], v[3], 0]
}

fn ipv4_header(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, tos: u8) -> Result<IpHeaders, BuildError> {
    let mut h = Ipv4Header::new(0, ttl, IpNumber::UDP, src.octets(), dst.octets())
        .map_err(|e| BuildError::Write(e.to_string()))?;
    h.dscp = IpDscp::try_new(tos >> 2).unwrap_or(IpDscp::ZERO);
    h.ecn = IpEcn::try_new(tos & 0b11).unwrap_or(IpEcn::ZERO);
    Ok(IpHeaders::Ipv4(h, Default::default()))
}

fn single_tag(id: u16) -> Result<SingleVlanHeader, BuildError> {
    Ok(SingleVlanHeader {
        pcp: VlanPcp::ZERO,
        drop_eligible_indicator: false,
        vlan_id: VlanId::try_new(id).map_err(|_| BuildError::VlanIdOutOfRange(id))?,
        ether_type: EtherType(0), // set by PacketBuilder
    })
}

/// Ethernet (+ tags) / IP / L4 / payload via etherparse, which fills in
/// ether types, lengths, protocol numbers and all checksums.
fn write_l2_to_l4(
    out: &mut Vec<u8>,
    eth_src: [u8; 6],
    eth_dst: [u8; 6],
    vlan: VlanTags,
    ip: IpHeaders,
    l4: &L4Spec,
    payload: &[u8],
) -> Result<(), BuildError> {
    let is_v6 = matches!(ip, IpHeaders::Ipv6(..));
    let eth = PacketBuilder::ethernet2(eth_src, eth_dst);
    let ip_step: PacketBuilderStep<IpHeaders> = match vlan {
        VlanTags::None => eth.ip(ip),
        VlanTags::Single(id) => eth.vlan(VlanHeader::Single(single_tag(id)?)).ip(ip),
        VlanTags::Double { outer, inner } => eth
            .vlan(VlanHeader::Double(DoubleVlanHeader {
                outer: single_tag(outer)?,
                inner: single_tag(inner)?,
            }))
            .ip(ip),
    };
    let werr = |e: etherparse::err::packet::BuildVecWriteError| BuildError::Write(e.to_string());
    match *l4 {
        L4Spec::Udp { src_port, dst_port } => ip_step.udp(src_port, dst_port).write_to_vec(out, payload).map_err(werr),
        L4Spec::Tcp {
            src_port,
            dst_port,
            flags,
            seq,
            ack,
            window,
        } => {
            let mut tcp = TcpHeader::new(src_port, dst_port, seq, window);
            tcp.fin = flags.contains(TcpFlags::FIN);
            tcp.syn = flags.contains(TcpFlags::SYN);
            tcp.rst = flags.contains(TcpFlags::RST);
            tcp.psh = flags.contains(TcpFlags::PSH);
            tcp.ack = flags.contains(TcpFlags::ACK);
            tcp.urg = flags.contains(TcpFlags::URG);
            tcp.ece = flags.contains(TcpFlags::ECE);
            tcp.cwr = flags.contains(TcpFlags::CWR);
            tcp.acknowledgment_number = ack;
            ip_step.tcp_header(tcp).write_to_vec(out, payload).map_err(werr)
        }
        L4Spec::IcmpEcho { id, seq } => {
            if is_v6 {
                ip_step
                    .icmpv6_echo_request(id, seq)
                    .write_to_vec(out, payload)
                    .map_err(werr)
            } else {
                ip_step
                    .icmpv4_echo_request(id, seq)
                    .write_to_vec(out, payload)
                    .map_err(werr)
            }
        }
    }
}
