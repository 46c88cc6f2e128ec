//! Meter a pcap from the command line and print the run's stats as JSON;
//! optionally generate a test pcap first.
//!
//! ```text
//!   gen:  TrafficConfig (N flows, size, packets) ──► pcap
//!   run:  pcap ──► run_pcap (W workers, compat) ──► CSV (optional) + stats JSON on stdout
//! ```
//! `cargo run --release -p nicbench-flowmeter --example meter -- gen OUT.pcap FLOWS SIZE PACKETS`
//! `cargo run --release -p nicbench-flowmeter --example meter -- run FILE.pcap [WORKERS] [argus|nicbench] [OUT.csv]`
//!
//! Asserts what must hold for any input: the records' packets add up to the
//! IP packets read.

use std::error::Error;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use nicbench_flowmeter::{run_pcap, Compat, CsvSink, FlowRecord, FlowSink, MeterConfig, NullSink};
use nicbench_traffic::{Rate, SizeSpec, TrafficConfig};

/// Counts packets in records, and writes them to an optional CSV.
struct Checked {
    packets: u64,
    csv: Option<Box<dyn FlowSink>>,
}

impl FlowSink for Checked {
    fn write(&mut self, record: &FlowRecord) -> Result<(), nicbench_flowmeter::FlowError> {
        self.packets += record.tot_pkts();
        self.csv.as_mut().map_or(Ok(()), |c| c.write(record))
    }
    fn finish(&mut self) -> Result<(), nicbench_flowmeter::FlowError> {
        self.csv.as_mut().map_or(Ok(()), |c| c.finish())
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    match arg(0) {
        Some("gen") => {
            let (Some(out), Some(flows), Some(size), Some(packets)) = (arg(1), arg(2), arg(3), arg(4)) else {
                return Err("usage: gen OUT.pcap FLOWS SIZE PACKETS".into());
            };
            let config = TrafficConfig {
                flows: flows.parse()?,
                size: SizeSpec::Fixed(size.parse()?),
                rate: Rate::Gbps(100.0),
                packets: Some(packets.parse()?),
                start_ns: 1_700_000_000_000_000_000,
                ..TrafficConfig::default()
            };
            let summary = nicbench_traffic::write_pcap(&config, Path::new(out), |_| {})?;
            println!("{}", serde_json::to_string(&summary)?);
        }
        Some("run") => {
            let file = arg(1).ok_or("usage: run FILE.pcap [WORKERS] [argus|nicbench] [OUT.csv]")?;
            let workers = arg(2).map(str::parse).transpose()?.unwrap_or(1);
            let compat: Compat = arg(3).unwrap_or("nicbench").parse()?;
            let config = MeterConfig {
                workers,
                ..MeterConfig::for_compat(compat)
            };
            let csv: Option<Box<dyn FlowSink>> = match arg(4) {
                Some(path) => Some(Box::new(CsvSink::create(Path::new(path))?)),
                None => None,
            };
            let mut sink = Checked {
                packets: 0,
                csv: csv.or_else(|| Some(Box::new(NullSink::default()))),
            };
            let stats = run_pcap(
                Path::new(file),
                &config,
                &mut sink,
                &AtomicBool::new(false),
                &mut |_| {},
            )?;
            assert_eq!(
                sink.packets,
                stats.packets - stats.non_ip_packets,
                "every IP packet is in a record"
            );
            println!("{}", serde_json::to_string(&stats)?);
            eprintln!(
                "{:.2} Mpps, {} records, {} flows, imbalance {:.3}",
                stats.mpps(),
                stats.records,
                stats.flows,
                stats.imbalance
            );
        }
        _ => return Err("usage: meter gen … | meter run …".into()),
    }
    Ok(())
}
