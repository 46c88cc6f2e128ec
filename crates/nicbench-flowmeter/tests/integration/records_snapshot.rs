//! Snapshot of the records the meter writes for a few generated pcaps —
//! IPv4/IPv6, TCP/UDP/ICMP (echo and not), DNS, VLAN and QinQ, VXLAN, IPv4
//! fragments, Ethernet padding, snapped frames, non-IP, reordered timestamps,
//! a raw-IP link type, and a file cut inside a record — in both compat modes,
//! with 1 worker (inline) and 2 (dispatcher). Taken before the flow meter
//! moved to `nicbench-pcap`'s mapped reader and `nicbench-wire`'s fast path,
//! so that any change in what it records shows here, line by line.
//!
//! The snapshot, `snapshots/records.txt`, holds per run the totals and a
//! digest (FNV-1a) of the record lines, and the lines themselves for the
//! 1-worker runs of the mixed trace; to accept a deliberate change, rerun with
//! `NICBENCH_UPDATE_SNAPSHOTS=1` and review the diff. The same file read
//! through a FIFO (streamed, not mapped) gives the same records.

use std::fmt::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use nicbench_flowmeter::{run_pcap, CollectSink, Compat, FlowRecord, MeterConfig, RunStats};
use nicbench_pcap::{LinkType, PcapWriter};
use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags, VlanTags, VxlanSpec};

use crate::common::{temp_path, T0};

const SNAPSHOT: &str = "tests/integration/snapshots/records.txt";

/// A 64-bit LCG (Knuth's MMIX constants): the stream is part of the snapshot,
/// so no RNG crate whose algorithm could change.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn v4(host: u64) -> IpAddr {
    IpAddr::V4(std::net::Ipv4Addr::from(0x0a00_0000 + host as u32))
}

fn v6(host: u64) -> IpAddr {
    IpAddr::V6(std::net::Ipv6Addr::from(0x2001_0db8_u128 << 96 | u128::from(host)))
}

