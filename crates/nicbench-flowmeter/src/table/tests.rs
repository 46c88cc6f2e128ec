//! FlowTable tests with frames built by `nicbench_wire::builder`.

use std::net::IpAddr;

use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags};

use super::*;
use crate::config::Timeouts;

const S: u64 = 1_000_000_000;
const T0: u64 = 1_700_000_000 * S;

fn ip(text: &str) -> IpAddr {
    text.parse().unwrap()
}

fn frame(src: &str, dst: &str, l4: L4Spec, size: u32) -> Vec<u8> {
    FrameSpec {
        ip_src: ip(src),
        ip_dst: ip(dst),
        l4,
        frame_size_bytes: size,
        ..FrameSpec::default()
    }
    .build()
    .unwrap()
}

fn tcp(src: &str, sp: u16, dst: &str, dp: u16, flags: TcpFlags) -> Vec<u8> {
    frame(src, dst, L4Spec::tcp(sp, dp, flags), 64)
}

fn udp(src: &str, sp: u16, dst: &str, dp: u16, size: u32) -> Vec<u8> {
    frame(src, dst, L4Spec::udp(sp, dp), size)
}

fn table(config: &MeterConfig, max_flows: usize) -> FlowTable {
    FlowTable::new(config, max_flows, 0)
}

/// Feeds (ts, frame) pairs, flushes, returns all records.
fn run(t: &mut FlowTable, packets: &[(u64, Vec<u8>)]) -> Vec<FlowRecord> {
    let mut out = Vec::new();
    for (ts, f) in packets {
        t.process(*ts, f.len() as u32, f, &mut out);
    }
    t.flush(&mut out);
    out
}

/// Walks every live flow and checks the index finds it and the lists are consistent.
fn check_invariants(t: &FlowTable) {
    let mut seen = 0;
    for class in 0..CLASSES {
        let mut at = t.lru[class].head;
        let mut prev = NONE;
        let mut queued_ns = 0;
        while at != NONE {
            let f = &t.flows[at as usize];
            assert_eq!(t.cold[at as usize].lru_prev, prev);
            assert!(f.queued_ns >= queued_ns, "LRU list sorted by queued_ns");
            assert!(f.queued_ns <= f.last_ns && f.last_ns - f.queued_ns < t.lru_slack_ns.max(1));
            queued_ns = f.queued_ns;
            let hash = f.key.hash32();
            assert_eq!(t.find(hash, &f.key), Some(at));
            seen += 1;
            prev = at;
            at = t.cold[at as usize].lru_next;
        }
        assert_eq!(t.lru[class].tail, prev);
    }
    assert_eq!(seen, t.live);
    let occupied = t.index.iter().filter(|&&b| b != EMPTY_BUCKET).count();
    assert_eq!(occupied, t.live);
}

#[test]
fn test_tcp_handshake_direction_state_and_flags() {
    let c = "10.0.0.9";
    let s = "10.0.0.1"; // smaller address: the server is canonical `lo`, the client `hi`
    let packets = vec![
        (T0, tcp(c, 40000, s, 80, TcpFlags::SYN)),
        (T0 + 1000, tcp(s, 80, c, 40000, TcpFlags::SYN | TcpFlags::ACK)),
        (T0 + 2000, tcp(c, 40000, s, 80, TcpFlags::ACK)),
        (
            T0 + 3000,
            frame(c, s, L4Spec::tcp(40000, 80, TcpFlags::ACK | TcpFlags::PSH), 300),
        ),
        (T0 + 4000, tcp(s, 80, c, 40000, TcpFlags::FIN | TcpFlags::ACK)),
    ];
    let mut t = table(&MeterConfig::nicbench(), 16);
    let recs = run(&mut t, &packets);
    assert_eq!(recs.len(), 1);
    let r = recs[0];
    assert_eq!(r.key.src, ip(c));
    assert_eq!((r.key.src_port, r.key.dst_port), (40000, 80));
    assert_eq!((r.src_pkts, r.dst_pkts), (3, 2));
    assert_eq!((r.src_bytes, r.dst_bytes), (60 + 60 + 296, 120));
    assert_eq!((r.min_pkt_bytes, r.max_pkt_bytes), (60, 296));
    assert_eq!((r.src_tcp_flags, r.dst_tcp_flags), (0x1a, 0x13));
    assert!(r
        .state
        .contains(FlowState::SYN | FlowState::SYN_ACK | FlowState::ESTABLISHED | FlowState::FIN));
    assert_eq!((r.state_str(), r.dir_str()), ("FIN", "<->"));
    assert_eq!((r.first_ns, r.last_ns, r.end), (T0, T0 + 4000, EndReason::Flushed));
    assert_eq!(t.stats().flushed, 1);
}

