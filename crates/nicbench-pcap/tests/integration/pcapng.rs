//! pcapng: interfaces with different link types and `if_tsresol`, both byte
//! orders, SPB/EPB/obsolete PB, sections that reset interfaces, skipped blocks.
//! Fixtures are written with pcap-file's `PcapNgWriter`, whose EPB timestamp
//! field is the raw tick count (it ignores `if_tsresol`), i.e. exactly the file bytes.

use std::borrow::Cow;
use std::time::Duration;

use nicbench_pcap::{CaptureFormat, LinkType, PcapError};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::interface_statistics::InterfaceStatisticsBlock;
use pcap_file::pcapng::blocks::section_header::SectionHeaderBlock;
use pcap_file::pcapng::blocks::simple_packet::SimplePacketBlock;
use pcap_file::pcapng::{Block, PcapNgWriter};
use pcap_file::{DataLink, Endianness};

use crate::fixtures::{read_bytes, OwnedPacket};

fn idb(linktype: DataLink, snaplen: u32, tsresol: Option<u8>, ts_offset_s: Option<u64>) -> Block<'static> {
    let mut options = Vec::new();
    if let Some(tsresol) = tsresol {
        options.push(InterfaceDescriptionOption::IfTsResol(tsresol));
    }
    if let Some(offset) = ts_offset_s {
        options.push(InterfaceDescriptionOption::IfTsOffset(offset));
    }
    Block::InterfaceDescription(InterfaceDescriptionBlock {
        linktype,
        snaplen,
        options,
    })
}

fn epb(interface_id: u32, ticks: u64, orig_len: u32, data: &[u8]) -> Block<'_> {
    Block::EnhancedPacket(EnhancedPacketBlock {
        interface_id,
        timestamp: Duration::from_nanos(ticks),
        original_len: orig_len,
        data: Cow::Borrowed(data),
        options: vec![],
    })
}

fn writer(endianness: Endianness) -> PcapNgWriter<Vec<u8>> {
    PcapNgWriter::with_endianness(Vec::new(), endianness).unwrap()
}

/// SHB, IDB, 3 EPBs: (bytes, start offset of each block + end of file, indices of packet blocks).
pub fn three_packet_pcapng() -> (Vec<u8>, Vec<usize>, Vec<usize>) {
    let mut out = writer(Endianness::Little);
    let mut starts = vec![0, out.get_ref().len()];
    out.write_block(&idb(DataLink::ETHERNET, 65535, None, None)).unwrap();
    starts.push(out.get_ref().len());
    for (i, len) in [60usize, 13, 100].into_iter().enumerate() {
        let data = vec![i as u8; len];
        out.write_block(&epb(0, 1_000 + i as u64, len as u32, &data)).unwrap();
        starts.push(out.get_ref().len());
    }
    (out.into_inner(), starts, vec![2, 3, 4])
}

#[test]
fn two_interfaces_with_different_tsresol_both_byte_orders() {
    for endianness in [Endianness::Little, Endianness::Big] {
        let mut out = writer(endianness);
        // if0: Ethernet, default µs; if1: raw IP, ns, 10 s offset; if2: 2^-10 s.
        out.write_block(&idb(DataLink::ETHERNET, 65535, None, None)).unwrap();
        out.write_block(&idb(DataLink::RAW, 0, Some(9), Some(10))).unwrap();
        out.write_block(&idb(DataLink::ETHERNET, 65535, Some(0x80 | 10), None))
            .unwrap();
        out.write_block(&epb(0, 1_500_000, 64, &[1; 60])).unwrap();
        out.write_block(&epb(1, 42, 20, &[0x45; 20])).unwrap();
        out.write_block(&Block::InterfaceStatistics(InterfaceStatisticsBlock {
            interface_id: 0,
            timestamp: 0,
            options: vec![],
        }))
        .unwrap();
        out.write_block(&epb(2, 1024 * 3 + 256, 61, &[2; 61])).unwrap();
        let bytes = out.into_inner();

        let mut source = nicbench_pcap::PcapSource::from_reader(std::io::Cursor::new(&bytes)).unwrap();
        assert_eq!(source.format(), CaptureFormat::PcapNg);
        let (got, err) = crate::fixtures::drain(&mut source);
        assert!(err.is_none(), "{endianness:?}: {err:?}");
        assert_eq!(source.linktype(), Some(LinkType::ETHERNET));
        let expected = vec![
            OwnedPacket {
                ts_ns: 1_500_000_000,
                orig_len: 64,
                data: vec![1; 60],
                linktype: LinkType::ETHERNET,
                interface_id: 0,
            },
            OwnedPacket {
                ts_ns: 10_000_000_042,
                orig_len: 20,
                data: vec![0x45; 20],
                linktype: LinkType::RAW,
                interface_id: 1,
            },
            OwnedPacket {
                ts_ns: 3_250_000_000,
                orig_len: 61,
                data: vec![2; 61],
                linktype: LinkType::ETHERNET,
                interface_id: 2,
            },
        ];
        assert_eq!(got, expected, "{endianness:?}");
        assert_eq!(source.bytes_read(), bytes.len() as u64);
    }
}

