//! PAM'21 (seed 000) claims, checked with the ConnectX-5 profile's initial values.

use crate::{fig2, run};
use nicbench_models::connectx::ConnectxParams;
use nicbench_models::{profiles_dir, Profile};

fn params() -> ConnectxParams {
    Profile::load("connectx5", &profiles_dir(None))
        .and_then(|p| p.params())
        .expect("connectx5")
}
use serde_json::json;

#[test]
fn root_table_line_rate_low_occupancy_collapse_above_knee() {
    let low = run(&fig2(1000, 0, 1500, 100.0, 20));
    assert!(
        low.loss_ratio < 0.01 && low.rx_gbps > 98.0,
        "1k rules: {} Gbps",
        low.rx_gbps
    );
    let high = run(&fig2(62000, 0, 1500, 100.0, 20));
    assert!(high.rx_gbps < 1.0, "62k rules (95% occupancy): {} Gbps", high.rx_gbps);
    assert_eq!(high.model.bottleneck, "root_table");
    // Latency at 5 Mpps (PAM'21 latency runs): tens of µs → far beyond a ms above the knee.
    let mut at5 = fig2(1000, 0, 1500, 100.0, 20);
    at5["traffic"]["rate"] = json!({"mpps": 5.0});
    let lat_low = run(&at5).latency_us.p50;
    at5["rules"]["generated"]["count"] = json!(62000);
    let lat_high = run(&at5).latency_us.p50;
    assert!(lat_low < 100.0, "{lat_low} µs");
    assert!(lat_high > 100.0 * lat_low, "{lat_high} µs vs {lat_low} µs");
}

#[test]
fn small_packets_at_low_load_also_collapse_above_knee() {
    let low = run(&fig2(1000, 0, 64, 3.5, 10));
    assert!(
        low.loss_ratio < 0.01,
        "64 B at 3.5 Gbps, 1k rules: loss {}",
        low.loss_ratio
    );
    let high = run(&fig2(62000, 0, 64, 3.5, 10));
    assert!(high.loss_ratio > 0.9, "not a load effect: loss {}", high.loss_ratio);
}

#[test]
fn one_fast_table_forwards_line_rate_with_2m_entries() {
    let r = run(&fig2(2_000_000, 1, 1500, 100.0, 20));
    assert!(r.loss_ratio < 0.01, "loss {}", r.loss_ratio);
    assert!(
        (r.model.tables_traversed_mean - 2.0).abs() < 1e-9,
        "root jump + table 1"
    );
}

#[test]
fn throughput_falls_and_latency_rises_with_table_count() {
    let tput: Vec<f64> = [1, 2, 4, 8, 16]
        .iter()
        .map(|&t| run(&fig2(100_000, t, 1500, 100.0, 20)).rx_gbps)
        .collect();
    assert!(tput.windows(2).all(|w| w[0] >= w[1] - 0.5), "{tput:?}");
    assert!(tput[0] > 98.0 && tput[2] > tput[3] && tput[3] > tput[4], "{tput:?}");
    assert!(tput[4] < 25.0, "16 tables: {tput:?}");
    let latency = |t: u32| {
        let mut s = fig2(100_000, t, 1500, 100.0, 20);
        s["traffic"]["rate"] = json!({"mpps": 5.0});
        run(&s).latency_us.p50
    };
    let (one, sixteen) = (latency(1), latency(16));
    assert!(
        latency(4) >= one && sixteen > 4.0 * one,
        "1 table {one} µs, 16 tables {sixteen} µs"
    );
}

fn batch(core: &str, group: u32, count: u64) -> serde_json::Value {
    let mut s = fig2(1000, if group == 0 { 0 } else { 1 }, 1500, 100.0, 60);
    s["install"] = json!({"mode": "batch", "count": count, "start_ns": 10_000_000, "group": group,
                          "core": core, "op": "insert", "match": "ipv4", "actions": 1});
    s
}

#[test]
fn same_core_batch_install_stops_forwarding_distinct_core_does_not() {
    let same = run(&batch("same", 0, 100));
    let outage_bins = same
        .timeline
        .iter()
        .filter(|b| b.t_s > 0.011 && b.rx_gbps < 1.0)
        .count();
    assert!(
        outage_bins >= 15,
        "100 root rules × firmware time blocks the NF core: {outage_bins} bins"
    );
    assert!(same.dropped.imissed > 0 && same.loss_ratio > 0.2, "{:?}", same.dropped);
    assert!(
        same.events
            .iter()
            .any(|e| e.what.contains("batch of 100 insert operations starts")),
        "{:?}",
        same.events
    );
    let distinct = run(&batch("distinct", 0, 100));
    assert!(
        distinct.loss_ratio < 0.01,
        "distinct core: loss {}",
        distinct.loss_ratio
    );
    let install = distinct.install.expect("install summary");
    assert_eq!(install.rules, 100);
    // Firmware commands serialized with the root-table lookups of 100 Gb/s of 1500 B (8.22 Mpps)
    // stretch by 1 / (1 − pps × root_cmd_ns_per_packet); the batch pays its overhead once.
    let p = params();
    let pps = 100e9 / (1520.0 * 8.0);
    let stretch = 1.0 / (1.0 - pps * p.root_cmd_ns_per_packet * 1e-9);
    let want = 100.0 / ((p.install_batch_overhead_us + 100.0 * p.root_insert_ipv4_us * stretch) * 1e-6);
    assert!(
        (install.rate_rules_per_s / want - 1.0).abs() < 0.01,
        "{install:?} vs {want} rules/s"
    );
}

#[test]
fn inplace_update_is_faster_than_delete_insert() {
    let rate = |op: &str| {
        let mut s = fig2(100_000, 1, 1500, 100.0, 40);
        s["install"] = json!({"mode": "batch", "count": 5000, "start_ns": 1_000_000, "group": 1,
                              "core": "distinct", "op": op});
        run(&s).install.expect("install").rate_rules_per_s
    };
    let (di, inplace) = (rate("update"), rate("update_inplace"));
    assert!(inplace > 1.3 * di, "in-place {inplace} vs delete+insert {di} rules/s");
}

#[test]
fn same_core_rate_install_costs_throughput() {
    let mut s = fig2(1000, 1, 1500, 100.0, 30);
    s["install"] = json!({"mode": "rate", "rate_per_s": 200000, "group": 1, "core": "same"});
    let same = run(&s);
    s["install"]["core"] = json!("distinct");
    let distinct = run(&s);
    assert!(distinct.loss_ratio < 0.01, "{}", distinct.loss_ratio);
    assert!(
        same.rx_gbps < distinct.rx_gbps - 10.0,
        "same {} vs distinct {}",
        same.rx_gbps,
        distinct.rx_gbps
    );
}
