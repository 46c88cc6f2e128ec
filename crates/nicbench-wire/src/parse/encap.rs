//! Hand-written decoders for the headers etherparse 0.21 lacks: MPLS label
//! stack entries, GRE (RFC 2784 / 2890, and PPTP's version 1), VXLAN
//! (RFC 7348) and the SCTP common header (RFC 9260).
//!
//! Each decoder reads one header from the start of `data` and returns the
//! decoded fields plus the header length \[bytes\], or the [`StopReason`] —
//! never panics, whatever `data` holds.

use super::{Gre, MplsEntry, Sctp, StopReason};

/// IANA-assigned UDP destination port of VXLAN.
pub const VXLAN_UDP_PORT: u16 = 4789;
/// VXLAN header length \[bytes\].
pub const VXLAN_HEADER_LEN: usize = 8;
/// MPLS label stack entry length \[bytes\].
pub const MPLS_ENTRY_LEN: usize = 4;
/// SCTP common header length \[bytes\].
pub const SCTP_HEADER_LEN: usize = 12;

/// VXLAN "I" flag: the VNI field is valid.
const VXLAN_FLAG_VNI_VALID: u8 = 0x08;

// GRE flag bits in the first 16-bit word.
const GRE_CHECKSUM: u16 = 0x8000;
const GRE_ROUTING: u16 = 0x4000;
const GRE_KEY: u16 = 0x2000;
const GRE_SEQ: u16 = 0x1000;
/// PPTP (version 1) acknowledgment number present.
const GRE_ACK: u16 = 0x0080;
const GRE_VERSION_MASK: u16 = 0x0007;

#[inline]
fn truncated(needed_bytes: usize, available_bytes: usize) -> StopReason {
    StopReason::Truncated {
        needed_bytes,
        available_bytes,
    }
}

#[inline]
fn be16(b: &[u8], at: usize) -> u16 {
    // Callers check the length first; `get` keeps this panic-free regardless.
    match b.get(at..at + 2) {
        Some(&[x, y]) => u16::from_be_bytes([x, y]),
        _ => 0,
    }
}

#[inline]
fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(&[w, x, y, z]) => u32::from_be_bytes([w, x, y, z]),
        _ => 0,
    }
}

/// Decodes one MPLS label stack entry.
pub fn decode_mpls(data: &[u8]) -> Result<MplsEntry, StopReason> {
    if data.len() < MPLS_ENTRY_LEN {
        return Err(truncated(MPLS_ENTRY_LEN, data.len()));
    }
    let word = be32(data, 0);
    Ok(MplsEntry {
        label: word >> 12,
        tc: ((word >> 9) & 0x7) as u8,
        bottom_of_stack: (word >> 8) & 1 == 1,
        ttl: (word & 0xff) as u8,
    })
}

/// Decodes a VXLAN header: returns (vni, flags).
pub fn decode_vxlan(data: &[u8]) -> Result<(u32, u8), StopReason> {
    if data.len() < VXLAN_HEADER_LEN {
        return Err(truncated(VXLAN_HEADER_LEN, data.len()));
    }
    let flags = data.first().copied().unwrap_or(0);
    // RFC 7348: the I flag MUST be set; receivers drop frames without it,
    // so its VNI means nothing.
    if flags & VXLAN_FLAG_VNI_VALID == 0 {
        return Err(StopReason::Malformed("VXLAN I flag (VNI valid) not set"));
    }
    Ok((be32(data, 4) >> 8, flags))
}

/// Decodes a GRE header: returns the fields and the header length \[bytes\].
pub fn decode_gre(data: &[u8]) -> Result<(Gre, usize), StopReason> {
    const BASE_LEN: usize = 4;
    if data.len() < BASE_LEN {
        return Err(truncated(BASE_LEN, data.len()));
    }
    let flags = be16(data, 0);
    let protocol = be16(data, 2);
    let version = (flags & GRE_VERSION_MASK) as u8;
    if version > 1 {
        return Err(StopReason::Malformed("GRE version > 1"));
    }
    if flags & GRE_ROUTING != 0 {
        // RFC 1701 source routing: deprecated by RFC 2784, dropped by Linux.
        return Err(StopReason::Unsupported);
    }
    let checksum_present = flags & GRE_CHECKSUM != 0;
    let has_key = flags & GRE_KEY != 0;
    let has_seq = flags & GRE_SEQ != 0;
    let has_ack = version == 1 && flags & GRE_ACK != 0;
    if version == 1 && (!has_key || checksum_present) {
        return Err(StopReason::Malformed("PPTP GRE needs K set and C clear"));
    }
    let len = BASE_LEN + 4 * (checksum_present as usize + has_key as usize + has_seq as usize + has_ack as usize);
    if data.len() < len {
        return Err(truncated(len, data.len()));
    }
    // Optional fields come in the order checksum(+reserved), key, sequence.
    let mut at = BASE_LEN + 4 * checksum_present as usize;
    let key = has_key.then(|| be32(data, at));
    at += 4 * has_key as usize;
    let seq = has_seq.then(|| be32(data, at));
    Ok((
        Gre {
            protocol,
            key,
            seq,
            checksum_present,
            version,
        },
        len,
    ))
}

