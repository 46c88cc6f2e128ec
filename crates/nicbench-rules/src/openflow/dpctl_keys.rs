//! The datapath flow key syntax of `ovs-appctl dpctl/dump-flows` (OVS 3.1 `odp-util.c`
//! formats): which keys exist, their sub-fields, how each value and mask is printed, and the
//! order the userspace datapath prints keys in.
//!
//! Printing rules (as `odp-util.c` applies them): an exact sub-field prints `name=V`, a
//! partly masked one `name=V/M` (V as the packet had it, M in hex), a fully wildcarded one
//! is left out; `recirc_id`, `ct_zone`, `ct_mark` and hex sub-fields print C's `%#x`
//! (`0`, `0x1`); ports, protocol numbers and TTLs print decimal.

use super::values::{FlagNames, CT_STATE_FLAGS, TCP_FLAGS};
use super::OfField;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Fmt {
    Mac,
    V4,
    V6,
    /// Decimal value, hex mask.
    Dec,
    /// `%#x` value and mask.
    Hex,
    /// `0x%04x` (eth_type).
    Hex4,
    /// `no`, `first`, `later`.
    Frag,
    /// `+a-b` masked, `a|b` exact.
    Flags(FlagNames),
}

/// A sub-field of a structured key (or the value of a single-value key).
pub(crate) struct Sub {
    pub name: &'static str,
    pub field: Option<OfField>,
    pub fmt: Fmt,
    /// Width of the value in the datapath key: a mask of this many ones is exact.
    pub bits: u32,
}

const fn sub(name: &'static str, field: Option<OfField>, fmt: Fmt, bits: u32) -> Sub {
    Sub { name, field, fmt, bits }
}

use OfField as F;

pub(crate) const ETH: &[Sub] = &[
    sub("src", Some(F::DlSrc), Fmt::Mac, 48),
    sub("dst", Some(F::DlDst), Fmt::Mac, 48),
];
pub(crate) const IPV4: &[Sub] = &[
    sub("src", Some(F::NwSrc), Fmt::V4, 32),
    sub("dst", Some(F::NwDst), Fmt::V4, 32),
    sub("proto", Some(F::NwProto), Fmt::Dec, 8),
    sub("tos", Some(F::NwTos), Fmt::Hex, 8),
    sub("ttl", Some(F::NwTtl), Fmt::Dec, 8),
    sub("frag", Some(F::NwFrag), Fmt::Frag, 8),
];
pub(crate) const IPV6: &[Sub] = &[
    sub("src", Some(F::Ipv6Src), Fmt::V6, 128),
    sub("dst", Some(F::Ipv6Dst), Fmt::V6, 128),
    sub("label", None, Fmt::Hex, 20),
    sub("proto", Some(F::NwProto), Fmt::Dec, 8),
    sub("tclass", Some(F::NwTos), Fmt::Hex, 8),
    sub("hlimit", Some(F::NwTtl), Fmt::Dec, 8),
    sub("frag", Some(F::NwFrag), Fmt::Frag, 8),
];
pub(crate) const PORTS: &[Sub] = &[
    sub("src", Some(F::TpSrc), Fmt::Dec, 16),
    sub("dst", Some(F::TpDst), Fmt::Dec, 16),
];
/// ICMP type and code live in the transport-port fields, as in OVS's `struct flow`.
pub(crate) const ICMP: &[Sub] = &[
    sub("type", Some(F::TpSrc), Fmt::Dec, 8),
    sub("code", Some(F::TpDst), Fmt::Dec, 8),
];
pub(crate) const TUNNEL: &[Sub] = &[
    sub("tun_id", Some(F::TunId), Fmt::Hex, 64),
    sub("src", Some(F::TunSrc), Fmt::V4, 32),
    sub("dst", Some(F::TunDst), Fmt::V4, 32),
    sub("ipv6_src", None, Fmt::V6, 128),
    sub("ipv6_dst", None, Fmt::V6, 128),
    sub("tos", None, Fmt::Hex, 8),
    sub("ttl", None, Fmt::Dec, 8),
    sub("tp_src", None, Fmt::Dec, 16),
    sub("tp_dst", None, Fmt::Dec, 16),
    sub("erspan", None, Fmt::Hex, 0),
    sub("vxlan", None, Fmt::Hex, 0),
    sub("geneve", None, Fmt::Hex, 0),
    sub("gtpu", None, Fmt::Hex, 0),
    sub("flags", None, Fmt::Hex, 0),
];
/// `vlan(vid=..,pcp=..[,cfi=0])`, all in the 802.1Q TCI; handled apart.
pub(crate) const VLAN: &[Sub] = &[
    sub("vid", Some(F::VlanTci), Fmt::Dec, 12),
    sub("pcp", Some(F::VlanTci), Fmt::Dec, 3),
    sub("cfi", Some(F::VlanTci), Fmt::Dec, 1),
];

/// Keys with sub-fields nicbench reads.
pub(crate) fn structured(name: &str) -> Option<&'static [Sub]> {
    Some(match name {
        "eth" => ETH,
        "ipv4" => IPV4,
        "ipv6" => IPV6,
        "tcp" | "udp" | "sctp" => PORTS,
        "icmp" | "icmpv6" => ICMP,
        "tunnel" => TUNNEL,
        "vlan" => VLAN,
        _ => return None,
    })
}

/// Keys holding one value.
pub(crate) fn single(name: &str) -> Option<Sub> {
    Some(match name {
        "recirc_id" => sub("recirc_id", Some(F::RecircId), Fmt::Hex, 32),
        "in_port" => sub("in_port", Some(F::InPort), Fmt::Dec, 32),
        "eth_type" => sub("eth_type", Some(F::DlType), Fmt::Hex4, 16),
        "ct_state" => sub("ct_state", Some(F::CtState), Fmt::Flags(CT_STATE_FLAGS), 32),
        "ct_zone" => sub("ct_zone", Some(F::CtZone), Fmt::Hex, 16),
        "ct_mark" => sub("ct_mark", Some(F::CtMark), Fmt::Hex, 32),
        "tcp_flags" => sub("tcp_flags", Some(F::TcpFlags), Fmt::Flags(TCP_FLAGS), 12),
        _ => return None,
    })
}

/// Order the userspace datapath prints keys in (`odp_flow_key_from_flow__`); keys after
/// `encap` go inside `encap(...)` when the flow has a VLAN.
pub(crate) const KEY_ORDER: &[&str] = &[
    "skb_priority",
    "tunnel",
    "skb_mark",
    "ct_state",
    "ct_zone",
    "ct_mark",
    "ct_label",
    "ct_tuple4",
    "ct_tuple6",
    "recirc_id",
    "dp_hash",
    "in_port",
    "packet_type",
    "nsh",
    "eth",
    "vlan",
    "encap",
    "eth_type",
    "mpls",
    "ipv4",
    "ipv6",
    "tcp",
    "udp",
    "sctp",
    "tcp_flags",
    "icmp",
    "icmpv6",
    "arp",
    "nd",
    "nd_ext",
];

/// Rank of a key name in [`KEY_ORDER`]; unknown keys go last.
pub(crate) fn rank(name: &str) -> usize {
    KEY_ORDER.iter().position(|k| *k == name).unwrap_or(KEY_ORDER.len())
}

/// Rank of `encap`: keys ranked after it are inside the VLAN's `encap(...)`.
pub(crate) fn encap_rank() -> usize {
    rank("encap")
}

/// Datapath `frag` names: (name, nicbench `nw_frag` value).
pub(crate) const FRAG: &[(&str, u128)] = &[("no", 0), ("first", 1), ("later", 3)];
