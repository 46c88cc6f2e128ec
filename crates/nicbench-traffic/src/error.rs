//! The traffic generator's error type: configuration mistakes (with the
//! offending value in the message), frame-building errors from
//! `nicbench-wire`, and pcap output errors from `nicbench-pcap`.

use nicbench_pcap::PcapError;
use nicbench_wire::builder::BuildError;

use crate::config::MAX_FLOWS;

#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    #[error("flows must be at least 1")]
    NoFlows,
    #[error("flows = {flows} is more than the supported {MAX_FLOWS}")]
    TooManyFlows { flows: u32 },
    #[error("rate must be a finite number > 0, got {value} {unit}")]
    InvalidRate { value: f64, unit: &'static str },
    #[error("Zipf exponent s must be a finite number > 0, got {s}")]
    InvalidZipf { s: f64 },
    #[error("size list is empty")]
    EmptySizeList,
    #[error("uniform size range has min {min} B > max {max} B")]
    InvalidSizeRange { min: u32, max: u32 },
    #[error("rate is unlimited, so packets carry no timeline and duration_ns cannot end the stream; set packets")]
    DurationWithoutRate,
    #[error("no stop condition: set packets and/or duration_ns to write a finite pcap")]
    NoStopCondition,
    /// A frame cannot be built as configured (size too small for the headers,
    /// VLAN id or VNI out of range…).
    #[error(transparent)]
    Frame(#[from] BuildError),
    #[error(transparent)]
    Pcap(#[from] PcapError),
    /// The finished file could not be put under its name ([`crate::atomic`]).
    #[error("{}: cannot write: {source}", path.display())]
    Output {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The stream holds fewer packets than there are flows to carry (`frames`).
    #[error("the stream holds {packets} packets, fewer than its {flows} flows: every flow needs at least one")]
    TooFewPackets { packets: u64, flows: u32 },
    /// One given flow's frame cannot be built at the configured sizes (`frames`).
    #[error("flow {flow}: {source}")]
    FlowFrame {
        flow: usize,
        #[source]
        source: BuildError,
    },
}
