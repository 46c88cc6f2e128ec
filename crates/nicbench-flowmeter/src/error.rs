//! The flow meter's one error type. Bad input that still lets a run finish
//! (a truncated pcap) is not an error: it ends the run normally and is
//! reported in `RunStats::input_error`, so nothing already read is lost.

use std::io;

use nicbench_pcap::PcapError;

/// Everything that can prevent a flow-meter run from starting or finishing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FlowError {
    /// The capture file could not be opened or its header is bad.
    #[error(transparent)]
    Pcap(#[from] PcapError),
    /// Writing an output (CSV, JSON lines, IPFIX socket) failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// A live capture socket could not be set up or read.
    #[error("live capture on {iface}: {reason}")]
    Live { iface: String, reason: String },
    /// The configuration is impossible (0 workers, 0 flows, …).
    #[error("invalid flow meter configuration: {0}")]
    Config(String),
    /// An IPFIX message could not be decoded.
    #[error("invalid IPFIX message: {0}")]
    Ipfix(String),
}

impl FlowError {
    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> FlowError {
        FlowError::Io {
            context: context.into(),
            source,
        }
    }
}
