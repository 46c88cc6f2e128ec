//! An OpenFlow rule file as `nicbench vswitch --openflow FILE` reads it: the bytes become the file,
//! loaded by `vswitch::rules::load` (BOM, ofctl add-flows or dump-flows lines, or a JSON list; the
//! rte_flow-syntax hint; the empty-file check), then run by the vswitch model: the bridge's
//! add-time checks (ports resolved, duplicate rules replaced) and the pipeline's translation of a
//! few packets (goto_table, resubmit, set_field, tunnels) — what `rule_syntaxes` does not reach.
//!
//! Checks: no panic; every error is one line; loaded rules round-trip through both writers
//! (ofctl text → `openflow::parse_file`, JSON → `rules::load`) to the same rules.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use nicbench_models::vswitch::{self, ports, rules, Request};
use nicbench_pcap::{LinkType, PcapWriter};
use nicbench_rules::openflow;

fn scratch(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nicbench-fuzz-{}-{name}", std::process::id()))
}

/// Ethernet + IPv4 + UDP/TCP, and Ethernet + IPv6 + UDP, and an ARP frame: the keys rules match.
fn trace() -> &'static str {
    static PCAP: OnceLock<String> = OnceLock::new();
    PCAP.get_or_init(|| {
        let eth = |ethertype: u16, body: &[u8]| {
            let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
            f.extend_from_slice(&ethertype.to_be_bytes());
            f.extend_from_slice(body);
            f
        };
        let ipv4 = |proto: u8, l4: &[u8]| {
            let mut h = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, proto, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
            let total = (20 + l4.len()) as u16;
            h[2..4].copy_from_slice(&total.to_be_bytes());
            h.extend_from_slice(l4);
            h
        };
        let udp = [0x30, 0x39, 0x00, 0x35, 0, 8, 0, 0];
        let tcp = [0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0xff, 0xff, 0, 0, 0, 0];
        let mut ipv6 = vec![0x60, 0, 0, 0, 0, 8, 17, 64];
        ipv6.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        ipv6.extend_from_slice(&[0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        ipv6.extend_from_slice(&udp);
        let arp = [0, 1, 8, 0, 6, 4, 0, 1, 2, 0, 0, 0, 0, 1, 10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2];
        let frames = [
            eth(0x0800, &ipv4(17, &udp)),
            eth(0x0800, &ipv4(6, &tcp)),
            eth(0x86dd, &ipv6),
            eth(0x0806, &arp),
            eth(0x0800, &ipv4(17, &udp)),
        ];
        let mut w = PcapWriter::from_writer(Vec::new(), 65535, LinkType::ETHERNET).expect("writer");
        for (i, f) in frames.iter().enumerate() {
            w.write_packet(i as u64 * 1000, f.len() as u32, f).expect("frame");
        }
        let path = scratch("trace.pcap");
        std::fs::write(&path, w.into_inner().expect("pcap")).expect("trace written");
        path.display().to_string()
    })
}

fn one_line(e: &impl std::fmt::Display) {
    let text = e.to_string();
    assert!(!text.contains('\n'), "an error is one line: {text}");
}

fuzz_target!(|data: &[u8]| {
    let path = scratch("rules.of");
    std::fs::write(&path, data).expect("rules written");
    let path_str = path.display().to_string();
    let loaded = match rules::load(&path_str) {
        Ok(loaded) => loaded,
        Err(e) => return one_line(&e),
    };
    // Both writers give back the same rules.
    if let Ok(text) = openflow::rules_to_string(&loaded) {
        let again = openflow::parse_file(&text, "written").expect("written ofctl rules parse");
        assert_eq!(again, loaded, "ofctl round trip via {text:?}");
    }
    let json = serde_json::to_string(&loaded).expect("rules serialize");
    let json_path = scratch("rules.json");
    std::fs::write(&json_path, &json).expect("json written");
    let again = rules::load(&json_path.display().to_string()).expect("written JSON rules load");
    assert_eq!(again, loaded, "JSON round trip via {json}");

    // The model: add-time checks and a few packets through the pipeline, arriving on the first
    // port a rule matches (else a port of its own).
    let in_port = ports::matched_in_ports(&loaded).into_iter().next().unwrap_or_else(|| "p0".into());
    let request = serde_json::json!({
        "openflow": path_str,
        "pcap": trace(),
        "in_port": in_port,
        "profiles_dir": concat!(env!("CARGO_MANIFEST_DIR"), "/../profiles"),
    });
    let request = Request::from_json(&request.to_string()).expect("request");
    match vswitch::simulate(&request, &mut |_| {}) {
        Ok(result) => {
            let _ = serde_json::to_string(&result).expect("result serializes");
        }
        Err(e) => one_line(&e),
    }
});