#[test]
fn test_lru_slack_is_bounded_by_idle_timeouts() {
    assert_eq!(table(&MeterConfig::argus(), 4).lru_slack_ns, 100_000_000);
    let mut config = MeterConfig::nicbench();
    config.timeouts = Timeouts::uniform_idle(S / 10, None);
    assert_eq!(table(&config, 4).lru_slack_ns, S / 40);
}

#[test]
fn test_syn_ack_seen_first_makes_its_receiver_the_source() {
    let packets = vec![
        (
            T0,
            tcp("10.0.0.1", 80, "10.0.0.9", 40000, TcpFlags::SYN | TcpFlags::ACK),
        ),
        (T0 + 5, tcp("10.0.0.9", 40000, "10.0.0.1", 80, TcpFlags::ACK)),
    ];
    let r = run(&mut table(&MeterConfig::nicbench(), 4), &packets)[0];
    assert_eq!((r.key.src, r.key.src_port), (ip("10.0.0.9"), 40000));
    assert_eq!((r.src_pkts, r.dst_pkts), (1, 1));
}

#[test]
fn test_udp_first_sender_is_source_even_when_not_canonical() {
    let packets = vec![
        (T0, udp("10.0.0.2", 5000, "10.0.0.1", 6000, 100)),
        (T0 + 1, udp("10.0.0.1", 6000, "10.0.0.2", 5000, 200)),
        (T0 + 2, udp("10.0.0.2", 5000, "10.0.0.1", 6000, 100)),
    ];
    let r = run(&mut table(&MeterConfig::nicbench(), 4), &packets)[0];
    assert_eq!((r.key.src, r.key.src_port), (ip("10.0.0.2"), 5000));
    assert_eq!((r.src_pkts, r.dst_pkts, r.src_bytes, r.dst_bytes), (2, 1, 192, 196));
    assert_eq!(r.state_str(), "CON");
}

#[test]
fn test_idle_timeout_splits_flows_per_protocol() {
    let config = MeterConfig::nicbench(); // UDP 30 s, ICMP 5 s, TCP 60 s, checked continuously
    let packets = vec![
        (T0, udp("10.0.0.1", 1, "10.0.0.2", 2, 64)),
        (T0 + 29 * S, udp("10.0.0.1", 1, "10.0.0.2", 2, 64)), // within 30 s: same flow
        (
            T0,
            frame("10.0.0.1", "10.0.0.3", L4Spec::IcmpEcho { id: 1, seq: 1 }, 64),
        ),
        (T0 + 40 * S, tcp("10.0.0.1", 3, "10.0.0.2", 4, TcpFlags::ACK)),
        (T0 + 65 * S, udp("10.0.0.1", 1, "10.0.0.2", 2, 64)), // 36 s after the last: new flow
        (T0 + 99 * S, tcp("10.0.0.1", 3, "10.0.0.2", 4, TcpFlags::ACK)), // 59 s: same TCP flow
    ];
    let mut t = table(&config, 16);
    let mut out = Vec::new();
    for (ts, f) in &packets {
        t.process(*ts, f.len() as u32, f, &mut out);
        t.sync(&mut out);
        check_invariants(&t);
    }
    // ICMP ended (5 s), the first UDP flow ended (36 s gap), and the second
    // UDP flow ended too (34 s before the last TCP packet) before the flush.
    let idle: Vec<_> = out.iter().filter(|r| r.end == EndReason::Idle).collect();
    assert_eq!(idle.len(), 3);
    assert!(idle
        .iter()
        .any(|r| r.key.proto == 1 && r.icmp_type == Some(8) && r.state_str() == "ECO"));
    assert!(idle
        .iter()
        .any(|r| r.key.proto == 17 && r.src_pkts == 2 && r.last_ns == T0 + 29 * S));
    t.flush(&mut out);
    assert_eq!(out.len(), 4);
    let tcp_rec = out.iter().find(|r| r.key.proto == 6).unwrap();
    assert_eq!(tcp_rec.src_pkts, 2);
    let s = t.stats();
    assert_eq!((s.flows, s.idle_expired, s.flushed, s.records), (4, 3, 1, 4));
    assert_eq!(t.active_flows(), 0);
}

