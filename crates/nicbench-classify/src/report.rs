//! Classifying a capture file: the CLI's `classify` command.
//!
//! Packets are read with [`nicbench_pcap::PcapSource`], parsed (Ethernet, or raw IP for
//! the raw link types), turned into keys and looked up in bursts of [`BURST_PACKETS`].
//! Per-rule figures are the difference of the classifier's counters before and after the
//! run, so lookups made concurrently by other readers of the same classifier are included.

use crate::classifier::Classifier;
use crate::compile::Fate;
use crate::key::PacketKey;
use crate::rss::{QueueResolver, RssRuleError};
use crate::state::{Outcome, RuleId, Verdict};
use nicbench_pcap::{PcapError, PcapSource};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Packets per burst lookup.
pub const BURST_PACKETS: usize = 256;

#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    /// The capture could not be read; packets before `packet_index` were classified.
    #[error("reading the capture: {source}")]
    Pcap {
        #[source]
        source: PcapError,
        partial: Box<ClassifyReport>,
    },
    /// An `rss` action (or the port's default RSS) cannot be resolved to queues.
    #[error("{0}")]
    Rss(#[from] RssRuleError),
}

/// What one receive queue got.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct QueueCount {
    pub packets: u64,
    /// Frame bytes (captured length).
    pub bytes: u64,
}

/// Hits of one rule during the run.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RuleHits {
    pub rule_id: RuleId,
    pub group: u32,
    pub priority: u32,
    pub hits: u64,
    pub bytes: u64,
}

/// What a capture's packets did in the classifier.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ClassifyReport {
    pub packets: u64,
    /// Frame bytes (captured length).
    pub bytes: u64,
    /// Packets a `queue` action sent to each rx queue.
    pub per_queue_packets: BTreeMap<u16, u64>,
    /// Everything each rx queue received: `queue` actions, `rss` actions resolved per packet,
    /// and the packets the port's default RSS spreads (unmatched, no fate, passthru).
    pub queues: BTreeMap<u16, QueueCount>,
    /// The port's rx queues (its default RSS spreads over 0..port_queues-1).
    pub port_queues: u16,
    pub rss_packets: u64,
    pub dropped: u64,
    pub port_id_packets: u64,
    pub passthru: u64,
    /// Matched a rule without a fate action.
    pub no_fate: u64,
    /// Ended in a group where no rule matched.
    pub unmatched: u64,
    /// Groups looked up, summed over packets.
    pub groups_traversed: u64,
    /// Rules with at least one hit.
    pub rules: Vec<RuleHits>,
    pub elapsed_s: f64,
    pub mpps: f64,
}

impl ClassifyReport {
    fn add_to_queue(&mut self, queue: Option<u16>, frame_bytes: u32) {
        if let Some(q) = queue {
            let c = self.queues.entry(q).or_default();
            c.packets += 1;
            c.bytes += u64::from(frame_bytes);
        }
    }

    fn add(&mut self, o: &Outcome) {
        self.groups_traversed += o.groups_traversed as u64;
        match o.verdict {
            Verdict::Unmatched => self.unmatched += 1,
            Verdict::Fate(Fate::Queue { index }) => *self.per_queue_packets.entry(index).or_default() += 1,
            Verdict::Fate(Fate::Rss) => self.rss_packets += 1,
            Verdict::Fate(Fate::Drop) => self.dropped += 1,
            Verdict::Fate(Fate::PortId { .. }) => self.port_id_packets += 1,
            Verdict::Fate(Fate::Passthru) => self.passthru += 1,
            Verdict::Fate(Fate::NoFate) => self.no_fate += 1,
        }
    }
}

/// Classifies every packet of a pcap/pcapng file on a port with `port_queues` rx queues
/// (RSS resolved as in [`crate::rss`]). `progress` is called with the packets done so far
/// after every burst.
pub fn classify_pcap(
    classifier: &Classifier,
    path: &Path,
    port_queues: u16,
    progress: &mut dyn FnMut(u64),
) -> Result<ClassifyReport, ClassifyError> {
    let mut resolver = QueueResolver::new(classifier, port_queues)?;
    let mut reader = classifier.reader();
    reader.set_counting(true);
    let ids = classifier.rule_ids();
    let before: Vec<(u64, u64)> = ids
        .iter()
        .map(|&id| classifier.counters(id).unwrap_or_default())
        .collect();
    let mut report = ClassifyReport {
        port_queues,
        ..ClassifyReport::default()
    };
    let mut rss_failure: Option<RssRuleError> = None;
    let start = Instant::now();
    let mut keys: Vec<PacketKey> = Vec::with_capacity(BURST_PACKETS);
    let mut outs = vec![Outcome::START; BURST_PACKETS];
    let mut flush = |keys: &mut Vec<PacketKey>, report: &mut ClassifyReport| {
        reader.lookup_burst(keys, &mut outs[..keys.len()]);
        for (o, key) in outs[..keys.len()].iter().zip(keys.iter()) {
            report.add(o);
            match resolver.queue(classifier, o, key) {
                Ok(q) => report.add_to_queue(q, key.frame_bytes),
                Err(e) => rss_failure = rss_failure.take().or(Some(e)),
            }
        }
        keys.clear();
        progress(report.packets);
    };
    let mut source = match PcapSource::open(path) {
        Ok(s) => s,
        Err(source) => {
            return Err(ClassifyError::Pcap {
                source,
                partial: Box::default(),
            })
        }
    };
    let mut failure = None;
    while let Some(next) = source.next_packet() {
        match next {
            Ok(p) => {
                report.packets += 1;
                report.bytes += p.data.len() as u64;
                // Link types nicbench does not decode are refused when the capture opens.
                let key = PacketKey::from_record(p.linktype, p.data);
                keys.push(key);
                if keys.len() == BURST_PACKETS {
                    flush(&mut keys, &mut report);
                }
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    if !keys.is_empty() {
        flush(&mut keys, &mut report);
    }
    report.elapsed_s = start.elapsed().as_secs_f64();
    report.mpps = if report.elapsed_s > 0.0 {
        report.packets as f64 / report.elapsed_s / 1e6
    } else {
        0.0
    };
    for (id, (h0, b0)) in ids.iter().zip(before) {
        let (h, b) = classifier.counters(*id).unwrap_or_default();
        if h > h0 {
            let info = classifier.rule_info(*id);
            report.rules.push(RuleHits {
                rule_id: *id,
                group: info.as_ref().map_or(0, |i| i.group),
                priority: info.as_ref().map_or(0, |i| i.priority),
                hits: h - h0,
                bytes: b.saturating_sub(b0),
            });
        }
    }
    if let Some(e) = rss_failure {
        return Err(ClassifyError::Rss(e));
    }
    match failure {
        Some(source) => Err(ClassifyError::Pcap {
            source,
            partial: Box::new(report),
        }),
        None => Ok(report),
    }
}
