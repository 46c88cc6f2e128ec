//! The flow key shared by every layer: RSS input, generator flows, flow meter
//! records, classifier caches.
//!
//! Invariants:
//! - `src` and `dst` are of the same IP family (the parser never mixes them).
//! - Ports are 0 for protocols without ports: ICMP and ICMPv6 (their type and
//!   code are *not* folded into the ports; read them from
//!   [`crate::parse::L4`] if needed), GRE, ESP and anything unknown; also 0
//!   for non-first IP fragments (no transport header) and when the transport
//!   header is truncated.
//! - For a VXLAN frame the key describes the *inner* packet, with `vni` set
//!   (if the inner frame carries no IP, the outer key with `vni` set). GRE
//!   frames get the outer key (protocol 47, ports 0).
//! - `vlan` is always the outermost VLAN id of the outer frame.

use std::cmp::Ordering;
use std::fmt;
use std::net::IpAddr;

use crate::parse::{Layers, ParsedFrame, Tunnel};

/// A unidirectional flow key: IP family is implied by the addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct FlowKey {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IP protocol number (IPv6: the upper-layer next header after extension headers).
    pub proto: u8,
    pub src_port: u16,
    pub dst_port: u16,
    /// Outermost 802.1Q VLAN id, where present.
    pub vlan: Option<u16>,
    /// VXLAN network identifier (24 bit), where the frame is VXLAN-encapsulated;
    /// the addresses and ports are then those of the inner frame.
    pub vni: Option<u32>,
}

/// Which way a packet travels relative to the canonical form of its flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// The packet's key equals the canonical key.
    Forward,
    /// The packet's key is the reverse of the canonical key.
    Reverse,
}

impl FlowKey {
    /// The key of a parsed frame; `None` when the relevant header stack has
    /// no IP header. See the module doc for tunnels, fragments and ICMP.
    #[inline]
    pub fn from_frame(frame: &ParsedFrame) -> Option<FlowKey> {
        let vlan = frame.outer.outer_vid();
        match (frame.tunnel, frame.inner.as_ref()) {
            (Some(Tunnel::Vxlan { vni, .. }), Some(inner)) if inner.ip.is_some() => {
                Self::from_layers(inner, vlan, Some(vni))
            }
            (Some(Tunnel::Vxlan { vni, .. }), _) => Self::from_layers(&frame.outer, vlan, Some(vni)),
            _ => Self::from_layers(&frame.outer, vlan, None),
        }
    }

    /// The key of one header stack, with the VLAN and VNI given by the caller.
    #[inline]
    pub fn from_layers(layers: &Layers, vlan: Option<u16>, vni: Option<u32>) -> Option<FlowKey> {
        let ip = layers.ip.as_ref()?;
        let (src_port, dst_port) = if ip.is_non_first_fragment() {
            (0, 0)
        } else {
            layers.l4.and_then(|l4| l4.ports()).unwrap_or((0, 0))
        };
        Some(FlowKey {
            src: ip.src(),
            dst: ip.dst(),
            proto: ip.upper_proto(),
            src_port,
            dst_port,
            vlan,
            vni,
        })
    }

    /// The key of the opposite direction (addresses and ports swapped).
    #[inline]
    pub fn reversed(&self) -> FlowKey {
        FlowKey {
            src: self.dst,
            dst: self.src,
            src_port: self.dst_port,
            dst_port: self.src_port,
            ..*self
        }
    }

    /// Direction-independent form for biflows: the endpoint with the smaller
    /// (address, port) becomes the source. A key and its reverse have the same
    /// canonical key; the direction is `Forward` iff `self` already was
    /// canonical (including the symmetric case src == dst).
    #[inline]
    pub fn canonical(&self) -> (FlowKey, Direction) {
        match (self.src, self.src_port).cmp(&(self.dst, self.dst_port)) {
            Ordering::Greater => (self.reversed(), Direction::Reverse),
            Ordering::Less | Ordering::Equal => (*self, Direction::Forward),
        }
    }

    pub fn is_ipv6(&self) -> bool {
        self.src.is_ipv6()
    }
}

