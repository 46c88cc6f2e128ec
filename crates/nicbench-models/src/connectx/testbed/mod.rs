//! The PAM'21 testbed as a simulation: generator → link → DUT NIC (steering pipeline,
//! PCIe DMA, RX rings) → single-core poll-mode NF (+ optional rule installer) → TX →
//! link → generator RX, which timestamps and counts per queue.
//!
//! Packets are processed in arrival order with per-packet arithmetic on timestamps (Lindley
//! recursions for the FIFO stages, in integer picoseconds: [`nicbench_sim::SimTime`]; no
//! per-packet events): the steering engine is a FIFO server with a finite packet buffer
//! (overflow → `dropped.nic`), DMA is a FIFO server at the PCIe rate, and a packet finding
//! its RX ring full is `imissed`. The NF core takes up to `rx_burst_packets` from a ring per
//! poll, paying per-burst and per-packet time; a same-core installer runs its operations
//! between bursts, so the rings fill while it works. The control plane's rarer work — the
//! installer's operations on another core, the functional updates they complete, cost
//! refreshes, the root-table rate window — are events on the engine's
//! [`nicbench_sim::EventQueue`]; changes reach the classifier (and so the per-flow cache,
//! via an epoch) at most every [`APPLY_EVERY`], and the steering costs are recomputed at
//! most as often.
//!
//! Speed (burst-level processing, per-packet accounting): the generator hands over bursts
//! of up to `RX_BURST_MAX` packets spanning at most `BURST_SPAN_NS`; each stage runs over
//! the whole burst, and the control-plane events are processed once per burst at its first
//! arrival. The NF core is advanced lazily (every `CORE_DEFER_PACKETS` packets,
//! `CORE_DEFER`, or when a ring looks full) — exact, because advancing the core only removes
//! packets from rings, so a ring below its size cannot overflow before the core catches up,
//! and a burst only takes packets whose DMA completed by its start (a test compares it with
//! advancing at every packet). Flow classification is cached per flow (invalidated by epoch).
//! With no installer and every flow on one path, queue and fate (`Nic::uniform` at the
//! start, so to the end: no rule changes), a packet's flow cannot matter and the generator
//! skips drawing it (fixed sizes only; a test compares whole results with and without).
//!
//! Layout: [`build`] makes a [`Testbed`] from a scenario and a profile (flows classified,
//! rules installed, rings empty); [`run`] is the loop over the generator's bursts (stages:
//! link → steering → NIC buffer → DMA → rings → NF core → TX), with the NIC's functional and
//! timing state in [`nic`], the host side (rings, NF core, receiver) in [`host`] and the
//! control plane in [`control`]; [`summary`] turns what the run counted into the
//! [`Result`](super::result::Result).

mod build;
mod control;
mod host;
mod nic;
mod run;
mod summary;

pub use build::Testbed;
pub use run::Counts;

use super::request::Request;
use crate::error::ModelError;
use crate::profile::Profile;
use nicbench_sim::SimDuration;

/// Granularity of functional updates and steering-cost refreshes.
pub const APPLY_EVERY: SimDuration = SimDuration::from_ms(1);
/// Packets still in flight this long after the end of the run are counted.
const DRAIN: SimDuration = SimDuration::from_ms(10);
/// Progress is reported every this much simulated time \[ns\].
const PROGRESS_EVERY_NS: u64 = 10_000_000;
/// The NF core is advanced at least every this many packets pushed to its rings …
const CORE_DEFER_PACKETS: u32 = 64;
/// … and at least every this much simulated time (or when a ring looks full).
const CORE_DEFER: SimDuration = SimDuration::from_us(20);
/// Window over which the root-table packet rate (firmware command contention) is measured.
const RATE_WINDOW: SimDuration = SimDuration::from_ms(1);
/// Packets the generator hands over at once (a DPDK tx burst) …
const RX_BURST_MAX: usize = 32;
/// … unless they span more simulated time than this \[ns\].
const BURST_SPAN_NS: u64 = 10_000;
/// A flow or path not classified yet.
const UNKNOWN: u32 = u32::MAX;

/// Runs one scenario on one profile.
pub fn simulate(
    scn: &Request,
    profile: &Profile,
    progress: &mut dyn FnMut(u64),
) -> Result<super::result::Result, ModelError> {
    let wall = std::time::Instant::now();
    let mut testbed = Testbed::build(scn, profile)?;
    let counts = testbed.run(progress)?;
    Ok(testbed.summary(&counts, wall.elapsed().as_secs_f64()))
}
