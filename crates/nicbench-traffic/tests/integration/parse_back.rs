//! Generated frames parse back (with nicbench_wire's parser) to the flow the
//! generator says they belong to, for every header shape.

use nicbench_traffic::{Popularity, Proto, SizeSpec, TrafficConfig, TrafficGen};
use nicbench_wire::parse::flow_key;
use proptest::prelude::*;

fn check_stream(config: &TrafficConfig) -> Result<(), TestCaseError> {
    let mut generator = TrafficGen::new(config).expect("config");
    let flows = generator.flows().to_vec();
    while let Some(p) = generator.next_packet() {
        let parsed = flow_key(p.data);
        prop_assert_eq!(parsed, Ok(flows[p.meta.flow_index as usize]), "packet {:?}", p.meta);
    }
    Ok(())
}

#[test]
fn vlan_and_vxlan_frames_parse_back() {
    for (ipv6, proto, vlan, vni) in [
        (false, Proto::Udp, Some(100), None),
        (false, Proto::Tcp, None, Some(0xABCDEF)),
        (true, Proto::Udp, Some(4095), Some(1)),
        (true, Proto::Tcp, None, None),
    ] {
        let config = TrafficConfig {
            flows: 50,
            ipv6,
            proto,
            vlan,
            vxlan_vni: vni,
            size: SizeSpec::Uniform { min: 150, max: 1518 },
            packets: Some(500),
            ..TrafficConfig::default()
        };
        check_stream(&config).expect("parses back");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn prop_generated_frames_parse_to_their_flow(
        seed in any::<u64>(),
        flows in 1u32..200,
        ipv6 in any::<bool>(),
        tcp in any::<bool>(),
        vlan in prop::option::of(0u16..4096),
        vni in prop::option::of(0u32..(1 << 24)),
        zipf in any::<bool>(),
        max in 132u32..9018,
    ) {
        let config = TrafficConfig {
            flows,
            ipv6,
            proto: if tcp { Proto::Tcp } else { Proto::Udp },
            vlan,
            vxlan_vni: vni,
            // 132 B: the largest header stack (IPv6+TCP+VLAN+VXLAN, 128 B) + FCS.
            size: SizeSpec::Uniform { min: 132, max },
            popularity: if zipf { Popularity::Zipf { s: 1.2 } } else { Popularity::Uniform },
            packets: Some(200),
            seed,
            ..TrafficConfig::default()
        };
        check_stream(&config)?;
    }
}
