//! CSV (with header) and JSON-lines sinks. Column names follow Argus `ra`
//! (`StartTime`, `Dur`, `SrcAddr`, …); the JSON keys are the same names.
//!
//! Formats: times are Unix seconds with 6 decimals (`ra -u`), `Dur` seconds
//! with 6 decimals, addresses numeric (IPv6 per RFC 5952), `Proto` as `ra`
//! names it, TCP flags as tcpdump letters, empty CSV cell = JSON `null`.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::FlowSink;
use crate::error::FlowError;
use crate::record::{proto_name, tcp_flags_str, FlowRecord};

/// The CSV header, in order; also the JSON keys.
pub const CSV_COLUMNS: &[&str] = &[
    "StartTime",
    "LastTime",
    "Dur",
    "Proto",
    "SrcAddr",
    "Sport",
    "Dir",
    "DstAddr",
    "Dport",
    "SrcPkts",
    "DstPkts",
    "TotPkts",
    "SrcBytes",
    "DstBytes",
    "TotBytes",
    "State",
    "SrcTcpFlags",
    "DstTcpFlags",
    "MinSize",
    "MaxSize",
    "MeanSize",
    "IcmpType",
    "IcmpCode",
    "IcmpId",
    "Vlan",
    "Vni",
    "DnsTxId",
    "Seq",
    "EndReason",
    "Worker",
];

/// One cell: how to print it in CSV and in JSON.
enum Cell {
    /// Seconds with 6 decimals, from nanoseconds.
    Seconds(u64),
    Num(u64),
    /// A number printed with one decimal.
    Decimal1(f64),
    /// Text (JSON string).
    Text(String),
    Static(&'static str),
    Null,
}

fn opt<T: Into<u64>>(v: Option<T>) -> Cell {
    v.map_or(Cell::Null, |v| Cell::Num(v.into()))
}

fn cells(r: &FlowRecord) -> [Cell; 30] {
    [
        Cell::Seconds(r.first_ns),
        Cell::Seconds(r.last_ns),
        Cell::Seconds(r.dur_ns()),
        Cell::Text(proto_name(r.key.proto).to_string()),
        Cell::Text(r.key.src.to_string()),
        Cell::Num(r.key.src_port.into()),
        Cell::Static(r.dir_str()),
        Cell::Text(r.key.dst.to_string()),
        Cell::Num(r.key.dst_port.into()),
        Cell::Num(r.src_pkts),
        Cell::Num(r.dst_pkts),
        Cell::Num(r.tot_pkts()),
        Cell::Num(r.src_bytes),
        Cell::Num(r.dst_bytes),
        Cell::Num(r.tot_bytes()),
        Cell::Static(r.state_str()),
        Cell::Text(tcp_flags_str(r.src_tcp_flags)),
        Cell::Text(tcp_flags_str(r.dst_tcp_flags)),
        Cell::Num(r.min_pkt_bytes.into()),
        Cell::Num(r.max_pkt_bytes.into()),
        Cell::Decimal1(r.mean_pkt_bytes()),
        opt(r.icmp_type),
        opt(r.icmp_code),
        opt(r.icmp_id),
        opt(r.key.vlan),
        opt(r.key.vni),
        opt(r.dns_txid),
        Cell::Num(r.seq.into()),
        Cell::Static(r.end.as_str()),
        Cell::Num(r.worker.into()),
    ]
}

fn write_plain(line: &mut String, cell: &Cell) {
    // Writing to a String cannot fail.
    let _ = match cell {
        Cell::Seconds(ns) => write!(line, "{}.{:06}", ns / 1_000_000_000, ns % 1_000_000_000 / 1000),
        Cell::Num(n) => write!(line, "{n}"),
        Cell::Decimal1(x) => write!(line, "{x:.1}"),
        Cell::Text(t) => write!(line, "{t}"),
        Cell::Static(t) => write!(line, "{t}"),
        Cell::Null => Ok(()),
    };
}

/// Streams records as CSV with a header line.
pub struct CsvSink<W: Write> {
    out: W,
    line: String,
    header_written: bool,
}

impl CsvSink<BufWriter<File>> {
    pub fn create(path: &Path) -> Result<CsvSink<BufWriter<File>>, FlowError> {
        let file = File::create(path).map_err(|e| FlowError::io(format!("{}: cannot create", path.display()), e))?;
        Ok(CsvSink::new(BufWriter::with_capacity(1 << 16, file)))
    }
}

impl<W: Write> CsvSink<W> {
    pub fn new(out: W) -> CsvSink<W> {
        CsvSink {
            out,
            line: String::with_capacity(256),
            header_written: false,
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }

    fn header(&mut self) -> Result<(), FlowError> {
        if !self.header_written {
            self.header_written = true;
            let header = CSV_COLUMNS.join(",") + "\n";
            self.out
                .write_all(header.as_bytes())
                .map_err(|e| FlowError::io("writing CSV", e))?;
        }
        Ok(())
    }
}

impl<W: Write> FlowSink for CsvSink<W> {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        self.header()?;
        self.line.clear();
        for (i, cell) in cells(record).iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            write_plain(&mut self.line, cell);
        }
        self.line.push('\n');
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| FlowError::io("writing CSV", e))
    }

    fn finish(&mut self) -> Result<(), FlowError> {
        // An empty run still gets its header, so readers see the columns.
        self.header()?;
        self.out.flush().map_err(|e| FlowError::io("writing CSV", e))
    }
}