#[test]
fn test_late_packet_of_expired_flow_starts_a_new_flow_without_a_scan() {
    // Two packets 31 s apart are the first two packets the table ever sees
    // after the first scan, so only the per-packet check can split them.
    let mut t = table(&MeterConfig::nicbench(), 4);
    let mut out = Vec::new();
    let f = udp("10.0.0.1", 1, "10.0.0.2", 2, 64);
    t.process(T0, 60, &f, &mut out);
    t.next_scan_ns = u64::MAX; // disable scans
    t.process(T0 + 31 * S, 60, &f, &mut out);
    t.sync(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].end, out[0].src_pkts), (EndReason::Idle, 1));
}

#[test]
fn test_active_interval_splits_long_flow_into_continuations() {
    let mut config = MeterConfig::nicbench();
    config.timeouts = Timeouts::uniform_idle(60 * S, Some(60 * S));
    // One packet every 10 s for 150 s (16 packets), one direction.
    let packets: Vec<_> = (0..16)
        .map(|i| (T0 + i * 10 * S, udp("10.0.0.1", 1, "10.0.0.2", 2, 100)))
        .collect();
    let recs = run(&mut table(&config, 4), &packets);
    assert_eq!(recs.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(recs.iter().map(|r| r.src_pkts).collect::<Vec<_>>(), [6, 6, 4]);
    assert_eq!(recs[0].end, EndReason::Active);
    assert_eq!(recs[2].end, EndReason::Flushed);
    assert_eq!((recs[1].first_ns, recs[1].last_ns), (T0 + 60 * S, T0 + 110 * S));
    assert!(recs.iter().all(|r| r.dur_ns() < 60 * S && r.key.src == ip("10.0.0.1")));
    // No status interval: one record.
    config.timeouts.active_ns = None;
    let recs = run(&mut table(&config, 4), &packets);
    assert_eq!((recs.len(), recs[0].src_pkts), (1, 16));
}

#[test]
fn test_argus_checks_idle_only_at_status_boundaries() {
    // Observed with argus 3.0.8 -S 60: UDP gaps of 31 s / 45 s and an ICMP gap
    // of 10 s stay one record; a 61 s UDP gap ends the flow at the boundary.
    let u = |port| udp("10.0.0.1", port, "10.0.0.2", 9, 64);
    let ping = frame("10.0.0.1", "10.0.0.3", L4Spec::IcmpEcho { id: 1, seq: 1 }, 64);
    let packets = vec![
        (T0, u(1)),
        (T0, u(2)),
        (T0, ping.clone()),
        (T0 + 10 * S, ping),
        (T0 + 45 * S, u(1)),
        (T0 + 61 * S, u(2)),
    ];
    let recs = run(&mut table(&MeterConfig::argus(), 8), &packets);
    let of = |port: u16| {
        recs.iter()
            .filter(|r| r.key.src_port == port && r.key.proto == 17)
            .collect::<Vec<_>>()
    };
    assert_eq!(of(1).len(), 1);
    assert_eq!(of(1)[0].src_pkts, 2);
    let two = of(2);
    assert_eq!(
        two.iter().map(|r| (r.src_pkts, r.seq, r.end)).collect::<Vec<_>>(),
        [(1, 0, EndReason::Idle), (1, 0, EndReason::Flushed)]
    );
    let icmp: Vec<_> = recs.iter().filter(|r| r.key.proto == 1).collect();
    assert_eq!((icmp.len(), icmp[0].src_pkts), (1, 2));
}

#[test]
fn test_argus_status_intervals_are_aligned_to_the_flow_start() {
    // A flow starting at T0 + 7 s: records [T0+7, T0+67), [T0+67, T0+127), …
    let f = udp("10.0.0.1", 1, "10.0.0.2", 2, 64);
    let packets: Vec<_> = [7u64, 20, 66, 67, 100, 126, 127, 130]
        .iter()
        .map(|&t| (T0 + t * S, f.clone()))
        .collect();
    let recs = run(&mut table(&MeterConfig::argus(), 4), &packets);
    assert_eq!(recs.iter().map(|r| r.src_pkts).collect::<Vec<_>>(), [3, 3, 2]);
    assert_eq!(recs.iter().map(|r| r.seq).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(recs[1].first_ns, T0 + 67 * S);
}

#[test]
fn test_argus_orients_mid_stream_tcp_by_port() {
    // First packet from the server (port 80) without SYN: Argus still makes the client the source.
    let packets = vec![
        (T0, tcp("10.0.0.1", 80, "10.0.0.9", 40000, TcpFlags::ACK)),
        (T0 + 1, tcp("10.0.0.9", 40000, "10.0.0.1", 80, TcpFlags::ACK)),
    ];
    let r = run(&mut table(&MeterConfig::argus(), 4), &packets)[0];
    assert_eq!(
        (r.key.src_port, r.key.dst_port, r.src_pkts, r.dst_pkts),
        (40000, 80, 1, 1)
    );
    let r = run(&mut table(&MeterConfig::nicbench(), 4), &packets)[0];
    assert_eq!(r.key.src_port, 80, "nicbench: the first sender");
}

#[test]
fn test_eviction_takes_least_recently_seen_and_is_counted() {
    let a = udp("10.0.0.1", 1, "10.0.0.2", 1, 64);
    let b = tcp("10.0.0.1", 2, "10.0.0.2", 2, TcpFlags::ACK);
    let c = udp("10.0.0.1", 3, "10.0.0.2", 3, 64);
    // a, b, a again: b is least recently seen (even though a is older and another class).
    let packets = vec![(T0, a.clone()), (T0 + 1, b), (T0 + 2, a), (T0 + 3, c)];
    let mut t = table(&MeterConfig::nicbench(), 2);
    let mut out = Vec::new();
    for (ts, f) in &packets {
        t.process(*ts, f.len() as u32, f, &mut out);
    }
    t.sync(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].end, out[0].key.src_port), (EndReason::Evicted, 2));
    assert_eq!((t.stats().evicted, t.active_flows()), (1, 2));
    t.flush(&mut out);
    assert_eq!(out.iter().map(|r| r.tot_pkts()).sum::<u64>(), 4);
}

