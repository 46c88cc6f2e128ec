//! Measurement: latency histograms and throughput timelines.
//!
//! - [`LatencyHistogram`] records latencies in ns into an HDR histogram (3 significant
//!   digits: ≤ 0.1% relative error, O(1) per record) from 1 ns to ~1 hour; larger values
//!   saturate at the top instead of failing, so a pathological run still reports.
//! - [`Timeline`] sums packets and wire bytes into fixed bins of simulated time (default
//!   10 ms) and reports Gb/s and Mpps per bin; bins are dense from 0 to the last one used.

use crate::time::{SimDuration, SimTime};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Highest latency the histogram resolves \[ns\] (1 hour).
const MAX_LATENCY_NS: u64 = 3_600_000_000_000;

/// Percentiles of a latency distribution \[µs\].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LatencySummary {
    pub p1: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
}

/// Sub-bucket bits of the recording front end: 2^9 linear sub-buckets per power of two
/// (values below 512 ns exact, relative resolution 2^-8 ≈ 0.4% above).
const FRONT_SUB_BITS: u32 = 9;
const FRONT_HALF: u64 = 1 << (FRONT_SUB_BITS - 1);
/// Front-end buckets covering 1 ns ..= MAX_LATENCY_NS (< 2^42).
const FRONT_BUCKETS: usize = ((42 - (FRONT_SUB_BITS - 1)) as usize + 2) * FRONT_HALF as usize;

/// Latencies \[ns\] in an HDR histogram.
///
/// Recording is the simulator's hottest measurement (one call per delivered packet), so it
/// goes to a flat log-linear counter array first (one shift, one add); the HDR histogram
/// (3 significant digits) receives those counts, at each bucket's midpoint, when a summary
/// is taken. Count, mean and max are tracked exactly; quantiles carry ≤ 0.2% extra error.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
    front: Vec<u64>,
    count: u64,
    /// Sum of recorded latencies \[ns\] (f64: ample for a mean, cheap to add).
    sum_ns: f64,
    max_ns: u64,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        LatencyHistogram::new()
    }
}

#[inline]
fn front_index(v: u64) -> usize {
    if v < 2 * FRONT_HALF {
        return v as usize;
    }
    let e = 63 - v.leading_zeros();
    let shift = e - (FRONT_SUB_BITS - 1);
    (u64::from(shift) * FRONT_HALF + (v >> shift)) as usize
}

/// Values `[lo, hi)` \[ns\] of a front-end bucket (`front_index(v) == idx` exactly for them).
fn front_range(idx: usize) -> (u64, u64) {
    let idx = idx as u64;
    if idx < 2 * FRONT_HALF {
        return (idx, idx + 1);
    }
    let shift = idx / FRONT_HALF - 1;
    let top = idx - shift * FRONT_HALF;
    (top << shift, (top + 1) << shift)
}

/// Midpoint of a front-end bucket \[ns\].
fn front_value(idx: usize) -> u64 {
    let idx = idx as u64;
    if idx < 2 * FRONT_HALF {
        return idx;
    }
    let shift = idx / FRONT_HALF - 1;
    let top = idx - shift * FRONT_HALF;
    (top << shift) + ((1u64 << shift) >> 1)
}

impl LatencyHistogram {
    pub fn new() -> LatencyHistogram {
        // Bounds are constants satisfying the crate's preconditions (low ≥ 1, high ≥ 2·low, sigfig ≤ 5).
        let hist = Histogram::new_with_bounds(1, MAX_LATENCY_NS, 3).expect("valid constant histogram bounds");
        LatencyHistogram {
            hist,
            front: vec![0; FRONT_BUCKETS],
            count: 0,
            sum_ns: 0.0,
            max_ns: 0,
        }
    }

