//! A file cut at every byte offset never panics, delivers every complete
//! packet before the cut, and names the index and offset of the cut record.

use nicbench_pcap::PcapError;

use crate::fixtures::{packets, read_bytes, write_ours};
use crate::pcapng::three_packet_pcapng;

#[test]
fn classic_cut_at_every_offset() {
    let expected = packets(3, &[60, 17, 100], 1_000);
    let bytes = write_ours(&expected);
    // Record start offsets: 24, then each 16 + caplen further.
    let mut record_starts = vec![24usize];
    for packet in &expected {
        record_starts.push(record_starts.last().unwrap() + 16 + packet.data.len());
    }
    assert_eq!(*record_starts.last().unwrap(), bytes.len());

    for cut in 0..=bytes.len() {
        let result = read_bytes(&bytes[..cut]);
        if cut == 0 {
            assert!(matches!(result, Err(PcapError::EmptyFile)), "cut {cut}");
            continue;
        }
        if cut < 24 {
            assert!(
                matches!(result, Err(PcapError::TruncatedFileHeader { .. })),
                "cut {cut}: {result:?}"
            );
            continue;
        }
        let (got, err) = result.unwrap();
        let complete = record_starts.iter().skip(1).filter(|&&end| end <= cut).count();
        assert_eq!(got, expected[..complete], "cut {cut}");
        if record_starts.contains(&cut) {
            assert!(err.is_none(), "cut {cut} at a record boundary: {err:?}");
            continue;
        }
        let err = err.unwrap_or_else(|| panic!("cut {cut}: no error"));
        let record_start = record_starts[complete];
        assert_eq!(err.packet_index(), Some(complete as u64), "cut {cut}: {err}");
        assert_eq!(err.offset_bytes(), Some(record_start as u64), "cut {cut}: {err}");
        let into_record = cut - record_start;
        if into_record < 16 {
            assert!(
                matches!(err, PcapError::TruncatedRecordHeader { available_bytes, .. } if available_bytes == into_record as u64),
                "cut {cut}: {err}"
            );
        } else {
            let caplen = expected[complete].data.len() as u32;
            let available = (into_record - 16) as u64;
            assert!(
                matches!(err, PcapError::TruncatedPacketData { caplen: c, available_bytes, .. } if c == caplen && available_bytes == available),
                "cut {cut}: {err}"
            );
            assert!(
                err.to_string()
                    .contains(&format!("caplen says {caplen} bytes, only {available} left")),
                "{err}"
            );
        }
    }
}

#[test]
fn pcapng_cut_at_every_offset() {
    let (bytes, block_starts, packet_blocks) = three_packet_pcapng();
    let first_block_end = block_starts[1];
    for cut in 0..=bytes.len() {
        let result = read_bytes(&bytes[..cut]);
        if cut == 0 {
            assert!(matches!(result, Err(PcapError::EmptyFile)), "cut {cut}");
            continue;
        }
        if cut < first_block_end {
            assert!(
                matches!(result, Err(PcapError::TruncatedFileHeader { .. })),
                "cut {cut}: {result:?}"
            );
            continue;
        }
        let (got, err) = result.unwrap();
        // Packets whose block ends at or before the cut.
        let complete = packet_blocks
            .iter()
            .filter(|&&block| block_starts[block + 1] <= cut)
            .count();
        assert_eq!(got.len(), complete, "cut {cut}");
        if block_starts.contains(&cut) {
            assert!(err.is_none(), "cut {cut} at a block boundary: {err:?}");
            continue;
        }
        let err = err.unwrap_or_else(|| panic!("cut {cut}: no error"));
        let block = block_starts.iter().rposition(|&start| start < cut).unwrap();
        assert_eq!(err.packet_index(), Some(complete as u64), "cut {cut}: {err}");
        assert_eq!(err.offset_bytes(), Some(block_starts[block] as u64), "cut {cut}: {err}");
        let into_block = cut - block_starts[block];
        if into_block < 12 {
            assert!(
                matches!(err, PcapError::TruncatedRecordHeader { .. }),
                "cut {cut}: {err}"
            );
        } else {
            assert!(matches!(err, PcapError::TruncatedBlock { .. }), "cut {cut}: {err}");
        }
    }
}
