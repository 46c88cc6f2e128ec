//! Flow meter throughput \[Mpps\] — the issue's targets: ≥ 10 Mpps per core at
//! 16K flows and ≥ 10× Argus (~0.66 Mpps).
//!
//! ```text
//!   TrafficGen (uniform over N flows) ──► frames in memory ──► run_frames ──► NullSink
//!                                   └──► pcap in /dev/shm ───► run_pcap  ──► NullSink
//! ```
//! - `memory/{64B,750B}/{256,16K,64K,1M}flows/{1,2}w`: packets from memory
//!   (1M of 64 B, 400K of 750 B per iteration), laid out back to back as a
//!   pcap read into memory, each from a uniformly random flow (nicbench-traffic).
//!   Tables sized `max_flows = 2 × flows`. With 1M flows most packets start a
//!   flow (≈1–2 packets per flow): that case measures flow creation.
//! - `pcap/{64B,750B}/16Kflows/{1,2}w`: the same traffic read from a pcap in
//!   page cache (/dev/shm when present), parsing included.
//!
//! 1 worker runs inline; 2 workers = dispatcher + 2 threads (3 threads: on a
//! 2-core machine they share the cores, so 2w shows the dispatch overhead
//! more than the scaling).
//!
//! Run briefly: `cargo bench -p nicbench-flowmeter -- --quick` (or filter,
//! e.g. `-- --quick memory/64B`).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use nicbench_flowmeter::{run_frames, run_pcap, Frame, MeterConfig, NullSink};
use nicbench_traffic::{Rate, SizeSpec, TrafficConfig, TrafficGen};

/// Packets per iteration: 64 B frames (60 MB in memory), 750 B frames (300 MB).
fn packets_for(size: u32) -> u64 {
    if size <= 128 {
        1_000_000
    } else {
        400_000
    }
}

/// The packets laid out back to back, as a pcap read into memory would be.
struct Traffic {
    data: Vec<u8>,
    /// (offset in `data`, length, timestamp) per packet.
    packets: Vec<(usize, u32, u64)>,
}

fn traffic_config(flows: u32, size: u32) -> TrafficConfig {
    let packets = packets_for(size);
    TrafficConfig {
        flows,
        size: SizeSpec::Fixed(size),
        rate: Rate::Gbps(100.0),
        packets: Some(packets),
        ..TrafficConfig::default()
    }
}

fn traffic(flows: u32, size: u32) -> Traffic {
    let mut generator = TrafficGen::new(&traffic_config(flows, size)).expect("valid traffic config");
    let count = packets_for(size) as usize;
    let mut data = Vec::with_capacity(count * size as usize);
    let mut packets = Vec::with_capacity(count);
    while let Some(p) = generator.next_packet() {
        packets.push((data.len(), p.data.len() as u32, p.meta.ts_ns));
        data.extend_from_slice(p.data);
    }
    Traffic { data, packets }
}

fn config(flows: u32, workers: usize) -> MeterConfig {
    MeterConfig {
        workers,
        max_flows: (2 * flows as usize).max(1024),
        ..MeterConfig::nicbench()
    }
}

/// CPU time of the whole process (all threads) \[s\].
fn process_cpu_secs() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// One timed run: wall Mpps, and Mpps per CPU-second (all threads), which is
/// what "per core" means on a shared machine where we do not get a whole core.
fn once(id: &str, run: &mut dyn FnMut() -> u64) {
    let cpu = process_cpu_secs();
    let start = Instant::now();
    let packets = run();
    let wall = start.elapsed().as_secs_f64();
    let cpu = process_cpu_secs() - cpu;
    eprintln!(
        "{id}: {:.2} Mpps wall, {:.2} Mpps per CPU-second ({:.0}% CPU)",
        packets as f64 / wall / 1e6,
        packets as f64 / cpu / 1e6,
        100.0 * cpu / wall
    );
}

fn memory(c: &mut Criterion) {
    let mut group = c.benchmark_group("memory");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for size in [64u32, 750] {
        for (label, flows) in [("256", 256u32), ("16K", 16_384), ("64K", 65_536), ("1M", 1_048_576)] {
            // Building 1M frames of 750 B takes a while: only when selected.
            let id_prefix = format!("{size}B/{label}flows");
            let mut data: Option<Traffic> = None;
            group.throughput(Throughput::Elements(packets_for(size)));
            for workers in [1usize, 2] {
                let id = format!("{id_prefix}/{workers}w");
                if !selected(&format!("memory/{id}")) {
                    continue;
                }
                let t = data.get_or_insert_with(|| traffic(flows, size));
                let cfg = config(flows, workers);
                let stop = AtomicBool::new(false);
                let mut run = || {
                    let frames = t.packets.iter().map(|&(at, len, ts)| Frame {
                        ts_ns: ts,
                        orig_len: len,
                        data: &t.data[at..at + len as usize],
                    });
                    let mut sink = NullSink::default();
                    let stats = run_frames(frames, &cfg, &mut sink, &stop, &mut |_| {}).expect("run");
                    assert_eq!(sink.packets, stats.packets);
                    stats.packets
                };
                once(&format!("memory/{id}"), &mut run);
                group.bench_function(&id, |b| b.iter(&mut run));
            }
        }
    }
    group.finish();
}

/// Whether a criterion filter (first free argument) selects this id; the
/// expensive inputs are built only for selected benchmarks.
fn selected(id: &str) -> bool {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    filter.is_none_or(|f| id.contains(&f))
}

fn pcap_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    }
}

fn pcap(c: &mut Criterion) {
    let mut group = c.benchmark_group("pcap");
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(300));
    group.measurement_time(Duration::from_secs(2));
    for size in [64u32, 750] {
        let flows = 16_384;
        let path = pcap_dir().join(format!("nicbench-flowmeter-bench-{size}B-{}.pcap", std::process::id()));
        let mut written = false;
        group.throughput(Throughput::Elements(packets_for(size)));
        for workers in [1usize, 2] {
            let id = format!("{size}B/16Kflows/{workers}w");
            if !selected(&format!("pcap/{id}")) {
                continue;
            }
            if !written {
                nicbench_traffic::write_pcap(&traffic_config(flows, size), &path, |_| {}).expect("write pcap");
                written = true;
            }
            let cfg = config(flows, workers);
            let stop = AtomicBool::new(false);
            let mut run = || {
                let mut sink = NullSink::default();
                run_pcap(&path, &cfg, &mut sink, &stop, &mut |_| {})
                    .expect("run")
                    .packets
            };
            once(&format!("pcap/{id}"), &mut run);
            group.bench_function(&id, |b| b.iter(&mut run));
        }
        let _ = std::fs::remove_file(&path);
    }
    group.finish();
}

criterion_group!(benches, memory, pcap);
criterion_main!(benches);
