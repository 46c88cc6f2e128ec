//! `PcapSource::open_mapped` reads the same packets and reports the same
//! errors (packet index, byte offset) as the streaming reader, for classic
//! pcap and pcapng cut at every byte; a FIFO falls back to streaming.

use std::io::Cursor;
use std::path::Path;

use nicbench_pcap::{PcapError, PcapSource, PcapWriter};
use pcap_file::{Endianness, TsResolution};

use crate::fixtures::{drain, packets, temp_path, write_ours, write_pcap_file, OwnedPacket};
use crate::pcapng::three_packet_pcapng;

type Drained = Result<(Vec<OwnedPacket>, Option<String>), String>;

fn as_strings(result: Result<(Vec<OwnedPacket>, Option<PcapError>), PcapError>) -> Drained {
    result
        .map(|(packets, err)| (packets, err.map(|e| e.to_string())))
        .map_err(|e| e.to_string())
}

fn streamed(bytes: &[u8]) -> Drained {
    as_strings(PcapSource::from_reader(Cursor::new(bytes)).map(|mut s| drain(&mut s)))
}

/// Writes `bytes` to `path` and reads it mapped; a non-empty file must be mapped.
fn mapped(path: &Path, bytes: &[u8]) -> Drained {
    std::fs::write(path, bytes).unwrap();
    as_strings(PcapSource::open_mapped(path).map(|mut s| {
        assert_eq!(s.is_mapped(), !bytes.is_empty());
        drain(&mut s)
    }))
}

/// Every prefix of `bytes` reads the same mapped as streamed.
fn assert_every_cut_agrees(name: &str, bytes: &[u8]) {
    let path = temp_path(name);
    for cut in 0..=bytes.len() {
        let prefix = &bytes[..cut];
        assert_eq!(mapped(&path, prefix), streamed(prefix), "{name} cut at {cut}");
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn classic_cut_at_every_offset_reads_the_same_mapped() {
    let bytes = write_ours(&packets(3, &[60, 17, 100], 1_000));
    assert_every_cut_agrees("mapped-classic.pcap", &bytes);
    // The truncation error names the packet index and the record's offset.
    let path = temp_path("mapped-classic-cut.pcap");
    let (got, err) = mapped(&path, &bytes[..bytes.len() - 1]).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(
        err.as_deref(),
        Some("packet 2 at byte offset 133: truncated packet data: caplen says 100 bytes, only 99 left")
    );
}

#[test]
fn pcapng_cut_at_every_offset_reads_the_same_mapped() {
    let (bytes, _, _) = three_packet_pcapng();
    assert_every_cut_agrees("mapped-ng.pcapng", &bytes);
}

#[test]
fn every_resolution_and_byte_order_reads_the_same_mapped() {
    let expected = packets(50, &[60, 1514, 0, 333], 1_000);
    let path = temp_path("mapped-orders.pcap");
    for resolution in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
        for endianness in [Endianness::Big, Endianness::Little] {
            let bytes = write_pcap_file(&expected, resolution, endianness);
            let (got, err) = mapped(&path, &bytes).unwrap();
            assert_eq!(err, None);
            assert!(got == expected, "{resolution:?} {endianness:?}");
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn file_larger_than_the_window_reads_the_same_mapped() {
    // ~40 MB: the 16 MiB window moves twice, records straddle its ends.
    let expected = packets(30_000, &[1514, 60, 9018], 1_000);
    let path = temp_path("mapped-large.pcap");
    let mut writer = PcapWriter::create(&path, 65535).unwrap();
    for p in &expected {
        writer.write_packet(p.ts_ns, p.orig_len, &p.data).unwrap();
    }
    let bytes_written = writer.bytes_written();
    writer.finish().unwrap();
    assert!(bytes_written > 32 << 20);
    let mut source = PcapSource::open_mapped(&path).unwrap();
    assert!(source.is_mapped());
    let (got, err) = drain(&mut source);
    std::fs::remove_file(&path).unwrap();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(source.bytes_read(), bytes_written);
    assert!(
        got == expected,
        "first mismatch at {:?}",
        got.iter().zip(&expected).position(|(a, b)| a != b)
    );

    // Cut inside the last record: the same error as streamed, after every earlier packet.
    let bytes = write_ours(&expected);
    let cut = &bytes[..bytes.len() - 100];
    let path = temp_path("mapped-large-cut.pcap");
    let (got, err) = mapped(&path, cut).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(got.len(), expected.len() - 1);
    assert_eq!(err, streamed(cut).unwrap().1);
    assert!(err.unwrap().starts_with("packet 29999 at byte offset "));
}

#[test]
fn large_pcapng_reads_the_same_mapped() {
    // ~20 MB of Enhanced Packet Blocks: the window moves inside the section.
    let expected = packets(12_000, &[1514, 64, 3000], 1_000);
    let mut writer = pcap_file::pcapng::PcapNgWriter::new(Vec::new()).unwrap();
    let idb = pcap_file::pcapng::blocks::interface_description::InterfaceDescriptionBlock {
        linktype: pcap_file::DataLink::ETHERNET,
        snaplen: 0,
        options: vec![],
    };
    writer.write_pcapng_block(idb).unwrap();
    for p in &expected {
        let epb = pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock {
            interface_id: 0,
            timestamp: std::time::Duration::from_nanos(p.ts_ns),
            original_len: p.orig_len,
            data: std::borrow::Cow::Borrowed(&p.data),
            options: vec![],
        };
        writer.write_pcapng_block(epb).unwrap();
    }
    let bytes = writer.into_inner();
    assert!(bytes.len() > 16 << 20);
    let path = temp_path("mapped-large.pcapng");
    let mapped_result = mapped(&path, &bytes);
    std::fs::remove_file(&path).unwrap();
    let (got, err) = mapped_result.clone().unwrap();
    assert_eq!(err, None);
    assert_eq!(got.len(), expected.len());
    assert_eq!(mapped_result, streamed(&bytes));
}

#[cfg(unix)]
#[test]
fn fifo_is_streamed_and_loses_nothing() {
    use std::os::unix::ffi::OsStrExt;
    let expected = packets(500, &[60, 1514], 1_000);
    let bytes = write_ours(&expected);
    let path = temp_path("mapped.fifo");
    let _ = std::fs::remove_file(&path);
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let writer_path = path.clone();
    // Opening a FIFO for writing blocks until the reader opens it: no race to sleep around.
    let writer = std::thread::spawn(move || std::fs::write(writer_path, bytes).unwrap());
    let mut source = PcapSource::open_mapped(&path).unwrap();
    assert!(!source.is_mapped());
    let (got, err) = drain(&mut source);
    writer.join().unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(err.is_none(), "{err:?}");
    assert!(got == expected);
}

#[test]
fn missing_file_names_the_path() {
    let err = PcapSource::open_mapped("/nonexistent/dir/x.pcap").unwrap_err();
    assert!(matches!(err, PcapError::Open { .. }), "{err}");
    assert!(
        err.to_string().starts_with("/nonexistent/dir/x.pcap: cannot open"),
        "{err}"
    );
}