impl fmt::Display for FlowKey {
    /// `10.0.0.1:1234 -> 10.0.0.2:80 proto 17 [vlan 5] [vni 42]`, IPv6 in brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let endpoint = |f: &mut fmt::Formatter<'_>, addr: IpAddr, port: u16| match addr {
            IpAddr::V4(a) => write!(f, "{a}:{port}"),
            IpAddr::V6(a) => write!(f, "[{a}]:{port}"),
        };
        endpoint(f, self.src, self.src_port)?;
        f.write_str(" -> ")?;
        endpoint(f, self.dst, self.dst_port)?;
        write!(f, " proto {}", self.proto)?;
        if let Some(vlan) = self.vlan {
            write!(f, " vlan {vlan}")?;
        }
        if let Some(vni) = self.vni {
            write!(f, " vni {vni}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4_key(src: [u8; 4], sp: u16, dst: [u8; 4], dp: u16) -> FlowKey {
        FlowKey {
            src: IpAddr::V4(Ipv4Addr::from(src)),
            dst: IpAddr::V4(Ipv4Addr::from(dst)),
            proto: 6,
            src_port: sp,
            dst_port: dp,
            vlan: Some(7),
            vni: None,
        }
    }

    #[test]
    fn test_reversed_swaps_endpoints_only() {
        let k = v4_key([10, 0, 0, 2], 80, [10, 0, 0, 1], 1234);
        let r = k.reversed();
        assert_eq!(r.src, k.dst);
        assert_eq!(r.dst, k.src);
        assert_eq!((r.src_port, r.dst_port), (1234, 80));
        assert_eq!((r.proto, r.vlan, r.vni), (6, Some(7), None));
        assert_eq!(r.reversed(), k);
    }

    #[test]
    fn test_canonical_orders_by_addr_then_port() {
        let k = v4_key([10, 0, 0, 2], 80, [10, 0, 0, 1], 1234);
        let (c, d) = k.canonical();
        assert_eq!(d, Direction::Reverse);
        assert_eq!(c.src, IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(c.src_port, 1234);
        // Same address: the port decides.
        let same = v4_key([10, 0, 0, 1], 9000, [10, 0, 0, 1], 53);
        assert_eq!(same.canonical(), (same.reversed(), Direction::Reverse));
        // Fully symmetric: forward, unchanged.
        let sym = v4_key([1, 1, 1, 1], 5, [1, 1, 1, 1], 5);
        assert_eq!(sym.canonical(), (sym, Direction::Forward));
    }

    #[test]
    fn test_is_ipv6_and_display() {
        let k = v4_key([10, 0, 0, 1], 1, [10, 0, 0, 2], 2);
        assert!(!k.is_ipv6());
        assert_eq!(k.to_string(), "10.0.0.1:1 -> 10.0.0.2:2 proto 6 vlan 7");
        let k6 = FlowKey {
            src: IpAddr::V6(Ipv6Addr::LOCALHOST),
            dst: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            proto: 17,
            src_port: 53,
            dst_port: 5353,
            vlan: None,
            vni: Some(42),
        };
        assert!(k6.is_ipv6());
        assert_eq!(k6.to_string(), "[::1]:53 -> [::]:5353 proto 17 vni 42");
    }

    fn arb_key() -> impl Strategy<Value = FlowKey> {
        let v4 = (any::<[u8; 4]>(), any::<[u8; 4]>()).prop_map(|(a, b)| (IpAddr::V4(a.into()), IpAddr::V4(b.into())));
        let v6 = (any::<[u8; 16]>(), any::<[u8; 16]>()).prop_map(|(a, b)| (IpAddr::V6(a.into()), IpAddr::V6(b.into())));
        // Small value ranges make equal addresses / ports likely enough.
        let small_v4 =
            (0u8..3, 0u8..3).prop_map(|(a, b)| (IpAddr::V4([10, 0, 0, a].into()), IpAddr::V4([10, 0, 0, b].into())));
        (
            prop_oneof![v4, v6, small_v4],
            any::<u8>(),
            prop_oneof![any::<u16>(), 0u16..3],
            prop_oneof![any::<u16>(), 0u16..3],
            any::<Option<u16>>(),
            any::<Option<u32>>(),
        )
            .prop_map(|((src, dst), proto, src_port, dst_port, vlan, vni)| FlowKey {
                src,
                dst,
                proto,
                src_port,
                dst_port,
                vlan,
                vni,
            })
    }

    proptest! {
        #[test]
        fn prop_canonical_is_direction_independent(k in arb_key()) {
            let (c, d) = k.canonical();
            let (rc, rd) = k.reversed().canonical();
            prop_assert_eq!(c, rc);
            if k == k.reversed() {
                prop_assert_eq!((d, rd), (Direction::Forward, Direction::Forward));
            } else {
                prop_assert_ne!(d, rd);
            }
            // Forward iff unchanged; canonical is idempotent.
            prop_assert_eq!(d == Direction::Forward, c == k);
            prop_assert_eq!(c.canonical(), (c, Direction::Forward));
        }
    }
}
