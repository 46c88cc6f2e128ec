//! nicbench-trace: streaming analysis of packet traces.
//!
//! Every function here reads its pcap/pcapng once, packet by packet, so memory is
//! flat in the number of packets (it grows only with the number of distinct flows).
//! Progress is reported through a caller-supplied callback with the bytes read so
//! far, at most every [`PROGRESS_EVERY_PACKETS`] packets.
//!
//! - [`summary`]: what `nicbench pcap info` prints.
//! - [`rss_spread()`]: what `nicbench rss` prints.
//! - [`pipeline`]: read → parse → FlowKey → Toeplitz, the benchmarked hot path.

pub mod link;
mod packed_key;
pub mod pipeline;
pub mod rss_spread;
pub mod summary;

pub use pipeline::{scan_pipeline, PipelineStats};
pub use rss_spread::{rss_spread, QueueLoad, RssOptions, RssReport};
pub use summary::{summarize, SizeBucket, TraceSummary};

/// How often (in packets) the progress callback is called.
pub const PROGRESS_EVERY_PACKETS: u64 = 1 << 18;

/// A trace-analysis error: the reader's error, which names the packet and offset.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    #[error(transparent)]
    Pcap(#[from] nicbench_pcap::PcapError),
    #[error("{0}")]
    Invalid(String),
}
