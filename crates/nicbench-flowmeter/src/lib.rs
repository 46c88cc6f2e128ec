//! nicbench-flowmeter: an Argus-style bidirectional flow meter, fast enough
//! to meter 10 Mpps per core, usable on pcaps and live interfaces.
//!
//! ```text
//!  pcap / memory / AF_PACKET ──► dispatcher (calling thread): parse once,
//!                                symmetric Toeplitz → RETA → worker
//!        ┌──────────────┬──────────────┐   batches (bounded, back-pressure)
//!     worker 0       worker 1   …   worker N-1   FlowTable each
//!        └──────────────┴──────────────┘   records (channel)
//!                 sink (CSV / JSONL / IPFIX / memory), calling thread
//! ```
//! With one worker everything runs inline in the calling thread. A pcap file
//! is read with `nicbench_pcap::PcapSource::open_mapped` (a regular file is
//! memory-mapped and parsed in place: no frame is copied) and parsed with
//! `nicbench_wire`'s fast path, the general parser taking what it declines.
//!
//! - [`run_pcap`], [`run_live`], [`run_frames`]: whole runs with a stop flag
//!   (Ctrl-C flushes everything) and a progress callback → [`RunStats`].
//! - [`FlowTable`]: one worker's table — canonical 5-tuple (+ VLAN, VNI, DNS
//!   transaction id) biflows, idle timeouts per protocol, status (active)
//!   splits, bounded size with counted LRU eviction.
//! - [`FlowRecord`]: the emitted biflow record (Argus `ra`-like fields);
//!   [`sink`]: CSV, JSON lines, IPFIX (RFC 7011) export, in-memory collector.
//! - [`MeterConfig`]: [`Compat::Nicbench`] or [`Compat::Argus`] semantics.
//!
//! Invariant: no packet is lost from the totals — every frame read is either
//! metered into a record that reaches the sink or counted as non-IP, also
//! when the run is stopped or the input is cut short.

pub mod config;
pub mod error;
mod live;
mod packet;
pub mod record;
mod run;
pub mod sink;
pub mod stats;
pub mod table;
mod workers;

pub use config::{ByteCount, Compat, MeterConfig, Timeouts, DEFAULT_MAX_FLOWS, MAX_WORKERS};
pub use error::FlowError;
pub use live::run_live;
pub use record::{proto_name, tcp_flags_str, EndReason, FlowRecord, FlowState};
pub use run::{run_frames, run_pcap, worker_of, Dispatch, Frame};
pub use sink::{
    CollectSink, CsvSink, FlowSink, IpfixDecoder, IpfixEncoder, IpfixFlow, IpfixSink, JsonlSink, NullSink, TeeSink,
    CSV_COLUMNS,
};
pub use stats::{Progress, RunStats, WorkerStats};
pub use table::{FlowTable, RECORD_BYTES};
