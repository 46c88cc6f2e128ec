//! The time-stepped host simulation: per stream a host buffer and a flow-meter process.
//!
//! ```text
//!  card ──(stream p: its share λ_p of the paced aggregate)──▶ host buffer p (B_p packets) ──▶ process p
//!                                               overflow: the card drops      (rate μ_p while
//!                                                                               not stalled)
//! ```
//!
//! Time advances in bins of `bin_ns` (e.g. 100 µs). The generator paces the aggregate: a bin
//! carries Σλ_p × bin packets (fractions carried to the next bin), never more than the wire
//! delivers; each packet's flow hashes it to stream p with probability λ_p / Σλ, so a bin's
//! split over the streams is multinomial (drawn as conditional binomials). In each bin a
//! process receives its arrivals, serves up to μ_p × (bin − stalled time) packets from its buffer, and
//! what exceeds the buffer is dropped. Stalls (housekeeping, record output, interrupts)
//! form a renewal process per process: exponential gaps with mean `stall_interval_ns`,
//! exponential durations with mean `stall_mean_ns`. Processed packets are also summed per
//! measurement window (`window_ns`), whose maximum is the "short-term max" rate.
//!
//! Invariants: a run is a pure function of its input and seed (one ChaCha stream per
//! process and purpose); packets are conserved: offered = processed + dropped + backlog.

use nicbench_sim::{RngStreams, SimDuration, SimTime};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Binomial, Distribution};
use serde::Serialize;

/// What the engine needs to know about one stream and its process.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProcessInput {
    /// Mean packet arrival rate [packets/ns].
    pub arrival_per_ns: f64,
    /// Service rate while not stalled [packets/ns].
    pub rate_per_ns: f64,
    /// Host buffer capacity \[packets\].
    pub buffer_packets: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EngineInput {
    pub processes: Vec<ProcessInput>,
    pub stall_interval: SimDuration,
    pub stall_mean: SimDuration,
    pub bin: SimDuration,
    pub duration: SimDuration,
    pub window: SimDuration,
    pub seed: u64,
}

/// Per-process totals over the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct ProcessOutput {
    pub offered_packets: f64,
    pub processed_packets: f64,
    pub dropped_packets: f64,
    pub backlog_packets: f64,
    pub max_backlog_packets: f64,
    /// Highest processed rate over one measurement window [packets/ns].
    pub max_window_rate_per_ns: f64,
    /// Core time spent processing or stalled, as a fraction of the run.
    pub busy_fraction: f64,
    pub stalled_fraction: f64,
}

/// One measurement window, all processes together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, schemars::JsonSchema)]
pub struct WindowOutput {
    pub t_s: f64,
    pub offered_packets: f64,
    pub processed_packets: f64,
    pub dropped_packets: f64,
    /// Most packets one process handled in the window.
    pub max_process_packets: f64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineOutput {
    pub processes: Vec<ProcessOutput>,
    pub windows: Vec<WindowOutput>,
}

/// Stream ids: arrivals and stalls of process p draw from separate streams.
const ARRIVAL_STREAM: u64 = 1 << 32;
const STALL_STREAM: u64 = 2 << 32;

fn exponential(rng: &mut ChaCha8Rng, mean_ns: f64) -> f64 {
    // 1 - U is in (0, 1], so the logarithm is finite.
    -mean_ns * (1.0 - rng.random::<f64>()).ln()
}

/// Splits `total` packets over the streams with weights `rates` (multinomial, as conditional
/// binomials: stream p takes Binomial(left, λ_p / Σ_{q≥p} λ_q) of what is left), each stream's draw
/// from its own RNG stream. The last stream with a positive rate takes the rest, so no packet is
/// left over by rounding in the weights (streams without flows have rate 0).
fn split(total: u64, rates: &[f64], rngs: &mut [ChaCha8Rng], out: &mut [f64]) {
    let last = rates.iter().rposition(|&r| r > 0.0);
    let mut left = total;
    let mut weight_left: f64 = rates.iter().sum();
    for (p, &rate) in rates.iter().enumerate() {
        let take = if left == 0 || rate <= 0.0 {
            0
        } else if Some(p) == last {
            left
        } else {
            Binomial::new(left, (rate / weight_left).clamp(0.0, 1.0))
                .map(|b| b.sample(&mut rngs[p]))
                .unwrap_or(0)
        };
        out[p] = take as f64;
        left -= take;
        weight_left -= rate;
    }
}

/// The stall renewal process of one process: exponential gaps and durations (drawn in ns,
/// rounded to the ps).
struct Stalls {
    rng: ChaCha8Rng,
    interval_ns: f64,
    mean_ns: f64,
    /// The current or next stall, `[start, end)`; `None`: the process never stalls.
    stall: Option<(SimTime, SimTime)>,
}

impl Stalls {
    fn new(mut rng: ChaCha8Rng, interval: SimDuration, mean: SimDuration) -> Stalls {
        let (interval_ns, mean_ns) = (interval.as_ns_f64(), mean.as_ns_f64());
        if mean == SimDuration::ZERO {
            return Stalls {
                rng,
                interval_ns,
                mean_ns,
                stall: None,
            };
        }
        let start = SimTime::ZERO + SimDuration::from_ns_f64(exponential(&mut rng, interval_ns));
        let end = start + SimDuration::from_ns_f64(exponential(&mut rng, mean_ns));
        Stalls {
            rng,
            interval_ns,
            mean_ns,
            stall: Some((start, end)),
        }
    }