#[test]
fn test_eviction_within_one_class_follows_last_seen() {
    // Same class (UDP), packets further apart than the LRU slack (100 ms).
    let f = |port| udp("10.0.0.1", port, "10.0.0.2", 9, 64);
    let packets = vec![
        (T0, f(1)),
        (T0 + S / 5, f(2)),
        (T0 + 2 * S / 5, f(1)),
        (T0 + 3 * S / 5, f(3)),
    ];
    let mut t = table(&MeterConfig::nicbench(), 2);
    let mut out = Vec::new();
    for (ts, frame) in &packets {
        t.process(*ts, 60, frame, &mut out);
        check_invariants(&t);
    }
    t.sync(&mut out);
    assert_eq!(out.len(), 1);
    assert_eq!((out[0].end, out[0].key.src_port), (EndReason::Evicted, 2));
}

#[test]
fn test_tcp_restart_after_fin_starts_new_flow() {
    let c = "10.0.0.2";
    let s = "10.0.0.1";
    let packets = vec![
        (T0, tcp(c, 1000, s, 80, TcpFlags::SYN)),
        (T0 + 1, tcp(c, 1000, s, 80, TcpFlags::FIN | TcpFlags::ACK)),
        (T0 + 2, tcp(c, 1000, s, 80, TcpFlags::SYN)),
    ];
    let mut t = table(&MeterConfig::nicbench(), 4);
    let recs = run(&mut t, &packets);
    assert_eq!(
        recs.iter().map(|r| (r.end, r.src_pkts)).collect::<Vec<_>>(),
        [(EndReason::Restarted, 2), (EndReason::Flushed, 1)]
    );
    assert_eq!(t.stats().restarted, 1);
}

