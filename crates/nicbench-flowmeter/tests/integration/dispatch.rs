//! Workers behind symmetric RSS: both directions on one worker, totals kept,
//! stop flag flushes everything.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use nicbench_flowmeter::{run_frames, worker_of, CollectSink, EndReason, MeterConfig};

use crate::common::*;

#[test]
fn test_both_directions_land_on_the_same_worker() {
    let packets = conversations(3000, 2);
    for workers in [2, 4] {
        let config = MeterConfig {
            workers,
            ..MeterConfig::nicbench()
        };
        let (stats, sink) = run_mem(&packets, &config);
        assert_eq!(
            sink.records.len(),
            3000,
            "one record per conversation with {workers} workers"
        );
        for r in &sink.records {
            // A split flow would show up as two one-directional records.
            assert_eq!((r.src_pkts, r.dst_pkts), (2, 2), "{r:?}");
            assert_eq!(r.key.dst_port, 443, "the SYN sender is the source");
            assert_eq!(usize::from(r.worker), worker_of(&r.key, workers));
            assert_eq!(worker_of(&r.key, workers), worker_of(&r.key.reversed(), workers));
        }
        assert_eq!(stats.workers.len(), workers);
        assert!(stats.workers.iter().all(|w| w.packets > 0));
        assert!(
            stats.imbalance >= 1.0 && stats.imbalance < 1.3,
            "imbalance {}",
            stats.imbalance
        );
        let per_worker: u64 = stats.workers.iter().map(|w| w.packets).sum();
        assert_eq!(per_worker, stats.packets);
    }
}

#[test]
fn test_totals_equal_input_for_1_and_3_workers() {
    let mut packets = conversations(500, 3);
    // Non-IP frames are counted, not lost.
    let mut arp = packets[0].1.clone();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let arp_bytes = arp.len() as u64;
    packets.insert(10, (T0 + 5, arp.clone()));
    packets.push((T0 + 10_000_000, arp));
    let input_bytes: u64 = packets.iter().map(|(_, d)| d.len() as u64).sum();
    for workers in [1, 3] {
        let config = MeterConfig {
            workers,
            batch_packets: 7,
            ..MeterConfig::nicbench()
        };
        let (stats, sink) = run_mem(&packets, &config);
        assert_eq!(
            (stats.packets, stats.bytes, stats.wire_bytes),
            (packets.len() as u64, input_bytes, input_bytes)
        );
        assert_eq!((stats.non_ip_packets, stats.non_ip_bytes), (2, 2 * arp_bytes));
        assert_eq!(record_totals(&sink), (stats.packets - 2, input_bytes - 2 * arp_bytes));
        assert_eq!((stats.flows, stats.records, stats.flushed), (500, 500, 500));
        assert_eq!(stats.records, sink.records.len() as u64);
        assert_eq!((stats.first_ts_ns, stats.last_ts_ns), (T0, T0 + 10_000_000));
        assert!(!stats.interrupted && stats.input_error.is_none());
    }
}

#[test]
fn test_eviction_in_workers_is_counted_and_loses_nothing() {
    let packets = conversations(2000, 2);
    let config = MeterConfig {
        workers: 2,
        max_flows: 100,
        ..MeterConfig::nicbench()
    };
    let (stats, sink) = run_mem(&packets, &config);
    assert!(stats.evicted > 0);
    assert_eq!(
        stats.evicted,
        sink.records.iter().filter(|r| r.end == EndReason::Evicted).count() as u64
    );
    assert_eq!(record_totals(&sink).0, stats.packets);
    assert!(stats.max_active_flows <= 100);
}

#[test]
fn test_stop_flag_flushes_every_active_flow() {
    let packets = conversations(1000, 10);
    for workers in [1, 2] {
        let stop = AtomicBool::new(false);
        let fed = AtomicU64::new(0);
        let input = frames(&packets).inspect(|_| {
            if fed.fetch_add(1, Ordering::Relaxed) + 1 == 5000 {
                stop.store(true, Ordering::Relaxed);
            }
        });
        let config = MeterConfig {
            workers,
            ..MeterConfig::nicbench()
        };
        let mut sink = CollectSink::default();
        let mut calls = 0;
        let stats = run_frames(input, &config, &mut sink, &stop, &mut |_| calls += 1).unwrap();
        assert!(stats.interrupted);
        // The input looks one frame ahead (prefetch), so the flag may be seen one frame early.
        assert!((4999..=5000).contains(&stats.packets), "{}", stats.packets);
        assert_eq!(
            record_totals(&sink).0,
            stats.packets,
            "every packet read is in a record"
        );
        assert!(sink.records.iter().all(|r| r.end == EndReason::Flushed));
        assert!(calls >= 1, "progress reported at least at the end");
    }
}
