//! Where records go: streaming sinks with bounded memory (CSV, JSON lines,
//! IPFIX over UDP), an in-memory collector, a fan-out and a counter.
//!
//! A run calls [`FlowSink::write`] for every record from the calling thread
//! only, then [`FlowSink::finish`] once; sinks need not be `Send`.

mod ipfix;
mod text;

pub use ipfix::{
    IpfixDecoder, IpfixEncoder, IpfixFlow, IpfixSink, IPFIX_MAX_MESSAGE_BYTES, IPFIX_TEMPLATE_V4, IPFIX_TEMPLATE_V6,
};
pub use text::{CsvSink, JsonlSink, CSV_COLUMNS};

use crate::error::FlowError;
use crate::record::FlowRecord;

/// A consumer of flow records.
pub trait FlowSink {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError>;
    /// Flushes buffered output; called once at the end of a run.
    fn finish(&mut self) -> Result<(), FlowError> {
        Ok(())
    }
    /// What the sink counted that the run's statistics do not (name, value), e.g. an exporter's
    /// messages; read after `finish`.
    fn counters(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// Keeps every record in memory (the Parquet path of the Python binding).
#[derive(Clone, Debug, Default)]
pub struct CollectSink {
    pub records: Vec<FlowRecord>,
}

impl FlowSink for CollectSink {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        self.records.push(*record);
        Ok(())
    }
}

/// Counts records and drops them (benchmarks).
#[derive(Clone, Copy, Debug, Default)]
pub struct NullSink {
    pub records: u64,
    pub packets: u64,
}

impl FlowSink for NullSink {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        self.records += 1;
        self.packets += record.tot_pkts();
        Ok(())
    }
}

/// Writes every record to several sinks (e.g. CSV and IPFIX).
#[derive(Default)]
pub struct TeeSink(pub Vec<Box<dyn FlowSink>>);

impl FlowSink for TeeSink {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        self.0.iter_mut().try_for_each(|s| s.write(record))
    }
    fn finish(&mut self) -> Result<(), FlowError> {
        self.0.iter_mut().try_for_each(|s| s.finish())
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        self.0.iter().flat_map(|s| s.counters()).collect()
    }
}

impl<S: FlowSink + ?Sized> FlowSink for &mut S {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        (**self).write(record)
    }
    fn finish(&mut self) -> Result<(), FlowError> {
        (**self).finish()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        (**self).counters()
    }
}

impl<S: FlowSink + ?Sized> FlowSink for Box<S> {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        (**self).write(record)
    }
    fn finish(&mut self) -> Result<(), FlowError> {
        (**self).finish()
    }
    fn counters(&self) -> Vec<(&'static str, u64)> {
        (**self).counters()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::sample_record;

    #[test]
    fn test_collect_null_and_tee() {
        let r = sample_record();
        let mut tee = TeeSink(vec![Box::new(CollectSink::default()), Box::new(NullSink::default())]);
        tee.write(&r).unwrap();
        tee.write(&r).unwrap();
        tee.finish().unwrap();
        let mut null = NullSink::default();
        fn write_one<S: FlowSink>(mut sink: S, r: &FlowRecord) {
            sink.write(r).unwrap();
        }
        write_one(&mut null, &r); // through the blanket impl for `&mut S`
        assert_eq!((null.records, null.packets), (1, 5));
    }
}
