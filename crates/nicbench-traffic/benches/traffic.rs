//! Generator throughput [Mpps]: generate-only (pull and batch APIs) for 64 B
//! and 1500 B frames, and generate + write pcap for 64 B (target ≥ 15 Mpps).
//! The pcap goes to /dev/shm when present so the disk is not what we measure;
//! `write_pcap/64B_devnull` writes to /dev/null to separate our cost
//! (generating and pcap formatting) from the kernel's page-cache copy, which
//! on small VMs caps tmpfs writes near 1 GB/s (= 13 Mpps of 76 B records).
//!
//! Run briefly: `cargo bench -p nicbench-traffic -- --quick`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicbench_traffic::{write_pcap, PacketBatch, Popularity, SizeSpec, TrafficConfig, TrafficGen};

const PACKETS_PER_ITER: u64 = 100_000;
const PCAP_PACKETS: u64 = 1_000_000;

fn config(size: u32) -> TrafficConfig {
    TrafficConfig {
        flows: 1024,
        size: SizeSpec::Fixed(size),
        ..TrafficConfig::default()
    }
}

fn generate_only(c: &mut Criterion) {
    let mut group = c.benchmark_group("generate");
    group.throughput(Throughput::Elements(PACKETS_PER_ITER));
    for (name, cfg) in [
        ("64B", config(64)),
        ("1500B", config(1500)),
        (
            "imix_zipf",
            TrafficConfig {
                size: SizeSpec::Imix,
                popularity: Popularity::Zipf { s: 1.1 },
                ..config(64)
            },
        ),
    ] {
        let mut generator = TrafficGen::new(&cfg).expect("config");
        group.bench_function(format!("pull_{name}"), |b| {
            b.iter(|| {
                let mut bytes = 0usize;
                for _ in 0..PACKETS_PER_ITER {
                    if let Some(p) = generator.next_packet() {
                        bytes += black_box(p.data)[20] as usize;
                    }
                }
                bytes
            })
        });
    }
    let mut generator = TrafficGen::new(&config(64)).expect("config");
    let mut batch = PacketBatch::with_capacity(256);
    group.bench_function("batch256_64B", |b| {
        b.iter(|| {
            let mut n = 0u64;
            while n < PACKETS_PER_ITER {
                n += generator.fill_batch(&mut batch) as u64;
                black_box(&batch);
            }
            n
        })
    });
    group.finish();
}

fn out_path() -> PathBuf {
    let dir = if std::path::Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    dir.join(format!("nicbench-traffic-bench-{}.pcap", std::process::id()))
}

fn generate_and_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("write_pcap");
    group.sample_size(10);
    let path = out_path();
    let dev_null = PathBuf::from("/dev/null");
    // 1500 B frames: fewer packets, so one iteration stays ~150 MB.
    for (name, size, packets, target) in [
        ("64B", 64u32, PCAP_PACKETS, &path),
        ("64B_devnull", 64, PCAP_PACKETS, &dev_null),
        ("1500B", 1500, PCAP_PACKETS / 10, &path),
    ] {
        let cfg = TrafficConfig {
            packets: Some(packets),
            ..config(size)
        };
        group.throughput(Throughput::Elements(packets));
        group.bench_function(name, |b| {
            b.iter(|| write_pcap(&cfg, target, |_| {}).expect("write").packets)
        });
    }
    group.finish();
    std::fs::remove_file(&path).ok();
}

criterion_group!(benches, generate_only, generate_and_write);
criterion_main!(benches);
