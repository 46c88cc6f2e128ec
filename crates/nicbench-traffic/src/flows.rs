//! The flow set: N distinct flows drawn deterministically from the seed.
//!
//! Invariants:
//! - Same config (flows, family, proto, VLAN, VNI, seed) → same flows in the
//!   same order; the packet stream's RNG is a separate ChaCha stream, so the
//!   flow set does not depend on how many packets are drawn.
//! - The 5-tuples are pairwise distinct: addresses uniform in 10.0.0.0/8
//!   (IPv4) or fd00::/8 (IPv6), ports uniform in 1024..=65535, duplicates
//!   redrawn.
//! - Every flow has the same header shape, so one `TemplateSet` holds them all.
//! - MACs are fixed (02:00:00:00:00:01 → 02:00:00:00:00:02); with VXLAN the
//!   outer UDP source port is 49152 + a hash of the inner 5-tuple (RFC 7348
//!   §5 entropy), so RSS on the outer header still spreads flows.

use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags, VlanTags, VxlanSpec};
use nicbench_wire::FlowKey;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::config::{Proto, TrafficConfig};

/// Lowest port drawn (below are well-known ports).
pub const MIN_PORT: u16 = 1024;

fn random_addr(rng: &mut ChaCha8Rng, ipv6: bool) -> IpAddr {
    if ipv6 {
        // fd00::/8: fixed first byte, 120 random bits.
        let low: u128 = rng.random::<u128>() >> 8;
        IpAddr::V6(Ipv6Addr::from((0xfd_u128 << 120) | low))
    } else {
        // 10.0.0.0/8: fixed first byte, 24 random bits.
        IpAddr::V4(Ipv4Addr::from((10_u32 << 24) | (rng.random::<u32>() >> 8)))
    }
}

/// The distinct flow keys of `config`, drawn from `rng` (the caller seeds it).
pub fn generate_flow_keys(config: &TrafficConfig, rng: &mut ChaCha8Rng) -> Vec<FlowKey> {
    let n = config.flows as usize;
    let proto = match config.proto {
        Proto::Udp => 17,
        Proto::Tcp => 6,
    };
    let mut seen = HashSet::with_capacity(n);
    let mut keys = Vec::with_capacity(n);
    while keys.len() < n {
        let key = FlowKey {
            src: random_addr(rng, config.ipv6),
            dst: random_addr(rng, config.ipv6),
            proto,
            src_port: rng.random_range(MIN_PORT..=u16::MAX),
            dst_port: rng.random_range(MIN_PORT..=u16::MAX),
            vlan: config.vlan,
            vni: config.vxlan_vni,
        };
        if seen.insert(key) {
            keys.push(key);
        }
    }
    keys
}

/// FNV-1a over the 5-tuple: a stable, seed-free hash for the VXLAN entropy port.
fn five_tuple_hash(key: &FlowKey) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
    };
    for addr in [key.src, key.dst] {
        match addr {
            IpAddr::V4(a) => eat(&a.octets()),
            IpAddr::V6(a) => eat(&a.octets()),
        }
    }
    eat(&[key.proto]);
    eat(&key.src_port.to_be_bytes());
    eat(&key.dst_port.to_be_bytes());
    h
}

/// The frame of one flow at `frame_size_bytes`.
pub fn frame_spec(key: &FlowKey, frame_size_bytes: u32) -> FrameSpec {
    let l4 = if key.proto == 6 {
        L4Spec::tcp(key.src_port, key.dst_port, TcpFlags::ACK)
    } else {
        L4Spec::udp(key.src_port, key.dst_port)
    };
    let vxlan = key.vni.map(|vni| VxlanSpec {
        outer_src_port: 49152 + (five_tuple_hash(key) & 0x3fff) as u16,
        ..VxlanSpec::new(vni)
    });
    FrameSpec {
        vlan: key.vlan.map_or(VlanTags::None, VlanTags::Single),
        ip_src: key.src,
        ip_dst: key.dst,
        l4,
        vxlan,
        frame_size_bytes,
        ..FrameSpec::default()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn test_keys_distinct_in_range_and_deterministic() {
        let config = TrafficConfig {
            flows: 5000,
            ..TrafficConfig::default()
        };
        let a = generate_flow_keys(&config, &mut ChaCha8Rng::seed_from_u64(3));
        let b = generate_flow_keys(&config, &mut ChaCha8Rng::seed_from_u64(3));
        let c = generate_flow_keys(&config, &mut ChaCha8Rng::seed_from_u64(4));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.iter().collect::<HashSet<_>>().len(), 5000);
        for k in &a {
            assert!(matches!(k.src, IpAddr::V4(v) if v.octets()[0] == 10), "{k:?}");
            assert!(k.src_port >= MIN_PORT && k.dst_port >= MIN_PORT);
            assert_eq!((k.proto, k.vlan, k.vni), (17, None, None));
        }
    }

    #[test]
    fn test_ipv6_tcp_vxlan_keys_and_specs() {
        let config = TrafficConfig {
            flows: 100,
            ipv6: true,
            proto: Proto::Tcp,
            vlan: Some(12),
            vxlan_vni: Some(99),
            ..TrafficConfig::default()
        };
        let keys = generate_flow_keys(&config, &mut ChaCha8Rng::seed_from_u64(1));
        for k in &keys {
            assert!(matches!(k.dst, IpAddr::V6(v) if v.octets()[0] == 0xfd));
            let spec = frame_spec(k, 200);
            assert_eq!(spec.flow_key(), *k, "spec reproduces the key");
            let port = spec.vxlan.map(|v| v.outer_src_port).unwrap_or(0);
            assert!(port >= 49152, "entropy port {port}");
        }
    }

    #[test]
    fn test_five_tuple_hash_fixture() {
        // Port order matters; VLAN/VNI are not part of the 5-tuple.
        let key = FlowKey {
            src: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
            dst: IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
            proto: 17,
            src_port: 1,
            dst_port: 2,
            vlan: None,
            vni: None,
        };
        let swapped = FlowKey {
            src_port: 2,
            dst_port: 1,
            ..key
        };
        assert_ne!(five_tuple_hash(&key), five_tuple_hash(&swapped));
        assert_eq!(
            five_tuple_hash(&key),
            five_tuple_hash(&FlowKey { vlan: Some(1), ..key })
        );
    }
}
