//! Writes a 64 B pcap and reports the generator's rate.
//!
//! ```text
//!   TrafficConfig ──► TrafficGen ──► PcapWriter ──► /dev/shm/… (or a path argument)
//!   (1024 flows, 64 B, 100 Gb/s timeline)      records: 16 B header + 60 B frame
//! ```
//!
//! `cargo run --release -p nicbench-traffic --example pcap_rate [PATH] [PACKETS]`

use std::path::PathBuf;
use std::time::Instant;

use nicbench_traffic::{write_pcap, TrafficConfig};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = PathBuf::from(args.next().unwrap_or_else(|| "/dev/shm/nicbench-pcap-rate.pcap".into()));
    let packets: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5_000_000);
    let config = TrafficConfig {
        packets: Some(packets),
        ..TrafficConfig::default()
    };
    let start = Instant::now();
    let summary = write_pcap(&config, &path, |_| {})?;
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(summary.packets, packets);
    assert_eq!(summary.bytes, packets * 60, "64 B frames are 60 B without FCS");
    // The timeline is 100 Gb/s of 84 B wire slots, whatever the host speed.
    assert!((summary.avg_gbps() - 100.0).abs() < 1e-3);
    println!(
        "{} packets to {} in {:.3} s: {:.2} Mpps",
        packets,
        path.display(),
        secs,
        packets as f64 / secs / 1e6
    );
    if path.starts_with("/dev/shm") {
        std::fs::remove_file(&path)?;
    }
    Ok(())
}
