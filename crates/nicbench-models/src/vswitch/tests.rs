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