/// Decodes the SCTP common header.
pub fn decode_sctp(data: &[u8]) -> Result<Sctp, StopReason> {
    if data.len() < SCTP_HEADER_LEN {
        return Err(truncated(SCTP_HEADER_LEN, data.len()));
    }
    Ok(Sctp {
        src_port: be16(data, 0),
        dst_port: be16(data, 2),
        vtag: be32(data, 4),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_mpls_entry() {
        // label 0x12345, tc 5, bos, ttl 64
        let word: u32 = (0x12345 << 12) | (5 << 9) | (1 << 8) | 64;
        let e = decode_mpls(&word.to_be_bytes()).unwrap();
        assert_eq!(
            e,
            MplsEntry {
                label: 0x12345,
                tc: 5,
                bottom_of_stack: true,
                ttl: 64
            }
        );
        let e = decode_mpls(&[0xff, 0xff, 0xfe, 0x01]).unwrap();
        assert_eq!((e.label, e.tc, e.bottom_of_stack, e.ttl), (0xfffff, 7, false, 1));
        assert_eq!(decode_mpls(&[1, 2, 3]), Err(truncated(4, 3)));
    }

    #[test]
    fn test_vxlan() {
        let h = [0x08, 0, 0, 0, 0xab, 0xcd, 0xef, 0x00];
        assert_eq!(decode_vxlan(&h), Ok((0xabcdef, 0x08)));
        assert_eq!(decode_vxlan(&h[..7]), Err(truncated(8, 7)));
        let no_i = [0x00, 0, 0, 0, 0, 0, 1, 0];
        assert!(matches!(decode_vxlan(&no_i), Err(StopReason::Malformed(_))));
    }

    #[test]
    fn test_gre_plain_and_with_options() {
        // No options, protocol IPv4.
        let (g, len) = decode_gre(&[0x00, 0x00, 0x08, 0x00]).unwrap();
        assert_eq!(len, 4);
        assert_eq!(
            g,
            Gre {
                protocol: 0x0800,
                key: None,
                seq: None,
                checksum_present: false,
                version: 0
            }
        );
        // C + K + S, TEB: checksum word, key 0xdeadbeef, seq 7.
        let h = [
            0xb0, 0x00, 0x65, 0x58, 0x12, 0x34, 0x00, 0x00, 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 7,
        ];
        let (g, len) = decode_gre(&h).unwrap();
        assert_eq!(len, 16);
        assert_eq!(g.protocol, 0x6558);
        assert_eq!(g.key, Some(0xdeadbeef));
        assert_eq!(g.seq, Some(7));
        assert!(g.checksum_present);
        // Key only: key directly after the base header.
        let (g, len) = decode_gre(&[0x20, 0x00, 0x86, 0xdd, 0, 0, 0, 42]).unwrap();
        assert_eq!((g.key, g.seq, len), (Some(42), None, 8));
        assert_eq!(decode_gre(&h[..15]), Err(truncated(16, 15)));
        assert_eq!(decode_gre(&h[..3]), Err(truncated(4, 3)));
    }

    #[test]
    fn test_gre_rejects_bad_versions_and_routing() {
        assert!(matches!(
            decode_gre(&[0x00, 0x02, 0x08, 0x00]),
            Err(StopReason::Malformed(_))
        ));
        assert_eq!(decode_gre(&[0x40, 0x00, 0x08, 0x00]), Err(StopReason::Unsupported));
        // PPTP without key is malformed; with key + ack it is 12 bytes.
        assert!(matches!(
            decode_gre(&[0x00, 0x01, 0x88, 0x0b]),
            Err(StopReason::Malformed(_))
        ));
        let pptp = [0x20, 0x81, 0x88, 0x0b, 0x00, 0x10, 0x00, 0x05, 0, 0, 0, 9];
        let (g, len) = decode_gre(&pptp).unwrap();
        assert_eq!((g.version, g.key, len), (1, Some(0x0010_0005), 12));
    }

    #[test]
    fn test_sctp() {
        let h = [0x0b, 0x59, 0x00, 0x50, 0x01, 0x02, 0x03, 0x04, 0, 0, 0, 0];
        assert_eq!(
            decode_sctp(&h),
            Ok(Sctp {
                src_port: 2905,
                dst_port: 80,
                vtag: 0x01020304
            })
        );
        assert_eq!(decode_sctp(&h[..11]), Err(truncated(12, 11)));
    }
}
