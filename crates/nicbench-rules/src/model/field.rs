//! One matched header field: `value` under `mask`, optionally a range up to `last`.
//!
//! This is rte_flow's spec/mask/last triple reduced to one field. Invariants (kept by
//! [`Field::new`], which every parser goes through, so two fields that match the same
//! packets compare equal):
//! - `mask != 0` — a field with an all-zero mask matches everything and is simply absent
//!   (`None` in the item struct);
//! - `value & !mask == 0` and `last & !mask == 0`;
//! - `last` is `None` rather than `Some(0)` or `Some(value)`, which rte_flow ignores
//!   ("a zeroed last field, or one equal to spec, is ignored").

use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A type a header field can hold, seen as an unsigned bit string of `BITS` bits.
pub trait FieldBits: Copy + Eq + fmt::Debug {
    /// Width of the type \[bits\]; a field's own width (e.g. 24 for a VNI) may be smaller.
    const BITS: u32;
    fn to_bits(self) -> u128;
    /// Keeps the low `BITS` bits.
    fn from_bits(bits: u128) -> Self;
}

macro_rules! uint_bits {
    ($($t:ty),*) => {$(
        impl FieldBits for $t {
            const BITS: u32 = <$t>::BITS;
            fn to_bits(self) -> u128 { self as u128 }
            fn from_bits(bits: u128) -> Self { bits as $t }
        }
    )*};
}
uint_bits!(u8, u16, u32, u64, u128);

impl FieldBits for Ipv4Addr {
    const BITS: u32 = 32;
    fn to_bits(self) -> u128 {
        u32::from(self) as u128
    }
    fn from_bits(bits: u128) -> Self {
        Ipv4Addr::from(bits as u32)
    }
}

impl FieldBits for Ipv6Addr {
    const BITS: u32 = 128;
    fn to_bits(self) -> u128 {
        u128::from(self)
    }
    fn from_bits(bits: u128) -> Self {
        Ipv6Addr::from(bits)
    }
}

/// An Ethernet MAC address, most significant byte first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
pub struct MacAddr(pub [u8; 6]);

impl FieldBits for MacAddr {
    const BITS: u32 = 48;
    fn to_bits(self) -> u128 {
        self.0.iter().fold(0u128, |acc, &b| (acc << 8) | b as u128)
    }
    fn from_bits(bits: u128) -> Self {
        let mut bytes = [0u8; 6];
        for (i, b) in bytes.iter_mut().enumerate() {
            *b = (bits >> (8 * (5 - i))) as u8;
        }
        MacAddr(bytes)
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            b[0], b[1], b[2], b[3], b[4], b[5]
        )
    }
}

impl MacAddr {
    /// Parses colon-separated hex groups: six groups of `min_digits..=2` digits, or (when
    /// `allow_three_groups`) three groups of four digits (`0011:2233:4455`).
    pub(crate) fn parse_groups(s: &str, min_digits: usize, allow_three_groups: bool) -> Option<Self> {
        let groups: Vec<&str> = s.split(':').collect();
        let hex_ok =
            |g: &str, lo: usize, hi: usize| (lo..=hi).contains(&g.len()) && g.bytes().all(|c| c.is_ascii_hexdigit());
        let mut bytes = [0u8; 6];
        if groups.len() == 6 {
            for (b, g) in bytes.iter_mut().zip(&groups) {
                if !hex_ok(g, min_digits, 2) {
                    return None;
                }
                *b = u8::from_str_radix(g, 16).ok()?;
            }
        } else if groups.len() == 3 && allow_three_groups {
            for (i, g) in groups.iter().enumerate() {
                if !hex_ok(g, 4, 4) {
                    return None;
                }
                let w = u16::from_str_radix(g, 16).ok()?;
                bytes[2 * i] = (w >> 8) as u8;
                bytes[2 * i + 1] = w as u8;
            }
        } else {
            return None;
        }
        Some(MacAddr(bytes))
    }
}

impl FromStr for MacAddr {
    type Err = String;
    /// Accepts `00:11:22:33:44:55` (two digits per group) and `0011:2233:4455`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        MacAddr::parse_groups(s, 2, true).ok_or_else(|| format!("'{s}' is not a MAC address"))
    }
}

/// All-ones mask of `bits` bits.
pub(crate) fn ones(bits: u32) -> u128 {
    if bits >= 128 {
        u128::MAX
    } else {
        (1u128 << bits) - 1
    }
}

/// Mask with the top `len` of `width` bits set (an address prefix).
pub(crate) fn prefix_mask(len: u32, width: u32) -> u128 {
    if len == 0 {
        0
    } else {
        ones(width) & !ones(width - len.min(width))
    }
}

/// Prefix length of `mask` if it is a prefix mask of a `width`-bit field.
pub(crate) fn mask_prefix_len(mask: u128, width: u32) -> Option<u32> {
    let len = (mask << (128 - width)).leading_ones();
    (prefix_mask(len, width) == mask).then_some(len)
}

