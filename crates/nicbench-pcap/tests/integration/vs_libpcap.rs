//! libpcap (through `tcpdump`, Debian package `tcpdump`) as an independent reader: it reads
//! each file and writes back what it read as a nanosecond classic pcap (`tcpdump -r IN
//! --time-stamp-precision=nano -w OUT`), which pcap-file reads; nicbench's reader must deliver
//! the same packets — timestamps to the nanosecond, original lengths, bytes — from the input.
//! Covers pcapng with several interfaces (microsecond, nanosecond, millisecond and binary
//! `if_tsresol`, `if_tsoffset`, both byte orders), our own writer's output, and a file cut
//! inside a record (both stop after the same packets). A missing tcpdump fails under CI=true
//! and skips with the reason otherwise (nicbench-testenv).

use std::borrow::Cow;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use nicbench_pcap::PcapSource;
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::{Block, PcapNgWriter};
use pcap_file::{DataLink, Endianness};

use crate::fixtures::{drain, packets, read_with_pcap_file, temp_path, write_ours, OwnedPacket};

/// (timestamp [ns], original length, bytes): what both readers must agree on.
fn essentials(packets: &[OwnedPacket]) -> Vec<(u64, u32, Vec<u8>)> {
    packets.iter().map(|p| (p.ts_ns, p.orig_len, p.data.clone())).collect()
}

/// What libpcap reads from `bytes`: (packets, tcpdump's stderr). `None` without tcpdump.
fn read_with_libpcap(test: &str, name: &str, bytes: &[u8]) -> Option<(Vec<OwnedPacket>, String)> {
    let tcpdump = nicbench_testenv::tool_or_skip(test, "tcpdump", "tcpdump")?;
    let (input, output): (PathBuf, PathBuf) =
        (temp_path(&format!("{name}.in")), temp_path(&format!("{name}.out.pcap")));
    std::fs::write(&input, bytes).expect("write input");
    let out = Command::new(tcpdump)
        .args(["-n", "--time-stamp-precision=nano", "-r"])
        .arg(&input)
        .arg("-w")
        .arg(&output)
        .output()
        .expect("run tcpdump");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let written =
        std::fs::read(&output).unwrap_or_else(|e| panic!("tcpdump wrote no {} ({e}): {stderr}", output.display()));
    let _ = (std::fs::remove_file(&input), std::fs::remove_file(&output));
    Some((read_with_pcap_file(&written), stderr))
}

fn read_with_nicbench(bytes: &[u8]) -> (Vec<OwnedPacket>, Option<nicbench_pcap::PcapError>) {
    let mut source = PcapSource::from_reader(std::io::Cursor::new(bytes)).expect("header");
    drain(&mut source)
}

fn idb(snaplen: u32, tsresol: Option<u8>, ts_offset_s: Option<u64>) -> Block<'static> {
    let mut options = Vec::new();
    options.extend(tsresol.map(InterfaceDescriptionOption::IfTsResol));
    options.extend(ts_offset_s.map(InterfaceDescriptionOption::IfTsOffset));
    // One link type for all: libpcap refuses files whose interfaces differ in link type.
    Block::InterfaceDescription(InterfaceDescriptionBlock {
        linktype: DataLink::ETHERNET,
        snaplen,
        options,
    })
}