#[test]
fn simple_and_obsolete_packet_blocks_and_new_section() {
    let mut out = writer(Endianness::Little);
    out.write_block(&idb(DataLink::ETHERNET, 8, Some(9), None)).unwrap();
    // SPB: orig 5 bytes (padded to 8 in the file) and orig 64 cut to the snaplen of 8.
    out.write_block(&Block::SimplePacket(SimplePacketBlock {
        original_len: 5,
        data: Cow::Borrowed(&[9; 5]),
    }))
    .unwrap();
    out.write_block(&Block::SimplePacket(SimplePacketBlock {
        original_len: 64,
        data: Cow::Borrowed(&[7; 8]),
    }))
    .unwrap();
    // Obsolete Packet Block, by hand: pcap-file writes its timestamp as one
    // u64 in section byte order, not as the spec's high word then low word.
    let mut packet_block = Vec::new();
    packet_block.extend_from_slice(&2u32.to_le_bytes());
    packet_block.extend_from_slice(&36u32.to_le_bytes());
    packet_block.extend_from_slice(&0u16.to_le_bytes()); // interface id
    packet_block.extend_from_slice(&0u16.to_le_bytes()); // drops
    for word in [0u32, 77, 3, 3] {
        packet_block.extend_from_slice(&word.to_le_bytes()); // ts high, ts low, caplen, orig_len
    }
    packet_block.extend_from_slice(&[3, 3, 3, 0]);
    packet_block.extend_from_slice(&36u32.to_le_bytes());
    out.get_mut().extend_from_slice(&packet_block);
    // A new big-endian section forgets the interfaces of the first.
    out.write_block(&Block::SectionHeader(SectionHeaderBlock {
        endianness: Endianness::Big,
        ..Default::default()
    }))
    .unwrap();
    out.write_block(&idb(DataLink::RAW, 65535, Some(3), None)).unwrap();
    out.write_block(&epb(0, 5, 1, &[0x60])).unwrap();
    let bytes = out.into_inner();

    let (got, err) = read_bytes(&bytes).unwrap();
    assert!(err.is_none(), "{err:?}");
    let summary: Vec<(u64, u32, Vec<u8>, LinkType)> = got
        .into_iter()
        .map(|p| (p.ts_ns, p.orig_len, p.data, p.linktype))
        .collect();
    assert_eq!(
        summary,
        vec![
            (0, 5, vec![9; 5], LinkType::ETHERNET),
            (0, 64, vec![7; 8], LinkType::ETHERNET),
            (77, 3, vec![3; 3], LinkType::ETHERNET),
            (5_000_000, 1, vec![0x60], LinkType::RAW),
        ]
    );
}

#[test]
fn packet_on_undeclared_interface_is_an_error_after_good_packets() {
    let mut out = writer(Endianness::Little);
    out.write_block(&idb(DataLink::ETHERNET, 65535, None, None)).unwrap();
    out.write_block(&epb(0, 1, 4, &[1; 4])).unwrap();
    let offset = out.get_ref().len();
    out.write_block(&idb(DataLink::ETHERNET, 65535, None, None)).unwrap();
    let mut bytes = out.into_inner();
    // Append an EPB for interface 5 by hand (pcap-file's writer refuses to).
    let mut epb_bytes = vec![];
    for word in [6u32, 32 + 4, 5, 0, 1, 4, 4] {
        epb_bytes.extend_from_slice(&word.to_le_bytes());
    }
    epb_bytes.extend_from_slice(&[1; 4]);
    epb_bytes.extend_from_slice(&36u32.to_le_bytes());
    let epb_offset = bytes.len();
    bytes.extend_from_slice(&epb_bytes);
    assert!(offset < epb_offset);

    let (got, err) = read_bytes(&bytes).unwrap();
    assert_eq!(got.len(), 1);
    let err = err.unwrap();
    assert!(
        matches!(err, PcapError::UnknownInterface { index: 1, interface_id: 5, declared: 2, offset_bytes } if offset_bytes == epb_offset as u64),
        "{err}"
    );
}

