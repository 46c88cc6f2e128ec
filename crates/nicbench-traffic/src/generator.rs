//! The packet stream: pull API ([`TrafficGen::next_packet`]), caller-buffer API
//! ([`TrafficGen::next_into`]), batch API ([`TrafficGen::fill_batch`]) and, for
//! callers that need no frame bytes (the simulator), metadata one packet at a
//! time ([`TrafficGen::next_meta`]) or in bursts ([`TrafficGen::fill_meta`],
//! same sequence).
//!
//! Per packet the generator draws a flow (uniform or Zipf), draws a size, takes
//! the timestamp from the [`Pacer`] and emits the flow's frame by copying its
//! header template (`nicbench_wire::builder::TemplateSet`) into a buffer whose
//! payload bytes are already zero; only lengths/checksums are patched when the
//! size differs from the template's (never for `SizeSpec::Fixed`).
//!
//! Invariants: the stream is a pure function of the config (ChaCha8 seeded
//! from `seed`; flows from stream 0, packets from stream 1); all sizes are
//! checked against the headers in [`TrafficGen::new`], so emitting cannot fail.

use nicbench_wire::builder::{captured_len, wire_bytes, BuildError, TemplateSet, MAX_FRAME_SIZE_BYTES};
use nicbench_wire::FlowKey;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::weighted::WeightedAliasIndex;
use rand_distr::Distribution;

use crate::config::{Popularity, SizeSpec, TrafficConfig, IMIX};
use crate::error::TrafficError;
use crate::flows::{frame_spec, generate_flow_keys};
use crate::pacing::Pacer;

/// ChaCha stream ids: the flow set and the packet draws are independent.
const FLOW_STREAM: u64 = 0;
const PACKET_STREAM: u64 = 1;

/// What the generator decided for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketMeta {
    /// Start of the packet on the wire \[ns\].
    pub ts_ns: u64,
    /// Index into [`TrafficGen::flows`].
    pub flow_index: u32,
    /// Ethernet frame size incl. FCS \[B\]; the data is 4 B shorter.
    pub frame_size_bytes: u32,
}

/// One generated packet, borrowed from the generator's buffer.
#[derive(Clone, Copy, Debug)]
pub struct Packet<'a> {
    pub meta: PacketMeta,
    /// Frame bytes without FCS (`frame_size_bytes - 4`).
    pub data: &'a [u8],
}

/// Running totals of a stream (serializes to a flat record, e.g. JSON).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Summary {
    pub packets: u64,
    /// Captured bytes (frames without FCS), as written to pcap.
    pub bytes: u64,
    /// Frame bytes including FCS.
    pub frame_bytes: u64,
    /// Line bytes: frames + 20 B preamble/IFG each.
    pub wire_bytes: u64,
    /// Timestamp of the first packet \[ns\] (0 if none).
    pub first_ts_ns: u64,
    /// Timestamp of the last packet \[ns\] (0 if none).
    pub last_ts_ns: u64,
    /// From the first packet's start to the end of the last one on the wire
    /// (the next packet's slot) \[ns\]; 0 for an unpaced stream.
    pub duration_ns: u64,
}

impl Summary {
    /// Average line rate [Gb/s] over `duration_ns` (wire bytes incl. overhead).
    pub fn avg_gbps(&self) -> f64 {
        if self.duration_ns == 0 {
            return 0.0;
        }
        self.wire_bytes as f64 * 8.0 / self.duration_ns as f64
    }

    /// Average packet rate \[Mpps\] over `duration_ns`.
    pub fn avg_mpps(&self) -> f64 {
        if self.duration_ns == 0 {
            return 0.0;
        }
        self.packets as f64 * 1e3 / self.duration_ns as f64
    }
}

/// Per-packet size draw, precomputed from the [`SizeSpec`].
#[derive(Clone, Debug)]
enum SizePicker {
    Fixed(u32),
    /// Uniform pick from a table (a size list, or IMIX expanded by weight).
    Table(Vec<u32>),
    Uniform {
        min: u32,
        max: u32,
    },
}

