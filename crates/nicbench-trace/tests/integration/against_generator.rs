//! Trace analysis checked against the traffic generator's own record of what it emitted:
//! for every packet the generator reports the flow it belongs to, its timestamp and frame
//! size, so the totals, distinct flows, size buckets, protocol stacks and the per-queue RSS
//! spread of a trace are known without nicbench-trace's read → parse → key path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use nicbench_trace::{rss_spread, scan_pipeline, summarize, RssOptions};
use nicbench_traffic::{write_pcap, Popularity, Proto, SizeSpec, TrafficConfig, TrafficGen};
use nicbench_wire::rss::{hash_flow, Reta, RssFields, RssInput, Toeplitz, MICROSOFT_KEY, SYMMETRIC_KEY};
use nicbench_wire::FlowKey;

/// What the generator says it emitted, packet by packet.
struct Emitted {
    flows: Vec<FlowKey>,
    /// (timestamp [ns], flow index, frame size incl. FCS [B], captured bytes)
    packets: Vec<(u64, u32, u32, u64)>,
}

fn emitted(config: &TrafficConfig) -> Emitted {
    let mut generator = TrafficGen::new(config).expect("valid config");
    let mut packets = Vec::new();
    while let Some(p) = generator.next_packet() {
        packets.push((
            p.meta.ts_ns,
            p.meta.flow_index,
            p.meta.frame_size_bytes,
            p.data.len() as u64,
        ));
    }
    Emitted {
        flows: generator.flows().to_vec(),
        packets,
    }
}

fn trace_file(config: &TrafficConfig, name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!("nicbench-trace-{}-{name}.pcap", std::process::id()));
    write_pcap(config, &path, |_| {}).expect("write trace");
    path
}

fn config(flows: u32, ipv6: bool, proto: Proto, vlan: Option<u16>, vxlan_vni: Option<u32>) -> TrafficConfig {
    TrafficConfig {
        flows,
        ipv6,
        proto,
        vlan,
        vxlan_vni,
        // Every RMON bucket from 128-255 up to jumbo (64 B cannot hold IPv6 + TCP + VXLAN).
        size: SizeSpec::Uniform { min: 128, max: 2000 },
        popularity: Popularity::Zipf { s: 1.1 },
        packets: Some(20_000),
        seed: 17,
        start_ns: 1_700_000_000_000_000_000,
        ..TrafficConfig::default()
    }
}

#[test]
fn summary_counts_what_the_generator_emitted() {
    for (name, cfg, stack) in [
        (
            "vlan-v4-udp",
            config(300, false, Proto::Udp, Some(3), None),
            "VLAN IPv4/UDP",
        ),
        (
            "vxlan-v6-tcp",
            config(300, true, Proto::Tcp, None, Some(42)),
            "VXLAN IPv6/TCP",
        ),
    ] {
        let truth = emitted(&cfg);
        let path = trace_file(&cfg, name);
        let mut progress = Vec::new();
        let s = summarize(&path, &mut |bytes| progress.push(bytes)).expect("summarize");
        let file_bytes = std::fs::metadata(&path).unwrap().len();
        std::fs::remove_file(&path).ok();

        let n = truth.packets.len() as u64;
        let bytes: u64 = truth.packets.iter().map(|p| p.3).sum();
        assert_eq!((s.packets, s.bytes, s.captured_bytes), (n, bytes, bytes), "{name}");
        let (first, last) = (truth.packets[0].0, truth.packets[truth.packets.len() - 1].0);
        assert_eq!(
            (s.first_ts_ns, s.last_ts_ns, s.duration_ns),
            (Some(first), Some(last), last - first),
            "{name}"
        );
        // Zipf popularity: not every flow need appear; exactly the ones emitted do.
        let used: BTreeSet<u32> = truth.packets.iter().map(|p| p.1).collect();
        assert_eq!(
            (s.flows, s.biflows, s.unparsed),
            (used.len() as u64, used.len() as u64, 0),
            "{name}"
        );
        assert_eq!(s.protocols, BTreeMap::from([(stack.to_string(), n)]), "{name}");
        // RMON buckets of the frame size (with FCS), counted from the generator's sizes.
        for bucket in &s.size_histogram {
            let want = truth
                .packets
                .iter()
                .filter(|p| p.2 >= bucket.min && p.2 <= bucket.max)
                .count() as u64;
            assert_eq!(bucket.packets, want, "{name}: bucket {}", bucket.label);
        }
        assert_eq!(
            s.size_histogram.iter().map(|b| b.packets).sum::<u64>(),
            n,
            "{name}: every packet in one bucket"
        );
        // n packets over n slots: last − first plus one mean gap.
        let window_s = s.duration_ns as f64 * n as f64 / (n - 1) as f64 / 1e9;
        assert_eq!(s.l2_gbps, bytes as f64 * 8.0 / window_s / 1e9, "{name}");
        // Fewer packets than one progress step: one report, at the end, of the whole file.
        assert_eq!(progress, [file_bytes], "{name}");
    }
}