/// Streams records as JSON lines (one object per record, keys = [`CSV_COLUMNS`]).
pub struct JsonlSink<W: Write> {
    out: W,
    line: String,
}

impl JsonlSink<BufWriter<File>> {
    pub fn create(path: &Path) -> Result<JsonlSink<BufWriter<File>>, FlowError> {
        let file = File::create(path).map_err(|e| FlowError::io(format!("{}: cannot create", path.display()), e))?;
        Ok(JsonlSink::new(BufWriter::with_capacity(1 << 16, file)))
    }
}

impl<W: Write> JsonlSink<W> {
    pub fn new(out: W) -> JsonlSink<W> {
        JsonlSink {
            out,
            line: String::with_capacity(512),
        }
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> FlowSink for JsonlSink<W> {
    fn write(&mut self, record: &FlowRecord) -> Result<(), FlowError> {
        self.line.clear();
        self.line.push('{');
        for (i, (name, cell)) in CSV_COLUMNS.iter().zip(cells(record).iter()).enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            let _ = write!(self.line, "\"{name}\":");
            match cell {
                // Our strings (names, addresses, flags) never need escaping.
                Cell::Text(_) | Cell::Static(_) => {
                    self.line.push('"');
                    write_plain(&mut self.line, cell);
                    self.line.push('"');
                }
                Cell::Null => self.line.push_str("null"),
                _ => write_plain(&mut self.line, cell),
            }
        }
        self.line.push_str("}\n");
        self.out
            .write_all(self.line.as_bytes())
            .map_err(|e| FlowError::io("writing JSON lines", e))
    }

    fn finish(&mut self) -> Result<(), FlowError> {
        self.out.flush().map_err(|e| FlowError::io("writing JSON lines", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::sample_record;

    #[test]
    fn test_csv_header_and_row() {
        let mut sink = CsvSink::new(Vec::new());
        sink.write(&sample_record()).unwrap();
        sink.finish().unwrap();
        let text = String::from_utf8(sink.into_inner()).unwrap();
        let mut lines = text.lines();
        let header = lines.next().unwrap();
        assert!(header.starts_with("StartTime,LastTime,Dur,Proto,SrcAddr,Sport,Dir,DstAddr,Dport,SrcPkts"));
        assert_eq!(header.split(',').count(), CSV_COLUMNS.len());
        let row = lines.next().unwrap();
        assert_eq!(
            row,
            "1700000000.000000,1700000001.500000,1.500000,tcp,10.0.0.1,40000,<->,10.0.0.2,80,3,2,5,200,300,500,FIN,FSA,SA,60,200,100.0,,,,,,,0,idle,0"
        );
        assert!(lines.next().is_none());
    }

    #[test]
    fn test_empty_csv_still_has_header() {
        let mut sink = CsvSink::new(Vec::new());
        sink.finish().unwrap();
        assert_eq!(String::from_utf8(sink.into_inner()).unwrap().lines().count(), 1);
    }

    #[test]
    fn test_jsonl_parses_with_same_keys() {
        let mut sink = JsonlSink::new(Vec::new());
        let mut r = sample_record();
        r.key.vlan = Some(12);
        sink.write(&r).unwrap();
        sink.finish().unwrap();
        let text = String::from_utf8(sink.into_inner()).unwrap();
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        let obj = v.as_object().unwrap();
        assert_eq!(obj.len(), CSV_COLUMNS.len());
        assert_eq!(obj["SrcAddr"], "10.0.0.1");
        assert_eq!(obj["TotBytes"], 500);
        assert_eq!(obj["Vlan"], 12);
        assert!(obj["Vni"].is_null());
        assert_eq!(obj["StartTime"].as_f64(), Some(1_700_000_000.0));
        assert_eq!(obj["Dur"].as_f64(), Some(1.5));
    }
}
