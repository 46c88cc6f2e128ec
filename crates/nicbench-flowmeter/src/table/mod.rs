//! One worker's flow table: open addressing over a slab of compact flows,
//! exact LRU lists per timeout class, and a status (active-timeout) list.
//!
//! Layout and invariants:
//! - `flows` is a slab (`Vec<Flow>` + free list) of the flows' hot parts,
//!   `cold` the parallel slab of their cold parts (list links, record start);
//!   a slot index is stable for the flow's life. `index` is a power-of-two array of buckets
//!   `(hash32 << 32) | slot`, linear probing, load ≤ 1/2 (it doubles as flows
//!   arrive), backward-shift deletion (no tombstones). A bucket's home is
//!   `hash32 & mask`.
//! - Every live flow is in exactly one LRU list (by timeout class: TCP, UDP,
//!   ICMP, other), ordered by `queued_ns`, the time it was last moved to the
//!   tail. A packet moves its flow to the tail only when `queued_ns` is at
//!   least `lru_slack_ns` old (≤ 100 ms), which saves touching two neighbour
//!   flows' cache lines on most packets; so `queued_ns <= last_ns <
//!   queued_ns + lru_slack_ns`, and the lists are ordered by `last_ns` to
//!   within the slack. All flows of a class share one idle timeout, so expiry
//!   pops heads (an idle record may be written up to the slack late; its
//!   contents are exact), and eviction takes the head with the oldest
//!   `last_ns`: the least-recently-seen flow to within the slack.
//! - A flow whose current record holds packets is in the active list, ordered
//!   by record start (`first_ns`); a record is split when it is `active_ns` old.
//! - Time is packet time, made monotone per table (`now_ns` never goes back),
//!   so the lists stay sorted even when a capture has reordered timestamps.
//! - No flow is ever dropped without its record being emitted (if it holds
//!   packets) and counted under its end reason.

use nicbench_wire::parse::{tcp_flags, ParsedFrame};

use crate::config::{ByteCount, Compat, MeterConfig, Timeouts};
use crate::packet::{fast_extract, general_extract, PacketInfo, L2};

mod key;

use self::key::{KeyFields, TableKey};
use crate::record::{EndReason, FlowRecord, FlowState};
use crate::stats::WorkerStats;

const NONE: u32 = u32::MAX;
const EMPTY_BUCKET: u64 = u64::MAX;
/// Number of timeout classes (TCP, UDP, ICMP, other).
const CLASSES: usize = 4;
/// Packet-time interval between expiry scans \[ns\]. Record contents do not
/// depend on it (a late packet of an expired flow is checked on arrival);
/// only how soon idle records are written does.
const SCAN_INTERVAL_NS: u64 = 100_000_000;
/// Index buckets a new table starts with (32 KiB).
const INITIAL_BUCKETS: usize = 4096;
/// Largest LRU slack \[ns\]; smaller when an idle timeout is short (a quarter of it).
const MAX_LRU_SLACK_NS: u64 = 100_000_000;

/// The per-packet part of one active flow; `dir` 0 = sent by `key.lo`,
/// 1 = sent by `key.hi`. Cache-line aligned and ≤ 128 B so that a packet
/// touches (and the pipeline prefetches) exactly two lines; what only record
/// boundaries and list moves need lives in [`FlowCold`].
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
struct Flow {
    key: TableKey,
    last_ns: u64,
    /// When the flow was last moved to the tail of its LRU list.
    queued_ns: u64,
    /// End of the current status interval: flow start + k × active
    /// (`u64::MAX` without status interval). Records are aligned to these.
    boundary_ns: u64,
    pkts: [u64; 2],
    bytes: [u64; 2],
    min_len: u32,
    max_len: u32,
    tcp_flags: [u8; 2],
    state: u8,
    /// The `hi` endpoint started the flow.
    initiator_hi: bool,
    class: u8,
    icmp_type: u8,
    icmp_code: u8,
    has_icmp: bool,
}

