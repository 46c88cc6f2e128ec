//! Integration tests of the whole meter through its public API: inputs
//! (memory, pcap), workers, stop flag, totals.

mod common;
mod dispatch;
mod inputs;
mod records_snapshot;
