//! Value syntaxes shared by the OpenFlow and datapath parsers and writers: integers as C
//! `strtoull(_, 0)` reads them, MAC, IPv4 and IPv6 addresses with masks or prefixes, and
//! the flag sets (`+trk-new`, `syn|ack`) OVS uses for `tcp_flags` and `ct_state`.
//!
//! Values are right-aligned in a `u128` like [`super::FieldMatch`].

use crate::lex::parse_c_uint;
use std::net::{Ipv4Addr, Ipv6Addr};

/// Integer that must fit in `bits`.
pub(crate) fn uint(text: &str, bits: u32) -> Result<u128, String> {
    let v = parse_c_uint(text).ok_or_else(|| format!("'{text}' is not a number (decimal, 0x hex or 0 octal)"))?;
    let v = v as u128;
    if bits < 128 && v >> bits != 0 {
        return Err(format!("{text} does not fit in {bits} bits"));
    }
    Ok(v)
}

pub(crate) fn ones(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// High `len` bits of a `bits`-wide mask.
pub(crate) fn prefix_mask(bits: u32, len: u32) -> u128 {
    if len == 0 {
        0
    } else {
        ones(bits) & !ones(bits - len)
    }
}

/// Prefix length if `mask` is a prefix mask of a `bits`-wide field.
pub(crate) fn mask_prefix_len(bits: u32, mask: u128) -> Option<u32> {
    (0..=bits).find(|&len| prefix_mask(bits, len) == mask)
}

pub(crate) fn mac(text: &str) -> Result<u128, String> {
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() != 6 || parts.iter().any(|p| p.is_empty() || p.len() > 2) {
        return Err(format!("'{text}' is not a MAC address (xx:xx:xx:xx:xx:xx)"));
    }
    let mut v = 0u128;
    for p in parts {
        let b = u8::from_str_radix(p, 16).map_err(|_| format!("'{text}' is not a MAC address (xx:xx:xx:xx:xx:xx)"))?;
        v = (v << 8) | b as u128;
    }
    Ok(v)
}

pub(crate) fn ipv4(text: &str) -> Result<u128, String> {
    text.parse::<Ipv4Addr>()
        .map(|a| u32::from(a) as u128)
        .map_err(|_| format!("'{text}' is not an IPv4 address"))
}

pub(crate) fn ipv6(text: &str) -> Result<u128, String> {
    text.parse::<Ipv6Addr>()
        .map(u128::from)
        .map_err(|_| format!("'{text}' is not an IPv6 address"))
}

pub(crate) fn fmt_mac(v: u128) -> String {
    let b = (v as u64).to_be_bytes();
    format!(
        "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
        b[2], b[3], b[4], b[5], b[6], b[7]
    )
}

pub(crate) fn fmt_ipv4(v: u128) -> String {
    Ipv4Addr::from(v as u32).to_string()
}

pub(crate) fn fmt_ipv6(v: u128) -> String {
    Ipv6Addr::from(v).to_string()
}

/// Address kind of a field, for the `addr[/mask|/prefix]` forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Addr {
    Mac,
    V4,
    V6,
}

impl Addr {
    pub fn bits(self) -> u32 {
        match self {
            Addr::Mac => 48,
            Addr::V4 => 32,
            Addr::V6 => 128,
        }
    }
    pub fn parse(self, text: &str) -> Result<u128, String> {
        match self {
            Addr::Mac => mac(text),
            Addr::V4 => ipv4(text),
            Addr::V6 => ipv6(text),
        }
    }
    pub fn format(self, v: u128) -> String {
        match self {
            Addr::Mac => fmt_mac(v),
            Addr::V4 => fmt_ipv4(v),
            Addr::V6 => fmt_ipv6(v),
        }
    }
}

/// `addr`, `addr/mask-addr`, or (IP only) `addr/prefix-len`. Returns the value as written
/// (callers decide whether bits outside the mask are an error) and the mask.
pub(crate) fn addr_masked(kind: Addr, text: &str) -> Result<(u128, u128), String> {
    let bits = kind.bits();
    let Some((v, m)) = text.split_once('/') else {
        return Ok((kind.parse(text)?, ones(bits)));
    };
    let value = kind.parse(v)?;
    if kind != Addr::Mac && !m.is_empty() && m.chars().all(|c| c.is_ascii_digit()) {
        let len: u32 = m.parse().map_err(|_| format!("bad prefix length '{m}'"))?;
        if len > bits {
            return Err(format!("prefix length {len} is longer than the {bits}-bit address"));
        }
        return Ok((value, prefix_mask(bits, len)));
    }
    Ok((value, kind.parse(m)?))
}

