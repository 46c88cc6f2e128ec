//! `nicbench pcap info`: packets, bytes, duration, rates, flows, sizes, protocols.
//!
//! Conventions (the same as the generator's): a pcap holds frames without the
//! 4-byte FCS; "wire" figures add FCS + preamble/SFD + inter-frame gap (24 B per
//! frame) to the original length, and frame-size buckets use `orig_len + 4`.

use std::collections::BTreeMap;
use std::path::Path;

use ahash::{AHashMap, AHashSet};
use nicbench_pcap::PcapSource;
use nicbench_wire::builder::{FCS_BYTES, WIRE_OVERHEAD_BYTES};
use nicbench_wire::{FlowKey, ParsedFrame};
use serde::Serialize;

use crate::link::{parse_link_into, StackKey};
use crate::packed_key::FlowSet;
use crate::{TraceError, PROGRESS_EVERY_PACKETS};

/// FCS (4 B) + preamble, SFD and interPacketGap (20 B) that a pcap record lacks.
pub const WIRE_EXTRA_BYTES_PER_FRAME: u64 = (FCS_BYTES + WIRE_OVERHEAD_BYTES) as u64;

/// RMON-style frame-size buckets (inclusive bounds, frame size incl. FCS).
const SIZE_BUCKETS: [(u32, u32, &str); 8] = [
    (0, 63, "< 64 (runt)"),
    (64, 64, "64"),
    (65, 127, "65-127"),
    (128, 255, "128-255"),
    (256, 511, "256-511"),
    (512, 1023, "512-1023"),
    (1024, 1518, "1024-1518"),
    (1519, u32::MAX, "> 1518 (jumbo)"),
];

