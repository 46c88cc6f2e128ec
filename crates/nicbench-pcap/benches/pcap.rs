//! Read and write throughput of nicbench-pcap, in packets per second.
//!
//! Files are generated in the temp dir by our own writer, then read while in
//! page cache, so the figures are CPU cost, not disk speed. Run briefly with
//! `cargo bench -p nicbench-pcap -- --quick` (or `--warm-up-time 1 --measurement-time 3`).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicbench_pcap::{PcapSource, PcapWriter};

const BASE_TS_NS: u64 = 1_700_000_000_000_000_000;

fn bench_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nicbench-pcap-bench-{name}.pcap"))
}

/// Writes `count` frames of `frame_bytes` (1 µs apart) unless the file already exists with the right size.
fn ensure_file(path: &Path, count: u64, frame_bytes: usize) {
    let expected_bytes = 24 + count * (16 + frame_bytes as u64);
    if std::fs::metadata(path).is_ok_and(|m| m.len() == expected_bytes) {
        return;
    }
    let frame = vec![0x5a; frame_bytes];
    let mut writer = PcapWriter::create(path, 65535).expect("create bench file");
    for i in 0..count {
        writer
            .write_packet(BASE_TS_NS + i * 1_000, frame_bytes as u32 + 4, &frame)
            .expect("write");
    }
    writer.finish().expect("finish");
}

/// Reads the whole file; returns (packets, captured bytes) so nothing is optimised away.
fn read_all(path: &Path) -> (u64, u64) {
    let mut source = PcapSource::open(path).expect("open");
    let mut data_bytes = 0u64;
    while let Some(packet) = source.next_packet() {
        let packet = packet.expect("bench file is valid");
        data_bytes += u64::from(black_box(packet.data)[0]) + packet.data.len() as u64;
    }
    (source.packets_read(), data_bytes)
}

fn bench_read(c: &mut Criterion) {
    let mut group = c.benchmark_group("pcap_read");
    group.sample_size(10);
    for (frame_bytes, count) in [(64usize, 1_000_000u64), (1500, 100_000)] {
        let path = bench_path(&format!("read-{frame_bytes}"));
        ensure_file(&path, count, frame_bytes);
        read_all(&path); // warm the page cache
        group.throughput(Throughput::Elements(count));
        group.bench_function(format!("{frame_bytes}B"), |b| b.iter(|| black_box(read_all(&path))));
    }
    group.finish();
}

fn bench_write(c: &mut Criterion) {
    let mut group = c.benchmark_group("pcap_write");
    group.sample_size(10);
    let count = 1_000_000u64;
    let frame = [0x5au8; 60];
    let path = bench_path("write-60");
    group.throughput(Throughput::Elements(count));
    group.bench_function("60B_to_file", |b| {
        b.iter(|| {
            let mut writer = PcapWriter::create(&path, 65535).expect("create");
            for i in 0..count {
                writer
                    .write_packet(BASE_TS_NS + i * 1_000, 64, black_box(&frame))
                    .expect("write");
            }
            writer.finish().expect("finish");
        })
    });
    group.bench_function("60B_to_sink", |b| {
        b.iter(|| {
            let mut writer =
                PcapWriter::from_writer(std::io::sink(), 65535, nicbench_pcap::LinkType::ETHERNET).expect("create");
            for i in 0..count {
                writer
                    .write_packet(BASE_TS_NS + i * 1_000, 64, black_box(&frame))
                    .expect("write");
            }
            writer.finish().expect("finish");
        })
    });
    group.finish();
    let _ = std::fs::remove_file(&path);
}

criterion_group!(benches, bench_read, bench_write);
criterion_main!(benches);
