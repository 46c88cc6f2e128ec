//! A whole run from request JSON: a rule file with a `set_field`, a pcap of two flows, host costs from a
//! profile with overrides.

use super::*;
use nicbench_rules::openflow::DpPlacement;

fn write_pcap(path: &std::path::Path, frames: &[(u64, Vec<u8>)]) {
    let mut w = nicbench_pcap::PcapWriter::create(path, 65535).expect("pcap");
    for (ts, f) in frames {
        w.write_packet(*ts, f.len() as u32, f).expect("write");
    }
    w.finish().expect("finish");
}

fn write_rules(dir: &std::path::Path, text: &str) -> String {
    let path = dir.join("rules.of");
    std::fs::write(&path, text).expect("rules");
    path.display().to_string()
}

const RULES: &str =
    "priority=10,udp,actions=set_field:10.1.9.9->nw_dst,output:p1\npriority=5,ip,actions=dec_ttl,output:p1\n";

fn request(rules: &str, pcap: &str, nic: Option<&str>, policy: &str) -> String {
    serde_json::json!({
        "openflow": rules,
        "ports": [{"name": "p0", "ofport": 1, "dp_port": 1}, {"name": "p1", "ofport": 2, "dp_port": 2}],
        "pcap": pcap, "in_port": "p0", "nic": nic, "tc_policy": policy,
        "host": "connectx5-25g", "overrides": {"sw_packet_ns": 1000.0, "upcall_us": 10.0, "revalidate_flow_us": 1.0}
    })
    .to_string()
}

