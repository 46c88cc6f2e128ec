//! VXLAN decapsulation: the frame a VXLAN frame carries, and the outer headers a tunnel endpoint
//! reads, found by the parser (no offsets of its own).
//!
//! One rule for every caller (the virtual OVS datapath's tunnel ports, the frames a PVP run's VM
//! receives): the outer frame is parsed by [`parse_ethernet`]; to UDP port [`VXLAN_UDP_PORT`] it is
//! VXLAN exactly when the parser decoded a VXLAN header there ([`ParsedFrame::tunnel`]); another
//! port (a tunnel endpoint may listen elsewhere, as OVS's `options:dst_port` allows) is decoded at
//! the UDP payload the parser found. The inner frame is every captured byte after the VXLAN header
//! (a capture's padding included), whatever the inner headers hold.
//!
//! [`ParsedFrame::tunnel`]: super::ParsedFrame::tunnel

use etherparse::UdpHeaderSlice;

use super::encap::{decode_vxlan, VXLAN_HEADER_LEN, VXLAN_UDP_PORT};
use super::{parse_ethernet, Layers, Tunnel, L4};

/// A decapsulated VXLAN frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vxlan<'a> {
    /// The outer frame's headers: Ethernet, VLAN tags, IP, UDP.
    pub outer: Layers,
    /// The outer UDP checksum (0: none, as RFC 7348 recommends over IPv4).
    pub udp_checksum: u16,
    /// VXLAN network identifier (24 bit).
    pub vni: u32,
    /// The VXLAN flags byte (the I flag, 0x08, is set).
    pub flags: u8,
    /// The encapsulated Ethernet frame.
    pub inner: &'a [u8],
}

/// `frame` decapsulated when it is VXLAN to UDP port `udp_port` (see the module doc), else `None`.
pub fn decapsulate_vxlan(frame: &[u8], udp_port: u16) -> Option<Vxlan<'_>> {
    let parsed = parse_ethernet(frame);
    let outer = parsed.outer;
    match outer.l4 {
        Some(L4::Udp(udp)) if udp.dst_port == udp_port => {}
        _ => return None,
    }
    let (vni, flags, inner_at) = match parsed.tunnel {
        Some(Tunnel::Vxlan { vni, flags }) => (vni, flags, parsed.inner_offset),
        // The parser looks for VXLAN on its own port: what it did not find there is not VXLAN.
        _ if udp_port == VXLAN_UDP_PORT => return None,
        _ => {
            let (vni, flags) = decode_vxlan(frame.get(outer.payload_offset..)?).ok()?;
            (vni, flags, outer.payload_offset + VXLAN_HEADER_LEN)
        }
    };
    let udp_checksum = UdpHeaderSlice::from_slice(frame.get(outer.l4_offset..)?)
        .ok()?
        .checksum();
    Some(Vxlan {
        outer,
        udp_checksum,
        vni,
        flags,
        inner: frame.get(inner_at..)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{FrameSpec, L4Spec, VlanTags, VxlanSpec};
    use crate::parse::Ip;
    use std::net::Ipv4Addr;

    fn build(vxlan: Option<VxlanSpec>, vlan: VlanTags, frame_size_bytes: u32) -> Vec<u8> {
        let spec = FrameSpec {
            vlan,
            vxlan,
            frame_size_bytes,
            l4: L4Spec::udp(1000, 53),
            ..FrameSpec::default()
        };
        spec.build().expect("frame")
    }

    #[test]
    fn test_the_inner_frame_is_what_the_parser_found_after_the_vxlan_header() {
        for vlan in [VlanTags::None, VlanTags::Single(5)] {
            let frame = build(Some(VxlanSpec::new(42)), vlan, 128);
            let parsed = parse_ethernet(&frame);
            let v = decapsulate_vxlan(&frame, VXLAN_UDP_PORT).expect("vxlan");
            assert_eq!((v.vni, v.flags, v.udp_checksum), (42, 0x08, 0));
            assert_eq!(v.inner, &frame[parsed.inner_offset..]);
            // The builder's own inner frame (untagged, the same headers), byte for byte.
            let inner = build(None, VlanTags::None, v.inner.len() as u32 + 4);
            assert_eq!(v.inner, &inner[..]);
            assert!(matches!(v.outer.ip, Some(Ip::V4(h)) if h.dst == Ipv4Addr::new(192, 168, 0, 2)));
            assert_eq!(v.outer.vlan_count, u8::from(vlan != VlanTags::None));
            assert!(decapsulate_vxlan(&frame, 4790).is_none(), "sent to 4789, not to 4790");
            assert!(
                decapsulate_vxlan(&inner, VXLAN_UDP_PORT).is_none(),
                "UDP to 53 is no VXLAN"
            );
        }
    }

    #[test]
    fn test_another_port_is_decoded_at_the_udp_payload_and_the_i_flag_is_needed() {
        let mut frame = build(Some(VxlanSpec::new(7)), VlanTags::None, 128);
        let (udp, vx) = (14 + 20, 14 + 20 + 8);
        frame[udp + 2..udp + 4].copy_from_slice(&4790u16.to_be_bytes());
        frame[udp + 6..udp + 8].copy_from_slice(&0xbeefu16.to_be_bytes());
        assert!(decapsulate_vxlan(&frame, VXLAN_UDP_PORT).is_none());
        let v = decapsulate_vxlan(&frame, 4790).expect("vxlan on 4790");
        assert_eq!((v.vni, v.udp_checksum), (7, 0xbeef));
        assert_eq!(v.inner, &frame[vx + VXLAN_HEADER_LEN..]);
        frame[vx] = 0; // no I flag: RFC 7348 receivers drop it
        assert!(decapsulate_vxlan(&frame, 4790).is_none());
        assert!(
            decapsulate_vxlan(&frame[..vx + 4], 4790).is_none(),
            "a cut VXLAN header"
        );
    }
}
