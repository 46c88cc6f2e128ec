//! The foundation hot path, one core: pcap read → parse → FlowKey → Toeplitz.
//!
//! Target (issue 2): ≥ 20 Mpps for 64 B frames from a file in page cache.
//! The trace is generated once per frame size into the system temp dir.

use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicbench_trace::scan_pipeline;
use nicbench_traffic::{write_pcap, Rate, SizeSpec, TrafficConfig};
use nicbench_wire::rss::SYMMETRIC_KEY;

const PACKETS: u64 = 2_000_000;

fn trace(frame_bytes: u32) -> PathBuf {
    let path = std::env::temp_dir().join(format!("nicbench-bench-pipeline-{frame_bytes}.pcap"));
    let config = TrafficConfig {
        flows: 10_000,
        size: SizeSpec::Fixed(frame_bytes),
        rate: Rate::Gbps(100.0),
        packets: Some(PACKETS),
        duration_ns: None,
        ..TrafficConfig::default()
    };
    write_pcap(&config, &path, |_| {}).expect("write bench trace");
    path
}

fn bench_pipeline(c: &mut Criterion) {
    let mut group = c.benchmark_group("pipeline");
    group.sample_size(10);
    for frame_bytes in [64u32, 1500] {
        let path = trace(frame_bytes);
        // Warm the page cache so the bench measures CPU, not the disk.
        scan_pipeline(&path, &SYMMETRIC_KEY).expect("scan");
        group.throughput(Throughput::Elements(PACKETS));
        group.bench_function(format!("read_parse_key_toeplitz/{frame_bytes}B"), |b| {
            b.iter(|| scan_pipeline(&path, &SYMMETRIC_KEY).expect("scan"))
        });
        let _ = std::fs::remove_file(&path);
    }
    group.finish();
}

criterion_group!(benches, bench_pipeline);
criterion_main!(benches);