/// Four interfaces — default µs; ns with a 10 s offset; ms; 2^-20 s — and 64 packets spread
/// over them, some cut below their original length. pcap-file writes an EPB's timestamp
/// field as the raw tick count.
fn multi_interface_pcapng(endianness: Endianness) -> Vec<u8> {
    let mut out = PcapNgWriter::with_endianness(Vec::new(), endianness).unwrap();
    out.write_block(&idb(65535, None, None)).unwrap();
    out.write_block(&idb(65535, Some(9), Some(10))).unwrap();
    out.write_block(&idb(65535, Some(3), None)).unwrap();
    out.write_block(&idb(65535, Some(0x80 | 20), None)).unwrap();
    let mut ticks = 1_700_000_000u64;
    for i in 0..64u32 {
        let interface_id = i % 4;
        // Tick counts an interface's resolution makes plausible: seconds since 2023 in its unit.
        ticks = ticks
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407)
            >> 20;
        let ts = match interface_id {
            0 => 1_700_000_000_000_000 + ticks % 1_000_000_000,
            1 => 1_700_000_000_000_000_000 + ticks % 1_000_000_000_000,
            2 => 1_700_000_000_000 + ticks % 1_000_000,
            _ => (1_700_000_000u64 << 20) + ticks % (1 << 30),
        };
        let len = 14 + (i as usize * 37) % 1500;
        let data: Vec<u8> = (0..len).map(|j| (i as usize * 13 + j) as u8).collect();
        let orig_len = len as u32 + if i % 5 == 0 { 100 } else { 0 };
        out.write_block(&Block::EnhancedPacket(EnhancedPacketBlock {
            interface_id,
            timestamp: Duration::from_nanos(ts),
            original_len: orig_len,
            data: Cow::Owned(data),
            options: vec![],
        }))
        .unwrap();
    }
    out.into_inner()
}

#[test]
fn pcapng_reads_like_libpcap() {
    const TEST: &str = "pcapng_reads_like_libpcap";
    for endianness in [Endianness::Little, Endianness::Big] {
        let bytes = multi_interface_pcapng(endianness);
        let Some((theirs, stderr)) = read_with_libpcap(TEST, &format!("multi-{endianness:?}"), &bytes) else {
            return;
        };
        let (ours, err) = read_with_nicbench(&bytes);
        assert!(err.is_none(), "{endianness:?}: {err:?}");
        assert_eq!(ours.len(), 64, "{endianness:?}");
        assert_eq!(
            theirs.len(),
            64,
            "{endianness:?}: libpcap read {} packets; tcpdump: {stderr}",
            theirs.len()
        );
        for (i, (a, b)) in essentials(&ours).iter().zip(essentials(&theirs)).enumerate() {
            assert_eq!(
                a.0,
                b.0,
                "{endianness:?} packet {i} (interface {}): timestamp [ns]",
                i % 4
            );
            assert_eq!((a.1, &a.2), (b.1, &b.2), "{endianness:?} packet {i}: length and bytes");
        }
    }
}

#[test]
fn our_writer_reads_back_in_libpcap() {
    const TEST: &str = "our_writer_reads_back_in_libpcap";
    // Steps that are not whole microseconds: the nanoseconds must survive.
    let written = packets(200, &[60, 1514, 17, 9000, 64], 1_234_567);
    let bytes = write_ours(&written);
    let Some((theirs, stderr)) = read_with_libpcap(TEST, "ours", &bytes) else {
        return;
    };
    assert_eq!(essentials(&theirs), essentials(&written), "tcpdump: {stderr}");
}

#[test]
fn a_cut_file_ends_after_the_same_packets_as_in_libpcap() {
    const TEST: &str = "a_cut_file_ends_after_the_same_packets_as_in_libpcap";
    let written = packets(20, &[100, 60], 1_000);
    let bytes = write_ours(&written);
    // Cut in the middle of packet 12's data: 24-byte header, 16-byte record headers.
    let start_12: usize = 24 + written[..12].iter().map(|p| 16 + p.data.len()).sum::<usize>();
    let cut = &bytes[..start_12 + 16 + 10];
    let Some((theirs, stderr)) = read_with_libpcap(TEST, "cut", cut) else {
        return;
    };
    let (ours, err) = read_with_nicbench(cut);
    assert!(stderr.contains("truncated"), "tcpdump reports the cut: {stderr}");
    let err = err.expect("nicbench reports the cut");
    assert_eq!(
        (err.packet_index(), err.offset_bytes()),
        (Some(12), Some(start_12 as u64)),
        "{err}"
    );
    assert_eq!(essentials(&ours), essentials(&written[..12]));
    assert_eq!(
        essentials(&theirs),
        essentials(&ours),
        "both stop after the same 12 packets"
    );
}
