//! testpmd's field tokens per item (DPDK 22.11 `cmdline_flow.c`) and how their values read.
//!
//! A token writes `width` bits at `shift` inside one model slot. Plain tokens must fit
//! their width (testpmd range-checks the C field); bit-field tokens accept any 64-bit
//! number and keep the low `width` bits, as testpmd's bit-field filler does (`vid is 4096`
//! is accepted and matches VID 0); boolean tokens take 0/1/on/off/true/false/yes/no.

use crate::lex::parse_c_uint;
use crate::model::{ones, prefix_mask, ItemKind, MacAddr, SlotDesc, ValueKind};
use std::net::{Ipv4Addr, Ipv6Addr};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    Plain,
    Bitfield,
    Boolean,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct TokenDesc {
    pub name: &'static str,
    pub slot: usize,
    pub shift: u32,
    pub width: u32,
    pub form: Form,
}

const fn plain(name: &'static str, slot: usize, width: u32) -> TokenDesc {
    TokenDesc {
        name,
        slot,
        shift: 0,
        width,
        form: Form::Plain,
    }
}
const fn bits(name: &'static str, slot: usize, shift: u32, width: u32) -> TokenDesc {
    TokenDesc {
        name,
        slot,
        shift,
        width,
        form: Form::Bitfield,
    }
}
const fn boolean(name: &'static str, slot: usize, shift: u32) -> TokenDesc {
    TokenDesc {
        name,
        slot,
        shift,
        width: 1,
        form: Form::Boolean,
    }
}

const ETH: &[TokenDesc] = &[
    plain("dst", 0, 48),
    plain("src", 1, 48),
    plain("type", 2, 16),
    bits("has_vlan", 3, 0, 1),
];
const VLAN: &[TokenDesc] = &[
    plain("tci", 0, 16),
    bits("pcp", 0, 13, 3),
    bits("dei", 0, 12, 1),
    bits("vid", 0, 0, 12),
    plain("inner_type", 1, 16),
    bits("has_more_vlan", 2, 0, 1),
];
const IPV4: &[TokenDesc] = &[
    plain("version_ihl", 0, 8),
    plain("tos", 1, 8),
    plain("packet_id", 2, 16),
    plain("fragment_offset", 3, 16),
    plain("ttl", 4, 8),
    plain("proto", 5, 8),
    plain("src", 6, 32),
    plain("dst", 7, 32),
];
const IPV6: &[TokenDesc] = &[
    bits("tc", 0, 0, 8),
    bits("flow", 1, 0, 20),
    plain("proto", 2, 8),
    plain("hop", 3, 8),
    plain("src", 4, 128),
    plain("dst", 5, 128),
    bits("has_frag_ext", 6, 0, 1),
];
const TCP: &[TokenDesc] = &[plain("src", 0, 16), plain("dst", 1, 16), plain("flags", 2, 8)];
const UDP: &[TokenDesc] = &[plain("src", 0, 16), plain("dst", 1, 16)];
const SCTP: &[TokenDesc] = &[
    plain("src", 0, 16),
    plain("dst", 1, 16),
    plain("tag", 2, 32),
    plain("cksum", 3, 32),
];
const ICMP: &[TokenDesc] = &[
    plain("type", 0, 8),
    plain("code", 1, 8),
    plain("ident", 2, 16),
    plain("seq", 3, 16),
];
const ICMP6: &[TokenDesc] = &[plain("type", 0, 8), plain("code", 1, 8)];
const VXLAN: &[TokenDesc] = &[plain("vni", 0, 24), plain("last_rsvd", 1, 8)];
const GRE: &[TokenDesc] = &[
    plain("c_rsvd0_ver", 0, 16),
    boolean("c_bit", 0, 15),
    boolean("k_bit", 0, 13),
    boolean("s_bit", 0, 12),
    plain("protocol", 1, 16),
];
const GRE_KEY: &[TokenDesc] = &[plain("value", 0, 32)];
const MPLS: &[TokenDesc] = &[bits("label", 0, 0, 20), bits("tc", 1, 0, 3), bits("s", 2, 0, 1)];

pub(crate) fn tokens(kind: ItemKind) -> &'static [TokenDesc] {
    match kind {
        ItemKind::Eth => ETH,
        ItemKind::Vlan => VLAN,
        ItemKind::Ipv4 => IPV4,
        ItemKind::Ipv6 => IPV6,
        ItemKind::Tcp => TCP,
        ItemKind::Udp => UDP,
        ItemKind::Sctp => SCTP,
        ItemKind::Icmp => ICMP,
        ItemKind::Icmp6 => ICMP6,
        ItemKind::Vxlan => VXLAN,
        ItemKind::Gre => GRE,
        ItemKind::GreKey => GRE_KEY,
        ItemKind::Mpls => MPLS,
    }
}

