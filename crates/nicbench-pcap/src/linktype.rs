//! Link-layer header type of a capture (the pcap `LINKTYPE_*` registry).
//!
//! A newtype over the raw `u32` rather than an enum, so a file with a link type
//! we have never heard of still reads and round-trips unchanged.

use std::fmt;

/// A pcap/pcapng link type (`LINKTYPE_*` value from tcpdump.org/linktypes.html).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkType(pub u32);

/// Where a record's network layer starts, by link type ([`LinkType::l3_start`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum L3Start {
    /// An Ethernet II frame starts the record (its EtherType says what follows).
    Ethernet,
    /// An IPv4 or IPv6 header starts at this byte offset (the version nibble says which).
    Ip(usize),
    /// The record carries no IP packet (ARP in a cooked capture, an unknown address family)
    /// or is too short for its link-layer header.
    NotIp,
}

/// EtherTypes of IPv4 and IPv6 (the protocol field of the Linux cooked headers).
const ETHERTYPE_IPV4: u16 = 0x0800;
const ETHERTYPE_IPV6: u16 = 0x86dd;
/// Linux cooked v1 header \[bytes\]; its protocol (EtherType) is at byte 14.
const LINUX_SLL_HEADER_BYTES: usize = 16;
/// Linux cooked v2 header \[bytes\]; its protocol (EtherType) is at byte 0.
const LINUX_SLL2_HEADER_BYTES: usize = 20;
/// BSD loopback header \[bytes\]: the address family, a 32-bit word.
const NULL_HEADER_BYTES: usize = 4;
/// AF_INET is 2 everywhere; AF_INET6 is 24 (NetBSD/OpenBSD), 28 (FreeBSD), 30 (macOS) —
/// the values libpcap's `BSD_AFNUM_INET6_*` lists.
const AF_INET: u32 = 2;
const AF_INET6: [u32; 3] = [24, 28, 30];

impl LinkType {
    /// BSD loopback (4-byte address family header).
    pub const NULL: LinkType = LinkType(0);
    /// IEEE 802.3 Ethernet: the only one the rest of nicbench parses.
    pub const ETHERNET: LinkType = LinkType(1);
    /// Raw IPv4/IPv6, no link-layer header.
    pub const RAW: LinkType = LinkType(101);
    /// Linux "cooked" capture v1.
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Linux "cooked" capture v2 (what `tcpdump -i any` writes).
    pub const LINUX_SLL2: LinkType = LinkType(276);
    /// OpenBSD loopback: as NULL, the address family in network byte order.
    pub const LOOP: LinkType = LinkType(108);
    /// Raw IPv4 only.
    pub const IPV4: LinkType = LinkType(228);
    /// Raw IPv6 only.
    pub const IPV6: LinkType = LinkType(229);

    /// The link types nicbench decodes (every other one is refused when a capture is opened).
    pub const DECODED: [LinkType; 8] = [
        LinkType::ETHERNET,
        LinkType::RAW,
        LinkType::IPV4,
        LinkType::IPV6,
        LinkType::LINUX_SLL,
        LinkType::LINUX_SLL2,
        LinkType::NULL,
        LinkType::LOOP,
    ];

    /// Whether nicbench decodes records of this link type ([`LinkType::DECODED`]).
    pub fn is_decoded(self) -> bool {
        LinkType::DECODED.contains(&self)
    }

    /// Where the network layer of a record of this link type starts: the one link-layer
    /// dispatch every tool uses (flow keys, RSS, classification, replay).
    #[inline]
    pub fn l3_start(self, data: &[u8]) -> L3Start {
        if self == LinkType::ETHERNET {
            return L3Start::Ethernet;
        }
        self.other_l3_start(data)
    }

