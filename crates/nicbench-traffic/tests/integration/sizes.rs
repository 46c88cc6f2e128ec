//! Frame sizes as configured: fixed, list, uniform range, IMIX ratios, and
//! clear errors when the headers do not fit.

use std::collections::BTreeMap;

use nicbench_traffic::{SizeSpec, TrafficConfig, TrafficError, TrafficGen};

fn size_counts(size: SizeSpec, packets: u64) -> BTreeMap<u32, u64> {
    let config = TrafficConfig {
        size,
        packets: Some(packets),
        ..TrafficConfig::default()
    };
    let mut generator = TrafficGen::new(&config).expect("config");
    let mut counts = BTreeMap::new();
    while let Some(p) = generator.next_packet() {
        assert_eq!(
            p.data.len() as u32,
            p.meta.frame_size_bytes - 4,
            "captured = frame - FCS"
        );
        *counts.entry(p.meta.frame_size_bytes).or_insert(0) += 1;
    }
    counts
}

#[test]
fn fixed_size() {
    assert_eq!(size_counts(SizeSpec::Fixed(1518), 1000), BTreeMap::from([(1518, 1000)]));
}

#[test]
fn list_sizes_are_uniform_over_entries() {
    let counts = size_counts(SizeSpec::List(vec![64, 128, 9018]), 30_000);
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), [64, 128, 9018]);
    for (&size, &n) in &counts {
        assert!((9_400..=10_600).contains(&n), "size {size}: {n} of 30000");
    }
}

#[test]
fn uniform_range_stays_in_range_and_covers_it() {
    let counts = size_counts(SizeSpec::Uniform { min: 100, max: 110 }, 11_000);
    assert_eq!(
        counts.keys().copied().collect::<Vec<_>>(),
        (100..=110).collect::<Vec<_>>()
    );
}

#[test]
fn imix_ratio_7_4_1() {
    let n = 120_000u64;
    let counts = size_counts(SizeSpec::Imix, n);
    assert_eq!(counts.keys().copied().collect::<Vec<_>>(), [64, 594, 1518]);
    for (size, weight) in [(64u32, 7.0), (594, 4.0), (1518, 1.0)] {
        let share = counts[&size] as f64 / n as f64;
        // σ ≤ 0.0015 at n = 120K; allow ~4σ.
        assert!((share - weight / 12.0).abs() < 0.006, "size {size}: share {share:.4}");
    }
}

#[test]
fn headers_too_big_for_size_is_an_error() {
    let config = TrafficConfig {
        ipv6: true,
        proto: nicbench_traffic::Proto::Tcp,
        vxlan_vni: Some(1),
        size: SizeSpec::Imix,
        ..TrafficConfig::default()
    };
    let err = TrafficGen::new(&config).expect_err("64 B cannot hold the headers");
    assert!(matches!(err, TrafficError::Frame(_)));
    assert!(
        err.to_string()
            .starts_with("64 B frame cannot hold IPv6+TCP+VXLAN headers (124 B)"),
        "{err}"
    );
    let too_big = TrafficConfig {
        size: SizeSpec::Fixed(9019),
        ..TrafficConfig::default()
    };
    assert!(TrafficGen::new(&too_big).is_err());
}