#[test]
fn test_run_counts_upcalls_hits_and_offload_by_nic() {
    use crate::vswitch::key::tests::ipv4_frame;
    let dir = std::env::temp_dir().join(format!("nicbench-vswitch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pcap = dir.join("t.pcap");
    // UDP, UDP (same megaflow), TCP (dec_ttl flow), 1 s apart.
    let udp = ipv4_frame([10, 0, 0, 1], [10, 0, 0, 2], 17, 1, 2, None);
    let tcp = ipv4_frame([10, 0, 0, 1], [10, 0, 0, 2], 6, 1, 2, None);
    write_pcap(&pcap, &[(0, udp.clone()), (1_000_000_000, udp), (2_000_000_000, tcp)]);
    let rules = write_rules(&dir, RULES);
    let run = |nic, policy| -> result::Result {
        let text = request(&rules, pcap.to_str().expect("utf8"), nic, policy);
        let json = crate::model::run_json::<Vswitch>(&text, &mut |_| {}).expect("run");
        assert!(serde_json::from_str::<serde_json::Value>(&json).is_ok());
        simulate(&Request::from_json(&text).expect("request"), &mut |_| {}).expect("run")
    };
    let r = run(None, "none");
    assert_eq!((r.packets, r.upcalls, r.megaflows.len()), (3, 2, 2));
    assert_eq!(
        r.megaflows[0].flow.packets, 1,
        "the second UDP packet hit the first megaflow"
    );
    assert!(
        r.megaflows[0].text.contains("set(ipv4(dst=10.1.9.9))"),
        "{}",
        r.megaflows[0].text
    );
    assert!(
        r.megaflows[1].text.contains("ttl=64") && r.megaflows[1].text.contains("set(ipv4(ttl=63))"),
        "{}",
        r.megaflows[1].text
    );
    assert_eq!(r.upcalls_per_s, Some(1.0));
    // Host: 3 software packets × 1 µs + 2 upcalls × 10 µs + 4 dumps (0.5..2 s) of ≤ 2 flows, 1 ms each (the floor).
    assert!(
        (r.host_busy_core_s - (3e-6 + 20e-6 + 4e-3)).abs() < 1e-12,
        "{}",
        r.host_busy_core_s
    );
    // ConnectX-5 cannot match nw_ttl (the dec_ttl flow) nor rewrite IP on... UDP is fine.
    let r = run(Some("connectx5-25g"), "none");
    assert_eq!(r.offloaded_flows, 1);
    assert_eq!(r.refusals.get("mlx5_core: cannot match nw_ttl"), Some(&1));
    assert_eq!(
        r.megaflows[1].flow.placement,
        DpPlacement {
            offloaded: Some(false),
            dp: Some("tc".into())
        }
    );
    assert_eq!(r.hw_packets, 1);
    let r = run(Some("connectx5-25g"), "skip_sw");
    assert_eq!(
        r.megaflows[1].flow.placement.dp.as_deref(),
        Some("ovs"),
        "skip_sw: refused flows fall back to the kernel datapath"
    );
    let r = run(Some("agilio-cx-25g"), "none");
    assert_eq!(r.offloaded_flows, 2);
    assert_eq!(r.costs.upcall_us.value, 10.0, "the host profile's cost, overridden");
    let bad = request(&rules, pcap.to_str().expect("utf8"), Some("nope"), "none");
    let err = crate::model::run_json::<Vswitch>(&bad, &mut |_| {})
        .expect_err("unknown nic")
        .to_string();
    assert!(err.contains("'nope'") && err.contains("agilio-cx-25g"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// 5000 packets of distinct sources, 1 ms apart, each its own megaflow (exact nw_src: prefix
/// tries off). With slow dumps (2 ms per flow) `udpif_revalidator`'s formula cuts the flow limit
/// (×3/4 at the 1 s dump's 2 s, /3, /4, /5 ...) down to its floor of 1000; flows over the limit
/// go after 100 ms idle, and upcalls at the limit install nothing. With free dumps nothing of it.
#[test]
fn test_slow_revalidation_lowers_the_flow_limit_to_its_floor() {
    let dir = std::env::temp_dir().join(format!("nicbench-vswitch-limit-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let pcap = dir.join("t.pcap");
    let frames: Vec<(u64, Vec<u8>)> = (0..5000u32)
        .map(|i| {
            let src = (0x0b00_0000u32 + i).to_be_bytes();
            (
                u64::from(i) * 1_000_000,
                crate::vswitch::key::tests::ipv4_frame(src, [10, 0, 0, 2], 17, 1, 2, None),
            )
        })
        .collect();
    write_pcap(&pcap, &frames);
    let rules = write_rules(&dir, "priority=10,ip,nw_src=11.0.0.1,actions=output:p1\n");
    let run = |revalidate_flow_us: f64| {
        let mut v: serde_json::Value =
            serde_json::from_str(&request(&rules, pcap.to_str().expect("utf8"), None, "none")).expect("json");
        v["lookup"] = serde_json::json!({"prefix_tries": false});
        v["overrides"]["revalidate_flow_us"] = serde_json::json!(revalidate_flow_us);
        simulate(&Request::from_json(&v.to_string()).expect("request"), &mut |_| {}).expect("run")
    };
    let slow = run(2000.0);
    assert_eq!(slow.upcalls, 5000);
    assert_eq!(slow.revalidators.flow_limit_min, 1000);
    assert!(slow.revalidators.evicted_overflow > 0);
    assert!(slow.flow_limit_hits > 0, "{:?}", slow.revalidators);
    assert!(slow.revalidators.max_flows <= 3001, "{:?}", slow.revalidators);
    let fast = run(0.0);
    assert_eq!((fast.flow_limit_hits, fast.revalidators.evicted_overflow), (0, 0));
    assert_eq!(fast.revalidators.flow_limit_min, 200_000);
    assert_eq!(
        fast.megaflows.iter().filter(|m| m.installed).count(),
        5000,
        "nothing idle 10 s in a 5 s trace"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Distinct UDP flows (exact nw_src, prefix tries off: one megaflow each), `per_flow` packets each
/// (flow by flow), `gap_ns` apart, with `overrides` of the request's host costs and `cache`.
fn setup_run(
    flows: u32,
    per_flow: u32,
    gap_ns: u64,
    overrides: serde_json::Value,
    cache: serde_json::Value,
) -> result::Result {
    let dir = std::env::temp_dir().join(format!(
        "nicbench-vswitch-setup-{}-{flows}-{per_flow}-{gap_ns}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let pcap = dir.join("t.pcap");
    let frames: Vec<(u64, Vec<u8>)> = (0..flows * per_flow)
        .map(|i| {
            let src = (0x0b00_0000u32 + i / per_flow).to_be_bytes();
            (
                u64::from(i) * gap_ns,
                crate::vswitch::key::tests::ipv4_frame(src, [10, 0, 0, 2], 17, 1, 2, None),
            )
        })
        .collect();
    write_pcap(&pcap, &frames);
    let rules = write_rules(&dir, "priority=10,ip,nw_src=11.0.0.1,actions=output:p1\n");
    let mut v: serde_json::Value =
        serde_json::from_str(&request(&rules, pcap.to_str().expect("utf8"), None, "none")).expect("json");
    v["lookup"] = serde_json::json!({"prefix_tries": false});
    for (k, x) in overrides.as_object().expect("object") {
        v["overrides"][k] = x.clone();
    }
    v["cache"] = cache;
    let r = simulate(&Request::from_json(&v.to_string()).expect("request"), &mut |_| {}).expect("run");
    std::fs::remove_dir_all(&dir).ok();
    r
}

/// One flow, 20 packets 1 µs apart, upcall 10 µs: the first packet's upcall installs the flow at
/// 10 µs; the 9 packets at 1..9 µs miss too (duplicate upcalls, each taking the handler 10 µs
/// more: executed, nothing installed); the 10 from 10 µs on hit.
#[test]
fn test_packets_during_an_upcall_are_duplicate_upcalls_and_hit_after_the_install() {
    let r = setup_run(
        1,
        20,
        1_000,
        serde_json::json!({}),
        serde_json::json!({"handler_threads": 1}),
    );
    let s = &r.flow_setup;
    assert_eq!(
        (r.upcalls, s.upcalls_handled, s.duplicate_upcalls, s.lost_upcalls),
        (10, 10, 9, 0)
    );
    assert_eq!(
        (s.flows_set_up, r.megaflows.len(), r.megaflows[0].flow.packets),
        (1, 1, 10)
    );
    assert_eq!(r.sw_packets, 20, "duplicates are executed by the handler");
    assert!((s.handler_busy_s - 100e-6).abs() < 1e-12, "{}", s.handler_busy_s);
    let rate = s.setup_per_s.expect("rate");
    assert!((rate - 1e5).abs() < 1e-6, "one flow in the 10 µs of its upcall: {rate}");
    assert_eq!(s.max_queued, 10);
}

/// 1000 flows arriving at once (1 ns apart) on one handler with a queue of 100: 100 are handled
/// and set up (one per 10 µs), the other 900 are lost and their packets dropped; with 4 handlers
/// about 400 (the key hash spreads the flows unevenly). Upcalls lost or not, they are counted.
#[test]
fn test_a_full_handler_queue_loses_upcalls_and_their_packets() {
    let over = serde_json::json!({"upcall_queue": 100.0});
    let one = setup_run(1000, 1, 1, over.clone(), serde_json::json!({"handler_threads": 1}));
    let s = &one.flow_setup;
    assert_eq!(
        (one.upcalls, s.upcalls_handled, s.lost_upcalls, s.flows_set_up),
        (1000, 100, 900, 100)
    );
    assert_eq!(one.sw_packets, 100, "lost upcalls' packets are dropped");
    assert_eq!(s.max_queued, 100);
    let four = setup_run(1000, 1, 1, over, serde_json::json!({"handler_threads": 4}));
    let s4 = &four.flow_setup;
    assert_eq!(s4.handler_threads, 4);
    assert!((300..=400).contains(&s4.upcalls_handled), "{s4:?}");
    assert_eq!(s4.upcalls_handled + s4.lost_upcalls, 1000);
}

/// Flows offered faster than the handlers set them up (one per 1 µs, upcall 10 µs, a queue that
/// never fills): the set-up rate is the handlers' capacity, threads / upcall_us, and the handlers
/// are busy the whole time; offered slower (one per 100 µs), the rate is the offered one.
#[test]
fn test_the_set_up_rate_is_the_handlers_capacity_under_overload() {
    let big = serde_json::json!({"upcall_queue": 1e6});
    for threads in [1u32, 2] {
        let r = setup_run(
            2000,
            1,
            1_000,
            big.clone(),
            serde_json::json!({"handler_threads": threads}),
        );
        let s = &r.flow_setup;
        assert_eq!((s.flows_set_up, s.lost_upcalls, s.duplicate_upcalls), (2000, 0, 0));
        let rate = s.setup_per_s.expect("rate");
        let capacity = f64::from(threads) / 10e-6;
        assert!((rate / capacity - 1.0).abs() < 0.02, "{threads}: {rate} vs {capacity}");
        assert!(
            s.handler_utilization.expect("util") > 0.95 * 5.0 / f64::from(threads),
            "{s:?}"
        );
    }
    let slow = setup_run(200, 1, 100_000, big, serde_json::json!({"handler_threads": 1}));
    let rate = slow.flow_setup.setup_per_s.expect("rate");
    assert!((rate / 1e4 - 1.0).abs() < 0.01, "{rate}");
    assert!((slow.flow_setup.handler_utilization.expect("util") - 0.1).abs() < 0.01);
}

/// Set-up load lowers the flow limit: 12000 flows offered over 600 ms at 20000/s, just what 64
/// handler threads at 3.2 ms per upcall set up, so the handlers keep 64 cores busy. On a host
/// with 8 datapath cores the 500 ms dump of ~10000 flows at 20 µs each (200 ms) shares them:
/// × (64 + 1) / 8, over 1.3 s, and the flow limit drops by a quarter. With 1000 cores, no
/// sharing: the dump takes 200 ms and the limit stays.
#[test]
fn test_set_up_load_slows_the_dump_and_lowers_the_flow_limit() {
    let run = |cores: f64| {
        setup_run(
            12_000,
            1,
            50_000,
            serde_json::json!({"upcall_us": 3200.0, "revalidate_flow_us": 20.0, "host_datapath_cores": cores}),
            serde_json::json!({"handler_threads": 64}),
        )
    };
    let shared = run(8.0);
    assert!(
        shared.flow_setup.handler_utilization.expect("util") > 0.9,
        "{:?}",
        shared.flow_setup
    );
    assert_eq!(shared.revalidators.dumps, 1);
    assert!(shared.revalidators.dump_ms_max > 1300.0, "{:?}", shared.revalidators);
    assert_eq!(shared.revalidators.flow_limit_min, 150_000);
    let alone = run(1000.0);
    assert!(
        (150.0..250.0).contains(&alone.revalidators.dump_ms_max),
        "{:?}",
        alone.revalidators
    );
    assert_eq!(alone.revalidators.flow_limit_min, 200_000);
}
