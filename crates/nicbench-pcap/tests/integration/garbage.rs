//! Garbage, empty and header-only files; random bytes never panic.

use nicbench_pcap::PcapError;
use proptest::prelude::*;

use crate::fixtures::{packets, read_bytes, write_ours};
use crate::pcapng::three_packet_pcapng;

#[test]
fn empty_garbage_and_header_only() {
    assert!(matches!(read_bytes(&[]), Err(PcapError::EmptyFile)));
    let err = read_bytes(b"<html><body>not a capture</body></html>").unwrap_err();
    assert_eq!(err.to_string(), "not a pcap/pcapng file: magic 0x3c68746d");
    let err = read_bytes(&[0xd4, 0xc3]).unwrap_err();
    assert!(
        matches!(err, PcapError::TruncatedFileHeader { available_bytes: 2, .. }),
        "{err}"
    );

    let header_only = write_ours(&[]);
    assert_eq!(header_only.len(), 24);
    let (got, err) = read_bytes(&header_only).unwrap();
    assert!(got.is_empty() && err.is_none());

    let (ng, starts, _) = three_packet_pcapng();
    let (got, err) = read_bytes(&ng[..starts[1]]).unwrap();
    assert!(got.is_empty() && err.is_none(), "SHB-only pcapng");
}

#[test]
fn corrupt_caplen_after_good_packets() {
    let expected = packets(5, &[60], 1_000);
    let mut bytes = write_ours(&expected);
    // Packet 3's caplen field: record starts at 24 + 3 * 76.
    let record = 24 + 3 * 76;
    bytes[record + 8..record + 12].copy_from_slice(&70_000u32.to_le_bytes());
    let (got, err) = read_bytes(&bytes).unwrap();
    assert_eq!(got, expected[..3]);
    let err = err.unwrap();
    assert_eq!(
        err.to_string(),
        format!("packet 3 at byte offset {record}: corrupt record: caplen 70000 > snaplen 65535")
    );
}

proptest! {
    #[test]
    fn prop_random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = read_bytes(&bytes);
    }

    #[test]
    fn prop_valid_prefix_random_tail_never_panics(
        tail in proptest::collection::vec(any::<u8>(), 0..400),
        which in 0usize..3,
    ) {
        let (ng, starts, _) = three_packet_pcapng();
        let mut bytes = match which {
            0 => write_ours(&[]),
            1 => ng[..starts[1]].to_vec(),
            _ => ng[..starts[2]].to_vec(),
        };
        bytes.extend_from_slice(&tail);
        let _ = read_bytes(&bytes);
    }

    #[test]
    fn prop_bit_flips_never_panic(flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8), use_ng in any::<bool>()) {
        let mut bytes = if use_ng { three_packet_pcapng().0 } else { write_ours(&packets(3, &[60, 17, 100], 1_000)) };
        let len = bytes.len();
        for (at, mask) in flips {
            bytes[at % len] ^= mask;
        }
        let _ = read_bytes(&bytes);
    }
}