fn set_u16(frame: &mut [u8], at: usize, value: u16) {
    frame[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

/// One packet of the mix: (captured bytes, wire length).
fn packet(rng: &mut Lcg) -> (Vec<u8>, u32) {
    let kind = rng.below(14);
    let host = rng.below(6);
    let reverse = rng.below(2) == 1;
    let (a, b) = (rng.below(2), 100 + host);
    let (src, dst) = if reverse { (b, a) } else { (a, b) };
    let port = 40_000 + host as u16;
    let (sport, dport) = if reverse { (443, port) } else { (port, 443) };
    let flags = [
        TcpFlags::SYN,
        TcpFlags::SYN | TcpFlags::ACK,
        TcpFlags::ACK,
        TcpFlags::FIN | TcpFlags::ACK,
        TcpFlags::RST,
    ][rng.below(5) as usize];
    let mut spec = FrameSpec {
        ip_src: v4(src),
        ip_dst: v4(dst),
        frame_size_bytes: [64, 128, 590][rng.below(3) as usize],
        ..FrameSpec::default()
    };
    match kind {
        0 | 1 => spec.l4 = L4Spec::tcp(sport, dport, flags),
        2 => spec.l4 = L4Spec::udp(sport, dport),
        3 => {
            spec.l4 = if reverse {
                L4Spec::udp(53, port)
            } else {
                L4Spec::udp(port, 53)
            }
        }
        4 => {
            spec.l4 = L4Spec::IcmpEcho {
                id: host as u16,
                seq: rng.below(3) as u16,
            }
        }
        5 => {
            (spec.ip_src, spec.ip_dst) = (v6(src), v6(dst));
            spec.frame_size_bytes = spec.frame_size_bytes.max(128);
            spec.l4 = [
                L4Spec::tcp(sport, dport, flags),
                L4Spec::udp(sport, dport),
                L4Spec::IcmpEcho {
                    id: 7,
                    seq: host as u16,
                },
            ][rng.below(3) as usize];
        }
        6 => {
            spec.frame_size_bytes = spec.frame_size_bytes.max(128);
            spec.vlan = [
                VlanTags::Single(100 + host as u16 % 2),
                VlanTags::Double { outer: 5, inner: 6 },
            ][rng.below(2) as usize];
            spec.l4 = L4Spec::tcp(sport, dport, flags);
        }
        7 => {
            spec.vxlan = Some(VxlanSpec::new(42 + rng.below(2) as u32));
            spec.frame_size_bytes = 160;
            spec.l4 = [L4Spec::tcp(sport, dport, flags), L4Spec::udp(sport, 53)][rng.below(2) as usize];
        }
        _ => spec.l4 = L4Spec::udp(sport, dport),
    }
    let mut frame = spec.build().expect("valid spec");
    let wire_len = frame.len() as u32 + 4;
    match kind {
        // DNS transaction id: a few values per endpoint pair.
        3 => set_u16(&mut frame, 42, rng.below(4) as u16),
        // Echo replies, and now and then an ICMP error (not an echo).
        4 => frame[34] = [8, 0, 0, 3][rng.below(4) as usize],
        5 if frame[20] == 58 && reverse => frame[54] = 129,
        // IPv4 fragments: a first one (MF) or a later one (offset 185 × 8 bytes).
        8 => set_u16(&mut frame, 20, [0x2000, 185][rng.below(2) as usize]),
        // Non-IP (ARP EtherType).
        9 => set_u16(&mut frame, 12, 0x0806),
        // The IP length ends before the frame: Ethernet padding, DNS header cut short.
        10 => {
            set_u16(&mut frame, 14 + 2, 20 + 8 + 1);
            set_u16(&mut frame, 34, 53);
        }
        // Snapped: captured up to inside the transport header.
        11 => frame.truncate(14 + 20 + 3),
        _ => {}
    }
    (frame, wire_len)
}

/// The mixed trace: (timestamp, captured bytes, wire length); timestamps
/// 0–600 ms apart (some go back by 1 ms), ~1.5 minutes for 300 packets, so
/// idle timeouts, status splits and late packets all happen.
fn trace(packets: usize) -> Vec<(u64, Vec<u8>, u32)> {
    let mut rng = Lcg(0x6e69_6362_656e_6368);
    let mut ts = T0;
    (0..packets)
        .map(|_| {
            ts = match rng.below(20) {
                0 => ts - 1_000_000,
                _ => ts + rng.below(600_000_000),
            };
            let (frame, wire_len) = packet(&mut rng);
            (ts, frame, wire_len)
        })
        .collect()
}

fn write(path: &Path, linktype: LinkType, packets: &[(u64, Vec<u8>, u32)]) {
    let mut writer = PcapWriter::from_writer(Vec::new(), 65535, linktype).unwrap();
    for (ts, data, wire_len) in packets {
        writer.write_packet(*ts, *wire_len, data).unwrap();
    }
    std::fs::write(path, writer.into_inner().unwrap()).unwrap();
}

/// The pcaps of the snapshot: (name, path).
fn pcaps() -> Vec<(&'static str, PathBuf)> {
    let packets = trace(300);
    let mixed = temp_path("snapshot-mixed.pcap");
    write(&mixed, LinkType::ETHERNET, &packets);
    // Cut inside a record two thirds in: the records of everything before it, and the error.
    let bytes = std::fs::read(&mixed).unwrap();
    let cut = temp_path("snapshot-cut.pcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    // Raw IP (LINKTYPE_RAW): the IP packets of the untagged IPv4/IPv6 frames.
    let raw_packets: Vec<_> = packets
        .iter()
        .filter(|(_, f, _)| matches!(f[12..14], [0x08, 0x00] | [0x86, 0xdd]))
        .map(|(ts, f, wire_len)| (*ts, f[14..].to_vec(), wire_len - 14))
        .collect();
    let raw = temp_path("snapshot-raw.pcap");
    write(&raw, LinkType::RAW, &raw_packets);
    vec![("mixed", mixed), ("cut", cut), ("raw", raw)]
}

/// FNV-1a over the lines (a stable digest: no hasher whose output could change).
fn digest(lines: &[String]) -> u64 {
    lines
        .iter()
        .flat_map(|l| l.bytes().chain([b'\n']))
        .fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        })
}

fn line(r: &FlowRecord) -> String {
    let k = &r.key;
    format!(
        "{}:{}>{}:{} p{} vlan{:?} vni{:?} dns{:?} id{:?} t{}+{} pk{}/{} by{}/{} fl{:02x}/{:02x} st{} sz{}-{} icmp{:?}/{:?} {:?} q{} w{}",
        k.src,
        k.src_port,
        k.dst,
        k.dst_port,
        k.proto,
        k.vlan,
        k.vni,
        r.dns_txid,
        r.icmp_id,
        r.first_ns - T0,
        r.last_ns - r.first_ns,
        r.src_pkts,
        r.dst_pkts,
        r.src_bytes,
        r.dst_bytes,
        r.src_tcp_flags,
        r.dst_tcp_flags,
        r.state.0,
        r.min_pkt_bytes,
        r.max_pkt_bytes,
        r.icmp_type,
        r.icmp_code,
        r.end,
        r.seq,
        r.worker
    )
}

fn run(path: &Path, compat: Compat, workers: usize) -> (RunStats, Vec<String>) {
    let config = MeterConfig {
        workers,
        ..MeterConfig::for_compat(compat)
    };
    let mut sink = CollectSink::default();
    let stats = run_pcap(path, &config, &mut sink, &AtomicBool::new(false), &mut |_| {}).unwrap();
    let mut lines: Vec<String> = sink.records.iter().map(line).collect();
    if workers > 1 {
        // Records of different workers reach the sink in any order.
        lines.sort();
    }
    (stats, lines)
}

/// The same file through a FIFO (the streaming reader).
#[cfg(unix)]
fn run_streamed(path: &Path, compat: Compat, workers: usize) -> (RunStats, Vec<String>) {
    use std::os::unix::ffi::OsStrExt;
    let fifo = path.with_extension("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: mkfifo on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
    let bytes = std::fs::read(path).unwrap();
    let (writer_path, writer_fifo) = (fifo.clone(), fifo.clone());
    // The writer's open blocks until the meter opens the FIFO: no sleep needed.
    let writer = std::thread::spawn(move || std::fs::write(writer_path, bytes).unwrap());
    let result = run(&writer_fifo, compat, workers);
    writer.join().unwrap();
    std::fs::remove_file(&fifo).unwrap();
    result
}

#[test]
fn test_records_equal_the_snapshot() {
    let mut text = String::new();
    for (name, path) in pcaps() {
        for compat in [Compat::Nicbench, Compat::Argus] {
            for workers in [1, 2] {
                let (stats, lines) = run(&path, compat, workers);
                writeln!(
                    text,
                    "== {name} {compat} {workers}w: packets {} bytes {} wire {} non-ip {} records {} flows {} error {:?} digest {:016x}",
                    stats.packets,
                    stats.bytes,
                    stats.wire_bytes,
                    stats.non_ip_packets,
                    stats.records,
                    stats.flows,
                    stats.input_error,
                    digest(&lines)
                )
                .unwrap();
                assert_eq!(lines.len() as u64, stats.records);
                if name == "mixed" && workers == 1 {
                    for l in &lines {
                        writeln!(text, "{l}").unwrap();
                    }
                }
                #[cfg(unix)]
                if workers == 2 && compat == Compat::Argus {
                    let (streamed_stats, streamed) = run_streamed(&path, compat, workers);
                    assert_eq!(streamed, lines, "{name}: streamed and mapped records differ");
                    assert_eq!(streamed_stats.input_error, stats.input_error);
                }
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
    let snapshot = Path::new(env!("CARGO_MANIFEST_DIR")).join(SNAPSHOT);
    if std::env::var("NICBENCH_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        std::fs::write(&snapshot, &text).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&snapshot).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (create it with NICBENCH_UPDATE_SNAPSHOTS=1)",
            snapshot.display()
        )
    });
    if text != expected {
        let first = text.lines().zip(expected.lines()).position(|(a, b)| a != b);
        let at = first.unwrap_or(text.lines().count().min(expected.lines().count()));
        let now = temp_path("records-now.txt");
        std::fs::write(&now, &text).unwrap();
        panic!(
            "records differ from {} at line {} (whole output in {}):\n  now:      {:?}\n  snapshot: {:?}",
            snapshot.display(),
            at + 1,
            now.display(),
            text.lines().nth(at),
            expected.lines().nth(at)
        );
    }
}