#[test]
fn test_dns_transaction_id_keys_flows_in_argus_mode() {
    let query = |id: u16| {
        let mut f = udp("10.0.0.1", 5353, "10.0.0.53", 53, 80);
        f[42..44].copy_from_slice(&id.to_be_bytes()); // first UDP payload bytes
        f
    };
    let mut reply = udp("10.0.0.53", 53, "10.0.0.1", 5353, 120);
    reply[42..44].copy_from_slice(&7u16.to_be_bytes());
    let packets = vec![(T0, query(7)), (T0 + 1, query(8)), (T0 + 2, reply)];
    let recs = run(&mut table(&MeterConfig::argus(), 8), &packets);
    assert_eq!(recs.len(), 2);
    let r7 = recs.iter().find(|r| r.dns_txid == Some(7)).unwrap();
    assert_eq!((r7.src_pkts, r7.dst_pkts, r7.key.src_port), (1, 1, 5353));
    // Without DNS keying: one flow.
    let recs = run(&mut table(&MeterConfig::nicbench(), 8), &packets);
    assert_eq!((recs.len(), recs[0].tot_pkts(), recs[0].dns_txid), (1, 3, None));
}

#[test]
fn test_icmp_echo_identifier_keys_flows_in_argus_mode() {
    let ping = |src: &str, dst: &str, id: u16| frame(src, dst, L4Spec::IcmpEcho { id, seq: 1 }, 64);
    let mut reply = ping("10.0.0.3", "10.0.0.1", 11);
    reply[34] = 0; // echo reply (type 0); the checksum does not matter here
    let mut seq2 = ping("10.0.0.1", "10.0.0.3", 12);
    seq2[41] = 2; // same identifier 12, sequence number 2 (ICMP header at 34, seq at 40..42)
    let packets = vec![
        (T0, ping("10.0.0.1", "10.0.0.3", 11)),
        (T0 + 1, reply),
        (T0 + 2, ping("10.0.0.1", "10.0.0.3", 12)),
        (T0 + 3, seq2),
    ];
    let recs = run(&mut table(&MeterConfig::argus(), 8), &packets);
    assert_eq!(
        recs.len(),
        3,
        "one flow per echo identifier and sequence, as argus 3.0.8 reports"
    );
    assert_eq!(recs.iter().filter(|r| r.icmp_id == Some(12)).count(), 2);
    let r11 = recs.iter().find(|r| r.icmp_id == Some(11)).unwrap();
    assert_eq!((r11.src_pkts, r11.dst_pkts, r11.key.src), (1, 1, ip("10.0.0.1")));
    let recs = run(&mut table(&MeterConfig::nicbench(), 8), &packets);
    assert_eq!((recs.len(), recs[0].icmp_id), (1, None));
}