impl SizePicker {
    fn new(spec: &SizeSpec) -> SizePicker {
        match spec {
            SizeSpec::Fixed(s) => SizePicker::Fixed(*s),
            SizeSpec::List(sizes) if sizes.len() == 1 => SizePicker::Fixed(sizes[0]),
            SizeSpec::List(sizes) => SizePicker::Table(sizes.clone()),
            SizeSpec::Uniform { min, max } if min == max => SizePicker::Fixed(*min),
            SizeSpec::Uniform { min, max } => SizePicker::Uniform { min: *min, max: *max },
            SizeSpec::Imix => SizePicker::Table(
                IMIX.iter()
                    .flat_map(|&(size, weight)| std::iter::repeat_n(size, weight as usize))
                    .collect(),
            ),
        }
    }

    #[inline]
    fn pick(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            SizePicker::Fixed(s) => *s,
            // Non-empty: validated (`SizeSpec::min_max`).
            SizePicker::Table(t) => t[rng.random_range(0..t.len())],
            SizePicker::Uniform { min, max } => rng.random_range(*min..=*max),
        }
    }
}

/// Per-packet flow draw.
///
/// Zipf is sampled with rand_distr's alias table over the exact weights
/// 1/(i+1)^s: O(1) per packet (two uniform draws). `rand_distr::Zipf`
/// (rejection-inversion) samples the same law without a table but calls
/// `pow` per draw, which cost ~10× the whole rest of a 64 B packet. The
/// table takes 12 B per flow.
#[derive(Clone, Debug)]
enum FlowPicker {
    Uniform(u32),
    Zipf(WeightedAliasIndex<f64>),
    /// The next flow and the flow count (no random draw).
    RoundRobin {
        next: std::cell::Cell<u32>,
        flows: u32,
    },
}

impl FlowPicker {
    fn new(popularity: Popularity, flows: u32) -> Result<FlowPicker, TrafficError> {
        match popularity {
            Popularity::Uniform => Ok(FlowPicker::Uniform(flows)),
            Popularity::RoundRobin => Ok(FlowPicker::RoundRobin {
                next: std::cell::Cell::new(0),
                flows,
            }),
            Popularity::Zipf { s } => {
                let weights = (1..=flows).map(|rank| f64::from(rank).powf(-s)).collect();
                // Fails only for weights that are all zero or not finite (s huge).
                let table = WeightedAliasIndex::new(weights).map_err(|_| TrafficError::InvalidZipf { s })?;
                Ok(FlowPicker::Zipf(table))
            }
        }
    }

    #[inline]
    fn pick(&self, rng: &mut ChaCha8Rng) -> u32 {
        match self {
            FlowPicker::Uniform(n) => rng.random_range(0..*n),
            // The table has `flows` (≤ MAX_FLOWS < 2^32) entries: the cast is lossless.
            FlowPicker::Zipf(table) => table.sample(rng) as u32,
            FlowPicker::RoundRobin { next, flows } => {
                let flow = next.get();
                next.set(if flow + 1 >= *flows { 0 } else { flow + 1 });
                flow
            }
        }
    }
}

/// A seeded, deterministic packet stream.
#[derive(Clone, Debug)]
pub struct TrafficGen {
    config: TrafficConfig,
    flows: Vec<FlowKey>,
    /// `None` until a frame is asked for, for a generator made by [`TrafficGen::new_meta_only`].
    templates: Option<TemplateSet>,
    sizes: SizePicker,
    popularity: FlowPicker,
    rng: ChaCha8Rng,
    pacer: Pacer,
    packet_limit: u64,
    end_ns: u64,
    summary: Summary,
    /// Largest frame's bytes; beyond the header length always zero.
    buf: Vec<u8>,
}

impl TrafficGen {
    /// Validates `config`, draws the flows and builds their templates.
    pub fn new(config: &TrafficConfig) -> Result<TrafficGen, TrafficError> {
        let mut gen = TrafficGen::new_meta_only(config)?;
        gen.ensure_templates()?;
        Ok(gen)
    }

