//! The snapshot cases of every model (see `snapshot.rs`): a spread of requests that exercises
//! each model's mechanisms (PAM'21 Fig. 2-4 scenarios and an idle installer for ConnectX; every
//! path, verb and mix feature of the off-path model; core, size, flow, SMT, filter, slice and
//! search variants of the flow host).

use crate::snapshot::{check, Case};
use serde_json::{json, Value};

fn strip_wall_clock(mut v: Value, field: &str) -> Value {
    if let Some(obj) = v.as_object_mut() {
        obj.remove(field);
    }
    v
}

fn connectx_case(name: &str, duration_ns: u64, traffic: Value, rules: Value, install: Value) -> Case {
    let scenario = json!({
        "nic": "connectx5",
        "duration_ns": duration_ns,
        "seed": 3,
        "traffic": traffic,
        "rules": rules,
        "install": install,
        "measure": {"timeline_bin_ns": 1_000_000, "latency": true, "queues": true},
    });
    let out = nicbench_models::run_json("connectx", &scenario.to_string(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut v: Value = serde_json::from_str(&out).expect("result JSON");
    // Wall-clock statistics vary run to run; the packet count does not.
    let packets = v["sim"]["packets"].clone();
    v["sim"] = json!({ "packets": packets });
    Case {
        name: name.into(),
        result: v,
        headline: vec![
            "rx_gbps",
            "loss_ratio",
            "latency_us.p50",
            "install.rate_rules_per_s",
            "sim.packets",
        ],
    }
}

#[test]
fn snapshot_connectx() {
    let t =
        |size: u32, rate: Value, flows: u32| json!({"flows": flows, "size": {"fixed": size}, "rate": rate, "seed": 5});
    let g = |count: u64, groups: u32, hit: f64| json!({"generated": {"kind": "exact5", "count": count, "groups": groups, "seed": 2, "hit_fraction": hit}});
    let batch = |count: u64, group: u32, core: &str, start: u64| json!({"mode": "batch", "count": count, "start_ns": start, "group": group, "core": core, "op": "insert", "match": "ipv4", "actions": 1});
    let rate = |r: f64, group: u32, core: &str| json!({"mode": "rate", "rate_per_s": r, "start_ns": 0, "group": group, "core": core, "op": "insert", "match": "ipv4", "actions": 1});
    let gbps = |x: f64| json!({ "gbps": x });
    let mpps = |x: f64| json!({ "mpps": x });
    let null = Value::Null;
    let cases = vec![
        connectx_case(
            "fig2_t0_1k",
            30_000_000,
            t(1500, gbps(100.0), 10000),
            g(1000, 0, 0.0),
            null.clone(),
        ),
        connectx_case(
            "fig2_t1_1k",
            30_000_000,
            t(1500, gbps(100.0), 10000),
            g(1000, 1, 0.0),
            null.clone(),
        ),
        connectx_case(
            "fig2_t16_100k",
            30_000_000,
            t(1500, gbps(100.0), 10000),
            g(100_000, 16, 0.0),
            null.clone(),
        ),
        connectx_case(
            "fig2_t4_1m_hit",
            30_000_000,
            t(1500, gbps(100.0), 10000),
            g(1_000_000, 4, 1.0),
            null.clone(),
        ),
        connectx_case(
            "fig2_t0_60k_64b",
            20_000_000,
            t(64, gbps(3.5), 10000),
            g(60_000, 0, 0.0),
            null.clone(),
        ),
        connectx_case(
            "fig2_t0_57k_hit",
            20_000_000,
            t(1500, gbps(100.0), 10000),
            g(57_000, 0, 0.5),
            null.clone(),
        ),
        connectx_case(
            "lat_5mpps_t8",
            30_000_000,
            t(64, mpps(5.0), 10000),
            g(100_000, 8, 0.3),
            null.clone(),
        ),
        connectx_case(
            "line_64b",
            10_000_000,
            t(64, gbps(100.0), 1000),
            g(10, 0, 0.0),
            null.clone(),
        ),
        connectx_case(
            "fig3_t0_same_1k",
            400_000_000,
            t(1500, gbps(100.0), 10000),
            g(0, 0, 0.0),
            batch(1000, 0, "same", 100_000_000),
        ),
        connectx_case(
            "fig3_t0_dist_1k",
            300_000_000,
            t(1500, gbps(100.0), 10000),
            g(0, 0, 0.0),
            batch(1000, 0, "distinct", 100_000_000),
        ),
        connectx_case(
            "fig3_t1_same_100k",
            600_000_000,
            t(1500, gbps(100.0), 10000),
            g(0, 1, 0.0),
            batch(100_000, 1, "same", 50_000_000),
        ),
        connectx_case(
            "fig3_t1_dist_10k",
            200_000_000,
            t(1500, gbps(100.0), 10000),
            g(0, 1, 0.0),
            batch(10_000, 1, "distinct", 50_000_000),
        ),
        connectx_case(
            "fig4_t0_same_5k",
            100_000_000,
            t(1500, gbps(100.0), 10000),
            g(1000, 0, 0.0),
            rate(5000.0, 0, "same"),
        ),
        connectx_case(
            "fig4_t1_same_300k",
            100_000_000,
            t(1500, gbps(100.0), 10000),
            g(1000, 1, 0.0),
            rate(300_000.0, 1, "same"),
        ),
        connectx_case(
            "fig4_t1_dist_500k",
            100_000_000,
            t(64, mpps(5.0), 10000),
            g(1000, 1, 0.0),
            rate(500_000.0, 1, "distinct"),
        ),
        connectx_case(
            "idle_install_t0",
            2_000_000_000,
            t(64, mpps(0.001), 1),
            g(0, 0, 0.0),
            batch(2000, 0, "distinct", 1_000_000),
        ),
        // Other update kinds, matches and rule sets than the figures above.
        connectx_case(
            "update_inplace_t1",
            50_000_000,
            t(1500, gbps(100.0), 1000),
            g(2000, 1, 1.0),
            json!({"mode": "rate", "rate_per_s": 200_000.0, "group": 1, "core": "distinct", "op": "update_inplace", "match": "ipv4", "actions": 1}),
        ),
        connectx_case(
            "delete_insert_ipv6_t1",
            50_000_000,
            t(512, gbps(40.0), 1000),
            g(2000, 1, 0.5),
            json!({"mode": "rate", "rate_per_s": 100_000.0, "group": 1, "core": "same", "op": "update", "match": "ipv6", "actions": 2, "pacing": "schedule"}),
        ),
        connectx_case(
            "delete_t0_vlan",
            50_000_000,
            t(1500, gbps(100.0), 1000),
            g(3000, 0, 0.2),
            json!({"mode": "batch", "count": 500, "start_ns": 10_000_000, "group": 0, "core": "same", "op": "delete", "match": "vlan", "actions": 1}),
        ),
        connectx_case(
            "acl_rules_imix_zipf",
            20_000_000,
            json!({"flows": 5000, "size": "imix", "rate": {"gbps": 60.0}, "popularity": {"zipf": {"s": 1.1}}, "seed": 9}),
            json!({"generated": {"kind": "acl", "count": 1000, "groups": 2, "seed": 4}}),
            null.clone(),
        ),
        connectx_case(
            "text_rules_drop_queue",
            10_000_000,
            t(256, gbps(50.0), 64),
            json!({"text": "flow create 0 ingress group 0 pattern eth / ipv4 / udp dst is 1 / end actions drop / end\nflow create 0 ingress group 0 priority 1 pattern eth / ipv4 / end actions queue index 3 / end\n"}),
            null.clone(),
        ),
    ];
    check("connectx", &cases);
}

fn offpath_case(name: &str, request: Value) -> Case {
    let out = nicbench_models::run_json("offpath", &request.to_string(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    Case {
        name: name.into(),
        result: serde_json::from_str(&out).expect("response JSON"),
        headline: vec!["total_gbps", "total_mpps", "bottleneck"],
    }
}

#[test]
fn snapshot_offpath() {
    let mut cases = Vec::new();
    let paths = ["client->host", "client->soc", "host->soc", "soc->host"];
    let sizes = [0.0, 64.0, 512.0, 4096.0, 65536.0, 1_048_576.0, 16_777_216.0];
    for nic in ["bluefield2", "connectx6-rnic"] {
        for path in paths {
            if nic == "connectx6-rnic" && path != "client->host" {
                continue;
            }
            for verb in ["READ", "WRITE", "SEND"] {
                for size in sizes {
                    let name = format!("{nic}_{}_{verb}_{size}", path.replace("->", "-"));
                    let flow = json!({"path": path, "verb": verb, "payload_bytes": size});
                    cases.push(offpath_case(&name, json!({"nic": nic, "flows": [flow]})));
                }
            }
        }
    }
    let extra = [
        (
            "mix_shares",
            json!({"nic": "bluefield2", "flows": [
            {"path": "client->soc", "verb": "READ", "payload_bytes": 4096.0, "share": 0.8},
            {"path": "host->soc", "verb": "WRITE", "payload_bytes": 65536.0, "share": 0.2}]}),
        ),
        (
            "mix_max_min",
            json!({"nic": "bluefield2", "mix": "max_min", "flows": [
            {"path": "client->host", "verb": "WRITE", "payload_bytes": 1024.0, "threads": 4.0, "machines": 2.0},
            {"path": "client->soc", "verb": "WRITE", "payload_bytes": 1024.0, "threads": 2.0}]}),
        ),
        (
            "skewed_soc_writes",
            json!({"nic": "bluefield2", "flows": [
            {"path": "client->soc", "verb": "WRITE", "payload_bytes": 64.0, "address_range_bytes": 1536.0}]}),
        ),
        (
            "doorbell_batch_soc",
            json!({"nic": "bluefield2", "flows": [
            {"path": "soc->host", "verb": "WRITE", "payload_bytes": 64.0, "doorbell_batch": 16.0}]}),
        ),
        (
            "offered_load_latency",
            json!({"nic": "bluefield2", "flows": [
            {"path": "client->host", "verb": "READ", "payload_bytes": 64.0, "offered_mpps": 20.0}]}),
        ),
        (
            "override",
            json!({"nic": "bluefield2", "overrides": {"network_efficiency": 0.9}, "flows": [
            {"path": "client->soc", "verb": "READ", "payload_bytes": 65536.0}]}),
        ),
    ];
    for (name, request) in extra {
        cases.push(offpath_case(name, request));
    }
    check("offpath", &cases);
}

fn flowhost_case(name: &str, request: Value) -> Case {
    let out = nicbench_models::run_json("flowhost", &request.to_string(), &mut |_| {})
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let v: Value = serde_json::from_str(&out).expect("result JSON");
    Case {
        name: name.into(),
        result: strip_wall_clock(v, "sim_wall_s"),
        headline: vec!["processed_mpps", "drop_ratio", "cores_needed"],
    }
}

#[test]
fn snapshot_flowhost() {
    let mut cases = Vec::new();
    for cores in [1, 2, 4, 8] {
        cases.push(flowhost_case(
            &format!("cores_{cores}"),
            json!({"cores": cores, "duration_ns": 200_000_000}),
        ));
    }
    for size in [64.0, 128.0, 512.0, 1500.0] {
        cases.push(flowhost_case(
            &format!("size_{size}"),
            json!({"cores": 8, "frame_bytes": size, "duration_ns": 200_000_000}),
        ));
    }
    for flows in [1024, 65536, 1_048_576] {
        cases.push(flowhost_case(
            &format!("flows_{flows}"),
            json!({"cores": 8, "flows": flows, "duration_ns": 200_000_000}),
        ));
    }
    let extra = [
        (
            "smt_two_per_core",
            json!({"cores": 4, "processes_per_core": 2, "duration_ns": 200_000_000}),
        ),
        (
            "zipf_filter_slice",
            json!({"cores": 8, "zipf_exponent": 1.1, "filter_keep": 0.5, "slice_bytes": 128.0, "duration_ns": 200_000_000}),
        ),
        (
            "rate_40g_flows_per_core",
            json!({"cores": 6, "rate_gbps": 40.0, "flows_per_core": 2048.0, "duration_ns": 200_000_000}),
        ),
        (
            "search_cores_64b",
            json!({"frame_bytes": 64.0, "search_cores": true, "max_cores": 64, "duration_ns": 100_000_000}),
        ),
        (
            "smt_two_per_core_many_flows",
            json!({"cores": 8, "processes_per_core": 2, "flows": 262_144, "duration_ns": 100_000_000}),
        ),
        (
            "override_ooo_hidden",
            json!({"cores": 4, "processes_per_core": 2, "overrides": {"ooo_hidden_latency_cycles": 0.0}, "duration_ns": 100_000_000}),
        ),
    ];
    for (name, request) in extra {
        cases.push(flowhost_case(name, request));
    }
    check("flowhost", &cases);
}

fn pvp_case(name: &str, request: Value) -> Case {
    let out =
        nicbench_models::run_json("pvp", &request.to_string(), &mut |_| {}).unwrap_or_else(|e| panic!("{name}: {e}"));
    Case {
        name: name.into(),
        result: serde_json::from_str(&out).expect("response JSON"),
        headline: vec!["mpps", "line_gbps", "bottleneck", "host_cores_busy"],
    }
}

#[test]
fn snapshot_pvp() {
    let mut cases = Vec::new();
    for nic in ["connectx5-25g", "agilio-cx-25g"] {
        for flows in [8_000u64, 16_000, 32_000, 64_000, 128_000] {
            for (size, vxlan) in [(64, false), (1518, false), (78, true)] {
                let name = format!("{nic}_{flows}_{size}{}", if vxlan { "_vxlan" } else { "" });
                cases.push(pvp_case(
                    &name,
                    json!({"nic": nic, "flows": flows, "frame_bytes": size, "vxlan": vxlan}),
                ));
            }
        }
        for datapath in ["kernel", "dpdk"] {
            cases.push(pvp_case(
                &format!("{nic}_{datapath}"),
                json!({"nic": nic, "flows": 64_000, "frame_bytes": 64, "datapath": datapath}),
            ));
        }
        cases.push(pvp_case(
            &format!("{nic}_half_offloaded"),
            json!({"nic": nic, "flows": 10_000, "frame_bytes": 64, "megaflows": {"masks": [
                {"ingress": "uplink", "megaflows": 10_000, "offloaded": 10_000},
                {"ingress": "vf", "megaflows": 10_000, "offloaded": 5_000}]}}),
        ));
    }
    check("pvp", &cases);
}
