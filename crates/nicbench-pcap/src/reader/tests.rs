//! Reader unit tests on hand-built byte fixtures; the big round-trip and
//! oracle tests live in `tests/integration`.

use std::io::Cursor;

use super::*;

/// A little-endian µs pcap with snaplen 65535, Ethernet, and the given records (ts_s, ts_us, data).
fn classic_le_us(records: &[(u32, u32, &[u8])]) -> Vec<u8> {
    let mut bytes = vec![
        0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0,
    ];
    for &(ts_s, ts_us, data) in records {
        bytes.extend_from_slice(&ts_s.to_le_bytes());
        bytes.extend_from_slice(&ts_us.to_le_bytes());
        bytes.extend_from_slice(&(data.len() as u32).to_le_bytes());
        bytes.extend_from_slice(&(data.len() as u32 + 4).to_le_bytes());
        bytes.extend_from_slice(data);
    }
    bytes
}

#[test]
fn test_parse_classic_le_us() {
    let bytes = classic_le_us(&[(1, 2, &[1, 2, 3]), (3, 999_999, &[4; 60])]);
    let mut source = PcapSource::from_reader(Cursor::new(bytes)).unwrap();
    assert_eq!(
        source.format(),
        CaptureFormat::Pcap {
            ts_resolution: TsResolution::Microsecond,
            big_endian: false,
            snaplen: 65535
        }
    );
    assert_eq!(source.linktype(), Some(LinkType::ETHERNET));
    let first = source.next_packet().unwrap().unwrap();
    assert_eq!(first.ts_ns, 1_000_002_000);
    assert_eq!(first.data, &[1, 2, 3]);
    assert_eq!(first.orig_len, 7);
    let second = source.next_packet().unwrap().unwrap();
    assert_eq!(second.ts_ns, 3_999_999_000);
    assert_eq!(second.caplen(), 60);
    assert!(source.next_packet().is_none());
    assert!(source.next_packet().is_none(), "stays at the end");
    assert_eq!(source.packets_read(), 2);
    assert_eq!(source.bytes_read(), 24 + 16 + 3 + 16 + 60);
}

#[test]
fn test_parse_classic_truncated_data_names_index_and_offset() {
    let mut bytes = classic_le_us(&[(1, 0, &[1; 10]), (2, 0, &[2; 20])]);
    bytes.truncate(bytes.len() - 5);
    let mut source = PcapSource::from_reader(Cursor::new(bytes)).unwrap();
    assert_eq!(source.next_packet().unwrap().unwrap().data, &[1; 10]);
    let err = source.next_packet().unwrap().unwrap_err();
    match err {
        PcapError::TruncatedPacketData {
            index,
            offset_bytes,
            caplen,
            available_bytes,
        } => {
            assert_eq!((index, offset_bytes, caplen, available_bytes), (1, 24 + 26, 20, 15));
        }
        other => panic!("unexpected {other}"),
    }
    assert!(source.next_packet().is_none());
}

#[test]
fn test_parse_classic_caplen_errors() {
    let mut bytes = classic_le_us(&[(1, 0, &[1; 10])]);
    // snaplen 8 < caplen 10
    bytes[16..20].copy_from_slice(&8u32.to_le_bytes());
    let mut source = PcapSource::from_reader(Cursor::new(bytes.clone())).unwrap();
    let err = source.next_packet().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            PcapError::CaplenExceedsSnaplen {
                index: 0,
                offset_bytes: 24,
                caplen: 10,
                snaplen: 8
            }
        ),
        "{err}"
    );
    // caplen absurd
    bytes[16..20].copy_from_slice(&0u32.to_le_bytes());
    bytes[32..36].copy_from_slice(&0x0100_0000u32.to_le_bytes());
    let mut source = PcapSource::from_reader(Cursor::new(bytes)).unwrap();
    let err = source.next_packet().unwrap().unwrap_err();
    assert!(
        matches!(
            err,
            PcapError::AbsurdCaplen {
                caplen: 0x0100_0000,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("absurd"), "{err}");
}

#[test]
fn test_parse_header_errors() {
    let err = PcapSource::from_reader(Cursor::new(Vec::new())).unwrap_err();
    assert!(matches!(err, PcapError::EmptyFile));
    let err = PcapSource::from_reader(Cursor::new(b"GIF89a....".to_vec())).unwrap_err();
    assert_eq!(err.to_string(), "not a pcap/pcapng file: magic 0x47494638");
    let header = classic_le_us(&[]);
    let err = PcapSource::from_reader(Cursor::new(header[..10].to_vec())).unwrap_err();
    assert!(
        matches!(
            err,
            PcapError::TruncatedFileHeader {
                available_bytes: 10,
                needed_bytes: 24
            }
        ),
        "{err}"
    );
    let mut source = PcapSource::from_reader(Cursor::new(header)).unwrap();
    assert!(source.next_packet().is_none(), "header-only file has no packets");
}

/// Reads one byte per `read` call: exercises every refill path.
struct Trickle(Cursor<Vec<u8>>);

impl Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = buf.len().min(1);
        self.0.read(&mut buf[..n])
    }
}

#[test]
fn test_parse_classic_from_trickling_stream() {
    let bytes = classic_le_us(&[(1, 0, &[9; 100]), (2, 0, &[8; 3])]);
    let mut source = PcapSource::from_reader(Trickle(Cursor::new(bytes))).unwrap();
    assert_eq!(source.next_packet().unwrap().unwrap().data, &[9; 100][..]);
    assert_eq!(source.next_packet().unwrap().unwrap().data, &[8; 3]);
    assert!(source.next_packet().is_none());
}

/// Fails on the second read.
struct FailingReader(Option<Vec<u8>>);

impl Read for FailingReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(bytes) => {
                buf[..bytes.len()].copy_from_slice(&bytes);
                Ok(bytes.len())
            }
            None => Err(io::Error::other("disk on fire")),
        }
    }
}

#[test]
fn test_io_error_is_reported_once() {
    let bytes = classic_le_us(&[(1, 0, &[1; 4])]);
    let mut source = PcapSource::from_reader(FailingReader(Some(bytes))).unwrap();
    assert!(source.next_packet().unwrap().is_ok());
    let err = source.next_packet().unwrap().unwrap_err();
    assert!(err.to_string().contains("disk on fire"), "{err}");
    assert_eq!(err.offset_bytes(), Some(24 + 16 + 4));
    assert!(source.next_packet().is_none());
}
