//! Runs one trace analysis over a pcap, for profilers (callgrind, perf) and quick timings:
//!
//! ```text
//! cargo build --release -p nicbench-trace --example trace_profile
//! valgrind --tool=callgrind target/release/examples/trace_profile pipeline FILE
//! target/release/examples/trace_profile {pipeline|info|rss} FILE
//! ```
//!
//! Prints the packet count and the wall time, so a profile can be turned into instructions per packet.

use std::path::Path;
use std::time::Instant;

use nicbench_trace::{rss_spread, scan_pipeline, summarize, RssOptions};
use nicbench_wire::rss::{DEFAULT_RETA_SIZE, SYMMETRIC_KEY};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(what), Some(file)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: trace_profile {{pipeline|info|rss}} FILE");
        std::process::exit(2);
    };
    let path = Path::new(file);
    let start = Instant::now();
    let packets = match what.as_str() {
        "pipeline" => scan_pipeline(path, &SYMMETRIC_KEY).map(|s| s.packets),
        "info" => summarize(path, &mut |_| {}).map(|s| s.packets),
        "rss" => {
            let options = RssOptions {
                queues: 8,
                key: SYMMETRIC_KEY.to_vec(),
                with_ports: true,
                reta_size: DEFAULT_RETA_SIZE,
                inner: false,
            };
            rss_spread(path, &options, &mut |_| {}).map(|r| r.packets)
        }
        other => {
            eprintln!("trace_profile: unknown analysis {other:?} (pipeline, info, rss)");
            std::process::exit(2);
        }
    };
    let packets = packets.unwrap_or_else(|e| {
        eprintln!("trace_profile: {e}");
        std::process::exit(1);
    });
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{what}: {packets} packets in {seconds:.3} s = {:.2} Mpps",
        packets as f64 / seconds / 1e6
    );
}