#[test]
fn test_byte_count_modes_and_non_ip() {
    let f = udp("10.0.0.1", 1, "10.0.0.2", 2, 64);
    let mut arp = f.clone();
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    for (config, expect) in [(MeterConfig::nicbench(), 60), (MeterConfig::argus(), 1500)] {
        let mut t = table(&config, 4);
        let mut out = Vec::new();
        assert!(t.process(T0, 1500, &f, &mut out)); // snapped capture: caplen 60, wire 1500
        assert!(!t.process(T0, 60, &arp, &mut out));
        t.flush(&mut out);
        assert_eq!(out[0].src_bytes, expect);
        let s = t.stats();
        assert_eq!((s.packets, s.bytes, s.non_ip_packets, s.non_ip_bytes), (1, 60, 1, 60));
    }
}

#[test]
fn test_vlan_keying_is_configurable() {
    let tagged = |vid| {
        FrameSpec {
            vlan: nicbench_wire::VlanTags::Single(vid),
            ..FrameSpec::default()
        }
        .build()
        .unwrap()
    };
    let packets = vec![(T0, tagged(10)), (T0 + 1, tagged(20))];
    let recs = run(&mut table(&MeterConfig::nicbench(), 4), &packets);
    assert_eq!(recs.len(), 2);
    let config = MeterConfig {
        key_vlan: false,
        ..MeterConfig::nicbench()
    };
    let recs = run(&mut table(&config, 4), &packets);
    assert_eq!((recs.len(), recs[0].key.vlan), (1, None));
}

#[test]
fn test_many_flows_with_churn_keep_index_and_lists_consistent() {
    // Deterministic pseudo-random stream over 3000 keys through a 500-flow
    // table with short timeouts: inserts, evictions, expiries, backward shifts.
    let mut config = MeterConfig::nicbench();
    config.timeouts = Timeouts::uniform_idle(S / 4, Some(S / 2));
    let mut t = table(&config, 500);
    let mut out = Vec::new();
    let mut x: u64 = 0x1234_5678;
    let mut fed = 0u64;
    let mut ts = T0;
    for i in 0..40_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // A quarter of the packets go to 20 hot flows (they live long: status splits).
        let k = if x % 4 == 0 { (x >> 8) % 20 } else { x % 3000 } as u16;
        // Dense first half (table overflows: evictions), sparse second half (idle expiries).
        let step_ns = if i < 20_000 { 50_000 } else { 2_000_000 };
        ts += step_ns;
        let f = if x & 1 == 0 {
            udp("10.0.0.1", k, "10.0.0.2", 80, 64)
        } else {
            udp("10.0.0.2", 80, "10.0.0.1", k, 64)
        };
        t.process(ts, 60, &f, &mut out);
        fed += 1;
        if i % 4096 == 0 {
            check_invariants(&t);
        }
    }
    check_invariants(&t);
    t.flush(&mut out);
    check_invariants(&t);
    let s = t.stats();
    assert!(s.evicted > 0 && s.idle_expired > 0 && s.active_splits > 0, "{s:?}");
    assert_eq!(out.iter().map(|r| r.tot_pkts()).sum::<u64>(), fed);
    assert_eq!(s.flows, s.evicted + s.idle_expired + s.flushed + s.restarted);
    assert_eq!(s.records, out.len() as u64);
    assert!(s.max_active_flows <= 500);
}

#[test]
fn test_record_stays_compact() {
    // Two cache lines per flow's hot part (what a packet touches), plus a small
    // cold part and its index buckets.
    eprintln!(
        "Flow = {} B, FlowCold = {} B, RECORD_BYTES = {}",
        std::mem::size_of::<Flow>(),
        std::mem::size_of::<FlowCold>(),
        RECORD_BYTES
    );
    assert_eq!(std::mem::size_of::<Flow>(), 128);
    assert!(std::mem::size_of::<FlowCold>() <= 32);
}