/// The rarely touched part of a flow (same slot as its [`Flow`]): list links,
/// record start and sequence number. A packet touches it only when it starts
/// a record or moves its flow in the LRU list (at most once per LRU slack).
#[derive(Clone, Copy, Debug)]
struct FlowCold {
    /// First packet of the current record (valid when it holds packets).
    first_ns: u64,
    lru_prev: u32,
    lru_next: u32,
    act_prev: u32,
    act_next: u32,
    seq: u32,
}

/// Bytes of table memory per active flow (hot and cold slab entries + two
/// index buckets at load 1/2) — the working set a host model should use.
pub const RECORD_BYTES: usize =
    std::mem::size_of::<Flow>() + std::mem::size_of::<FlowCold>() + 2 * std::mem::size_of::<u64>();

#[derive(Clone, Copy, Debug)]
struct List {
    head: u32,
    tail: u32,
}

const EMPTY_LIST: List = List { head: NONE, tail: NONE };

/// Timeout class of an IP protocol.
fn class_of(proto: u8) -> u8 {
    match proto {
        6 => 0,
        17 => 1,
        1 | 58 => 2,
        _ => 3,
    }
}

/// One worker's flow table. Feed it frames in (roughly) time order; it emits
/// records into the caller's vector.
pub struct FlowTable {
    flows: Vec<Flow>,
    /// Parallel to `flows` (same length, same slots).
    cold: Vec<FlowCold>,
    free: Vec<u32>,
    index: Vec<u64>,
    mask: usize,
    lru: [List; CLASSES],
    active: List,
    max_flows: usize,
    live: usize,
    timeouts: Timeouts,
    idle_ns: [u64; CLASSES],
    lru_slack_ns: u64,
    /// Argus: idle timeouts are checked only at status boundaries, and
    /// mid-stream TCP flows are oriented by port (lower port = server).
    argus: bool,
    byte_count: ByteCount,
    fields: KeyFields,
    worker: u16,
    now_ns: u64,
    next_scan_ns: u64,
    scratch: ParsedFrame,
    stats: WorkerStats,
    /// Deferred packets in arrival order (a FIFO of at most PIPELINE_PACKETS).
    pending: Vec<Pending>,
}

/// Packets whose table update is deferred to overlap their memory accesses:
/// a packet's index bucket is prefetched on arrival; when the batch is full
/// the flows the buckets point at are prefetched, then all are metered.
pub const PIPELINE_PACKETS: usize = 16;

/// A packet parsed and hashed, waiting for its table update.
#[derive(Clone, Copy, Debug)]
struct Pending {
    key: TableKey,
    hash: u32,
    sent_by_hi: bool,
    now: u64,
    len: u64,
    tcp_flags: u8,
    icmp: Option<(u8, u8)>,
}

/// Huge pages (2 MiB) make the random accesses of a large table TLB hits.
const HUGE_PAGE_BYTES: usize = 2 << 20;

/// Asks for transparent huge pages over the 2 MiB-aligned part of `v`'s
/// allocation (its capacity). Advice only: failure changes nothing.
fn advise_huge<T>(v: &Vec<T>) {
    let bytes = v.capacity() * std::mem::size_of::<T>();
    let start = (v.as_ptr() as usize).div_ceil(HUGE_PAGE_BYTES) * HUGE_PAGE_BYTES;
    let end = (v.as_ptr() as usize + bytes) / HUGE_PAGE_BYTES * HUGE_PAGE_BYTES;
    if end > start {
        // SAFETY: advice on a range inside an allocation we own; it never faults.
        #[cfg(target_os = "linux")]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

/// `len` copies of `fill`, huge-page advised before the pages are touched.
fn huge_vec<T: Copy>(len: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    advise_huge(&v);
    v.resize(len, fill);
    v
}

/// Prefetches every cache line of `value` (a flow spans two or three).
#[inline(always)]
fn prefetch_all<T>(value: &T) {
    let start = value as *const T as usize;
    let end = start + std::mem::size_of::<T>();
    let mut line = start & !63;
    while line < end {
        // SAFETY: only the address is used; `line` lies within or just before `value`.
        prefetch(unsafe { &*(line as *const u8) });
        line += 64;
    }
}

/// Hints the CPU to load `value`'s cache line (no effect on other targets).
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults and does not change memory.
    #[allow(unused_unsafe)]
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

impl std::fmt::Debug for FlowTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowTable")
            .field("worker", &self.worker)
            .field("active_flows", &self.live)
            .field("max_flows", &self.max_flows)
            .finish_non_exhaustive()
    }
}

