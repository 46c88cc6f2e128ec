//! Running the meter over an input: one worker inline, or a dispatcher (the
//! calling thread) that hashes every packet with the symmetric Toeplitz key
//! and hands it in batches to N worker threads, as a Napatech card hashes
//! into N host streams.
//!
//! Invariants:
//! - Both directions of a flow go to the same worker (symmetric key on the
//!   unoriented 5-tuple), so each worker's table sees whole biflows.
//! - Every frame read is either metered by a worker or counted as non-IP;
//!   at the end (input end, stop flag, duration, bad record) every worker
//!   flushes its table, so every metered packet is in a record.
//! - The sink is only ever called from the calling thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nicbench_pcap::{L3Start, LinkType, PcapSource};
use nicbench_wire::rss::{hash_flow, Reta, RssFields, Toeplitz, DEFAULT_RETA_SIZE, SYMMETRIC_KEY};
use nicbench_wire::FlowKey;

use crate::config::MeterConfig;
use crate::error::FlowError;
use crate::packet::{PacketInfo, L2};
use crate::record::FlowRecord;
use crate::sink::FlowSink;
use crate::stats::{Progress, RunStats};
use crate::table::FlowTable;

/// One Ethernet frame in memory (for [`run_frames`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Capture time [ns since the epoch].
    pub ts_ns: u64,
    /// Length on the wire \[bytes\] (≥ `data.len()` when snapped).
    pub orig_len: u32,
    pub data: &'a [u8],
}

/// A frame with its link layer resolved.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawFrame<'a> {
    pub ts_ns: u64,
    pub orig_len: u32,
    pub data: &'a [u8],
    /// `None`: a link type or link-layer protocol without IP.
    pub l2: Option<L2>,
}

/// What an input yields next.
pub(crate) enum Next<'a> {
    Frame(RawFrame<'a>),
    /// No packet for a while (live input): run timeouts at this wall time \[ns\].
    Idle(u64),
    End,
    /// A bad record ended the input; everything before it was delivered.
    BadInput(String),
}

/// An input of frames (pcap file, memory, live socket).
pub(crate) trait Source {
    fn next(&mut self) -> Result<Next<'_>, FlowError>;
    /// Bytes of the input consumed so far (for progress), where meaningful.
    fn input_bytes_read(&self) -> u64 {
        0
    }
}

/// Where the network layer starts for a pcap link type.
#[inline(always)]
fn l2_of(linktype: LinkType, data: &[u8]) -> Option<L2> {
    // Ethernet, nearly always: one compare instead of the table below.
    if linktype == LinkType::ETHERNET {
        return Some(L2::Ethernet);
    }
    other_l2_of(linktype, data)
}

#[cold]
#[inline(never)]
fn other_l2_of(linktype: LinkType, data: &[u8]) -> Option<L2> {
    // The one link-layer dispatch (nicbench-pcap); an IP offset always fits a u16 there.
    match linktype.l3_start(data) {
        L3Start::Ethernet => Some(L2::Ethernet),
        L3Start::Ip(offset) => u16::try_from(offset).ok().map(L2::Ip),
        L3Start::NotIp => None,
    }
}

struct PcapInput {
    source: PcapSource,
}

impl Source for PcapInput {
    #[inline(always)]
    fn next(&mut self) -> Result<Next<'_>, FlowError> {
        Ok(match self.source.next_packet() {
            None => Next::End,
            Some(Err(e)) => Next::BadInput(e.to_string()),
            Some(Ok(p)) => Next::Frame(RawFrame {
                ts_ns: p.ts_ns,
                orig_len: p.orig_len,
                data: p.data,
                l2: l2_of(p.linktype, p.data),
            }),
        })
    }

    fn input_bytes_read(&self) -> u64 {
        self.source.bytes_read()
    }
}

/// The lifetime parameter ties `'a` to `&mut self` (`'a` outlives any borrow of the input).
struct MemoryInput<'a, I: Iterator<Item = Frame<'a>>> {
    frames: std::iter::Peekable<I>,
}

impl<'a, I: Iterator<Item = Frame<'a>>> Source for MemoryInput<'a, I> {
    fn next(&mut self) -> Result<Next<'_>, FlowError> {
        let frame = self.frames.next();
        // Large frames in memory are far apart: start loading the next header now.
        if let Some(next) = self.frames.peek() {
            prefetch_bytes(next.data);
        }
        Ok(match frame {
            None => Next::End,
            Some(f) => Next::Frame(RawFrame {
                ts_ns: f.ts_ns,
                orig_len: f.orig_len,
                data: f.data,
                l2: Some(L2::Ethernet),
            }),
        })
    }
}

