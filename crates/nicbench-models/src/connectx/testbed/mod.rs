//! The PAM'21 testbed as a simulation: generator → link → DUT NIC (steering pipeline,
//! PCIe DMA, RX rings) → single-core poll-mode NF (+ optional rule installer) → TX →
//! link → generator RX, which timestamps and counts per queue.
//!
//! Packets are processed in arrival order with per-packet arithmetic on timestamps
//! (Lindley recursions for the FIFO stages, no per-packet events): the steering engine
//! is a FIFO server with a finite packet buffer (overflow → `dropped.nic`), DMA is a
//! FIFO server at the PCIe rate, and a packet finding its RX ring full is `imissed`.
//! The NF core takes up to `rx_burst_packets` from a ring per poll, paying per-burst
//! and per-packet time; a same-core installer runs its operations between bursts, so
//! the rings fill while it works. Control-plane changes reach the classifier (and so
//! the per-flow cache, via an epoch) at most every [`APPLY_EVERY_NS`], and the steering
//! costs are recomputed at most as often.
//!
//! Speed (burst-level processing, per-packet accounting): the generator hands over
//! bursts of up to `RX_BURST_MAX` packets spanning at most `BURST_SPAN_NS`; each
//! stage runs over the whole burst, and the control-plane / bookkeeping checks run once
//! per burst at its first arrival. The NF core is advanced lazily (every
//! `CORE_DEFER_PACKETS` packets, `CORE_DEFER_NS`, or when a ring looks full) — exact,
//! because advancing the core only removes packets from rings, so a ring below its size
//! cannot overflow before the core catches up, and a burst only takes packets whose DMA
//! completed by its start. Flow classification is cached per flow (invalidated by epoch).

//!
//! Layout: [`build`] makes a [`Testbed`] from a scenario and a profile (flows classified,
//! rules installed, rings empty); [`run`] is the event loop over the generator's bursts
//! (stages: link → steering → NIC buffer → DMA → rings → NF core → TX), with the NIC's
//! functional and timing state in [`nic`], the host side (rings, NF core, receiver) in
//! [`host`] and the installer's schedule in [`installer`]; [`summary`] turns what the run
//! counted into the [`SimResult`].

mod build;
mod host;
mod installer;
mod nic;
mod run;
mod summary;

pub use build::Testbed;
pub use run::Counts;

use super::result::SimResult;
use super::scenario::Scenario;
use crate::error::ModelError;
use crate::profile::Profile;

/// Granularity of functional updates and steering-cost refreshes \[ns\].
pub const APPLY_EVERY_NS: f64 = 1_000_000.0;
/// Packets still in flight this long after the end of the run are counted \[ns\].
const DRAIN_NS: f64 = 10_000_000.0;
/// Progress is reported every this much simulated time \[ns\].
const PROGRESS_EVERY_NS: u64 = 10_000_000;
/// The NF core is advanced at least every this many packets pushed to its rings …
const CORE_DEFER_PACKETS: u32 = 64;
/// … and at least every this much simulated time \[ns\] (or when a ring looks full).
const CORE_DEFER_NS: f64 = 20_000.0;
/// Window over which the root-table packet rate (firmware command contention) is measured \[ns\].
const FW_RATE_WINDOW_NS: f64 = 1_000_000.0;
/// Packets the generator hands over at once (a DPDK tx burst) …
const RX_BURST_MAX: usize = 32;
/// … unless they span more simulated time than this \[ns\].
const BURST_SPAN_NS: u64 = 10_000;
/// A flow or path not classified yet.
const UNKNOWN: u32 = u32::MAX;

/// `a.max(b)` for the simulator's times, which are never NaN: one `maxsd` instead of
/// `f64::max`'s NaN handling (the same value for every non-NaN pair).
#[inline(always)]
fn max_ns(a: f64, b: f64) -> f64 {
    if a > b {
        a
    } else {
        b
    }
}


/// Runs one scenario on one profile.
pub fn simulate(scn: &Scenario, profile: &Profile, progress: &mut dyn FnMut(u64)) -> Result<SimResult, ModelError> {
    let wall = std::time::Instant::now();
    let mut testbed = Testbed::build(scn, profile)?;
    let counts = testbed.run(progress)?;
    Ok(testbed.summary(&counts, wall.elapsed().as_secs_f64()))
}
