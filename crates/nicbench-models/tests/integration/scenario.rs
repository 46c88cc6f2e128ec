//! Reproducibility and scenario errors.

use crate::{fig2, profiles_dir, run};
use serde_json::json;

#[test]
fn same_seed_gives_identical_results() {
    let s = fig2(20_000, 4, 1500, 100.0, 10);
    let (mut a, mut b) = (run(&s), run(&s));
    a.sim.wall_s = 0.0;
    b.sim.wall_s = 0.0;
    a.sim.sim_packets_per_s = 0.0;
    b.sim.sim_packets_per_s = 0.0;
    assert_eq!(serde_json::to_string(&a).ok(), serde_json::to_string(&b).ok());
    assert!(a.sim.packets > 50_000);
    // Every received packet is in one queue's count: offered over the 10 ms, less the lost.
    assert_eq!(
        a.queues.values().map(|q| q.packets).sum::<u64>(),
        (a.offered_mpps * 1e6 * 0.01 * (1.0 - a.loss_ratio)).round() as u64
    );
}

#[test]
fn hit_rules_steer_to_their_queues() {
    let mut s = fig2(1000, 2, 1500, 50.0, 10);
    s["rules"]["generated"]["hit_fraction"] = json!(0.5);
    let r = run(&s);
    assert!(
        r.queues.len() > 8,
        "hits spread over the generated queues: {:?}",
        r.queues
    );
    assert!(
        r.model.tables_traversed_mean < 3.0,
        "hits end the chain early: {}",
        r.model.tables_traversed_mean
    );
}

#[test]
fn bad_scenarios_have_one_line_errors() {
    let err = |v: serde_json::Value| {
        nicbench_models::run_json("connectx", &v.to_string(), &mut |_| {})
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["nic"] = json!("connectx99");
    assert!(err(s).contains("'connectx99' not found"));
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["surprise"] = json!(1);
    assert!(err(s).contains("unknown field `surprise`"));
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["overrides"] = json!({"not_a_param": 1.0});
    assert!(err(s).contains("unknown parameter 'not_a_param'"));
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["install"] = json!({"mode": "rate"});
    assert!(err(s).contains("rate_per_s"));
    // The caps the CLI states are the model's own: a Rust caller is held to them too.
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["rules"] = json!({"generated": {"kind": "exact5", "count": 10, "groups": 65, "seed": 1}});
    assert!(err(s).contains("rules.generated.groups: 65 tables, allowed 0 to 64"));
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["install"] = json!({"mode": "rate", "rate_per_s": 1000.0, "actions": 17});
    assert!(err(s).contains("install.actions: 17 actions, allowed 1 to 16"));
    let mut s = fig2(10, 0, 64, 1.0, 1);
    s["install"] = json!({"mode": "rate", "rate_per_s": 1000.0, "group": 65});
    assert!(err(s).contains("install.group: table 65, allowed 0 to 64"));
    let s = json!({"nic": "connectx5", "profiles_dir": profiles_dir(), "duration_ns": 1000, "rules": {"text": "flow create 0 ingress pattern eth / end actions jump group 1 / end\nflow create 0 ingress group 1 pattern eth / end actions jump group 0 / end"}, "traffic": {"flows": 1}});
    assert!(err(s).starts_with("rules:"), "jump cycle refused");
    for e in [err(json!({"nic": "connectx5"})), err(json!({}))] {
        assert!(!e.is_empty() && !e.contains('\n'), "{e}");
    }
}

#[test]
fn streamed_trace_replays_like_the_generator_and_reports_truncation() {
    use nicbench_traffic::{SizeSpec, TrafficConfig, TrafficGen};
    let config: TrafficConfig = serde_json::from_value(
        json!({"flows": 200, "size": {"fixed": 512}, "rate": {"gbps": 20.0}, "duration_ns": 2_000_000}),
    )
    .expect("traffic config");
    assert!(matches!(config.size, SizeSpec::Fixed(512)));
    let dir = std::env::temp_dir().join(format!("nicbench-models-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("t.pcap");
    let mut gen = TrafficGen::new(&config).expect("gen");
    let mut w = nicbench_pcap::PcapWriter::create(&path, 65535).expect("pcap");
    let mut packets = 0u64;
    while let Some(p) = gen.next_packet() {
        w.write_packet(p.meta.ts_ns, p.meta.frame_size_bytes - 4, p.data)
            .expect("write");
        packets += 1;
    }
    w.finish().expect("finish");
    let mut s = fig2(1000, 1, 512, 20.0, 2);
    s["traffic"]["flows"] = json!(200);
    let generated = run(&s);
    s["trace"] = json!(path.to_string_lossy());
    let traced = run(&s);
    assert_eq!(traced.sim.packets, packets);
    assert!(
        (traced.rx_mpps - generated.rx_mpps).abs() / generated.rx_mpps < 0.01,
        "{} vs {}",
        traced.rx_mpps,
        generated.rx_mpps
    );
    assert!(
        (traced.latency_us.p50 - generated.latency_us.p50).abs() < 0.5,
        "{:?} vs {:?}",
        traced.latency_us,
        generated.latency_us
    );
    // A truncated file: an error naming the packet where reading stopped.
    let bytes = std::fs::read(&path).expect("read");
    let cut = dir.join("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 100]).expect("write cut");
    s["trace"] = json!(cut.to_string_lossy());
    let err = nicbench_models::run_json("connectx", &s.to_string(), &mut |_| {})
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains(&format!("packet {}", packets - 1)), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