#[test]
fn summary_reads_a_short_paced_trace_back_at_its_rate() {
    // 10 frames of 1500 B at 100 Gbps: 9 gaps of 121.6 ns between the first and the last
    // timestamp. Bytes over those 9 gaps alone would read 111 Gbps, above the line rate.
    // Timestamps are whole ns (121.6 ns gaps round): 10 packets read within 0.1%.
    for packets in [10_u64, 1000] {
        let cfg = TrafficConfig {
            flows: 10,
            size: SizeSpec::Fixed(1500),
            rate: nicbench_traffic::Rate::Gbps(100.0),
            packets: Some(packets),
            duration_ns: None,
            ..TrafficConfig::default()
        };
        let path = trace_file(&cfg, &format!("paced-{packets}"));
        let s = summarize(&path, &mut |_| {}).expect("summarize");
        std::fs::remove_file(&path).ok();
        assert_eq!(s.packets, packets);
        assert!(
            (s.wire_gbps - 100.0).abs() < 0.1,
            "{packets} packets: {} Gbps",
            s.wire_gbps
        );
        assert!(
            (s.mpps / (100e3 / (1520.0 * 8.0)) - 1.0).abs() < 1e-3,
            "{packets} packets: {} Mpps",
            s.mpps
        );
    }
}

#[test]
fn rss_spread_puts_every_packet_on_its_flows_queue() {
    const QUEUES: u16 = 8;
    for (name, cfg, inner) in [
        ("spread-v4-udp", config(500, false, Proto::Udp, None, None), false),
        ("spread-v6-tcp", config(500, true, Proto::Tcp, Some(9), None), false),
        // Inner headers of VXLAN frames: the generator's flow keys are the inner 5-tuples.
        (
            "spread-vxlan-inner",
            config(500, false, Proto::Udp, None, Some(7)),
            true,
        ),
    ] {
        let truth = emitted(&cfg);
        let path = trace_file(&cfg, name);
        let options = RssOptions {
            queues: QUEUES,
            key: SYMMETRIC_KEY.to_vec(),
            with_ports: true,
            reta_size: 128,
            inner,
        };
        let report = rss_spread(&path, &options, &mut |_| {}).expect("rss spread");
        std::fs::remove_file(&path).ok();

        let toeplitz = Toeplitz::new(&SYMMETRIC_KEY).unwrap();
        let reta = Reta::round_robin(QUEUES, 128).unwrap();
        let queue_of =
            |flow: u32| usize::from(reta.queue(hash_flow(&toeplitz, &truth.flows[flow as usize], RssFields::IpPorts)));
        let mut packets = vec![0u64; usize::from(QUEUES)];
        let mut flows = vec![BTreeSet::new(); usize::from(QUEUES)];
        for p in &truth.packets {
            packets[queue_of(p.1)] += 1;
            flows[queue_of(p.1)].insert(p.1);
        }
        assert_eq!(
            report.queues.iter().map(|q| q.packets).collect::<Vec<_>>(),
            packets,
            "{name}: packets per queue"
        );
        assert_eq!(
            report.queues.iter().map(|q| q.flows).collect::<Vec<_>>(),
            flows.iter().map(|f| f.len() as u64).collect::<Vec<_>>(),
            "{name}: flows per queue"
        );
        assert_eq!(
            (report.packets, report.unhashed),
            (truth.packets.len() as u64, 0),
            "{name}"
        );
        let max = *packets.iter().max().unwrap() as f64;
        assert_eq!(
            report.packet_imbalance,
            max / (truth.packets.len() as f64 / f64::from(QUEUES)),
            "{name}"
        );
    }
}

#[test]
fn pipeline_hashes_every_packet_as_its_flow() {
    // The checksum is the XOR of every packet's hash: the bit-by-bit Toeplitz of the
    // generator's flow, packet by packet, must give the same, whatever path the parser took
    // (IPv4 straight from the frame's bytes, IPv6 and VXLAN through the flow key).
    for (name, cfg) in [
        ("pipe-v4-udp", config(400, false, Proto::Udp, None, None)),
        ("pipe-vlan-v4-tcp", config(400, false, Proto::Tcp, Some(5), None)),
        ("pipe-v6-udp", config(200, true, Proto::Udp, None, None)),
        ("pipe-vxlan-v4-tcp", config(200, false, Proto::Tcp, None, Some(11))),
    ] {
        let truth = emitted(&cfg);
        let path = trace_file(&cfg, name);
        for key in [&SYMMETRIC_KEY[..], &MICROSOFT_KEY[..]] {
            let stats = scan_pipeline(&path, key).expect("pipeline");
            let toeplitz = Toeplitz::new(key).unwrap();
            let flow_hash: Vec<u32> = truth
                .flows
                .iter()
                .map(|f| toeplitz.hash_reference(RssInput::from_flow(f, RssFields::IpPorts).to_bytes().as_slice()))
                .collect();
            let checksum = truth.packets.iter().fold(0, |acc, p| acc ^ flow_hash[p.1 as usize]);
            let n = truth.packets.len() as u64;
            assert_eq!(
                (stats.packets, stats.hashed, stats.checksum),
                (n, n, checksum),
                "{name}"
            );
        }
        std::fs::remove_file(&path).ok();
    }
}