#[inline(always)]
fn prefetch_bytes(data: &[u8]) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and does not change memory.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(data.as_ptr().cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Meters a pcap or pcapng file. See the crate docs for `stop` and `progress`.
/// A regular file is memory-mapped and parsed in place (no copy of the
/// frames); pipes are streamed (`PcapSource::open_mapped`).
pub fn run_pcap(
    path: &std::path::Path,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunStats, FlowError> {
    config.validate()?;
    let input = PcapInput {
        source: PcapSource::open_mapped(path)?,
    };
    drive(input, config, sink, stop, progress)
}

/// Meters Ethernet frames from memory (benchmarks, tests).
pub fn run_frames<'a>(
    frames: impl IntoIterator<Item = Frame<'a>>,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunStats, FlowError> {
    config.validate()?;
    drive(
        MemoryInput {
            frames: frames.into_iter().peekable(),
        },
        config,
        sink,
        stop,
        progress,
    )
}

/// Maps flows to workers: symmetric Toeplitz over addresses and ports, then
/// a round-robin RETA of 128 entries (what a NIC does).
#[derive(Clone, Debug)]
pub struct Dispatch {
    toeplitz: Toeplitz,
    reta: Reta,
}

impl Dispatch {
    pub fn new(workers: usize) -> Result<Dispatch, FlowError> {
        let bad = |e: nicbench_wire::rss::RssError| FlowError::Config(e.to_string());
        let queues = u16::try_from(workers).map_err(|_| FlowError::Config(format!("{workers} workers")))?;
        Ok(Dispatch {
            toeplitz: Toeplitz::new(&SYMMETRIC_KEY).map_err(bad)?,
            reta: Reta::round_robin(queues, DEFAULT_RETA_SIZE).map_err(bad)?,
        })
    }

    /// The worker of a flow key (either direction).
    #[inline]
    pub fn worker_of(&self, key: &FlowKey) -> usize {
        usize::from(self.reta.queue(hash_flow(&self.toeplitz, key, RssFields::IpPorts)))
    }

    /// The worker of a parsed packet: the same as [`Dispatch::worker_of`] on
    /// its key (tested), without building the key.
    #[inline]
    pub(crate) fn worker_of_info(&self, info: &PacketInfo) -> usize {
        // RssInput layout: addresses, then ports only for TCP/UDP/SCTP.
        let with_ports = matches!(info.proto, 6 | 17 | 132);
        let mut input = [0u8; 36];
        let len = if info.v6 {
            input[..16].copy_from_slice(&info.src);
            input[16..32].copy_from_slice(&info.dst);
            32
        } else {
            input[..4].copy_from_slice(&info.src[..4]);
            input[4..8].copy_from_slice(&info.dst[..4]);
            8
        };
        let len = if with_ports {
            input[len..len + 2].copy_from_slice(&info.src_port.to_be_bytes());
            input[len + 2..len + 4].copy_from_slice(&info.dst_port.to_be_bytes());
            len + 4
        } else {
            len
        };
        usize::from(self.reta.queue(self.toeplitz.hash(&input[..len])))
    }
}

/// The worker a flow key lands on with `workers` workers (both directions agree).
pub fn worker_of(key: &FlowKey, workers: usize) -> usize {
    Dispatch::new(workers.max(1)).map_or(0, |d| d.worker_of(key))
}

const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// Packets between wall-clock checks for progress.
const PROGRESS_CHECK_PACKETS: u64 = 4096;

/// Run-wide counters the dispatcher keeps.
pub(crate) struct Totals {
    pub(crate) stats: RunStats,
    started: Instant,
    last_progress: Instant,
    records_written: u64,
}

impl Totals {
    fn new() -> Totals {
        let now = Instant::now();
        Totals {
            stats: RunStats::default(),
            started: now,
            last_progress: now,
            records_written: 0,
        }
    }

    #[inline(always)]
    pub(crate) fn count(&mut self, f: &RawFrame<'_>) {
        let s = &mut self.stats;
        if s.packets == 0 {
            s.first_ts_ns = f.ts_ns;
        }
        s.packets += 1;
        s.bytes += f.data.len() as u64;
        s.wire_bytes += u64::from(f.orig_len);
        s.last_ts_ns = f.ts_ns;
    }

    pub(crate) fn progress(&mut self, input_bytes_read: u64, force: bool, callback: &mut dyn FnMut(&Progress)) {
        let now = Instant::now();
        if force || now.duration_since(self.last_progress) >= PROGRESS_EVERY {
            self.last_progress = now;
            callback(&Progress {
                packets: self.stats.packets,
                bytes: self.stats.bytes,
                records: self.records_written,
                input_bytes_read,
                elapsed_ns: now.duration_since(self.started).as_nanos() as u64,
            });
        }
    }

    pub(crate) fn write(&mut self, sink: &mut dyn FlowSink, records: &[FlowRecord]) -> Result<(), FlowError> {
        for r in records {
            sink.write(r)?;
        }
        self.records_written += records.len() as u64;
        Ok(())
    }
}

pub(crate) fn drive<S: Source>(
    source: S,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
) -> Result<RunStats, FlowError> {
    config.validate()?;
    let mut totals = Totals::new();
    if config.workers == 1 {
        drive_inline(source, config, sink, stop, progress, &mut totals)?;
    } else {
        crate::workers::drive_workers(source, config, sink, stop, progress, &mut totals)?;
    }
    sink.finish()?;
    let mut stats = totals.stats;
    stats.elapsed_ns = totals.started.elapsed().as_nanos() as u64;
    totals.stats = stats;
    totals.progress(0, true, progress);
    Ok(totals.stats)
}

fn drive_inline<S: Source>(
    mut source: S,
    config: &MeterConfig,
    sink: &mut dyn FlowSink,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&Progress),
    totals: &mut Totals,
) -> Result<(), FlowError> {
    let mut table = FlowTable::new(config, config.max_flows_per_worker(), 0);
    let mut out: Vec<FlowRecord> = Vec::with_capacity(64);
    let mut non_ip = (0u64, 0u64);
    let result = loop {
        if stop.load(Ordering::Relaxed) {
            totals.stats.interrupted = true;
            break Ok(());
        }
        match source.next() {
            Err(e) => break Err(e),
            Ok(Next::End) => break Ok(()),
            Ok(Next::BadInput(message)) => {
                totals.stats.input_error = Some(message);
                break Ok(());
            }
            Ok(Next::Idle(now_ns)) => table.expire(now_ns, &mut out),
            Ok(Next::Frame(f)) => {
                totals.count(&f);
                match f.l2 {
                    Some(l2) => {
                        table.process_l2(f.ts_ns, f.orig_len, f.data, l2, &mut out);
                    }
                    None => {
                        non_ip.0 += 1;
                        non_ip.1 += f.data.len() as u64;
                    }
                }
                if totals.stats.packets % PROGRESS_CHECK_PACKETS != 0 && out.is_empty() {
                    continue;
                }
            }
        }
        if !out.is_empty() {
            if let Err(e) = totals.write(sink, &out) {
                break Err(e);
            }
            out.clear();
        }
        totals.progress(source.input_bytes_read(), false, progress);
    };
    // Flush even after an error in the input, so nothing read is lost.
    table.flush(&mut out);
    let written = result.and_then(|()| totals.write(sink, &out));
    totals.stats.finish(vec![table.stats()], non_ip);
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::extract;
    use nicbench_wire::builder::{FrameSpec, L4Spec, TcpFlags};
    use nicbench_wire::ParsedFrame;

    #[test]
    fn test_worker_of_info_matches_worker_of_key_both_directions() {
        let mut scratch = ParsedFrame::default();
        let dispatch = Dispatch::new(4).unwrap();
        let addrs: [(&str, &str); 2] = [("10.1.2.3", "192.168.7.9"), ("2001:db8::5", "2001:db8:1::9")];
        let l4s = [
            L4Spec::udp(5353, 53),
            L4Spec::tcp(40000, 443, TcpFlags::ACK),
            L4Spec::IcmpEcho { id: 3, seq: 1 },
        ];
        let mut workers_seen = std::collections::HashSet::new();
        for (i, (a, b)) in addrs.iter().enumerate() {
            for (j, l4) in l4s.iter().enumerate() {
                for port_shift in 0..8u16 {
                    let l4 = match *l4 {
                        L4Spec::Udp { src_port, dst_port } => L4Spec::udp(src_port + port_shift, dst_port),
                        other => other,
                    };
                    let spec = FrameSpec {
                        ip_src: a.parse().unwrap(),
                        ip_dst: b.parse().unwrap(),
                        l4,
                        frame_size_bytes: 100,
                        ..FrameSpec::default()
                    };
                    let frame = spec.build().unwrap();
                    let info = extract(&frame, L2::Ethernet, &mut scratch).unwrap();
                    let key = spec.flow_key();
                    let w = dispatch.worker_of_info(&info);
                    assert_eq!(w, dispatch.worker_of(&key), "case {i}/{j}");
                    assert_eq!(w, dispatch.worker_of(&key.reversed()), "symmetric, case {i}/{j}");
                    assert_eq!(w, worker_of(&key, 4));
                    workers_seen.insert(w);
                }
            }
        }
        assert!(workers_seen.len() > 1, "the hash spreads flows");
    }

    #[test]
    fn test_link_types() {
        assert_eq!(l2_of(LinkType::ETHERNET, &[]), Some(L2::Ethernet));
        assert_eq!(l2_of(LinkType::RAW, &[]), Some(L2::Ip(0)));
        let mut sll = [0u8; 16];
        sll[14..16].copy_from_slice(&[0x86, 0xdd]);
        assert_eq!(l2_of(LinkType::LINUX_SLL, &sll), Some(L2::Ip(16)));
        sll[14..16].copy_from_slice(&[0x08, 0x06]);
        assert_eq!(l2_of(LinkType::LINUX_SLL, &sll), None);
        let mut sll2 = [0u8; 20];
        sll2[..2].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(l2_of(LinkType::LINUX_SLL2, &sll2), Some(L2::Ip(20)));
        assert_eq!(l2_of(LinkType::NULL, &[2, 0, 0, 0]), Some(L2::Ip(4)));
        assert_eq!(l2_of(LinkType(147), &[]), None);
    }
}
