//! Parser + FlowKey throughput on in-memory frame sets.
//!
//! Each benchmark walks 4096 distinct frames (distinct addresses and ports,
//! so nothing is trivially predictable) stored back to back in one buffer, as
//! a pcap reader hands them out, and reports per-frame time via
//! `Throughput::Elements`. Frame sets: 64 B UDP/IPv4 (60 B captured, no
//! FCS), 1500 B TCP/IPv6, VXLAN (IPv4/UDP underlay, inner Ethernet/IPv4/TCP).
//! Variants: `parse+from_frame` (full `ParsedFrame` by value),
//! `parse_into+from_frame` (reused `ParsedFrame`, no copy of the result),
//! `flow_key` (key-only fast path with fallback), `parse_only`, and
//! etherparse's `LaxSlicedPacket` as a reference point.
//!
//! Short by design (shared 2-core machine): `cargo bench -p nicbench-wire --bench wire`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use etherparse::PacketBuilder;
use nicbench_wire::parse::{flow_key, parse_ethernet};
use nicbench_wire::FlowKey;

const FRAMES: usize = 4096;
const MAC_A: [u8; 6] = [0x02, 0, 0, 0, 0, 1];
const MAC_B: [u8; 6] = [0x02, 0, 0, 0, 0, 2];

fn udp_ipv4_64(i: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    let i = i as u32;
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(
            (0x0a00_0000 | i).to_be_bytes(),
            (0x0a80_0000 | (i * 7)).to_be_bytes(),
            64,
        )
        .udp(1024 + i as u16, 53)
        .write(&mut f, &[0u8; 18])
        .expect("build UDP/IPv4");
    debug_assert_eq!(f.len(), 60);
    f
}

fn tcp_ipv6_1500(i: usize) -> Vec<u8> {
    let mut f = Vec::with_capacity(1514);
    let mut src = [0u8; 16];
    let mut dst = [0u8; 16];
    src[..2].copy_from_slice(&[0x20, 0x01]);
    dst[..2].copy_from_slice(&[0x20, 0x01]);
    src[12..].copy_from_slice(&(i as u32).to_be_bytes());
    dst[12..].copy_from_slice(&(i as u32 * 13).to_be_bytes());
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv6(src, dst, 64)
        .tcp(40000 + i as u16, 443, i as u32, 65535)
        .ack(1)
        .write(&mut f, &[0u8; 1514 - 14 - 40 - 20])
        .expect("build TCP/IPv6");
    f
}

fn vxlan(i: usize) -> Vec<u8> {
    let i32_ = i as u32;
    let mut inner = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .ipv4(
            (0xac10_0000 | i32_).to_be_bytes(),
            (0xac20_0000 | (i32_ * 3)).to_be_bytes(),
            64,
        )
        .tcp(30000 + i as u16, 80, 1, 1024)
        .write(&mut inner, &[0u8; 10])
        .expect("build inner frame");
    let vni = (i as u32 % 1000) + 1;
    let mut payload = vec![0x08, 0, 0, 0];
    payload.extend_from_slice(&(vni << 8).to_be_bytes());
    payload.extend_from_slice(&inner);
    let mut f = Vec::new();
    PacketBuilder::ethernet2(MAC_A, MAC_B)
        .single_vlan(etherparse::VlanId::try_new(100).expect("vid"))
        .ipv4([192, 168, 0, 1], [192, 168, 0, 2], 64)
        .udp(49152 + (i as u16 % 16000), 4789)
        .write(&mut f, &payload)
        .expect("build VXLAN frame");
    f
}

/// Frames back to back in one buffer.
struct FrameSet {
    bytes: Vec<u8>,
    ranges: Vec<std::ops::Range<usize>>,
}

impl FrameSet {
    fn new(frames: impl Iterator<Item = Vec<u8>>) -> FrameSet {
        let mut set = FrameSet {
            bytes: Vec::new(),
            ranges: Vec::new(),
        };
        for f in frames {
            let start = set.bytes.len();
            set.bytes.extend_from_slice(&f);
            set.ranges.push(start..set.bytes.len());
        }
        set
    }
    fn iter(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.ranges.iter().map(|r| &self.bytes[r.clone()])
    }
}

fn bench_set(c: &mut Criterion, name: &str, frames: &FrameSet) {
    // Every frame must produce a key, or the benchmark measures the wrong path.
    assert!(frames
        .iter()
        .all(|f| flow_key(f).is_ok() && parse_ethernet(f).stop.is_none()));
    let n_frames = frames.ranges.len();
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Elements(n_frames as u64));
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("parse+from_frame", |b| {
        b.iter(|| {
            for f in frames.iter() {
                let key = FlowKey::from_frame(&parse_ethernet(black_box(f)));
                black_box(&key);
            }
        })
    });
    g.bench_function("parse_into+from_frame", |b| {
        let mut parsed = nicbench_wire::parse::ParsedFrame::default();
        b.iter(|| {
            for f in frames.iter() {
                nicbench_wire::parse::parse_ethernet_into(black_box(f), &mut parsed);
                let key = FlowKey::from_frame(&parsed);
                black_box(&key);
            }
        })
    });
    g.bench_function("flow_key", |b| {
        b.iter(|| {
            for f in frames.iter() {
                let key = flow_key(black_box(f));
                black_box(&key);
            }
        })
    });
    g.bench_function("parse_only", |b| {
        b.iter(|| {
            for f in frames.iter() {
                let parsed = parse_ethernet(black_box(f));
                black_box(&parsed);
            }
        })
    });
    g.bench_function("etherparse_lax_sliced", |b| {
        b.iter(|| {
            for f in frames.iter() {
                let sliced = etherparse::LaxSlicedPacket::from_ethernet(black_box(f));
                black_box(&sliced);
            }
        })
    });
    g.finish();
}

fn wire(c: &mut Criterion) {
    let udp = FrameSet::new((0..FRAMES).map(udp_ipv4_64));
    let tcp6 = FrameSet::new((0..FRAMES).map(tcp_ipv6_1500));
    let vx = FrameSet::new((0..FRAMES).map(vxlan));
    bench_set(c, "udp_ipv4_64B", &udp);
    bench_set(c, "tcp_ipv6_1500B", &tcp6);
    bench_set(c, "vxlan", &vx);
}

criterion_group!(benches, wire);
criterion_main!(benches);
