//! Shared fixture builders: packets, files written by us and by pcap-file, and
//! a reader that drains a source into owned packets.

use std::borrow::Cow;
use std::io::Cursor;
use std::time::Duration;

use nicbench_pcap::{LinkType, PcapError, PcapSource, PcapWriter};
use pcap_file::pcap::{PcapHeader, PcapPacket};
use pcap_file::{DataLink, Endianness, TsResolution};

/// An owned packet for comparisons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedPacket {
    pub ts_ns: u64,
    pub orig_len: u32,
    pub data: Vec<u8>,
    pub linktype: LinkType,
    pub interface_id: u32,
}

impl OwnedPacket {
    pub fn new(ts_ns: u64, orig_len: u32, data: Vec<u8>) -> Self {
        OwnedPacket {
            ts_ns,
            orig_len,
            data,
            linktype: LinkType::ETHERNET,
            interface_id: 0,
        }
    }
}

/// `count` deterministic packets with sizes cycling through `sizes` and
/// timestamps `step_ns` apart (a multiple of 1000 keeps them µs-exact).
pub fn packets(count: usize, sizes: &[usize], step_ns: u64) -> Vec<OwnedPacket> {
    (0..count)
        .map(|i| {
            let len = sizes[i % sizes.len()];
            let data: Vec<u8> = (0..len).map(|j| (i * 31 + j * 7) as u8).collect();
            OwnedPacket::new(
                1_700_000_000_000_000_000 + i as u64 * step_ns,
                len as u32 + (i % 3) as u32,
                data,
            )
        })
        .collect()
}

/// A nanosecond little-endian pcap written by our writer.
pub fn write_ours(packets: &[OwnedPacket]) -> Vec<u8> {
    let mut writer = PcapWriter::from_writer(Vec::new(), 65535, LinkType::ETHERNET).unwrap();
    for packet in packets {
        writer
            .write_packet(packet.ts_ns, packet.orig_len, &packet.data)
            .unwrap();
    }
    writer.into_inner().unwrap()
}

/// A classic pcap written by pcap-file, in any resolution and byte order.
pub fn write_pcap_file(packets: &[OwnedPacket], ts_resolution: TsResolution, endianness: Endianness) -> Vec<u8> {
    let header = PcapHeader {
        snaplen: 65535,
        datalink: DataLink::ETHERNET,
        ts_resolution,
        endianness,
        ..PcapHeader::default()
    };
    let mut writer = pcap_file::pcap::PcapWriter::with_header(Vec::new(), header).unwrap();
    for packet in packets {
        let pcap_packet = PcapPacket {
            timestamp: Duration::from_nanos(packet.ts_ns),
            orig_len: packet.orig_len,
            data: Cow::Borrowed(&packet.data),
        };
        writer.write_packet(&pcap_packet).unwrap();
    }
    writer.into_writer()
}

/// Everything pcap-file's classic reader delivers (the oracle).
pub fn read_with_pcap_file(bytes: &[u8]) -> Vec<OwnedPacket> {
    let mut reader = pcap_file::pcap::PcapReader::new(bytes).unwrap();
    let mut packets = Vec::new();
    while let Some(packet) = reader.next_packet() {
        let packet = packet.unwrap();
        packets.push(OwnedPacket::new(
            packet.timestamp.as_nanos() as u64,
            packet.orig_len,
            packet.data.to_vec(),
        ));
    }
    packets
}

/// Drains a source: all packets delivered, then the error that ended it (if any).
/// Also checks that the stream stays ended.
pub fn drain<R: std::io::Read>(source: &mut PcapSource<R>) -> (Vec<OwnedPacket>, Option<PcapError>) {
    let mut packets = Vec::new();
    let mut error = None;
    while let Some(result) = source.next_packet() {
        match result {
            Ok(packet) => packets.push(OwnedPacket {
                ts_ns: packet.ts_ns,
                orig_len: packet.orig_len,
                data: packet.data.to_vec(),
                linktype: packet.linktype,
                interface_id: packet.interface_id,
            }),
            Err(err) => {
                assert!(error.is_none(), "second error after {:?}: {err}", error);
                error = Some(err);
            }
        }
    }
    assert!(source.next_packet().is_none(), "a finished source stays finished");
    assert_eq!(source.packets_read(), packets.len() as u64);
    (packets, error)
}

/// Opens bytes as a source and drains it.
pub fn read_bytes(bytes: &[u8]) -> Result<(Vec<OwnedPacket>, Option<PcapError>), PcapError> {
    let mut source = PcapSource::from_reader(Cursor::new(bytes))?;
    Ok(drain(&mut source))
}

/// A unique path under the system temp dir (removed by the caller).
pub fn temp_path(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("nicbench-pcap-test-{}-{name}", std::process::id()))
}