    /// Records one latency \[ns\].
    #[inline]
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.record_n_ns(latency_ns, 1);
    }

    /// Records `count` packets with the same latency \[ns\].
    #[inline]
    pub fn record_n_ns(&mut self, latency_ns: u64, count: u64) {
        let v = latency_ns.clamp(1, MAX_LATENCY_NS);
        if let Some(c) = self.front.get_mut(front_index(v)) {
            *c += count;
        }
        self.count += count;
        self.sum_ns += v as i64 as f64 * count as i64 as f64;
        self.max_ns = self.max_ns.max(v);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// A recorder for a run of latencies (a burst): counts, sum and max stay in registers
    /// and equal latencies in a row cost one bucket update; the histogram is updated when
    /// the recorder is dropped. The result is identical to [`LatencyHistogram::record_ns`]
    /// per value (same buckets, same sequential f64 sum).
    #[inline]
    pub fn recorder(&mut self) -> Recorder<'_> {
        Recorder {
            count: self.count,
            sum_ns: self.sum_ns,
            max_ns: self.max_ns,
            max_fast_ns: 0.0,
            bucket: usize::MAX,
            lo_ns: f64::INFINITY,
            hi_ns: f64::NEG_INFINITY,
            run: 0,
            hist: self,
        }
    }

    /// The HDR histogram with the front-end counts merged in.
    fn merged(&self) -> Histogram<u64> {
        let mut h = self.hist.clone();
        for (i, &n) in self.front.iter().enumerate() {
            if n > 0 {
                // In range by construction (front buckets stay below MAX_LATENCY_NS · (1 + 2^-8)).
                h.saturating_record_n(front_value(i).min(MAX_LATENCY_NS), n);
            }
        }
        h
    }

    fn quantile_of(h: &Histogram<u64>, q: f64, max_ns: u64) -> u64 {
        h.value_at_quantile(q.clamp(0.0, 1.0)).min(max_ns)
    }

    /// Latency at quantile `q` in [0, 1] \[ns\]; 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        Self::quantile_of(&self.merged(), q, self.max_ns)
    }

    /// Percentiles in µs (all zero when nothing was recorded).
    pub fn summary_us(&self) -> LatencySummary {
        if self.count == 0 {
            return LatencySummary::default();
        }
        let h = self.merged();
        let us = |ns: u64| ns as f64 * 1e-3;
        let q = |x: f64| us(Self::quantile_of(&h, x, self.max_ns));
        LatencySummary {
            p1: q(0.01),
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p99: q(0.99),
            p999: q(0.999),
            max: us(self.max_ns),
            mean: (self.sum_ns / self.count as f64) * 1e-3,
        }
    }
}

/// Records into a [`LatencyHistogram`] (see [`LatencyHistogram::recorder`]).
pub struct Recorder<'a> {
    hist: &'a mut LatencyHistogram,
    /// Values recorded before the current run.
    count: u64,
    sum_ns: f64,
    /// Max of the values that took the slow path, and of the raw f64 latencies that took
    /// the fast path (truncation is monotone, so truncating their max gives theirs).
    max_ns: u64,
    max_fast_ns: f64,
    /// Front-end bucket of the current run of latencies, its value range `[lo, hi)` \[ns\]
    /// (empty before the first value) and the run's length.
    bucket: usize,
    lo_ns: f64,
    hi_ns: f64,
    run: u64,
}

impl Recorder<'_> {
    /// Records one latency \[ns\] given as an f64, truncated to whole ns (as
    /// `record_ns(latency_ns as u64)` would; negative values record as 1 ns like 0).
    #[inline]
    pub fn record_f64_ns(&mut self, latency_ns: f64) {
        // Fast path: in the current run's bucket (bounds are whole ns within
        // [1, MAX_LATENCY_NS], so the truncated value is in it too, and needs no clamping).
        if latency_ns >= self.lo_ns && latency_ns < self.hi_ns {
            self.run += 1;
            self.sum_ns += latency_ns as i64 as f64;
            self.max_fast_ns = if latency_ns > self.max_fast_ns {
                latency_ns
            } else {
                self.max_fast_ns
            };
            return;
        }
        // Clamped in the f64 domain: the same value as truncating then clamping to
        // [1, MAX_LATENCY_NS] (NaN, never produced by the models, records 1 ns).
        let v = if latency_ns >= MAX_LATENCY_NS as f64 {
            MAX_LATENCY_NS
        } else if latency_ns >= 1.0 {
            latency_ns as i64 as u64
        } else {
            1
        };
        self.record_clamped(v);
    }

    /// Records one latency \[ns\].
    #[inline]
    pub fn record_ns(&mut self, latency_ns: u64) {
        self.record_clamped(latency_ns.clamp(1, MAX_LATENCY_NS));
    }

    #[inline]
    fn record_clamped(&mut self, v: u64) {
        let bucket = front_index(v);
        if bucket != self.bucket {
            self.start_run(bucket);
        }
        self.run += 1;
        self.sum_ns += v as i64 as f64;
        self.max_ns = self.max_ns.max(v);
    }

    #[cold]
    fn start_run(&mut self, bucket: usize) {
        self.flush_run();
        self.bucket = bucket;
        let (lo, hi) = front_range(bucket);
        // Only whole buckets inside the clamping range get a fast path.
        if lo >= 1 && hi <= MAX_LATENCY_NS {
            (self.lo_ns, self.hi_ns) = (lo as f64, hi as f64);
        } else {
            (self.lo_ns, self.hi_ns) = (f64::INFINITY, f64::NEG_INFINITY);
        }
    }

    #[inline]
    fn flush_run(&mut self) {
        if self.run > 0 {
            if let Some(c) = self.hist.front.get_mut(self.bucket) {
                *c += self.run;
            }
            self.count += self.run;
            self.run = 0;
        }
    }
}

