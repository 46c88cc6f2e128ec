//! nicbench-sim: the simulation engine. It knows no NIC (device models live in
//! `nicbench-models`).
//!
//! - [`SimTime`] / [`SimDuration`]: integer picoseconds; simulated time never reads the
//!   wall clock.
//! - [`Fifo`]: a FIFO whose pending items are one slice (packets waiting for a server,
//!   taken in bursts).
//! - [`EventQueue`]: a time-ordered queue with FIFO order among equal times, so a run is
//!   a pure function of its inputs.
//! - [`RngStreams`]: independent seeded ChaCha8 streams by id (one per model component),
//!   stable across rand versions.
//! - [`measure`]: HDR latency histograms, throughput timelines in fixed bins.
//!
//! Models move packets in bursts (like DPDK's 32-packet rx bursts) and account drops and
//! latency per packet with arithmetic on timestamps; the event queue carries the rarer
//! transients (control-plane work, rule batches, timers).

pub mod fifo;
pub mod measure;
pub mod queue;
pub mod rng;
pub mod time;

pub use fifo::Fifo;
pub use measure::{LatencyHistogram, LatencySummary, Recorder, Timeline, TimelineBin};
pub use queue::EventQueue;
pub use rng::RngStreams;
pub use time::{SimDuration, SimTime};