    /// As [`TrafficGen::new`] for a caller that needs packets' metadata only (a simulator):
    /// the same flows and packets, but the frame templates — most of `new`'s time at 10K
    /// flows — are built only if a frame is asked for. Errors that only building a template
    /// can find (a flow's headers that cannot be written) then come from the first frame
    /// method: `next_into` returns them, `next_packet` and `fill_batch` end the stream.
    pub fn new_meta_only(config: &TrafficConfig) -> Result<TrafficGen, TrafficError> {
        config.validate()?;
        let (min_size, max_size) = config.size.min_max()?;
        let mut flow_rng = ChaCha8Rng::seed_from_u64(config.seed);
        flow_rng.set_stream(FLOW_STREAM);
        let flows = generate_flow_keys(config, &mut flow_rng);
        // Both extremes against the headers first, for the precise error message
        // (of the first flow; `validate` asks for at least one).
        let first_spec = frame_spec(&flows[0], max_size.min(MAX_FRAME_SIZE_BYTES));
        for size in [min_size, max_size] {
            first_spec.check_size(size)?;
        }
        let popularity = FlowPicker::new(config.popularity, config.flows)?;
        let mut rng = ChaCha8Rng::seed_from_u64(config.seed);
        rng.set_stream(PACKET_STREAM);
        let end_ns = match config.duration_ns {
            Some(d) => config.start_ns.saturating_add(d),
            None => u64::MAX,
        };
        Ok(TrafficGen {
            config: config.clone(),
            flows,
            templates: None,
            sizes: SizePicker::new(&config.size),
            popularity,
            rng,
            pacer: Pacer::new(config.rate, config.start_ns),
            packet_limit: config.packets.unwrap_or(u64::MAX),
            end_ns,
            summary: Summary::default(),
            buf: vec![0; captured_len(max_size)],
        })
    }

    /// Builds the flows' frame templates if not built yet.
    fn ensure_templates(&mut self) -> Result<(), TrafficError> {
        if self.templates.is_none() {
            let (_, max_size) = self.config.size.min_max()?;
            // Fixed: templates at that size, never patched. Otherwise at the
            // largest size (any legal size would do: patching costs the same).
            let specs: Vec<_> = self
                .flows
                .iter()
                .map(|k| frame_spec(k, max_size.min(MAX_FRAME_SIZE_BYTES)))
                .collect();
            self.templates = Some(TemplateSet::new(&specs)?);
        }
        Ok(())
    }

    pub fn config(&self) -> &TrafficConfig {
        &self.config
    }

    /// The flows, in index order (`PacketMeta::flow_index`; with Zipf, index 0
    /// is the most popular).
    pub fn flows(&self) -> &[FlowKey] {
        &self.flows
    }

    /// Totals of the packets emitted so far.
    pub fn summary(&self) -> Summary {
        let mut s = self.summary;
        if s.packets > 0 {
            // The next packet's slot is where the last one ends on the wire.
            s.duration_ns = self.pacer.next_ts_ns() - s.first_ts_ns;
        }
        s
    }

    /// Largest captured frame the stream can contain \[B\] (buffer size for `next_into`).
    pub fn max_captured_len(&self) -> usize {
        self.buf.len()
    }

    /// Decides the next packet (flow, size, timestamp) without emitting bytes;
    /// `None` once a stop condition is reached.
    #[inline]
    pub fn next_meta(&mut self) -> Option<PacketMeta> {
        if self.summary.packets >= self.packet_limit {
            return None;
        }
        let ts_ns = self.pacer.next_ts_ns();
        if ts_ns >= self.end_ns {
            return None;
        }
        let flow_index = self.popularity.pick(&mut self.rng);
        let frame_size_bytes = self.sizes.pick(&mut self.rng);
        self.pacer.advance(frame_size_bytes);
        let s = &mut self.summary;
        if s.packets == 0 {
            s.first_ts_ns = ts_ns;
        }
        s.packets += 1;
        s.bytes += captured_len(frame_size_bytes) as u64;
        s.frame_bytes += u64::from(frame_size_bytes);
        s.wire_bytes += wire_bytes(frame_size_bytes);
        s.last_ts_ns = ts_ns;
        Some(PacketMeta {
            ts_ns,
            flow_index,
            frame_size_bytes,
        })
    }