impl Drop for Recorder<'_> {
    #[inline]
    fn drop(&mut self) {
        self.flush_run();
        self.hist.count = self.count;
        self.hist.sum_ns = self.sum_ns;
        // max_fast_ns is a recorded latency in [1, MAX_LATENCY_NS) or 0.
        self.hist.max_ns = self.max_ns.max(self.max_fast_ns as i64 as u64);
    }
}

/// One bin of a [`Timeline`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineBin {
    /// End of the bin \[s\].
    pub t_s: f64,
    pub rx_gbps: f64,
    pub rx_mpps: f64,
    /// What happened in this bin (control-plane events), if anything.
    pub event: Option<String>,
}

/// Packets and wire bytes per fixed bin of simulated time.
#[derive(Clone, Debug)]
pub struct Timeline {
    bin_ns: u64,
    packets: Vec<u64>,
    wire_bytes: Vec<u64>,
    events: BTreeMap<usize, String>,
    /// The bin [`Timeline::add`] used last and its span `[start, end)` [ns]: consecutive
    /// adds mostly fall in the same bin, which then needs no division.
    cur_bin: usize,
    cur_start_ns: u64,
    cur_end_ns: u64,
}

impl Timeline {
    /// `bin` of zero is taken as 1 ns (never divides by zero).
    pub fn new(bin: SimDuration) -> Timeline {
        Timeline {
            bin_ns: bin.as_ns().max(1),
            packets: Vec::new(),
            wire_bytes: Vec::new(),
            events: BTreeMap::new(),
            cur_bin: 0,
            cur_start_ns: 1,
            cur_end_ns: 0,
        }
    }

    pub fn bin_ns(&self) -> u64 {
        self.bin_ns
    }

    #[inline]
    fn bin_of(&mut self, at: SimTime) -> usize {
        let bin = (at.as_ns() / self.bin_ns) as usize;
        if bin >= self.packets.len() {
            self.packets.resize(bin + 1, 0);
            self.wire_bytes.resize(bin + 1, 0);
        }
        bin
    }

    /// Counts `packets` totalling `wire_bytes` received at `at`.
    #[inline]
    pub fn add(&mut self, at: SimTime, packets: u64, wire_bytes: u64) {
        let ns = at.as_ns();
        if !(self.cur_start_ns..self.cur_end_ns).contains(&ns) {
            let bin = self.bin_of(at);
            self.cur_bin = bin;
            self.cur_start_ns = bin as u64 * self.bin_ns;
            self.cur_end_ns = self.cur_start_ns.saturating_add(self.bin_ns);
        }
        // The bins only grow, so the cached one stays in range.
        if let (Some(p), Some(b)) = (
            self.packets.get_mut(self.cur_bin),
            self.wire_bytes.get_mut(self.cur_bin),
        ) {
            *p += packets;
            *b += wire_bytes;
        }
    }

    /// Notes an event in the bin of `at` (several in one bin are joined with "; ").
    pub fn mark(&mut self, at: SimTime, what: &str) {
        let bin = self.bin_of(at);
        self.events
            .entry(bin)
            .and_modify(|e| {
                e.push_str("; ");
                e.push_str(what);
            })
            .or_insert_with(|| what.to_string());
    }

    /// Makes the timeline cover `[0, until)` with (possibly empty) bins.
    pub fn extend_to(&mut self, until: SimTime) {
        if until.as_ns() > 0 {
            let last = ((until.as_ns() - 1) / self.bin_ns) as usize;
            if last >= self.packets.len() {
                self.packets.resize(last + 1, 0);
                self.wire_bytes.resize(last + 1, 0);
            }
        }
    }

    pub fn total_packets(&self) -> u64 {
        self.packets.iter().sum()
    }