impl FlowTable {
    /// A table for at most `max_flows` active flows (`config.max_flows` is
    /// ignored here: a run divides it over its workers).
    pub fn new(config: &MeterConfig, max_flows: usize, worker: u16) -> FlowTable {
        let max_flows = max_flows.clamp(1, (u32::MAX / 4) as usize);
        // The index starts small and doubles with the flow count (load ≤ 1/2):
        // a table sized for 1M flows that holds 16K stays cache- and TLB-friendly.
        let buckets = (max_flows * 2).next_power_of_two().clamp(16, INITIAL_BUCKETS);
        let t = config.timeouts;
        FlowTable {
            flows: Vec::new(),
            cold: Vec::new(),
            free: Vec::new(),
            index: huge_vec(buckets, EMPTY_BUCKET),
            mask: buckets - 1,
            lru: [EMPTY_LIST; CLASSES],
            active: EMPTY_LIST,
            max_flows,
            live: 0,
            timeouts: t,
            idle_ns: [t.tcp_idle_ns, t.udp_idle_ns, t.icmp_idle_ns, t.other_idle_ns],
            lru_slack_ns: [
                t.tcp_idle_ns,
                t.udp_idle_ns,
                t.icmp_idle_ns,
                t.other_idle_ns,
                4 * MAX_LRU_SLACK_NS,
            ]
            .into_iter()
            .min()
            .unwrap_or(0)
                / 4,
            byte_count: config.byte_count,
            argus: config.compat == Compat::Argus && t.active_ns.is_some(),
            fields: KeyFields {
                vlan: config.key_vlan,
                vni: config.key_vni,
                dns_txid: config.dns_txid,
                icmp_echo_id: config.key_icmp_id,
            },
            worker,
            now_ns: 0,
            next_scan_ns: 0,
            scratch: ParsedFrame::default(),
            stats: WorkerStats::default(),
            pending: Vec::with_capacity(PIPELINE_PACKETS),
        }
    }

    /// Meters one Ethernet frame; returns false (and counts it as non-IP)
    /// when it has no IP header. The table update of up to
    /// [`PIPELINE_PACKETS`] packets may be deferred (to prefetch their
    /// buckets and flows): their records appear at the latest after the next
    /// [`FlowTable::sync`], [`FlowTable::expire`] or [`FlowTable::flush`].
    #[inline]
    pub fn process(&mut self, ts_ns: u64, orig_len: u32, frame: &[u8], out: &mut Vec<FlowRecord>) -> bool {
        self.process_l2(ts_ns, orig_len, frame, L2::Ethernet, out)
    }

    // Inlined into the caller's loop, with the fast path's fields passed
    // on by themselves: they then stay in registers on their way to the key
    // instead of going through an `Option` on the stack (store-forward
    // stalls; callgrind: 4% fewer instructions per packet than one `extract`).
    #[inline(always)]
    pub(crate) fn process_l2(
        &mut self,
        ts_ns: u64,
        orig_len: u32,
        frame: &[u8],
        l2: L2,
        out: &mut Vec<FlowRecord>,
    ) -> bool {
        let caplen = frame.len() as u32;
        // The fast path's fields go straight to the key; only the general
        // parser's answer goes through an `Option` in memory.
        if let Some(info) = fast_extract(frame, l2) {
            return self.process_info(ts_ns, caplen, orig_len, Some(&info), out);
        }
        let info = general_extract(frame, l2, &mut self.scratch);
        self.process_info(ts_ns, caplen, orig_len, info.as_ref(), out)
    }

