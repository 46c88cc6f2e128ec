//! Counters of a flow-meter run: per worker and totals.
//!
//! Invariants (tested): `RunStats::packets == non_ip_packets + Σ workers.packets`
//! and the same for captured bytes; every flow a worker started ends under
//! exactly one of idle / evicted / flushed / restarted.

/// One worker's (one table's) counters. `bytes` are captured bytes, whatever
/// the records count (`ByteCount`), so they add up to the capture's size.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WorkerStats {
    /// IP packets metered.
    pub packets: u64,
    /// Captured bytes of those packets.
    pub bytes: u64,
    /// Frames without an IP header seen by this worker (counted, not metered).
    pub non_ip_packets: u64,
    pub non_ip_bytes: u64,
    /// Flows started (a status split does not start a new flow).
    pub flows: u64,
    /// Records emitted.
    pub records: u64,
    pub evicted: u64,
    pub idle_expired: u64,
    pub active_splits: u64,
    pub flushed: u64,
    pub restarted: u64,
    /// Peak number of flows in the table.
    pub max_active_flows: u64,
}

impl WorkerStats {
    pub(crate) fn add(&mut self, other: &WorkerStats) {
        self.packets += other.packets;
        self.bytes += other.bytes;
        self.non_ip_packets += other.non_ip_packets;
        self.non_ip_bytes += other.non_ip_bytes;
        self.flows += other.flows;
        self.records += other.records;
        self.evicted += other.evicted;
        self.idle_expired += other.idle_expired;
        self.active_splits += other.active_splits;
        self.flushed += other.flushed;
        self.restarted += other.restarted;
        self.max_active_flows += other.max_active_flows;
    }
}

/// Progress of a running meter, reported about every 100 ms of wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    /// Frames read so far (IP and non-IP).
    pub packets: u64,
    /// Captured bytes read so far.
    pub bytes: u64,
    /// Records written to the sink so far.
    pub records: u64,
    /// Bytes of the input file consumed (0 for live and in-memory input).
    pub input_bytes_read: u64,
    /// Wall time since the run started \[ns\].
    pub elapsed_ns: u64,
}

/// Totals of one run.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RunStats {
    /// Frames read (IP + non-IP): the capture's packet count.
    pub packets: u64,
    /// Sum of captured lengths: the capture's data size.
    pub bytes: u64,
    /// Sum of on-the-wire lengths (pcap orig_len).
    pub wire_bytes: u64,
    /// Frames with no IP header (ARP, LLDP, truncated, unknown link type): counted, not metered.
    pub non_ip_packets: u64,
    pub non_ip_bytes: u64,
    /// Records written to the sink (all end reasons).
    pub records: u64,
    /// Flows started.
    pub flows: u64,
    pub evicted: u64,
    pub idle_expired: u64,
    pub active_splits: u64,
    pub flushed: u64,
    pub restarted: u64,
    /// Peak table occupancy, summed over workers.
    pub max_active_flows: u64,
    pub workers: Vec<WorkerStats>,
    /// max / mean of per-worker packets (1.0 = perfectly balanced).
    pub imbalance: f64,
    /// Timestamps of the first and last frame read \[ns\] (0 when none).
    pub first_ts_ns: u64,
    pub last_ts_ns: u64,
    /// Wall time of the run \[ns\].
    pub elapsed_ns: u64,
    /// The stop flag ended the run (all active flows were still flushed).
    pub interrupted: bool,
    /// A bad record ended the input early; everything before it was metered.
    pub input_error: Option<String>,
}

impl RunStats {
    /// Frames per second of wall time \[Mpps\].
    pub fn mpps(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.packets as f64 * 1e3 / self.elapsed_ns as f64
    }

    /// Fills the totals from per-worker stats plus what the dispatcher counted.
    pub(crate) fn finish(&mut self, workers: Vec<WorkerStats>, dispatcher_non_ip: (u64, u64)) {
        let mut total = WorkerStats::default();
        for w in &workers {
            total.add(w);
        }
        self.non_ip_packets = dispatcher_non_ip.0 + total.non_ip_packets;
        self.non_ip_bytes = dispatcher_non_ip.1 + total.non_ip_bytes;
        self.records = total.records;
        self.flows = total.flows;
        self.evicted = total.evicted;
        self.idle_expired = total.idle_expired;
        self.active_splits = total.active_splits;
        self.flushed = total.flushed;
        self.restarted = total.restarted;
        self.max_active_flows = total.max_active_flows;
        self.imbalance = imbalance(workers.iter().map(|w| w.packets));
        self.workers = workers;
    }
}

/// max / mean (1.0 for no load or one worker).
pub fn imbalance(loads: impl Iterator<Item = u64>) -> f64 {
    let loads: Vec<u64> = loads.collect();
    let sum: u64 = loads.iter().sum();
    let max = loads.iter().copied().max().unwrap_or(0);
    if sum == 0 || loads.is_empty() {
        return 1.0;
    }
    max as f64 * loads.len() as f64 / sum as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_imbalance() {
        assert_eq!(imbalance([10, 10].into_iter()), 1.0);
        assert_eq!(imbalance([30, 10].into_iter()), 1.5);
        assert_eq!(imbalance([0, 0].into_iter()), 1.0);
        assert_eq!(imbalance(std::iter::empty()), 1.0);
    }

    #[test]
    fn test_finish_sums_workers() {
        let w = WorkerStats {
            packets: 5,
            bytes: 300,
            flows: 2,
            records: 3,
            evicted: 1,
            max_active_flows: 2,
            ..WorkerStats::default()
        };
        let mut s = RunStats::default();
        s.finish(vec![w, WorkerStats { packets: 1, ..w }], (2, 120));
        assert_eq!((s.flows, s.records, s.evicted, s.max_active_flows), (4, 6, 2, 4));
        assert_eq!((s.non_ip_packets, s.non_ip_bytes), (2, 120));
        assert!((s.imbalance - 5.0 / 3.0).abs() < 1e-12);
    }
}