    #[cold]
    fn other_l3_start(self, data: &[u8]) -> L3Start {
        let be16 = |at: usize| data.get(at..at + 2).map(|b| u16::from_be_bytes([b[0], b[1]]));
        let ip_if_ethertype = |at: usize, header: usize| match be16(at) {
            Some(ETHERTYPE_IPV4 | ETHERTYPE_IPV6) if data.len() >= header => L3Start::Ip(header),
            _ => L3Start::NotIp,
        };
        match self {
            LinkType::RAW | LinkType::IPV4 | LinkType::IPV6 => L3Start::Ip(0),
            LinkType::LINUX_SLL => ip_if_ethertype(14, LINUX_SLL_HEADER_BYTES),
            LinkType::LINUX_SLL2 => ip_if_ethertype(0, LINUX_SLL2_HEADER_BYTES),
            LinkType::NULL | LinkType::LOOP => {
                let Some(word) = data.get(..NULL_HEADER_BYTES) else {
                    return L3Start::NotIp;
                };
                let word = [word[0], word[1], word[2], word[3]];
                // NULL: the family in the capturing host's byte order, which the file does not
                // record (libpcap tries both too); LOOP: network order.
                let families = [u32::from_be_bytes(word), u32::from_le_bytes(word)];
                if families.iter().any(|f| *f == AF_INET || AF_INET6.contains(f)) {
                    L3Start::Ip(NULL_HEADER_BYTES)
                } else {
                    L3Start::NotIp
                }
            }
            _ => L3Start::NotIp,
        }
    }

    /// The short libpcap name (`EN10MB`, `RAW`…), or `None` if we do not know it.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            LinkType::NULL => "NULL",
            LinkType::ETHERNET => "EN10MB",
            LinkType::RAW => "RAW",
            LinkType::LINUX_SLL => "LINUX_SLL",
            LinkType::LINUX_SLL2 => "LINUX_SLL2",
            LinkType::LOOP => "LOOP",
            LinkType::IPV4 => "IPV4",
            LinkType::IPV6 => "IPV6",
            // Common link types nicbench does not decode, named so a refusal says what the file is.
            LinkType(6) => "IEEE802",
            LinkType(9) => "PPP",
            LinkType(50) => "PPP_HDLC",
            LinkType(104) => "C_HDLC",
            LinkType(105) => "IEEE802_11",
            LinkType(119) => "IEEE802_11_PRISM",
            LinkType(127) => "IEEE802_11_RADIOTAP",
            LinkType(147) => "USER0",
            LinkType(189) => "USB_LINUX",
            LinkType(195) => "IEEE802_15_4",
            LinkType(201) => "BLUETOOTH_HCI_H4_WITH_PHDR",
            LinkType(220) => "USB_LINUX_MMAPPED",
            LinkType(239) => "NFLOG",
            LinkType(249) => "USBPCAP",
            LinkType(263) => "BLUETOOTH_LE_LL",
            _ => return None,
        })
    }
}

/// "EN10MB (1), RAW (101), …": the decoded link types, for messages.
pub(crate) fn decoded_list() -> String {
    LinkType::DECODED
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for LinkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.0),
            None => write!(f, "unknown ({})", self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_l3_start_per_link_type() {
        let mut sll = vec![0u8; 16];
        sll[14..16].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(LinkType::LINUX_SLL.l3_start(&sll), L3Start::Ip(16));
        sll[14..16].copy_from_slice(&[0x08, 0x06]); // ARP
        assert_eq!(LinkType::LINUX_SLL.l3_start(&sll), L3Start::NotIp);
        let mut sll2 = vec![0u8; 20];
        sll2[0..2].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(LinkType::LINUX_SLL2.l3_start(&sll2), L3Start::Ip(20));
        assert_eq!(LinkType::LINUX_SLL2.l3_start(&sll2[..10]), L3Start::NotIp);
        // BSD loopback: AF_INET in little- (x86 host) and big-endian order, AF_INET6 (macOS 30).
        assert_eq!(LinkType::NULL.l3_start(&[2, 0, 0, 0, 0x45]), L3Start::Ip(4));
        assert_eq!(LinkType::NULL.l3_start(&[0, 0, 0, 2, 0x45]), L3Start::Ip(4));
        assert_eq!(LinkType::LOOP.l3_start(&[0, 0, 0, 30, 0x60]), L3Start::Ip(4));
        assert_eq!(LinkType::NULL.l3_start(&[7, 0, 0, 0]), L3Start::NotIp);
        assert_eq!(LinkType::RAW.l3_start(&[0x45]), L3Start::Ip(0));
        assert_eq!(LinkType::ETHERNET.l3_start(&[]), L3Start::Ethernet);
        assert!(!LinkType(105).is_decoded());
        assert!(LinkType::DECODED.iter().all(|lt| lt.name().is_some()));
    }

    #[test]
    fn test_display_known_and_unknown() {
        assert_eq!(LinkType::ETHERNET.to_string(), "EN10MB (1)");
        assert_eq!(LinkType(4242).to_string(), "unknown (4242)");
    }
}