    /// Meters a packet parsed elsewhere (the dispatcher parses once for the
    /// hash and the table); `None` = no IP header.
    #[inline(always)]
    pub(crate) fn process_info(
        &mut self,
        ts_ns: u64,
        caplen: u32,
        orig_len: u32,
        info: Option<&PacketInfo>,
        out: &mut Vec<FlowRecord>,
    ) -> bool {
        let now = ts_ns.max(self.now_ns);
        self.now_ns = now;
        if now >= self.next_scan_ns {
            self.expire(now, out);
        }
        let captured = u64::from(caplen);
        let Some(info) = info else {
            self.stats.non_ip_packets += 1;
            self.stats.non_ip_bytes += captured;
            return false;
        };
        self.stats.packets += 1;
        self.stats.bytes += captured;
        let len = match self.byte_count {
            ByteCount::Captured => captured,
            ByteCount::Wire => u64::from(orig_len),
        };
        let (key, sent_by_hi) = TableKey::of(info, self.fields);
        let hash = key.hash32();
        prefetch(&self.index[hash as usize & self.mask]);
        self.pending.push(Pending {
            key,
            hash,
            sent_by_hi,
            now,
            len,
            tcp_flags: info.tcp_flags,
            icmp: info.icmp,
        });
        if self.pending.len() >= PIPELINE_PACKETS {
            self.sync(out);
        }
        true
    }

