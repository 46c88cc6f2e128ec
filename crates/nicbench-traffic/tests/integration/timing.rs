//! Timestamps and rates: wire bytes = frame + 20 B; durations and average
//! rates of whole streams; stop conditions.

use nicbench_traffic::{Rate, SizeSpec, TrafficConfig, TrafficGen};

fn run_meta(config: &TrafficConfig) -> (Vec<u64>, nicbench_traffic::Summary) {
    let mut generator = TrafficGen::new(config).expect("config");
    let mut ts = Vec::new();
    while let Some(m) = generator.next_meta() {
        ts.push(m.ts_ns);
    }
    (ts, generator.summary())
}

#[test]
fn one_second_of_1500b_at_100g() {
    let config = TrafficConfig {
        size: SizeSpec::Fixed(1500),
        rate: Rate::Gbps(100.0),
        duration_ns: Some(1_000_000_000),
        start_ns: 1_000,
        ..TrafficConfig::default()
    };
    let (ts, s) = run_meta(&config);
    // (1500 + 20) * 8 bits / 100 Gb/s = 121.6 ns: 8,223,684.2 slots in 1 s.
    assert_eq!(s.packets, 8_223_685);
    assert_eq!(s.first_ts_ns, 1_000);
    assert!(s.last_ts_ns < 1_000 + 1_000_000_000);
    assert_eq!(ts[1] - ts[0], 122);
    assert_eq!(ts[5] - ts[0], 608, "5 × 121.6 ns, no drift");
    assert!((s.avg_gbps() - 100.0).abs() < 1e-6, "{}", s.avg_gbps());
    assert_eq!(s.wire_bytes, s.packets * 1520);
    assert_eq!(s.bytes, s.packets * 1496);
}

#[test]
fn one_ms_of_64b_at_100g_is_148_8_mpps() {
    let config = TrafficConfig {
        duration_ns: Some(1_000_000),
        ..TrafficConfig::default()
    };
    let (_, s) = run_meta(&config);
    // 84 B × 8 / 100 Gb/s = 6.72 ns per frame → 148,809.5 frames per ms.
    assert_eq!(s.packets, 148_810);
    assert!((s.avg_mpps() - 148.81).abs() < 0.01, "{}", s.avg_mpps());
}

#[test]
fn imix_average_rate_matches_line_rate() {
    let config = TrafficConfig {
        size: SizeSpec::Imix,
        rate: Rate::Gbps(25.0),
        packets: Some(100_000),
        ..TrafficConfig::default()
    };
    let (ts, s) = run_meta(&config);
    assert!((s.avg_gbps() - 25.0).abs() < 1e-3, "{}", s.avg_gbps());
    assert!(ts.windows(2).all(|w| w[1] > w[0]), "timestamps strictly increase");
}

#[test]
fn mpps_rate_and_unlimited() {
    let config = TrafficConfig {
        rate: Rate::Mpps(2.0),
        packets: Some(5),
        ..TrafficConfig::default()
    };
    assert_eq!(run_meta(&config).0, [0, 500, 1000, 1500, 2000]);
    let unpaced = TrafficConfig {
        rate: Rate::Unlimited,
        packets: Some(3),
        start_ns: 9,
        ..TrafficConfig::default()
    };
    let (ts, s) = run_meta(&unpaced);
    assert_eq!(ts, [9, 9, 9]);
    assert_eq!((s.duration_ns, s.avg_gbps()), (0, 0.0));
}

#[test]
fn first_stop_condition_wins() {
    let both = TrafficConfig {
        packets: Some(10),
        duration_ns: Some(1_000_000),
        ..TrafficConfig::default()
    };
    assert_eq!(run_meta(&both).1.packets, 10);
    let short = TrafficConfig {
        packets: Some(10),
        duration_ns: Some(20),
        ..TrafficConfig::default()
    };
    // Packets at 0, 6.72, 13.44 ns (rounded 0, 7, 13); the next at 20.16 → 20 ns is not < 20.
    assert_eq!(run_meta(&short).0, [0, 7, 13]);
}