    /// The bins with rates.
    pub fn bins(&self) -> Vec<TimelineBin> {
        let bin_ns = self.bin_ns as f64;
        (0..self.packets.len())
            .map(|i| TimelineBin {
                t_s: (i as f64 + 1.0) * bin_ns * 1e-9,
                rx_gbps: self.wire_bytes[i] as f64 * 8.0 / bin_ns,
                rx_mpps: self.packets[i] as f64 * 1e3 / bin_ns,
                event: self.events.get(&i).cloned(),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_histogram_percentiles() {
        let mut h = LatencyHistogram::new();
        assert_eq!(h.summary_us(), LatencySummary::default());
        for ns in 1..=1000u64 {
            h.record_ns(ns * 1000); // 1..1000 µs
        }
        h.record_n_ns(5_000_000, 10); // 5 ms tail
        let s = h.summary_us();
        assert_eq!(h.count(), 1010);
        assert!((s.p50 - 505.0).abs() < 2.0, "{s:?}");
        assert!((s.p1 - 11.0).abs() < 0.1, "{s:?}");
        assert!((s.max - 5000.0).abs() / 5000.0 < 1e-3, "{s:?}");
        assert!(
            s.p999 > 4990.0 && s.p99 < 1000.0 * 1.003,
            "front end: ≤ 0.2% extra error {s:?}"
        );
        h.record_ns(u64::MAX); // saturates, no panic
        assert_eq!(h.count(), 1011);
    }

    #[test]
    fn test_recorder_equals_record_ns() {
        let mut values: Vec<f64> = vec![
            0.0, 0.4, 1.0, 1.9, 1.2, 37_000.2, 37_001.7, 37_001.9, 40_000.0, 37_000.0, 5e15, 3.6e12, 511.99, 512.0,
            -3.0,
        ];
        // Runs within buckets (the fast path), rising and falling.
        values.extend((0..300).map(|i| 36_900.0 + f64::from(i) * 0.77));
        values.extend((0..300).map(|i| 90_000.0 - f64::from(i) * 1.3));
        values.extend([3.6e12 - 0.5, 3.6e12 - 0.5, 3.6e12]);
        let mut a = LatencyHistogram::new();
        a.record_ns(77);
        let mut b = a.clone();
        for &v in &values {
            a.record_ns(v as u64);
        }
        {
            let mut rec = b.recorder();
            for &v in &values {
                rec.record_f64_ns(v);
            }
            rec.record_ns(0);
        }
        a.record_ns(0);
        assert_eq!(a.count(), b.count());
        assert_eq!(a.front, b.front);
        assert_eq!((a.sum_ns.to_bits(), a.max_ns), (b.sum_ns.to_bits(), b.max_ns));
        assert_eq!(a.summary_us(), b.summary_us());
    }

    #[test]
    fn test_front_buckets_round_trip_within_resolution() {
        for v in [
            1u64,
            511,
            512,
            513,
            1000,
            28_123,
            5_000_000,
            123_456_789_012,
            MAX_LATENCY_NS,
        ] {
            let i = front_index(v);
            assert!(i < FRONT_BUCKETS, "{v}");
            let back = front_value(i);
            assert!(
                (back as f64 - v as f64).abs() <= v as f64 / 256.0,
                "{v} -> {i} -> {back}"
            );
        }
        assert!((1..5000u64).all(|v| front_index(v) <= front_index(v + 1)), "monotone");
        for v in (1..100_000u64).chain([MAX_LATENCY_NS - 1, MAX_LATENCY_NS, 1 << 40]) {
            let (lo, hi) = front_range(front_index(v));
            assert!(lo <= v && v < hi, "{v}: [{lo}, {hi})");
            assert_eq!(
                (front_index(lo), front_index(hi - 1)),
                (front_index(v), front_index(v)),
                "{v}"
            );
        }
        let mut h = LatencyHistogram::new();
        h.record_n_ns(28_000, 3);
        h.record_ns(30_000);
        let s = h.summary_us();
        assert!((s.mean - 28.5).abs() < 1e-9 && s.max == 30.0, "{s:?}");
        assert!((s.p50 - 28.0).abs() < 0.1, "{s:?}");
    }

    #[test]
    fn test_timeline_bins_rates_and_events() {
        let mut t = Timeline::new(SimDuration::from_ms(10));
        // 1 ms worth of 100 Gb/s: 12.5 MB of wire bytes in bin 0 → 10 Gb/s over the 10 ms bin.
        t.add(SimTime::from_ns(1_000), 8_000, 12_500_000);
        t.add(SimTime::from_ns(25_000_000), 1, 100);
        t.mark(SimTime::from_ns(25_000_001), "batch starts");
        t.mark(SimTime::from_ns(29_000_000), "batch ends");
        t.extend_to(SimTime::from_ns(50_000_000));
        let bins = t.bins();
        assert_eq!(bins.len(), 5);
        assert!((bins[0].rx_gbps - 10.0).abs() < 1e-9);
        assert!((bins[0].rx_mpps - 0.8).abs() < 1e-9);
        assert!((bins[0].t_s - 0.01).abs() < 1e-12);
        assert_eq!(bins[1].rx_gbps, 0.0);
        assert_eq!(bins[2].event.as_deref(), Some("batch starts; batch ends"));
        assert_eq!(t.total_packets(), 8_001);
        // Adds back and forth across bins (the cached bin must follow).
        let mut t = Timeline::new(SimDuration::from_ns(10));
        for ns in [5u64, 9, 10, 3, 25, 19, 20, 0] {
            t.add(SimTime::from_ns(ns), 1, 100);
        }
        let packets: Vec<f64> = t.bins().iter().map(|b| b.rx_mpps * 10.0 / 1e3).collect();
        assert_eq!(packets, vec![4.0, 2.0, 2.0]);
    }
}