    /// Decides up to `out.len()` next packets into `out`; returns how many
    /// (fewer only at the end of the stream, 0 once it has ended). The
    /// sequence, the RNG state and the summary afterwards are exactly those
    /// of as many [`TrafficGen::next_meta`] calls.
    ///
    /// Why a separate loop: per packet `next_meta` re-reads the pacer mode,
    /// the picker variants and the stop conditions and updates five summary
    /// fields in memory; here the picker variants are matched once per call
    /// (one monomorphic loop each), the packet limit becomes a loop bound and
    /// the totals are summed in registers.
    pub fn fill_meta(&mut self, out: &mut [PacketMeta]) -> usize {
        let left = self.packet_limit.saturating_sub(self.summary.packets);
        let max = usize::try_from(left).unwrap_or(usize::MAX).min(out.len());
        let out = &mut out[..max];
        let (pacer, rng, end_ns) = (&mut self.pacer, &mut self.rng, self.end_ns);
        let n = match (&self.popularity, &self.sizes) {
            (FlowPicker::Uniform(flows), SizePicker::Fixed(size)) => {
                let (flows, size) = (*flows, *size);
                fill_loop(pacer, rng, end_ns, out, |r| r.random_range(0..flows), |_| size)
            }
            (FlowPicker::Zipf(table), SizePicker::Fixed(size)) => {
                let size = *size;
                fill_loop(pacer, rng, end_ns, out, |r| table.sample(r) as u32, |_| size)
            }
            (popularity, sizes) => fill_loop(pacer, rng, end_ns, out, |r| popularity.pick(r), |r| sizes.pick(r)),
        };
        self.account(out, n)
    }

    /// As [`TrafficGen::fill_meta`] for a caller to whom the flow of a packet does not matter
    /// (a simulated NIC that treats every flow alike): the same timestamps and sizes and
    /// the same summary, but no flow is drawn (`flow_index` is 0), which with fixed sizes
    /// is most of a packet's cost. `None`, deciding nothing, when sizes are drawn: they share
    /// the RNG with the flows, so skipping the flow draws would change them. The RNG does not
    /// advance, so the flows of later packets differ from those of the seeded sequence.
    pub fn fill_meta_flow_blind(&mut self, out: &mut [PacketMeta]) -> Option<usize> {
        let SizePicker::Fixed(size) = self.sizes else {
            return None;
        };
        let left = self.packet_limit.saturating_sub(self.summary.packets);
        let max = usize::try_from(left).unwrap_or(usize::MAX).min(out.len());
        let out = &mut out[..max];
        let n = fill_loop(&mut self.pacer, &mut self.rng, self.end_ns, out, |_| 0, |_| size);
        Some(self.account(out, n))
    }

    /// Adds the `n` packets decided into `out` to the summary; returns `n`.
    #[inline]
    fn account(&mut self, out: &[PacketMeta], n: usize) -> usize {
        let s = &mut self.summary;
        if let (Some(first), Some(last)) = (out.first(), out[..n].last()) {
            if s.packets == 0 {
                s.first_ts_ns = first.ts_ns;
            }
            s.last_ts_ns = last.ts_ns;
        }
        for m in &out[..n] {
            s.bytes += captured_len(m.frame_size_bytes) as u64;
            s.frame_bytes += u64::from(m.frame_size_bytes);
            s.wire_bytes += wire_bytes(m.frame_size_bytes);
        }
        s.packets += n as u64;
        n
    }

    /// The next packet, borrowed until the next call; `None` at the end of the stream.
    #[inline]
    pub fn next_packet(&mut self) -> Option<Packet<'_>> {
        self.ensure_templates().ok()?;
        let meta = self.next_meta()?;
        let len = emit_headers(self.templates.as_ref()?, &meta, &mut self.buf)?;
        Some(Packet {
            meta,
            data: &self.buf[..len],
        })
    }

    /// Writes the next frame (headers and zero payload) into `out`, which
    /// must hold [`TrafficGen::max_captured_len`] bytes; returns its metadata
    /// (the frame is `out[..frame_size_bytes - 4]`). `Err` only for a short
    /// buffer, in which case no packet is consumed.
    pub fn next_into(&mut self, out: &mut [u8]) -> Result<Option<PacketMeta>, TrafficError> {
        if out.len() < self.buf.len() {
            return Err(BuildError::BufferTooSmall {
                needed_bytes: self.buf.len(),
                got_bytes: out.len(),
            }
            .into());
        }
        self.ensure_templates()?;
        let Some(meta) = self.next_meta() else { return Ok(None) };
        let Some(templates) = self.templates.as_ref() else {
            return Ok(None);
        };
        let len = templates.write_frame(meta.flow_index as usize, meta.frame_size_bytes, out)?;
        debug_assert_eq!(len, captured_len(meta.frame_size_bytes));
        Ok(Some(meta))
    }

    /// Replaces `batch`'s contents with up to `batch.capacity()` next packets;
    /// returns how many (0 at the end of the stream).
    pub fn fill_batch(&mut self, batch: &mut PacketBatch) -> usize {
        batch.metas.clear();
        if self.ensure_templates().is_err() {
            return 0;
        }
        let Some(header_len) = self.templates.as_ref().map(|t| t.plan().header_len()) else {
            return 0;
        };
        let stride = self.buf.len();
        if batch.stride != stride || batch.header_len != header_len {
            // Slots must be zero past the header: (re)initialize for this shape.
            batch.stride = stride;
            batch.header_len = header_len;
            batch.data.clear();
            batch.data.resize(stride * batch.capacity, 0);
        }
        batch.metas.clear();
        for slot in 0..batch.capacity {
            let Some(meta) = self.next_meta() else { break };
            let out = &mut batch.data[slot * stride..(slot + 1) * stride];
            if self
                .templates
                .as_ref()
                .and_then(|t| emit_headers(t, &meta, out))
                .is_none()
            {
                break;
            }
            batch.metas.push(meta);
        }
        batch.metas.len()
    }
}