    /// Prefetches the flow that the first bucket tagged `hash` points at.
    /// Only a hint: a stale or missing bucket costs a wasted prefetch.
    #[inline(always)]
    fn prefetch_flow(&self, hash: u32) {
        let mut at = hash as usize & self.mask;
        loop {
            let bucket = self.index[at];
            if bucket == EMPTY_BUCKET {
                return;
            }
            if (bucket >> 32) as u32 == hash {
                if let Some(flow) = self.flows.get(bucket as u32 as usize) {
                    prefetch_all(flow);
                }
                return;
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Applies the deferred packets to the table.
    pub fn sync(&mut self, out: &mut Vec<FlowRecord>) {
        if self.pending.is_empty() {
            return;
        }
        // Their index buckets were prefetched when they arrived; now prefetch
        // the flows the buckets point at, then update in arrival order.
        for p in &self.pending {
            self.prefetch_flow(p.hash);
        }
        let latest = self.now_ns;
        let mut pending = std::mem::take(&mut self.pending);
        for p in &pending {
            // Table time is the packet's own while it is applied.
            self.now_ns = p.now;
            self.meter(p, out);
        }
        self.now_ns = latest;
        pending.clear();
        self.pending = pending;
    }

    #[inline(always)]
    fn meter(&mut self, p: &Pending, out: &mut Vec<FlowRecord>) {
        let (now, len, key, hash, sent_by_hi) = (p.now, p.len, p.key, p.hash, p.sent_by_hi);
        let dir = usize::from(sent_by_hi);
        let flags = p.tcp_flags;
        let mut found = self.find(hash, &key);
        if let Some(slot) = found {
            let f = &self.flows[slot as usize];
            let class = usize::from(f.class);
            if !self.argus && now - f.last_ns > self.idle_ns[class] {
                // Expired before the scan got to it: the packet starts a new flow.
                self.end_flow(slot, EndReason::Idle, out);
                found = None;
            } else if key.proto == 6
                && flags & (tcp_flags::SYN | tcp_flags::ACK) == tcp_flags::SYN
                && f.state & (FlowState::FIN | FlowState::RST) != 0
            {
                self.end_flow(slot, EndReason::Restarted, out);
                found = None;
            } else if now >= f.boundary_ns && !self.advance(slot, now, out) {
                found = None;
            }
        }
        let slot = match found {
            Some(slot) => {
                self.lru_touch(slot);
                slot
            }
            None => self.create(now, hash, key, p, out),
        };
        if self.flows[slot as usize].pkts == [0; 2] {
            self.cold[slot as usize].first_ns = now;
            self.active_push(slot);
        }
        let f = &mut self.flows[slot as usize];
        f.last_ns = now;
        f.pkts[dir] += 1;
        f.bytes[dir] += len;
        let len32 = len.min(u64::from(u32::MAX)) as u32;
        f.min_len = f.min_len.min(len32);
        f.max_len = f.max_len.max(len32);
        if key.proto == 6 {
            f.tcp_flags[dir] |= flags;
            let syn = flags & tcp_flags::SYN != 0;
            let ack = flags & tcp_flags::ACK != 0;
            let mut s = f.state;
            if syn {
                s |= if ack { FlowState::SYN_ACK } else { FlowState::SYN };
            } else if ack && s & FlowState::SYN_ACK != 0 && sent_by_hi == f.initiator_hi {
                s |= FlowState::ESTABLISHED;
            }
            if flags & tcp_flags::FIN != 0 {
                s |= FlowState::FIN;
            }
            if flags & tcp_flags::RST != 0 {
                s |= FlowState::RST;
            }
            f.state = s;
        } else if let (Some((t, c)), false) = (p.icmp, f.has_icmp) {
            f.icmp_type = t;
            f.icmp_code = c;
            f.has_icmp = true;
        }
    }

    /// Emits records for every flow idle past its timeout and splits records
    /// older than the status interval. Called by `process` every 100 ms of
    /// packet time; call it yourself on wall time when no packets arrive.
    pub fn expire(&mut self, now_ns: u64, out: &mut Vec<FlowRecord>) {
        self.sync(out);
        let now = now_ns.max(self.now_ns);
        self.now_ns = now;
        // Argus decides idleness only at status boundaries: a flow silent for
        // idle + active has certainly met one where it was idle.
        let extra = if self.argus {
            self.timeouts.active_ns.unwrap_or(0)
        } else {
            0
        };
        for class in 0..CLASSES {
            let idle = self.idle_ns[class];
            loop {
                let head = self.lru[class].head;
                if head == NONE || now - self.flows[head as usize].last_ns <= idle + extra {
                    break;
                }
                if !self.argus {
                    self.end_flow(head, EndReason::Idle, out);
                } else if self.advance(head, now, out) {
                    break; // cannot happen (see above); never loop forever
                }
            }
        }
        if let Some(active_ns) = self.timeouts.active_ns {
            loop {
                let head = self.active.head;
                // The list is ordered by record start, and a record's boundary
                // is at most `active_ns` after its start.
                if head == NONE || now - self.cold[head as usize].first_ns < active_ns {
                    break;
                }
                self.advance(head, now, out);
                if self.active.head == head {
                    break; // not due after all; never loop forever
                }
            }
        }
        self.next_scan_ns = now.saturating_add(SCAN_INTERVAL_NS);
    }

    /// Emits every active flow (end of input, stop flag) and empties the table.
    pub fn flush(&mut self, out: &mut Vec<FlowRecord>) {
        self.sync(out);
        for class in 0..CLASSES {
            while self.lru[class].head != NONE {
                self.end_flow(self.lru[class].head, EndReason::Flushed, out);
            }
        }
    }

    /// Number of flows in the table.
    pub fn active_flows(&self) -> usize {
        self.live
    }

    /// This table's counters so far (packets and bytes include deferred
    /// packets; flows and records only what [`FlowTable::sync`] applied).
    pub fn stats(&self) -> WorkerStats {
        self.stats
    }

    // ---- flows ---------------------------------------------------------

    fn create(&mut self, now: u64, hash: u32, key: TableKey, p: &Pending, out: &mut Vec<FlowRecord>) -> u32 {
        if self.live >= self.max_flows {
            self.evict_lru(out);
        }
        // TCP: the SYN sender starts the flow; a SYN-ACK seen first was sent by the responder.
        let syn_ack =
            key.proto == 6 && p.tcp_flags & (tcp_flags::SYN | tcp_flags::ACK) == (tcp_flags::SYN | tcp_flags::ACK);
        // Argus orients a TCP flow seen mid-stream (no SYN) by port: the lower port is the server.
        let mid_stream_tcp = self.argus && key.proto == 6 && p.tcp_flags & tcp_flags::SYN == 0;
        let initiator_hi = if mid_stream_tcp && key.lo_port != key.hi_port {
            key.hi_port > key.lo_port
        } else {
            p.sent_by_hi != syn_ack
        };
        let flow = Flow {
            key,
            last_ns: now,
            queued_ns: now,
            boundary_ns: self.timeouts.active_ns.map_or(u64::MAX, |a| now.saturating_add(a)),
            pkts: [0; 2],
            bytes: [0; 2],
            min_len: u32::MAX,
            max_len: 0,
            tcp_flags: [0; 2],
            state: 0,
            initiator_hi,
            class: class_of(key.proto),
            icmp_type: 0,
            icmp_code: 0,
            has_icmp: false,
        };
        let cold = FlowCold {
            first_ns: now,
            lru_prev: NONE,
            lru_next: NONE,
            act_prev: NONE,
            act_next: NONE,
            seq: 0,
        };
        if (self.live + 1) * 2 > self.index.len() {
            self.grow_index();
        }
        let slot = match self.free.pop() {
            Some(slot) => {
                self.flows[slot as usize] = flow;
                self.cold[slot as usize] = cold;
                slot
            }
            None => {
                if self.flows.len() == self.flows.capacity() {
                    let extra = self.flows.len().clamp(1024, self.max_flows.max(1024));
                    self.flows.reserve_exact(extra);
                    advise_huge(&self.flows);
                    self.cold.reserve_exact(extra);
                }
                self.flows.push(flow);
                self.cold.push(cold);
                (self.flows.len() - 1) as u32
            }
        };
        self.index_insert(hash, slot);
        self.lru_push(slot);
        self.live += 1;
        self.stats.flows += 1;
        self.stats.max_active_flows = self.stats.max_active_flows.max(self.live as u64);
        slot
    }

    fn evict_lru(&mut self, out: &mut Vec<FlowRecord>) {
        let victim = self
            .lru
            .iter()
            .filter(|l| l.head != NONE)
            .map(|l| l.head)
            .min_by_key(|&slot| self.flows[slot as usize].last_ns);
        if let Some(slot) = victim {
            self.end_flow(slot, EndReason::Evicted, out);
        }
    }

    fn record(&self, slot: u32, end: EndReason) -> FlowRecord {
        let f = &self.flows[slot as usize];
        let cold = &self.cold[slot as usize];
        let (s, d) = if f.initiator_hi { (1, 0) } else { (0, 1) };
        let has_icmp = f.has_icmp;
        FlowRecord {
            key: f.key.flow_key(f.initiator_hi),
            dns_txid: f.key.dns_txid(),
            icmp_id: f.key.icmp_echo_id(),
            first_ns: cold.first_ns,
            last_ns: f.last_ns,
            src_pkts: f.pkts[s],
            dst_pkts: f.pkts[d],
            src_bytes: f.bytes[s],
            dst_bytes: f.bytes[d],
            src_tcp_flags: f.tcp_flags[s],
            dst_tcp_flags: f.tcp_flags[d],
            state: FlowState(f.state),
            min_pkt_bytes: f.min_len,
            max_pkt_bytes: f.max_len,
            icmp_type: has_icmp.then_some(f.icmp_type),
            icmp_code: has_icmp.then_some(f.icmp_code),
            end,
            seq: cold.seq,
            worker: self.worker,
        }
    }

    /// Applies every status boundary up to `now`: the record is split at
    /// each (emitted if it holds packets), and in Argus mode the flow ends at
    /// the first boundary where it has been idle for its timeout. Returns
    /// whether the flow is still alive.
    fn advance(&mut self, slot: u32, now: u64, out: &mut Vec<FlowRecord>) -> bool {
        let Some(active_ns) = self.timeouts.active_ns else {
            return true;
        };
        loop {
            let f = &self.flows[slot as usize];
            let boundary = f.boundary_ns;
            if now < boundary {
                return true;
            }
            if self.argus && boundary.saturating_sub(f.last_ns) >= self.idle_ns[usize::from(f.class)] {
                self.end_flow(slot, EndReason::Idle, out);
                return false;
            }
            if f.pkts[0] + f.pkts[1] > 0 {
                self.split(slot, out);
            }
            let f = &mut self.flows[slot as usize];
            f.boundary_ns = if self.argus {
                // One interval at a time: idleness is checked at each boundary.
                boundary + active_ns
            } else {
                // Skip empty intervals at once.
                boundary + ((now - boundary) / active_ns + 1) * active_ns
            };
        }
    }

    /// Status split: emit the current record, the flow continues empty.
    fn split(&mut self, slot: u32, out: &mut Vec<FlowRecord>) {
        out.push(self.record(slot, EndReason::Active));
        self.stats.records += 1;
        self.stats.active_splits += 1;
        self.active_unlink(slot);
        let f = &mut self.flows[slot as usize];
        f.pkts = [0; 2];
        f.bytes = [0; 2];
        f.min_len = u32::MAX;
        f.max_len = 0;
        f.tcp_flags = [0; 2];
        self.cold[slot as usize].seq += 1;
    }

    /// Ends a flow: its record (if it holds packets) is emitted and counted.
    fn end_flow(&mut self, slot: u32, reason: EndReason, out: &mut Vec<FlowRecord>) {
        let f = self.flows[slot as usize];
        if f.pkts[0] + f.pkts[1] > 0 {
            out.push(self.record(slot, reason));
            self.stats.records += 1;
            self.active_unlink(slot);
        }
        match reason {
            EndReason::Idle => self.stats.idle_expired += 1,
            EndReason::Evicted => self.stats.evicted += 1,
            EndReason::Flushed => self.stats.flushed += 1,
            EndReason::Restarted => self.stats.restarted += 1,
            EndReason::Active => {}
        }
        self.lru_unlink(slot);
        let hash = f.key.hash32();
        self.index_remove(hash, slot);
        self.free.push(slot);
        self.live -= 1;
    }

    // ---- index -----------------------------------------------------------

    #[inline(always)]
    fn find(&self, hash: u32, key: &TableKey) -> Option<u32> {
        let mut at = hash as usize & self.mask;
        loop {
            let bucket = self.index[at];
            if bucket == EMPTY_BUCKET {
                return None;
            }
            if (bucket >> 32) as u32 == hash {
                let slot = bucket as u32;
                if self.flows[slot as usize].key == *key {
                    return Some(slot);
                }
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Doubles the index and re-inserts every bucket (each keeps its hash).
    #[cold]
    fn grow_index(&mut self) {
        let buckets = self.index.len() * 2;
        let old = std::mem::replace(&mut self.index, huge_vec(buckets, EMPTY_BUCKET));
        self.mask = buckets - 1;
        for bucket in old.into_iter().filter(|&b| b != EMPTY_BUCKET) {
            self.index_insert((bucket >> 32) as u32, bucket as u32);
        }
    }

    fn index_insert(&mut self, hash: u32, slot: u32) {
        let mut at = hash as usize & self.mask;
        while self.index[at] != EMPTY_BUCKET {
            at = (at + 1) & self.mask;
        }
        self.index[at] = u64::from(hash) << 32 | u64::from(slot);
    }

    /// Removes `slot`'s bucket and shifts later buckets of the probe run back
    /// so that every remaining bucket stays reachable from its home.
    fn index_remove(&mut self, hash: u32, slot: u32) {
        let target = u64::from(hash) << 32 | u64::from(slot);
        let mut hole = hash as usize & self.mask;
        while self.index[hole] != target {
            if self.index[hole] == EMPTY_BUCKET {
                debug_assert!(false, "flow missing from index");
                return;
            }
            hole = (hole + 1) & self.mask;
        }
        let mut at = hole;
        loop {
            at = (at + 1) & self.mask;
            let bucket = self.index[at];
            if bucket == EMPTY_BUCKET {
                break;
            }
            let home = (bucket >> 32) as usize & self.mask;
            // Move the bucket into the hole unless its home lies cyclically in (hole, at].
            let home_in_between = if hole <= at {
                hole < home && home <= at
            } else {
                hole < home || home <= at
            };
            if !home_in_between {
                self.index[hole] = bucket;
                hole = at;
            }
        }
        self.index[hole] = EMPTY_BUCKET;
    }

    // ---- lists -----------------------------------------------------------

    fn lru_push(&mut self, slot: u32) {
        let class = usize::from(self.flows[slot as usize].class);
        let tail = self.lru[class].tail;
        self.flows[slot as usize].queued_ns = self.now_ns;
        {
            let c = &mut self.cold[slot as usize];
            c.lru_prev = tail;
            c.lru_next = NONE;
        }
        if tail == NONE {
            self.lru[class].head = slot;
        } else {
            self.cold[tail as usize].lru_next = slot;
        }
        self.lru[class].tail = slot;
    }

    fn lru_unlink(&mut self, slot: u32) {
        let class = usize::from(self.flows[slot as usize].class);
        let f = self.cold[slot as usize];
        if f.lru_prev == NONE {
            self.lru[class].head = f.lru_next;
        } else {
            self.cold[f.lru_prev as usize].lru_next = f.lru_next;
        }
        if f.lru_next == NONE {
            self.lru[class].tail = f.lru_prev;
        } else {
            self.cold[f.lru_next as usize].lru_prev = f.lru_prev;
        }
    }

    /// Moves a flow to the tail of its LRU list (most recently seen) unless
    /// it got there less than the slack ago.
    #[inline(always)]
    fn lru_touch(&mut self, slot: u32) {
        let f = &self.flows[slot as usize];
        let class = usize::from(f.class);
        if self.now_ns - f.queued_ns >= self.lru_slack_ns {
            if self.lru[class].tail == slot {
                // Already last: re-stamping keeps the list sorted.
                self.flows[slot as usize].queued_ns = self.now_ns;
            } else {
                self.lru_unlink(slot);
                self.lru_push(slot);
            }
        }
    }

    fn active_push(&mut self, slot: u32) {
        if self.timeouts.active_ns.is_none() {
            return;
        }
        let tail = self.active.tail;
        {
            let c = &mut self.cold[slot as usize];
            c.act_prev = tail;
            c.act_next = NONE;
        }
        if tail == NONE {
            self.active.head = slot;
        } else {
            self.cold[tail as usize].act_next = slot;
        }
        self.active.tail = slot;
    }

    fn active_unlink(&mut self, slot: u32) {
        if self.timeouts.active_ns.is_none() {
            return;
        }
        let f = self.cold[slot as usize];
        if f.act_prev == NONE {
            self.active.head = f.act_next;
        } else {
            self.cold[f.act_prev as usize].act_next = f.act_next;
        }
        if f.act_next == NONE {
            self.active.tail = f.act_prev;
        } else {
            self.cold[f.act_next as usize].act_prev = f.act_prev;
        }
    }
}

#[cfg(test)]
mod tests;
