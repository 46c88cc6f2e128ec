//! OpenFlow match field names as `ovs-ofctl` takes them (ovs-fields(7)): the classic NXM
//! names (`dl_src`, `nw_src`, `tp_dst`) and the OXM-style aliases `ovs-ofctl` 3.1 accepts
//! (`eth_src`, `ip_src`, `udp_src`, `tunnel_id`, ...; not `ipv4_src` or `icmpv4_type`, which
//! it rejects as unknown keywords), each mapped onto an [`OfField`] and a value syntax.
//!
//! Fields that cover part of a wider [`OfField`] (`dl_vlan`, `dl_vlan_pcp` and `vlan_vid`
//! inside the 802.1Q TCI; `nw_tos` and `nw_ecn` inside the TOS byte) are stored as masked
//! bits of it, so that `dl_vlan=5` and `vlan_tci=0x1005/0x1fff` are the same match, as in OVS.

use super::values::{self, Addr, CT_STATE_FLAGS, TCP_FLAGS};
use super::OfField;

/// How a field's value is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Syntax {
    /// Address with optional `/mask` (or `/prefix` for IP).
    Addr(Addr),
    /// Integer; `maskable` allows `V/M`.
    Int { maskable: bool },
    /// `dl_vlan`: VID 0..4095, or 0xffff for "no VLAN".
    DlVlan,
    /// `dl_vlan_pcp` / `vlan_pcp`: 0..7.
    VlanPcp,
    /// OXM `vlan_vid`: 13 bits with the 0x1000 "present" bit, maskable.
    VlanVid,
    /// `nw_tos`: the TOS byte's DSCP bits (a multiple of 4).
    NwTos,
    /// `ip_dscp`: DSCP 0..63.
    IpDscp,
    /// `nw_ecn` / `ip_ecn`: 0..3.
    NwEcn,
    /// `nw_frag`: `no`, `yes`, `first`, `later`, `not_later`.
    Frag,
    /// ICMP type or code: one byte, kept in the low byte of a transport-port field (mask 0xff).
    IcmpByte,
    /// `+flag-flag` or `V/M`.
    Flags(values::FlagNames),
}

pub(crate) struct FieldName {
    pub name: &'static str,
    pub field: OfField,
    pub syntax: Syntax,
}

const fn f(name: &'static str, field: OfField, syntax: Syntax) -> FieldName {
    FieldName { name, field, syntax }
}

use OfField as F;
use Syntax as S;
const MASKED: S = S::Int { maskable: true };
const EXACT: S = S::Int { maskable: false };

pub(crate) const FIELDS: &[FieldName] = &[
    f("dl_src", F::DlSrc, S::Addr(Addr::Mac)),
    f("eth_src", F::DlSrc, S::Addr(Addr::Mac)),
    f("dl_dst", F::DlDst, S::Addr(Addr::Mac)),
    f("eth_dst", F::DlDst, S::Addr(Addr::Mac)),
    f("dl_type", F::DlType, EXACT),
    f("eth_type", F::DlType, EXACT),
    f("vlan_tci", F::VlanTci, MASKED),
    f("dl_vlan", F::VlanTci, S::DlVlan),
    f("dl_vlan_pcp", F::VlanTci, S::VlanPcp),
    f("vlan_pcp", F::VlanTci, S::VlanPcp),
    f("vlan_vid", F::VlanTci, S::VlanVid),
    f("nw_src", F::NwSrc, S::Addr(Addr::V4)),
    f("ip_src", F::NwSrc, S::Addr(Addr::V4)),
    f("nw_dst", F::NwDst, S::Addr(Addr::V4)),
    f("ip_dst", F::NwDst, S::Addr(Addr::V4)),
    f("ipv6_src", F::Ipv6Src, S::Addr(Addr::V6)),
    f("ipv6_dst", F::Ipv6Dst, S::Addr(Addr::V6)),
    f("nw_proto", F::NwProto, EXACT),
    f("ip_proto", F::NwProto, EXACT),
    f("nw_tos", F::NwTos, S::NwTos),
    f("ip_dscp", F::NwTos, S::IpDscp),
    f("nw_ecn", F::NwTos, S::NwEcn),
    f("ip_ecn", F::NwTos, S::NwEcn),
    f("nw_ttl", F::NwTtl, EXACT),
    f("nw_frag", F::NwFrag, S::Frag),
    f("ip_frag", F::NwFrag, S::Frag),
    f("tp_src", F::TpSrc, MASKED),
    f("tcp_src", F::TpSrc, MASKED),
    f("udp_src", F::TpSrc, MASKED),
    f("sctp_src", F::TpSrc, MASKED),
    f("tp_dst", F::TpDst, MASKED),
    f("tcp_dst", F::TpDst, MASKED),
    f("udp_dst", F::TpDst, MASKED),
    f("sctp_dst", F::TpDst, MASKED),
    // ICMP type and code live in the transport-port fields, as in OVS's `struct flow`.
    f("icmp_type", F::TpSrc, S::IcmpByte),
    f("icmpv6_type", F::TpSrc, S::IcmpByte),
    f("icmp_code", F::TpDst, S::IcmpByte),
    f("icmpv6_code", F::TpDst, S::IcmpByte),
    f("tcp_flags", F::TcpFlags, S::Flags(TCP_FLAGS)),
    f("tun_id", F::TunId, MASKED),
    f("tunnel_id", F::TunId, MASKED),
    f("tun_src", F::TunSrc, S::Addr(Addr::V4)),
    f("tun_dst", F::TunDst, S::Addr(Addr::V4)),
    f("ct_state", F::CtState, S::Flags(CT_STATE_FLAGS)),
    f("ct_zone", F::CtZone, EXACT),
    f("ct_mark", F::CtMark, MASKED),
    f("metadata", F::Metadata, MASKED),
];

