//! write_pcap: the file holds exactly the in-process stream, with ns
//! timestamps; summary and progress are right; bad configs are refused.

use std::path::PathBuf;

use nicbench_pcap::PcapSource;
use nicbench_traffic::{write_pcap, SizeSpec, TrafficConfig, TrafficError};

use crate::collect;

fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("nicbench-traffic-{}-{name}.pcap", std::process::id()))
}

#[test]
fn pcap_holds_the_stream() {
    let config = TrafficConfig {
        flows: 20,
        vlan: Some(3),
        size: SizeSpec::Imix,
        packets: Some(70_000),
        start_ns: 1_700_000_000_123_456_789,
        ..TrafficConfig::default()
    };
    let path = temp_path("stream");
    let mut reports = Vec::new();
    let summary = write_pcap(&config, &path, |n| reports.push(n)).expect("write");
    assert_eq!(reports, [65_536, 70_000]);
    let expected = collect(&config);
    assert_eq!(summary.packets, 70_000);
    assert_eq!(summary.bytes, expected.iter().map(|e| e.1.len() as u64).sum::<u64>());
    assert_eq!(summary.first_ts_ns, 1_700_000_000_123_456_789);
    assert_eq!(summary.last_ts_ns, expected[expected.len() - 1].0);

    let mut source = PcapSource::open(&path).expect("open");
    let mut i = 0usize;
    while let Some(packet) = source.next_packet() {
        let packet = packet.expect("valid record");
        let (ts, data, _, _) = &expected[i];
        assert_eq!(
            (packet.ts_ns, packet.orig_len as usize),
            (*ts, data.len()),
            "record {i}"
        );
        assert_eq!(packet.data, &data[..], "record {i}");
        i += 1;
    }
    assert_eq!(i, 70_000);
    std::fs::remove_file(&path).ok();
}

#[test]
fn endless_or_invalid_config_is_refused() {
    let path = temp_path("refused");
    let endless = TrafficConfig::default();
    assert!(matches!(
        write_pcap(&endless, &path, |_| {}),
        Err(TrafficError::NoStopCondition)
    ));
    let no_flows = TrafficConfig {
        flows: 0,
        packets: Some(1),
        ..TrafficConfig::default()
    };
    assert!(matches!(
        write_pcap(&no_flows, &path, |_| {}),
        Err(TrafficError::NoFlows)
    ));
    assert!(!path.exists(), "nothing written for a refused config");
    let bad_dir = TrafficConfig {
        packets: Some(1),
        ..TrafficConfig::default()
    };
    let err = write_pcap(&bad_dir, std::path::Path::new("/nonexistent-dir/x.pcap"), |_| {});
    assert!(matches!(err, Err(TrafficError::Pcap(_))), "{err:?}");
}

/// A run stopped mid-way (as the Python binding stops one on Ctrl-C: an unwind out of a progress
/// report) or finished leaves the folder holding the finished file alone: never a partial pcap,
/// never the temporary one.
#[test]
fn a_stopped_run_leaves_no_file() {
    let dir = std::env::temp_dir().join(format!("nicbench-traffic-{}-stopped", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("folder");
    let path = dir.join("g.pcap");
    let config = TrafficConfig {
        packets: Some(200_000),
        ..TrafficConfig::default()
    };
    let stopped =
        std::panic::catch_unwind(|| write_pcap(&config, &path, |_| std::panic::resume_unwind(Box::new("stop"))));
    assert!(stopped.is_err());
    let names = || {
        let mut v: Vec<_> = std::fs::read_dir(&dir)
            .expect("read")
            .map(|e| e.expect("entry").file_name())
            .collect();
        v.sort();
        v
    };
    assert!(names().is_empty(), "left {:?}", names());
    write_pcap(&config, &path, |_| {}).expect("write");
    assert_eq!(names(), ["g.pcap"]);
    let _ = std::fs::remove_dir_all(&dir);
}
