//! pcap input: totals equal the file's, truncated files keep what was read.

use std::sync::atomic::AtomicBool;

use nicbench_flowmeter::{run_pcap, CollectSink, CsvSink, MeterConfig, Progress};
use nicbench_traffic::{Proto, Rate, SizeSpec, TrafficConfig};

use crate::common::*;

fn write_capture(name: &str, packets: u64) -> (std::path::PathBuf, nicbench_traffic::Summary) {
    let path = temp_path(name);
    let config = TrafficConfig {
        flows: 300,
        proto: Proto::Tcp,
        size: SizeSpec::Imix,
        rate: Rate::Mpps(1.0),
        packets: Some(packets),
        start_ns: T0,
        ..TrafficConfig::default()
    };
    let summary = nicbench_traffic::write_pcap(&config, &path, |_| {}).unwrap();
    (path, summary)
}

#[test]
fn test_pcap_totals_equal_the_file() {
    let (path, summary) = write_capture("totals.pcap", 20_000);
    for workers in [1, 2] {
        let config = MeterConfig {
            workers,
            ..MeterConfig::nicbench()
        };
        let mut sink = CollectSink::default();
        let mut last = Progress::default();
        let stats = run_pcap(&path, &config, &mut sink, &AtomicBool::new(false), &mut |p| last = *p).unwrap();
        assert_eq!((stats.packets, stats.bytes), (summary.packets, summary.bytes));
        assert_eq!(record_totals(&sink), (summary.packets, summary.bytes));
        assert_eq!(stats.flows, 300);
        assert_eq!((last.packets, last.records), (summary.packets, 300));
        assert!(stats.mpps() > 0.0);
    }
}

#[test]
fn test_truncated_pcap_keeps_what_was_read() {
    let (path, _) = write_capture("truncated.pcap", 1000);
    let bytes = std::fs::read(&path).unwrap();
    let cut = temp_path("cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() - 30]).unwrap();
    let mut sink = CollectSink::default();
    let stats = run_pcap(
        &cut,
        &MeterConfig::nicbench(),
        &mut sink,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let message = stats.input_error.clone().expect("the bad record is reported");
    assert!(message.contains("packet 999"), "{message}");
    assert_eq!(stats.packets, 999);
    assert_eq!(record_totals(&sink).0, 999);
}

#[test]
fn test_missing_file_is_an_error_and_csv_output_works() {
    let err = run_pcap(
        &temp_path("nope.pcap"),
        &MeterConfig::nicbench(),
        &mut CollectSink::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    );
    assert!(err.is_err());
    let (path, summary) = write_capture("csv.pcap", 2000);
    let out = temp_path("flows.csv");
    let mut sink = CsvSink::create(&out).unwrap();
    let stats = run_pcap(
        &path,
        &MeterConfig::argus(),
        &mut sink,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    drop(sink);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count() as u64, 1 + stats.records);
    let tot_pkts_col = text
        .lines()
        .next()
        .unwrap()
        .split(',')
        .position(|c| c == "TotPkts")
        .unwrap();
    let sum: u64 = text
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(tot_pkts_col).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(sum, summary.packets);
}
