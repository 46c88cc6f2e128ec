//! Shared fixtures: frames built with `nicbench_wire::builder`, temp paths.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use nicbench_flowmeter::{run_frames, CollectSink, Frame, MeterConfig, RunStats};
use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags};

pub const T0: u64 = 1_700_000_000_000_000_000;

/// `flows` TCP conversations, each: client→server and server→client packets
/// interleaved, `per_flow` packets per direction, 1 µs apart overall.
pub fn conversations(flows: u32, per_flow: u32) -> Vec<(u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut ts = T0;
    for round in 0..per_flow {
        for i in 0..flows {
            let client = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + 2 * i + 1));
            let server = IpAddr::V4(Ipv4Addr::from(0xc0a8_0000 + (i % 7)));
            let cport = 10_000 + (i % 50_000) as u16;
            let flags = if round == 0 { TcpFlags::SYN } else { TcpFlags::ACK };
            let c2s = FrameSpec {
                ip_src: client,
                ip_dst: server,
                l4: L4Spec::tcp(cport, 443, flags),
                frame_size_bytes: 100,
                ..FrameSpec::default()
            };
            let s_flags = if round == 0 {
                TcpFlags::SYN | TcpFlags::ACK
            } else {
                TcpFlags::ACK
            };
            let s2c = FrameSpec {
                ip_src: server,
                ip_dst: client,
                l4: L4Spec::tcp(443, cport, s_flags),
                frame_size_bytes: 200,
                ..FrameSpec::default()
            };
            for spec in [c2s, s2c] {
                out.push((ts, spec.build().unwrap()));
                ts += 1000;
            }
        }
    }
    out
}

pub fn frames(packets: &[(u64, Vec<u8>)]) -> impl Iterator<Item = Frame<'_>> {
    packets.iter().map(|(ts, d)| Frame {
        ts_ns: *ts,
        orig_len: d.len() as u32,
        data: d,
    })
}

pub fn run_mem(packets: &[(u64, Vec<u8>)], config: &MeterConfig) -> (RunStats, CollectSink) {
    let mut sink = CollectSink::default();
    let stop = AtomicBool::new(false);
    let stats = run_frames(frames(packets), config, &mut sink, &stop, &mut |_| {}).unwrap();
    (stats, sink)
}

pub fn temp_path(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nicbench-flowmeter-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Packets and captured bytes in the records.
pub fn record_totals(sink: &CollectSink) -> (u64, u64) {
    sink.records
        .iter()
        .fold((0, 0), |(p, b), r| (p + r.tot_pkts(), b + r.tot_bytes()))
}