pub(crate) fn item_kind(name: &str) -> Option<ItemKind> {
    ItemKind::ALL.into_iter().find(|k| k.name() == name)
}

/// Reads a spec/last/mask value for `tok` of slot `desc`, right-aligned in `tok.width` bits.
pub(crate) fn read_value(tok: &TokenDesc, desc: &SlotDesc, text: &str) -> Result<u128, String> {
    match desc.kind {
        ValueKind::Mac => text
            .parse::<MacAddr>()
            .map(crate::model::FieldBits::to_bits)
            .map_err(|_| format!("expected a MAC address for field '{}', found '{text}'", tok.name)),
        ValueKind::Ipv4 => text
            .parse::<Ipv4Addr>()
            .map(|a| u32::from(a) as u128)
            .map_err(|_| format!("expected an IPv4 address for field '{}', found '{text}'", tok.name)),
        ValueKind::Ipv6 => text
            .parse::<Ipv6Addr>()
            .map(u128::from)
            .map_err(|_| format!("expected an IPv6 address for field '{}', found '{text}'", tok.name)),
        ValueKind::Dec | ValueKind::Hex => {
            if tok.form == Form::Boolean {
                return read_bool(text).map(u128::from).ok_or_else(|| {
                    format!(
                        "expected a boolean (0, 1, on, off, true, false, yes, no) for field '{}', found '{text}'",
                        tok.name
                    )
                });
            }
            let v = parse_c_uint(text)
                .ok_or_else(|| format!("expected a number for field '{}', found '{text}'", tok.name))?
                as u128;
            if tok.form == Form::Plain && v > ones(tok.width) {
                return Err(format!(
                    "value {text} does not fit field '{}' ({} bits)",
                    tok.name, tok.width
                ));
            }
            Ok(v & ones(tok.width))
        }
    }
}

/// Reads a `prefix` length: the top `len` bits of the token's width.
pub(crate) fn read_prefix(tok: &TokenDesc, text: &str) -> Result<u128, String> {
    match parse_c_uint(text) {
        Some(len) if len <= tok.width as u64 => Ok(prefix_mask(len as u32, tok.width)),
        Some(_) => Err(format!(
            "prefix {text} is longer than field '{}' ({} bits)",
            tok.name, tok.width
        )),
        None => Err(format!(
            "expected a prefix length for field '{}', found '{text}'",
            tok.name
        )),
    }
}

fn read_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "on" | "true" | "yes" => Some(true),
        "0" | "off" | "false" | "no" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_tokens_fit_their_slots() {
        for kind in ItemKind::ALL {
            let slots = kind.slots();
            for t in tokens(kind) {
                let s = &slots[t.slot];
                assert!(t.shift + t.width <= s.width_bits, "{kind:?}.{}", t.name);
            }
            // Every slot is reachable by a token covering it whole.
            for (i, s) in slots.iter().enumerate() {
                assert!(
                    tokens(kind).iter().any(|t| t.slot == i && t.width == s.width_bits),
                    "{kind:?}.{}",
                    s.name
                );
            }
        }
    }

    #[test]
    fn test_read_values() {
        let slots = ItemKind::Udp.slots();
        assert_eq!(read_value(&UDP[1], &slots[1], "0x50"), Ok(80));
        assert!(read_value(&UDP[1], &slots[1], "65536")
            .unwrap_err()
            .contains("does not fit"));
        let vs = ItemKind::Vlan.slots();
        assert_eq!(
            read_value(&VLAN[3], &vs[0], "4097"),
            Ok(1),
            "bit-fields truncate like testpmd"
        );
        assert_eq!(read_value(&GRE[1], &ItemKind::Gre.slots()[0], "on"), Ok(1));
        assert!(read_value(&GRE[1], &ItemKind::Gre.slots()[0], "2").is_err());
        assert_eq!(
            read_value(&IPV4[6], &ItemKind::Ipv4.slots()[6], "10.0.0.1"),
            Ok(0x0a00_0001)
        );
        assert!(read_value(&IPV4[6], &ItemKind::Ipv4.slots()[6], "10.0.0.256").is_err());
        assert_eq!(read_prefix(&IPV4[6], "24"), Ok(0xffff_ff00));
        assert!(read_prefix(&IPV4[6], "33").is_err());
        assert_eq!(read_prefix(&VLAN[3], "12"), Ok(0xfff));
    }
}