#[test]
fn corrupt_blocks_are_named() {
    let (bytes, starts, _) = three_packet_pcapng();
    // Second EPB (block 3): trailing length disagrees.
    let mut bad_trailer = bytes.clone();
    let trailer_at = starts[4] - 4;
    bad_trailer[trailer_at] ^= 0x40;
    let (got, err) = read_bytes(&bad_trailer).unwrap();
    assert_eq!(got.len(), 1);
    let err = err.unwrap();
    assert!(matches!(err, PcapError::CorruptBlock { index: 1, .. }), "{err}");
    assert_eq!(err.offset_bytes(), Some(starts[3] as u64));
    assert!(err.to_string().contains("trailing block length"), "{err}");

    // Block length not a multiple of 4.
    let mut bad_len = bytes.clone();
    bad_len[starts[3] + 4] = 0x43;
    let (_, err) = read_bytes(&bad_len).unwrap();
    assert!(err.unwrap().to_string().contains("not a multiple of 4"));

    // EPB caplen larger than its block.
    let mut bad_caplen = bytes.clone();
    bad_caplen[starts[2] + 20..starts[2] + 24].copy_from_slice(&200u32.to_le_bytes());
    let (got, err) = read_bytes(&bad_caplen).unwrap();
    assert!(got.is_empty());
    let err = err.unwrap();
    assert!(err.to_string().contains("caplen 200 exceeds"), "{err}");

    // EPB caplen absurd.
    let mut absurd = bytes;
    absurd[starts[2] + 20..starts[2] + 24].copy_from_slice(&0x00ff_ffffu32.to_le_bytes());
    let (_, err) = read_bytes(&absurd).unwrap();
    assert!(matches!(err, Some(PcapError::AbsurdCaplen { index: 0, .. })), "{err:?}");
}

/// A link type nicbench does not decode is refused where it is declared: the classic file
/// header, a pcapng Interface Description Block (here after a decoded interface), by name and
/// number; decoded link types other than Ethernet read as before.
#[test]
fn undecoded_link_types_refused_by_name_and_number() {
    let mut out = writer(Endianness::Little);
    out.write_block(&idb(DataLink::ETHERNET, 65535, None, None)).unwrap();
    out.write_block(&idb(DataLink::IEEE802_11, 65535, None, None)).unwrap();
    out.write_block(&epb(0, 1, 60, &[1; 60])).unwrap();
    let mut source = nicbench_pcap::PcapSource::from_reader(std::io::Cursor::new(out.into_inner())).unwrap();
    let err = loop {
        match source.next_packet() {
            Some(Ok(_)) => continue,
            Some(Err(e)) => break e,
            None => panic!("the 802.11 interface was not refused"),
        }
    };
    assert!(
        matches!(
            err,
            PcapError::UnsupportedLinkType {
                linktype: LinkType(105)
            }
        ),
        "{err}"
    );
    assert!(err
        .to_string()
        .starts_with("link type IEEE802_11 (105) is not supported: nicbench decodes EN10MB (1)"));

    for (linktype, refused) in [
        (105u32, true),
        (4242, true),
        (276, false),
        (113, false),
        (0, false),
        (101, false),
    ] {
        let mut classic = vec![
            0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0,
        ];
        classic.extend_from_slice(&linktype.to_le_bytes());
        let opened = nicbench_pcap::PcapSource::from_reader(std::io::Cursor::new(classic));
        match opened {
            Err(PcapError::UnsupportedLinkType { linktype: lt }) => assert!(refused && lt == LinkType(linktype)),
            Ok(source) => assert!(!refused && source.linktype() == Some(LinkType(linktype))),
            Err(other) => panic!("link type {linktype}: {other}"),
        }
    }
}