pub(crate) fn lookup(name: &str) -> Option<&'static FieldName> {
    FIELDS.iter().find(|f| f.name == name)
}

pub(crate) fn names_list() -> String {
    FIELDS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// Protocol shorthands: (name, dl_type, nw_proto).
pub(crate) const SHORTHANDS: &[(&str, u16, Option<u8>)] = &[
    ("ip", 0x0800, None),
    ("ipv6", 0x86dd, None),
    ("arp", 0x0806, None),
    ("rarp", 0x8035, None),
    ("tcp", 0x0800, Some(6)),
    ("udp", 0x0800, Some(17)),
    ("sctp", 0x0800, Some(132)),
    ("icmp", 0x0800, Some(1)),
    ("tcp6", 0x86dd, Some(6)),
    ("udp6", 0x86dd, Some(17)),
    ("sctp6", 0x86dd, Some(132)),
    ("icmp6", 0x86dd, Some(58)),
];

/// `nw_frag` names: (name, value, mask); bit 0 = fragment, bit 1 = later fragment.
pub(crate) const FRAG_NAMES: &[(&str, u128, u128)] = &[
    ("no", 0, 3),
    ("yes", 1, 1),
    ("first", 1, 3),
    ("later", 3, 3),
    ("not_later", 0, 2),
];

pub(crate) const VLAN_CFI: u128 = 0x1000;
pub(crate) const VLAN_VID_MASK: u128 = 0x0fff;
pub(crate) const VLAN_PCP_MASK: u128 = 0xe000;

/// Parses `text` as the value of `name`: (value, mask) in the bits of `name.field`.
/// Bits outside an explicit mask are an error; an IP prefix clears host bits, as
/// `ovs-ofctl` does for `nw_src=10.0.0.1/8`.
pub(crate) fn parse_value(name: &FieldName, text: &str) -> Result<(u128, u128), String> {
    let bits = name.field.bits();
    let (value, mask) = match name.syntax {
        S::Addr(kind) => {
            let (v, m) = values::addr_masked(kind, text)?;
            if kind == Addr::Mac {
                check_inside(v, m, values::fmt_mac)?;
                (v, m)
            } else {
                (v & m, m)
            }
        }
        S::Int { maskable } => {
            if !maskable && text.contains('/') {
                return Err(format!("{} takes no mask", name.name));
            }
            let (v, m) = values::uint_masked(text, bits)?;
            check_inside(v, m, values::hex)?;
            (v, m)
        }
        S::DlVlan => {
            let v = values::uint(text, 16)?;
            match v {
                0xffff => (0, VLAN_CFI | VLAN_VID_MASK),
                0..=0xfff => (VLAN_CFI | v, VLAN_CFI | VLAN_VID_MASK),
                _ => {
                    return Err(format!(
                        "dl_vlan {text} is neither a VLAN id 0..4095 nor 0xffff (no VLAN)"
                    ))
                }
            }
        }
        S::VlanPcp => {
            let v = values::uint(text, 8)?;
            if v > 7 {
                return Err(format!("VLAN priority {text} is above 7"));
            }
            (VLAN_CFI | (v << 13), VLAN_CFI | VLAN_PCP_MASK)
        }
        S::VlanVid => {
            let (v, m) = values::uint_masked(text, 13)?;
            let m = if text.contains('/') { m } else { 0x1fff };
            check_inside(v, m, values::hex)?;
            (v, m)
        }
        S::NwTos => {
            let v = values::uint(text, 8)?;
            if v & 3 != 0 {
                return Err(format!("nw_tos {text} sets ECN bits: it takes the DSCP bits of the TOS byte, a multiple of 4 (use nw_ecn for ECN)"));
            }
            (v, 0xfc)
        }
        S::IpDscp => {
            let v = values::uint(text, 6)?;
            (v << 2, 0xfc)
        }
        S::NwEcn => {
            let v = values::uint(text, 2)?;
            (v, 0x03)
        }
        S::IcmpByte => (values::uint(text, 8)?, 0xff),
        S::Frag => match FRAG_NAMES.iter().find(|(n, _, _)| *n == text) {
            Some(&(_, v, m)) => (v, m),
            None => {
                return Err(format!(
                    "bad nw_frag '{text}' (allowed: no, yes, first, later, not_later)"
                ))
            }
        },
        S::Flags(names) => {
            if text.starts_with(['+', '-']) {
                values::flags_plus_minus(text, names)?
            } else {
                let (v, m) = values::uint_masked(text, bits)?;
                check_inside(v, m, values::hex)?;
                (v, m)
            }
        }
    };
    Ok((value, mask))
}

fn check_inside(v: u128, m: u128, fmt: impl Fn(u128) -> String) -> Result<(), String> {
    if v & !m != 0 {
        return Err(format!(
            "value {} has bits outside mask {} (write the value with those bits cleared)",
            fmt(v),
            fmt(m)
        ));
    }
    Ok(())
}
