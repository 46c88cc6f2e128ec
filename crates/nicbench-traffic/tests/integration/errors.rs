//! Invalid configs are refused with the offending value in the message.

use nicbench_traffic::{Popularity, SizeSpec, TrafficConfig, TrafficError, TrafficGen};

fn error_of(config: TrafficConfig) -> String {
    match TrafficGen::new(&config) {
        Ok(_) => String::from("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_vlan_vni_and_zipf_are_errors() {
    let base = TrafficConfig::default();
    assert_eq!(
        error_of(TrafficConfig {
            vlan: Some(4096),
            ..base.clone()
        }),
        "VLAN id 4096 is out of range (0..=4095)"
    );
    assert_eq!(
        error_of(TrafficConfig {
            vxlan_vni: Some(1 << 24),
            size: SizeSpec::Fixed(128),
            ..base.clone()
        }),
        "VXLAN VNI 16777216 is out of range (0..=16777215)"
    );
    assert_eq!(
        error_of(TrafficConfig {
            popularity: Popularity::Zipf { s: 0.0 },
            ..base.clone()
        }),
        "Zipf exponent s must be a finite number > 0, got 0"
    );
    assert!(matches!(
        TrafficGen::new(&TrafficConfig { flows: 0, ..base }),
        Err(TrafficError::NoFlows)
    ));
}