/// `V` or `V/M` integers of a `bits`-wide field.
pub(crate) fn uint_masked(text: &str, bits: u32) -> Result<(u128, u128), String> {
    match text.split_once('/') {
        None => Ok((uint(text, bits)?, ones(bits))),
        Some((v, m)) => Ok((uint(v, bits)?, uint(m, bits)?)),
    }
}

/// Named bits of a flag field: `(name, bit)`.
pub(crate) type FlagNames = &'static [(&'static str, u128)];

/// `tcp_flags` bits (ovs-fields(7)).
pub(crate) const TCP_FLAGS: FlagNames = &[
    ("fin", 0x001),
    ("syn", 0x002),
    ("rst", 0x004),
    ("psh", 0x008),
    ("ack", 0x010),
    ("urg", 0x020),
    ("ece", 0x040),
    ("cwr", 0x080),
    ("ns", 0x100),
];

/// `ct_state` bits (ovs-fields(7)).
pub(crate) const CT_STATE_FLAGS: FlagNames = &[
    ("new", 0x01),
    ("est", 0x02),
    ("rel", 0x04),
    ("rpl", 0x08),
    ("inv", 0x10),
    ("trk", 0x20),
    ("snat", 0x40),
    ("dnat", 0x80),
];

/// `+name-name...` (each named bit set or cleared, the mask is the named bits).
pub(crate) fn flags_plus_minus(text: &str, names: FlagNames) -> Result<(u128, u128), String> {
    let allowed = || names.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let (mut value, mut mask) = (0u128, 0u128);
    let mut rest = text;
    if rest.is_empty() {
        return Err("expected +FLAG or -FLAG".into());
    }
    while !rest.is_empty() {
        let set = match rest.as_bytes()[0] {
            b'+' => true,
            b'-' => false,
            _ => return Err(format!("expected '+' or '-' before a flag in '{text}'")),
        };
        rest = &rest[1..];
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let name = &rest[..end];
        let Some(&(_, bit)) = names.iter().find(|(n, _)| *n == name) else {
            return Err(format!("unknown flag '{name}' (allowed: {})", allowed()));
        };
        if mask & bit != 0 {
            return Err(format!("flag '{name}' given twice"));
        }
        mask |= bit;
        if set {
            value |= bit;
        }
        rest = &rest[end..];
    }
    Ok((value, mask))
}

/// `+a-b` form of a masked flag value; `None` if the mask has unnamed bits.
pub(crate) fn fmt_flags_plus_minus(value: u128, mask: u128, names: FlagNames) -> Option<String> {
    let named: u128 = names.iter().map(|(_, b)| b).sum();
    if mask & !named != 0 || mask == 0 {
        return None;
    }
    let mut s = String::new();
    for (n, b) in names {
        if mask & b != 0 {
            s.push(if value & b != 0 { '+' } else { '-' });
            s.push_str(n);
        }
    }
    Some(s)
}

/// `0x..` hex, or `0` for zero (C `%#x`).
pub(crate) fn hex(v: u128) -> String {
    if v == 0 {
        "0".into()
    } else {
        format!("{v:#x}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_addr_forms() {
        assert_eq!(addr_masked(Addr::V4, "10.0.0.1/8").unwrap(), (0x0a000001, 0xff000000));
        assert_eq!(
            addr_masked(Addr::V4, "10.0.0.0/255.255.0.0").unwrap(),
            (0x0a000000, 0xffff0000)
        );
        assert_eq!(
            addr_masked(Addr::Mac, "01:00:00:00:00:00/01:00:00:00:00:00").unwrap().1,
            0x010000000000
        );
        assert_eq!(addr_masked(Addr::V6, "2001:db8::/32").unwrap().1, prefix_mask(128, 32));
        assert!(addr_masked(Addr::V4, "10.0.0.1/33")
            .unwrap_err()
            .contains("prefix length 33"));
        assert!(mac("01:02:03:04:05").is_err());
        assert_eq!(fmt_mac(0x0011_2233_4455), "00:11:22:33:44:55");
        assert_eq!(mask_prefix_len(32, 0xffffff00), Some(24));
        assert_eq!(mask_prefix_len(32, 0xff00ff00), None);
    }

    #[test]
    fn test_flags() {
        assert_eq!(flags_plus_minus("+trk-new", CT_STATE_FLAGS).unwrap(), (0x20, 0x21));
        assert!(flags_plus_minus("+trk+foo", CT_STATE_FLAGS)
            .unwrap_err()
            .contains("allowed: new, est"));
        assert!(flags_plus_minus("trk", CT_STATE_FLAGS).is_err());
        assert_eq!(fmt_flags_plus_minus(0x12, 0x13, TCP_FLAGS).unwrap(), "-fin+syn+ack");
        assert_eq!(fmt_flags_plus_minus(0x0, 0x800, TCP_FLAGS), None);
        assert_eq!(hex(0), "0");
        assert_eq!(hex(26), "0x1a");
    }
}