/// The body of [`TrafficGen::fill_meta`] for one (flow, size) picker pair:
/// same draws in the same order (flow, then size) as `next_meta`. Takes the
/// fields as separate borrows so the pacer and RNG state stay in registers.
#[inline(always)]
fn fill_loop(
    pacer: &mut Pacer,
    rng: &mut ChaCha8Rng,
    end_ns: u64,
    out: &mut [PacketMeta],
    mut pick_flow: impl FnMut(&mut ChaCha8Rng) -> u32,
    mut pick_size: impl FnMut(&mut ChaCha8Rng) -> u32,
) -> usize {
    // A local copy: its mode flags are then provably loop-invariant.
    let mut p = pacer.clone();
    let n = fill_slots(&mut p, rng, end_ns, out, &mut pick_flow, &mut pick_size);
    *pacer = p;
    n
}

#[inline(always)]
fn fill_slots(
    pacer: &mut Pacer,
    rng: &mut ChaCha8Rng,
    end_ns: u64,
    out: &mut [PacketMeta],
    pick_flow: &mut impl FnMut(&mut ChaCha8Rng) -> u32,
    pick_size: &mut impl FnMut(&mut ChaCha8Rng) -> u32,
) -> usize {
    for (i, slot) in out.iter_mut().enumerate() {
        let ts_ns = pacer.next_ts_ns();
        if ts_ns >= end_ns {
            return i;
        }
        let flow_index = pick_flow(rng);
        let frame_size_bytes = pick_size(rng);
        pacer.advance(frame_size_bytes);
        *slot = PacketMeta {
            ts_ns,
            flow_index,
            frame_size_bytes,
        };
    }
    out.len()
}

/// Writes `meta`'s headers into `out`; the payload part must already be zero.
#[inline]
fn emit_headers(templates: &TemplateSet, meta: &PacketMeta, out: &mut [u8]) -> Option<usize> {
    let written = templates.write_headers(meta.flow_index as usize, meta.frame_size_bytes, out);
    // Sizes and indices were checked in `TrafficGen::new`; a failure here is a bug.
    debug_assert!(written.is_ok(), "{written:?}");
    written.ok()
}

/// A reusable block of up to `capacity` packets (e.g. 32 or 256, like a NIC
/// burst), stored contiguously with one max-frame slot each.
#[derive(Clone, Debug)]
pub struct PacketBatch {
    capacity: usize,
    stride: usize,
    header_len: usize,
    data: Vec<u8>,
    metas: Vec<PacketMeta>,
}

impl PacketBatch {
    pub fn with_capacity(capacity: usize) -> PacketBatch {
        PacketBatch {
            capacity,
            stride: 0,
            header_len: 0,
            data: Vec::new(),
            metas: Vec::with_capacity(capacity),
        }
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub fn len(&self) -> usize {
        self.metas.len()
    }

    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
    }

