//! Link-layer header type of a capture (the pcap `LINKTYPE_*` registry).
//!
//! A newtype over the raw `u32` rather than an enum, so a file with a link type
//! we have never heard of still reads and round-trips unchanged.

use std::fmt;

/// A pcap/pcapng link type (`LINKTYPE_*` value from tcpdump.org/linktypes.html).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LinkType(pub u32);

impl LinkType {
    /// BSD loopback (4-byte address family header).
    pub const NULL: LinkType = LinkType(0);
    /// IEEE 802.3 Ethernet: the only one the rest of nicbench parses.
    pub const ETHERNET: LinkType = LinkType(1);
    /// Raw IPv4/IPv6, no link-layer header.
    pub const RAW: LinkType = LinkType(101);
    /// Linux "cooked" capture v1.
    pub const LINUX_SLL: LinkType = LinkType(113);
    /// Linux "cooked" capture v2.
    pub const LINUX_SLL2: LinkType = LinkType(276);

    /// The short libpcap name (`EN10MB`, `RAW`…), or `None` if we do not know it.
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            LinkType::NULL => "NULL",
            LinkType::ETHERNET => "EN10MB",
            LinkType::RAW => "RAW",
            LinkType::LINUX_SLL => "LINUX_SLL",
            LinkType::LINUX_SLL2 => "LINUX_SLL2",
            _ => return None,
        })
    }
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
    fn test_display_known_and_unknown() {
        assert_eq!(LinkType::ETHERNET.to_string(), "EN10MB (1)");
        assert_eq!(LinkType(4242).to_string(), "unknown (4242)");
    }
}
