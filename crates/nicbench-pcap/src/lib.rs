//! nicbench-pcap: streaming pcap/pcapng reading and classic pcap writing, with
//! errors that say which packet and which byte went wrong.
//!
//! - [`PcapSource`]: streaming reader of classic pcap (µs/ns, either byte order)
//!   and pcapng (multiple interfaces, per-interface `if_tsresol`), auto-detected.
//! - [`PcapWriter`]: nanosecond classic pcap, buffered, no allocation per packet;
//!   files are written by a background thread ([`BackgroundFile`]).
//! - [`LinkType`]: the `LINKTYPE_*` value of a capture and [`L3Start`], where its network layer
//!   starts (the one link-layer dispatch); a capture of a link type nicbench does not decode is
//!   refused when opened ([`PcapError::UnsupportedLinkType`]).
//! - [`PcapError`]: one error type; record errors carry packet index and byte offset.

mod background;
mod error;
mod linktype;
mod reader;
mod writer;

pub use background::BackgroundFile;
pub use error::{PcapError, MAX_CAPLEN_BYTES};
pub use linktype::{L3Start, LinkType};
pub use reader::{CaptureFormat, Packet, PcapSource, TsResolution, READ_BUFFER_BYTES};
pub use writer::PcapWriter;