    /// Packet `i` of the batch.
    pub fn get(&self, i: usize) -> Option<Packet<'_>> {
        let meta = *self.metas.get(i)?;
        let start = i * self.stride;
        let data = self.data.get(start..start + captured_len(meta.frame_size_bytes))?;
        Some(Packet { meta, data })
    }

    pub fn iter(&self) -> impl Iterator<Item = Packet<'_>> + '_ {
        (0..self.len()).filter_map(move |i| self.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Rate;

    #[test]
    fn test_round_robin_flows_take_turns_in_both_apis() {
        let config = TrafficConfig {
            flows: 7,
            popularity: Popularity::RoundRobin,
            size: SizeSpec::List(vec![64, 128]),
            packets: Some(50),
            ..TrafficConfig::default()
        };
        let (singles, _, bursts, _) = both_ways(&config, &[3, 11]);
        assert_eq!(singles, bursts);
        let flows: Vec<u32> = singles.iter().map(|m| m.flow_index).collect();
        assert_eq!(flows, (0..50).map(|k| k % 7).collect::<Vec<u32>>());
    }

    /// Drains `config` with `fill_meta` in chunks of the given lengths
    /// (cycled) and with `next_meta`, packet by packet.
    fn both_ways(config: &TrafficConfig, chunks: &[usize]) -> (Vec<PacketMeta>, Summary, Vec<PacketMeta>, Summary) {
        let mut one = TrafficGen::new(config).expect("valid config");
        let singles: Vec<_> = std::iter::from_fn(|| one.next_meta()).collect();
        let mut burst = TrafficGen::new(config).expect("valid config");
        let mut buf = vec![
            PacketMeta {
                ts_ns: 0,
                flow_index: 0,
                frame_size_bytes: 0
            };
            300
        ];
        let mut bursts = Vec::new();
        for &len in chunks.iter().cycle() {
            let n = burst.fill_meta(&mut buf[..len]);
            assert!(n <= len);
            bursts.extend_from_slice(&buf[..n]);
            if n < len {
                break;
            }
        }
        assert_eq!(burst.fill_meta(&mut buf), 0, "an ended stream stays ended");
        assert_eq!(burst.next_meta(), None);
        (singles, one.summary(), bursts, burst.summary())
    }

    #[test]
    fn test_fill_meta_matches_next_meta() {
        let base = TrafficConfig {
            flows: 333,
            seed: 42,
            start_ns: 17,
            duration_ns: Some(200_000),
            ..TrafficConfig::default()
        };
        let configs = [
            base.clone(),
            TrafficConfig {
                popularity: Popularity::Zipf { s: 1.1 },
                size: SizeSpec::Fixed(1500),
                ..base.clone()
            },
            TrafficConfig {
                size: SizeSpec::Imix,
                rate: Rate::Mpps(7.0),
                ..base.clone()
            },
            TrafficConfig {
                size: SizeSpec::Uniform { min: 64, max: 1518 },
                popularity: Popularity::Zipf { s: 0.9 },
                ..base.clone()
            },
            TrafficConfig {
                size: SizeSpec::List(vec![64, 128, 9000]),
                packets: Some(1234),
                duration_ns: None,
                ..base.clone()
            },
            TrafficConfig {
                rate: Rate::Unlimited,
                packets: Some(777),
                duration_ns: None,
                ..base.clone()
            },
        ];
        for config in &configs {
            for chunks in [&[1usize][..], &[32], &[300], &[0, 5, 64, 1, 255]] {
                let (singles, s1, bursts, s2) = both_ways(config, chunks);
                assert!(singles.len() > 100, "{config:?}: {} packets", singles.len());
                assert_eq!(singles, bursts, "{config:?} chunks {chunks:?}");
                assert_eq!(s1, s2, "{config:?} chunks {chunks:?}");
            }
        }
    }

    #[test]
    fn test_fill_meta_interleaves_with_next_meta() {
        let config = TrafficConfig {
            size: SizeSpec::Imix,
            packets: Some(500),
            ..TrafficConfig::default()
        };
        let mut reference = TrafficGen::new(&config).expect("valid config");
        let expected: Vec<_> = std::iter::from_fn(|| reference.next_meta()).collect();
        let mut gen = TrafficGen::new(&config).expect("valid config");
        let mut got = Vec::new();
        let mut buf = [PacketMeta {
            ts_ns: 0,
            flow_index: 0,
            frame_size_bytes: 0,
        }; 40];
        loop {
            let n = gen.fill_meta(&mut buf);
            got.extend_from_slice(&buf[..n]);
            let Some(m) = gen.next_meta() else { break };
            got.push(m);
        }
        assert_eq!(got.len(), 500);
        assert_eq!(got, expected);
        assert_eq!(gen.summary(), reference.summary());
    }
    #[test]
    fn test_fill_meta_flow_blind_keeps_times_sizes_and_summary_and_refuses_drawn_sizes() {
        let base = TrafficConfig {
            flows: 333,
            seed: 42,
            start_ns: 17,
            duration_ns: Some(200_000),
            ..TrafficConfig::default()
        };
        for config in [
            TrafficConfig {
                size: SizeSpec::Fixed(1500),
                ..base.clone()
            },
            TrafficConfig {
                popularity: Popularity::Zipf { s: 1.1 },
                size: SizeSpec::Fixed(64),
                rate: Rate::Mpps(7.0),
                ..base.clone()
            },
            TrafficConfig {
                size: SizeSpec::Uniform { min: 200, max: 200 },
                packets: Some(1234),
                duration_ns: None,
                ..base.clone()
            },
        ] {
            let mut reference = TrafficGen::new(&config).expect("valid config");
            let expected: Vec<_> = std::iter::from_fn(|| reference.next_meta()).collect();
            let mut gen = TrafficGen::new(&config).expect("valid config");
            let mut got = Vec::new();
            let mut buf = [PacketMeta {
                ts_ns: 0,
                flow_index: 7,
                frame_size_bytes: 0,
            }; 40];
            loop {
                let n = gen.fill_meta_flow_blind(&mut buf).expect("fixed sizes");
                got.extend_from_slice(&buf[..n]);
                if n == 0 {
                    break;
                }
            }
            assert!(
                expected.len() > 100 && expected.iter().any(|m| m.flow_index != 0),
                "{config:?}"
            );
            let without_flows: Vec<_> = expected.iter().map(|m| PacketMeta { flow_index: 0, ..*m }).collect();
            assert_eq!(got, without_flows, "{config:?}");
            assert_eq!(gen.summary(), reference.summary(), "{config:?}");
        }
        let mut drawn = TrafficGen::new(&TrafficConfig {
            size: SizeSpec::Imix,
            ..base
        })
        .expect("valid config");
        let mut buf = [PacketMeta {
            ts_ns: 0,
            flow_index: 0,
            frame_size_bytes: 0,
        }; 4];
        assert_eq!(drawn.fill_meta_flow_blind(&mut buf), None);
        assert_eq!(drawn.summary().packets, 0, "nothing decided");
    }
    #[test]
    fn test_a_meta_only_generator_gives_the_same_packets_and_builds_frames_when_asked() {
        let config = TrafficConfig {
            flows: 50,
            size: SizeSpec::Imix,
            packets: Some(300),
            seed: 9,
            ..TrafficConfig::default()
        };
        let mut full = TrafficGen::new(&config).expect("valid config");
        let mut meta_only = TrafficGen::new_meta_only(&config).expect("valid config");
        assert!(meta_only.templates.is_none(), "no template before a frame is asked for");
        let mut buf = [PacketMeta {
            ts_ns: 0,
            flow_index: 0,
            frame_size_bytes: 0,
        }; 100];
        let mut buf2 = buf;
        assert_eq!(full.fill_meta(&mut buf), meta_only.fill_meta(&mut buf2));
        assert_eq!(buf, buf2);
        assert!(meta_only.templates.is_none());
        for _ in 0..100 {
            let (a, b) = (
                full.next_packet().expect("packet"),
                meta_only.next_packet().expect("packet"),
            );
            assert_eq!((a.meta, a.data), (b.meta, b.data));
        }
        let mut batches = (PacketBatch::with_capacity(32), PacketBatch::with_capacity(32));
        let mut meta_only = TrafficGen::new_meta_only(&config).expect("valid config");
        let mut full = TrafficGen::new(&config).expect("valid config");
        assert_eq!(full.fill_batch(&mut batches.0), meta_only.fill_batch(&mut batches.1));
        assert!(batches
            .0
            .iter()
            .map(|p| p.data.to_vec())
            .eq(batches.1.iter().map(|p| p.data.to_vec())));
        let (mut out_a, mut out_b) = (vec![0u8; full.max_captured_len()], vec![0u8; full.max_captured_len()]);
        let mut meta_only = TrafficGen::new_meta_only(&config).expect("valid config");
        let mut full = TrafficGen::new(&config).expect("valid config");
        assert_eq!(
            full.next_into(&mut out_a).expect("fits"),
            meta_only.next_into(&mut out_b).expect("fits")
        );
        assert_eq!(out_a, out_b);
    }
}