#[derive(Clone, Debug, Serialize)]
pub struct SizeBucket {
    pub label: &'static str,
    pub min: u32,
    pub max: u32,
    pub packets: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TraceSummary {
    pub packets: u64,
    /// Sum of original frame lengths (without FCS) \[B\].
    pub bytes: u64,
    /// Sum of captured lengths \[B\] (smaller than `bytes` when the capture was sliced).
    pub captured_bytes: u64,
    pub first_ts_ns: Option<u64>,
    pub last_ts_ns: Option<u64>,
    /// last − first timestamp \[ns\].
    pub duration_ns: u64,
    /// Average L2 rate, FCS excluded, over the packets' slots (see [`rate_window_ns`]) \[Gbps\].
    pub l2_gbps: f64,
    /// Average rate the wire carried: + FCS, preamble, IFG \[Gbps\].
    pub wire_gbps: f64,
    pub mpps: f64,
    /// Distinct unidirectional flow keys.
    pub flows: u64,
    /// Distinct canonical (direction-independent) flow keys.
    pub biflows: u64,
    /// Frames without a flow key (no IP header, or parsing stopped before it).
    pub unparsed: u64,
    /// Records whose captured length exceeds their original (wire) length: no capture tool
    /// writes one (a slice is never longer than the frame), so the file was damaged or edited.
    /// Read as they are (libpcap does too), but reported.
    pub caplen_above_wire: u64,
    pub size_histogram: Vec<SizeBucket>,
    /// Packets per protocol stack, e.g. "IPv4/UDP", "VXLAN IPv6/TCP", "ARP".
    pub protocols: BTreeMap<String, u64>,
    pub linktype: String,
}

/// Packets per protocol stack: runs of one stack are counted in place, a run's count goes to
/// the map when another stack comes (a trace is mostly one stack; a garbage file with many
/// still costs one hash lookup a packet, never a scan).
#[derive(Default)]
struct StackCounts {
    run: Option<(StackKey, u64)>,
    totals: AHashMap<StackKey, u64>,
}

impl StackCounts {
    #[inline]
    fn add(&mut self, key: StackKey) {
        match &mut self.run {
            Some((run_key, count)) if *run_key == key => *count += 1,
            _ => {
                self.flush();
                self.run = Some((key, 1));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((key, count)) = self.run.take() {
            *self.totals.entry(key).or_default() += count;
        }
    }
}

/// Summarize a trace file, streaming. `progress(bytes_read)` is called periodically.
pub fn summarize(path: &Path, progress: &mut dyn FnMut(u64)) -> Result<TraceSummary, TraceError> {
    let mut source = PcapSource::open(path)?;
    let mut s = TraceSummary {
        packets: 0,
        bytes: 0,
        captured_bytes: 0,
        first_ts_ns: None,
        last_ts_ns: None,
        duration_ns: 0,
        l2_gbps: 0.0,
        wire_gbps: 0.0,
        mpps: 0.0,
        flows: 0,
        biflows: 0,
        unparsed: 0,
        caplen_above_wire: 0,
        size_histogram: SIZE_BUCKETS
            .iter()
            .map(|&(min, max, label)| SizeBucket {
                label,
                min,
                max,
                packets: 0,
            })
            .collect(),
        protocols: BTreeMap::new(),
        linktype: source
            .linktype()
            .map_or_else(|| "unknown".to_string(), |lt| lt.to_string()),
    };
    let mut flows = FlowSet::default();
    let mut biflows: AHashSet<FlowKey> = AHashSet::new();
    // Counted by a small key and named once at the end, instead of building a name per packet.
    let mut stacks = StackCounts::default();
    let mut parsed = ParsedFrame::default();
    while let Some(record) = source.next_packet() {
        let pkt = record?;
        s.packets += 1;
        s.bytes += u64::from(pkt.orig_len);
        s.captured_bytes += pkt.data.len() as u64;
        s.caplen_above_wire += u64::from(pkt.data.len() as u64 > u64::from(pkt.orig_len));
        s.first_ts_ns.get_or_insert(pkt.ts_ns);
        s.last_ts_ns = Some(pkt.ts_ns);
        let frame_size = pkt.orig_len.saturating_add(4);
        if let Some(bucket) = s
            .size_histogram
            .iter_mut()
            .find(|b| frame_size >= b.min && frame_size <= b.max)
        {
            bucket.packets += 1;
        }
        parse_link_into(pkt.linktype, pkt.data, &mut parsed);
        stacks.add(StackKey::of(&parsed));
        match FlowKey::from_frame(&parsed) {
            Some(key) => {
                if flows.insert(&key) {
                    biflows.insert(key.canonical().0);
                }
            }
            None => s.unparsed += 1,
        }
        if s.packets % PROGRESS_EVERY_PACKETS == 0 {
            progress(source.bytes_read());
        }
    }
    progress(source.bytes_read());
    s.flows = flows.len() as u64;
    s.biflows = biflows.len() as u64;
    stacks.flush();
    for (key, packets) in stacks.totals {
        *s.protocols.entry(key.name()).or_default() += packets;
    }
    if let (Some(first), Some(last)) = (s.first_ts_ns, s.last_ts_ns) {
        s.duration_ns = last.saturating_sub(first);
    }
    if s.duration_ns > 0 {
        // N packets fill N slots: last − first spans N − 1 gaps, plus one mean gap for the last
        // packet (bytes over last − first alone read a 10-packet 100 Gbps trace as 111 Gbps).
        let secs = rate_window_ns(s.duration_ns, s.packets) / 1e9;
        s.l2_gbps = s.bytes as f64 * 8.0 / secs / 1e9;
        let wire_bytes = s.bytes + s.packets * WIRE_EXTRA_BYTES_PER_FRAME;
        s.wire_gbps = wire_bytes as f64 * 8.0 / secs / 1e9;
        s.mpps = s.packets as f64 / secs / 1e6;
    }
    Ok(s)
}

/// The time `packets` packets whose timestamps span `span_ns` (last − first) take up: the span
/// plus one mean gap, so that each packet has its slot (what a trace of N packets paced at a rate
/// R lasts: N / R) \[ns\].
pub fn rate_window_ns(span_ns: u64, packets: u64) -> f64 {
    if packets < 2 {
        return span_ns as f64;
    }
    span_ns as f64 * packets as f64 / (packets - 1) as f64
}
