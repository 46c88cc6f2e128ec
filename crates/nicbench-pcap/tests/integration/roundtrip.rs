//! Write → read round trips, and our reader against pcap-file as the oracle
//! (µs and ns files, both byte orders, files spanning many buffer refills).

use std::io::Cursor;

use nicbench_pcap::{CaptureFormat, LinkType, PcapSource, PcapWriter, TsResolution as OurResolution};
use pcap_file::{Endianness, TsResolution};
use proptest::prelude::*;

use crate::fixtures::{
    drain, packets, read_bytes, read_with_pcap_file, temp_path, write_ours, write_pcap_file, OwnedPacket,
};

#[test]
fn ours_roundtrip_and_pcap_file_agrees() {
    let expected = packets(100, &[0, 1, 60, 64, 1514, 9000], 1_234);
    let bytes = write_ours(&expected);
    let (got, err) = read_bytes(&bytes).unwrap();
    assert!(err.is_none());
    assert_eq!(got, expected);
    assert_eq!(
        read_with_pcap_file(&bytes),
        expected,
        "pcap-file reads our files the same"
    );
}

#[test]
fn pcap_file_fixtures_all_resolutions_and_byte_orders() {
    // µs-exact timestamps so the µs files lose nothing.
    let expected = packets(50, &[60, 128, 1500, 3], 7_000);
    for ts_resolution in [TsResolution::MicroSecond, TsResolution::NanoSecond] {
        for endianness in [Endianness::Big, Endianness::Little] {
            let bytes = write_pcap_file(&expected, ts_resolution, endianness);
            let mut source = PcapSource::from_reader(Cursor::new(&bytes)).unwrap();
            let CaptureFormat::Pcap {
                ts_resolution: ours,
                big_endian,
                snaplen,
            } = source.format()
            else {
                panic!("classic file detected as pcapng");
            };
            assert_eq!(big_endian, endianness == Endianness::Big);
            assert_eq!(
                ours == OurResolution::Nanosecond,
                ts_resolution == TsResolution::NanoSecond
            );
            assert_eq!(snaplen, 65535);
            let (got, err) = drain(&mut source);
            assert!(err.is_none(), "{ts_resolution:?} {endianness:?}: {err:?}");
            assert_eq!(got, expected, "{ts_resolution:?} {endianness:?}");
            assert_eq!(got, read_with_pcap_file(&bytes));
            assert_eq!(source.bytes_read(), bytes.len() as u64);
        }
    }
}

#[test]
fn large_file_through_open_matches_oracle() {
    // ~14 MB: many 1 MiB refills, records straddling every buffer boundary.
    let expected = packets(20_000, &[60, 1514, 333, 9018, 64, 0, 777], 1_000);
    let path = temp_path("large.pcap");
    let mut writer = PcapWriter::create(&path, 65535).unwrap();
    for packet in &expected {
        writer
            .write_packet(packet.ts_ns, packet.orig_len, &packet.data)
            .unwrap();
    }
    let bytes_written = writer.bytes_written();
    writer.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.len() as u64, bytes_written);

    let mut source = PcapSource::open(&path).unwrap();
    assert_eq!(source.path(), Some(path.as_path()));
    assert_eq!(source.linktype(), Some(LinkType::ETHERNET));
    let (got, err) = drain(&mut source);
    std::fs::remove_file(&path).unwrap();
    assert!(err.is_none(), "{err:?}");
    assert_eq!(source.bytes_read(), bytes_written);
    assert_eq!(got.len(), expected.len());
    assert!(
        got == expected,
        "first mismatch at {:?}",
        got.iter().zip(&expected).position(|(a, b)| a != b)
    );
    assert!(read_with_pcap_file(&bytes) == expected);

    // A 64-byte buffer must grow for the 9 KB records and compact on every refill.
    let mut small = PcapSource::with_buffer_bytes(Cursor::new(&bytes[..2_000_000]), 64).unwrap();
    let (got_small, err) = drain(&mut small);
    assert!(
        matches!(err, Some(nicbench_pcap::PcapError::TruncatedPacketData { .. })),
        "{err:?}"
    );
    assert!(got_small[..] == expected[..got_small.len()]);
    assert!(got_small.len() > 100);
}

#[test]
fn writer_linktype_and_snaplen_cut() {
    let mut writer = PcapWriter::from_writer(Vec::new(), 128, LinkType::RAW).unwrap();
    writer.write_packet(5, 1500, &[0x45; 1500]).unwrap();
    let bytes = writer.into_inner().unwrap();
    let mut source = PcapSource::from_reader(Cursor::new(bytes)).unwrap();
    assert_eq!(source.linktype(), Some(LinkType::RAW));
    let packet = source.next_packet().unwrap().unwrap();
    assert_eq!(
        (packet.ts_ns, packet.orig_len, packet.caplen(), packet.linktype),
        (5, 1500, 128, LinkType::RAW)
    );
}

#[test]
fn open_missing_file_names_path() {
    let err = PcapSource::open("/nonexistent/trace.pcap").unwrap_err();
    assert!(
        err.to_string().starts_with("/nonexistent/trace.pcap: cannot open:"),
        "{err}"
    );
}

fn arb_packet() -> impl Strategy<Value = OwnedPacket> {
    (
        0u64..4_000_000_000_000_000_000,
        proptest::collection::vec(any::<u8>(), 0..300),
        0u32..100,
    )
        .prop_map(|(ts_ns, data, extra)| OwnedPacket::new(ts_ns, data.len() as u32 + extra, data))
}

proptest! {
    #[test]
    fn prop_random_packets_roundtrip(expected in proptest::collection::vec(arb_packet(), 0..40)) {
        let bytes = write_ours(&expected);
        let (got, err) = read_bytes(&bytes).unwrap();
        prop_assert!(err.is_none());
        prop_assert_eq!(&got, &expected);
        prop_assert_eq!(read_with_pcap_file(&bytes), expected);
    }
}