    /// Stalled time within [from, to); advances past stalls that end before `to`.
    fn overlap(&mut self, from: SimTime, to: SimTime) -> SimDuration {
        let mut stalled = SimDuration::ZERO;
        while let Some((start, end)) = self.stall.filter(|&(start, _)| start < to) {
            stalled += end.min(to) - start.max(from);
            if end > to {
                break;
            }
            let next = end + SimDuration::from_ns_f64(exponential(&mut self.rng, self.interval_ns));
            self.stall = Some((
                next,
                next + SimDuration::from_ns_f64(exponential(&mut self.rng, self.mean_ns)),
            ));
        }
        stalled
    }
}

/// `progress(simulated_ns)` is called every this many bins (a few milliseconds of work at most).
const PROGRESS_EVERY_BINS: u64 = 1 << 12;

pub fn run(input: &EngineInput) -> EngineOutput {
    run_reporting(input, &mut |_| {})
}

/// [`run`], calling `progress(simulated_ns)` now and then (it cannot change the outcome).
pub fn run_reporting(input: &EngineInput, progress: &mut dyn FnMut(u64)) -> EngineOutput {
    let streams = RngStreams::new(input.seed);
    let n = input.processes.len();
    let bin = input.bin.max(SimDuration::from_ps(1));
    let bin_ns = bin.as_ns_f64();
    let bins = input.duration.as_ps().div_ceil(bin.as_ps());
    let bins_per_window = (input.window.as_ps() / bin.as_ps()).max(1);
    let mut arrivals_rng: Vec<ChaCha8Rng> = (0..n).map(|p| streams.stream(ARRIVAL_STREAM + p as u64)).collect();
    let mut stalls: Vec<Stalls> = (0..n)
        .map(|p| {
            Stalls::new(
                streams.stream(STALL_STREAM + p as u64),
                input.stall_interval,
                input.stall_mean,
            )
        })
        .collect();
    let mut out: Vec<ProcessOutput> = vec![ProcessOutput::default(); n];
    let mut busy = vec![SimDuration::ZERO; n];
    let mut stalled_total = vec![SimDuration::ZERO; n];
    let mut in_window = vec![0.0; n];
    let mut window = WindowOutput::default();
    let mut windows = Vec::new();
    let mut window_bins = 0u64;
    let rates: Vec<f64> = input.processes.iter().map(|p| p.arrival_per_ns.max(0.0)).collect();
    let per_bin: f64 = rates.iter().sum::<f64>() * bin_ns;
    let (mut carried, mut arrivals) = (0.0, vec![0.0; n]);
    for b in 0..bins {
        if b % PROGRESS_EVERY_BINS == 0 {
            progress((bin * b).as_ns());
        }
        // The paced aggregate of this bin: whole packets, the fraction carried on.
        let due = carried + per_bin;
        let total = due.floor();
        carried = due - total;
        split(total as u64, &rates, &mut arrivals_rng, &mut arrivals);
        let from = SimTime::ZERO + bin * b;
        let to = from + bin;
        for (p, proc_in) in input.processes.iter().enumerate() {
            let o = &mut out[p];
            let arrivals = arrivals[p];
            let stalled = stalls[p].overlap(from, to);
            let capacity = (bin - stalled).as_ns_f64() * proc_in.rate_per_ns;
            let total = o.backlog_packets + arrivals;
            let served = total.min(capacity);
            let rest = total - served;
            let dropped = (rest - proc_in.buffer_packets).max(0.0);
            o.backlog_packets = rest - dropped;
            o.max_backlog_packets = o.max_backlog_packets.max(o.backlog_packets);
            o.offered_packets += arrivals;
            o.processed_packets += served;
            o.dropped_packets += dropped;
            let serving = if proc_in.rate_per_ns > 0.0 {
                served / proc_in.rate_per_ns
            } else {
                0.0
            };
            busy[p] += stalled + SimDuration::from_ns_f64(serving);
            stalled_total[p] += stalled;
            in_window[p] += served;
            window.offered_packets += arrivals;
            window.processed_packets += served;
            window.dropped_packets += dropped;
        }
        window_bins += 1;
        if window_bins == bins_per_window || b + 1 == bins {
            let span_ns = window_bins as f64 * bin_ns;
            for (p, o) in out.iter_mut().enumerate() {
                // Only whole windows count for the short-term maximum.
                if window_bins == bins_per_window {
                    o.max_window_rate_per_ns = o.max_window_rate_per_ns.max(in_window[p] / span_ns);
                }
                window.max_process_packets = window.max_process_packets.max(in_window[p]);
                in_window[p] = 0.0;
            }
            window.t_s = to.as_secs_f64();
            windows.push(std::mem::take(&mut window));
            window_bins = 0;
        }
    }
    let run_ns = (bin * bins).as_ns_f64();
    for (p, o) in out.iter_mut().enumerate() {
        o.busy_fraction = (busy[p].as_ns_f64() / run_ns).min(1.0);
        o.stalled_fraction = stalled_total[p].as_ns_f64() / run_ns;
    }
    EngineOutput {
        processes: out,
        windows,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(arrival: f64, rate: f64, buffer: f64) -> EngineInput {
        EngineInput {
            processes: vec![
                ProcessInput {
                    arrival_per_ns: arrival,
                    rate_per_ns: rate,
                    buffer_packets: buffer
                };
                4
            ],
            stall_interval: SimDuration::from_ns(1_000_000),
            stall_mean: SimDuration::from_ns(100_000),
            bin: SimDuration::from_ns(100_000),
            duration: SimDuration::from_ns(200_000_000),
            window: SimDuration::from_ns(10_000_000),
            seed: 3,
        }
    }

    #[test]
    fn test_conservation_and_reproducibility() {
        let i = input(0.002, 0.0025, 20_000.0);
        let a = run(&i);
        assert_eq!(a.processes, run(&i).processes);
        for o in &a.processes {
            let sum = o.processed_packets + o.dropped_packets + o.backlog_packets;
            assert!((o.offered_packets - sum).abs() < 1e-6, "{o:?}");
            // 2 Mpps for 0.2 s ≈ 400k packets.
            assert!((o.offered_packets - 400_000.0).abs() < 5_000.0, "{}", o.offered_packets);
        }
        assert_eq!(a.windows.len(), 20);
    }

    #[test]
    fn test_the_paced_aggregate_is_never_above_its_rate_and_splits_by_share() {
        // 4 × 2 Mpps for 0.2 s: 1.6M packets in all, to the packet (a wire at its line rate
        // delivers no more), split over the streams by flow hash (each ≈ 400k, binomial spread).
        let mut i = input(0.002, 0.0025, 20_000.0);
        let a = run(&i);
        let total: f64 = a.processes.iter().map(|o| o.offered_packets).sum();
        assert!((total - 1_600_000.0).abs() <= 1.0, "{total}");
        // Unequal shares: 3:1.
        i.processes[0].arrival_per_ns = 0.006;
        let b = run(&i);
        let first = b.processes[0].offered_packets;
        let total: f64 = b.processes.iter().map(|o| o.offered_packets).sum();
        assert!((total - 2_400_000.0).abs() <= 1.0, "{total}");
        assert!((first / total - 0.5).abs() < 0.002, "{first} of {total}");
        // Streams without flows (rate 0) after the others: every packet still goes somewhere.
        let rates = [0.1, 0.2, 0.3, 0.0, 0.0];
        let mut rngs: Vec<ChaCha8Rng> = (0..5).map(|p| RngStreams::new(5).stream(p)).collect();
        let mut out = [0.0; 5];
        for _ in 0..1000 {
            split(1_000, &rates, &mut rngs, &mut out);
            assert_eq!(out.iter().sum::<f64>(), 1_000.0, "{out:?}");
            assert_eq!((out[3], out[4]), (0.0, 0.0));
        }
    }

    #[test]
    fn test_underload_no_drops_overload_drops_at_capacity() {
        // 2 Mpps offered, 3 Mpps peak, ~9% stalled: 2.73 Mpps mean capacity.
        let under = run(&input(0.002, 0.003, 20_000.0));
        assert!(under.processes.iter().all(|o| o.dropped_packets == 0.0));
        // 4 Mpps offered: processed ≈ capacity, the rest dropped; busy ≈ 100%.
        let over = run(&input(0.004, 0.003, 20_000.0));
        for o in &over.processes {
            let mpps = o.processed_packets / 0.2 / 1e6;
            assert!((mpps - 3.0 * 1.0 / 1.1).abs() < 0.15, "{mpps}");
            assert!(o.dropped_packets > 0.0 && o.busy_fraction > 0.99);
            assert!(o.max_window_rate_per_ns * 1e3 > mpps, "short-term max above the mean");
        }
    }

    #[test]
    fn test_small_buffer_drops_during_stalls() {
        // Underloaded on average, but 100 µs stalls at 2 Mpps need ~200 packets of buffer.
        let tiny = run(&input(0.002, 0.003, 50.0));
        assert!(tiny.processes.iter().all(|o| o.dropped_packets > 0.0));
    }
}