/// A header field match: `packet & mask == value`, or `value <= packet & mask <= last`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct Field<T> {
    pub value: T,
    pub mask: T,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<T>,
}

impl<T: FieldBits> Field<T> {
    /// The canonical field for (value, mask, last); `None` when the mask is all zero.
    pub fn new(value: T, mask: T, last: Option<T>) -> Option<Self> {
        Field::<u128>::canonical(value.to_bits(), mask.to_bits(), last.map(T::to_bits)).map(Field::from_raw)
    }

    /// Exact match on the whole type width.
    pub fn exact(value: T) -> Self {
        Field {
            value,
            mask: T::from_bits(ones(T::BITS)),
            last: None,
        }
    }

    /// `value/len`: the top `len` bits of the type must equal those of `value`.
    pub fn prefix(value: T, len: u32) -> Option<Self> {
        Self::new(value, T::from_bits(prefix_mask(len, T::BITS)), None)
    }

    /// Inclusive range on the whole type width.
    pub fn range(lo: T, hi: T) -> Self {
        let full = T::from_bits(ones(T::BITS));
        // A full mask is never zero, so `new` always returns Some here.
        Self::new(lo, full, Some(hi)).unwrap_or(Field {
            value: lo,
            mask: full,
            last: None,
        })
    }

    /// Whether a packet's field value satisfies this match.
    pub fn matches(&self, packet_value: T) -> bool {
        let masked = packet_value.to_bits() & self.mask.to_bits();
        match self.last {
            None => masked == self.value.to_bits(),
            Some(last) => (self.value.to_bits()..=last.to_bits()).contains(&masked),
        }
    }

    /// Prefix length when the mask is a prefix of the type width and there is no range.
    pub fn prefix_len(&self) -> Option<u32> {
        if self.last.is_some() {
            return None;
        }
        mask_prefix_len(self.mask.to_bits(), T::BITS)
    }

    pub(crate) fn to_raw(self) -> Field<u128> {
        Field {
            value: self.value.to_bits(),
            mask: self.mask.to_bits(),
            last: self.last.map(T::to_bits),
        }
    }

    pub(crate) fn from_raw(raw: Field<u128>) -> Self {
        Field {
            value: T::from_bits(raw.value),
            mask: T::from_bits(raw.mask),
            last: raw.last.map(T::from_bits),
        }
    }
}

impl Field<u128> {
    pub(crate) fn canonical(value: u128, mask: u128, last: Option<u128>) -> Option<Self> {
        if mask == 0 {
            return None;
        }
        let value = value & mask;
        let last = last.map(|l| l & mask).filter(|&l| l != 0 && l != value);
        Some(Field { value, mask, last })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_canonical_drops_zero_mask_and_trivial_last() {
        assert_eq!(Field::new(5u16, 0, None), None);
        let f = Field::new(0x1234u16, 0xff00, Some(0x1234)).unwrap();
        assert_eq!(
            f,
            Field {
                value: 0x1200,
                mask: 0xff00,
                last: None
            }
        );
        assert_eq!(Field::new(7u16, 0xffff, Some(0)).unwrap().last, None);
        assert_eq!(Field::new(7u16, 0xffff, Some(9)).unwrap().last, Some(9));
    }

    #[test]
    fn test_matches_prefix_and_range() {
        let net = Field::prefix(Ipv4Addr::new(10, 1, 2, 3), 16).unwrap();
        assert_eq!(net.value, Ipv4Addr::new(10, 1, 0, 0));
        assert!(net.matches(Ipv4Addr::new(10, 1, 200, 1)));
        assert!(!net.matches(Ipv4Addr::new(10, 2, 0, 1)));
        assert_eq!(net.prefix_len(), Some(16));
        let ports = Field::range(1000u16, 2000);
        assert!(ports.matches(1000) && ports.matches(2000) && !ports.matches(2001));
        assert_eq!(ports.prefix_len(), None);
    }

    #[test]
    fn test_mac_parse_and_bits() {
        let m: MacAddr = "00:11:22:33:44:AA".parse().unwrap();
        assert_eq!(m.to_string(), "00:11:22:33:44:aa");
        assert_eq!(MacAddr::from_bits(m.to_bits()), m);
        assert_eq!("0011:2233:44aa".parse::<MacAddr>().unwrap(), m);
        assert!("0:1:2:3:4:5".parse::<MacAddr>().is_err());
        assert!("00:11:22:33:44".parse::<MacAddr>().is_err());
        assert!(MacAddr::parse_groups("0:1:2:3:4:5", 1, false).is_some());
    }

    #[test]
    fn test_prefix_masks() {
        assert_eq!(prefix_mask(24, 32), 0xffff_ff00);
        assert_eq!(prefix_mask(0, 32), 0);
        assert_eq!(prefix_mask(128, 128), u128::MAX);
        assert_eq!(mask_prefix_len(0xffff_ff00, 32), Some(24));
        assert_eq!(mask_prefix_len(0xff00_ff00, 32), None);
        assert_eq!(mask_prefix_len(0, 32), Some(0));
    }
}
