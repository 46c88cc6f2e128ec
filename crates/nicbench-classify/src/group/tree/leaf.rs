//! Leaf blocks: the inline checks of up to [`LANES`] rules packed field by field (SoA), so
//! one leaf step tests eight rules with a handful of vector instructions (AVX2) or a
//! branch-free scalar loop, reading four consecutive cache lines instead of one line per
//! rule.
//!
//! Invariants:
//! - lane `l` of block `b` holds the check of the rule whose tree index is
//!   `SubTree::idx[b * LANES + l]`; within a leaf, indices ascend lane by lane and block
//!   by block, so the lowest matching lane of the first block with a match is the leaf's
//!   best candidate;
//! - unused lanes hold [`Block::EMPTY`]'s never-matching check (`hi & 0 == 1`), and
//!   [`NO_INDEX`] in `idx`;
//! - the AVX2 and the scalar [`Block::mask`] give the same bits (tested).

use super::{Check, Fields};

/// Rules per block.
pub(super) const LANES: usize = 8;

/// `idx` of an unused lane.
pub(super) const NO_INDEX: u32 = u32::MAX;

/// Eight rules' inline checks, 256 bytes (four cache lines). Intervals are (low, span) as
/// in [`Check`]; the ports are paired in one `u32` (source port low, destination high)
/// and compared as two 16-bit lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C, align(64))]
pub(super) struct Block {
    src_lo: [u32; LANES],
    src_span: [u32; LANES],
    dst_lo: [u32; LANES],
    dst_span: [u32; LANES],
    port_lo: [u32; LANES],
    port_span: [u32; LANES],
    hi_mask: [u32; LANES],
    hi_value: [u32; LANES],
}

impl Block {
    /// A block whose lanes never match.
    pub const EMPTY: Block = Block {
        src_lo: [0; LANES],
        src_span: [0; LANES],
        dst_lo: [0; LANES],
        dst_span: [0; LANES],
        port_lo: [0; LANES],
        port_span: [0; LANES],
        hi_mask: [0; LANES],
        hi_value: [1; LANES],
    };

    pub fn set(&mut self, lane: usize, c: &Check) {
        self.src_lo[lane] = c.src_lo;
        self.src_span[lane] = c.src_span;
        self.dst_lo[lane] = c.dst_lo;
        self.dst_span[lane] = c.dst_span;
        self.port_lo[lane] = c.sport_lo as u32 | (c.dport_lo as u32) << 16;
        self.port_span[lane] = c.sport_span as u32 | (c.dport_span as u32) << 16;
        self.hi_mask[lane] = c.hi_mask;
        self.hi_value[lane] = c.hi_value;
    }

    /// Whether lane `lane` holds [`Block::EMPTY`]'s check, which no key passes.
    pub fn never_matches(&self, lane: usize) -> bool {
        self.hi_mask[lane] == 0 && self.hi_value[lane] != 0
    }

    /// Bit `l` set when lane `l` matches `f`. `avx2` must only be true when the CPU has
    /// AVX2 (the tree checks it once, at build time).
    #[inline(always)]
    pub fn mask(&self, f: &Fields, avx2: bool) -> u32 {
        #[cfg(target_arch = "x86_64")]
        if avx2 {
            // SAFETY: the caller promises AVX2 is available.
            return unsafe { self.mask_avx2(f) };
        }
        let _ = avx2;
        self.mask_scalar(f)
    }

    #[inline(always)]
    pub fn mask_scalar(&self, f: &Fields) -> u32 {
        let (sp, dp) = (f.d[2] as u16, f.d[3] as u16);
        let mut m = 0u32;
        for l in 0..LANES {
            let hit = (f.d[0].wrapping_sub(self.src_lo[l]) <= self.src_span[l])
                & (f.d[1].wrapping_sub(self.dst_lo[l]) <= self.dst_span[l])
                & (sp.wrapping_sub(self.port_lo[l] as u16) <= self.port_span[l] as u16)
                & (dp.wrapping_sub((self.port_lo[l] >> 16) as u16) <= (self.port_span[l] >> 16) as u16)
                & (f.hi & self.hi_mask[l] == self.hi_value[l]);
            m |= (hit as u32) << l;
        }
        m
    }

    /// [`mask_scalar`](Self::mask_scalar) in AVX2: `x - lo <= span` (unsigned) as
    /// `min(x - lo, span) == x - lo`, the ports as two 16-bit lanes that must both pass.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    pub unsafe fn mask_avx2(&self, f: &Fields) -> u32 {
        use std::arch::x86_64::*;
        // Aligned loads: `Block` is 64-byte aligned and each array is 32 bytes at a
        // multiple of 32, so every load is in bounds and aligned.
        macro_rules! ld {
            ($a:expr) => {
                _mm256_load_si256($a.as_ptr() as *const __m256i)
            };
        }
        macro_rules! within {
            ($x:expr, $lo:expr, $span:expr) => {{
                let d = _mm256_sub_epi32($x, ld!($lo));
                _mm256_cmpeq_epi32(_mm256_min_epu32(d, ld!($span)), d)
            }};
        }
        // SAFETY: AVX2 is enabled here; the loads are in bounds and aligned (above).
        unsafe {
            let src = within!(_mm256_set1_epi32(f.d[0] as i32), self.src_lo, self.src_span);
            let dst = within!(_mm256_set1_epi32(f.d[1] as i32), self.dst_lo, self.dst_span);
            let ports = _mm256_set1_epi32(f.ports as i32);
            let dp = _mm256_sub_epi16(ports, ld!(self.port_lo));
            let pok = _mm256_cmpeq_epi16(_mm256_min_epu16(dp, ld!(self.port_span)), dp);
            let hi = _mm256_cmpeq_epi32(
                _mm256_and_si256(_mm256_set1_epi32(f.hi as i32), ld!(self.hi_mask)),
                ld!(self.hi_value),
            );
            // A 32-bit lane's port test passes when both of its 16-bit halves are all ones.
            let all = _mm256_and_si256(
                _mm256_and_si256(src, dst),
                _mm256_and_si256(hi, _mm256_cmpeq_epi32(pok, _mm256_set1_epi32(-1))),
            );
            _mm256_movemask_ps(_mm256_castsi256_ps(all)) as u32
        }
    }
}

/// Whether this CPU runs the AVX2 leaf check (and the descent's BMI1 child index: every
/// AVX2 CPU has BMI1, the check is for emulators that mix them).
pub(super) fn have_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("bmi1")
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Packs `checks` (in leaf order) into blocks, appending to `blocks` and `idx`; returns
/// the number of blocks added.
pub(super) fn pack(indices: &[u32], checks: &[Check], blocks: &mut Vec<Block>, idx: &mut Vec<u32>) -> u32 {
    let n = indices.len().div_ceil(LANES);
    for chunk in indices.chunks(LANES) {
        let mut b = Block::EMPTY;
        for (lane, &i) in chunk.iter().enumerate() {
            if let Some(c) = checks.get(i as usize) {
                b.set(lane, c);
            }
        }
        blocks.push(b);
        idx.extend_from_slice(chunk);
        idx.extend(std::iter::repeat_n(NO_INDEX, LANES - chunk.len()));
    }
    n as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn random_check(rng: &mut impl Rng) -> Check {
        let span = |rng: &mut dyn rand::RngCore, bits: u32| -> u32 {
            match rng.random_range(0..3) {
                0 => 0,
                1 => u32::MAX >> (32 - bits),
                _ => rng.random::<u32>() >> (32 - bits) >> rng.random_range(0..bits),
            }
        };
        Check {
            src_lo: rng.random(),
            src_span: span(rng, 32),
            dst_lo: rng.random(),
            dst_span: span(rng, 32),
            sport_lo: rng.random(),
            sport_span: span(rng, 16) as u16,
            dport_lo: rng.random(),
            dport_span: span(rng, 16) as u16,
            hi_mask: [0, 0xff, 0xffff][rng.random_range(0..3)],
            hi_value: 0,
        }
    }

    /// Every lane of the scalar and (when available) the AVX2 mask agrees with the
    /// rule's own [`Check::matches`], on keys near the intervals' edges.
    #[test]
    fn test_block_mask_agrees_with_check() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        for _ in 0..300 {
            let checks: Vec<Check> = (0..LANES - rng.random_range(0..3))
                .map(|_| {
                    let mut c = random_check(&mut rng);
                    c.hi_value = rng.random::<u32>() & c.hi_mask & 0x1ff;
                    c
                })
                .collect();
            let (mut blocks, mut idx) = (Vec::new(), Vec::new());
            let order: Vec<u32> = (0..checks.len() as u32).collect();
            assert_eq!(pack(&order, &checks, &mut blocks, &mut idx), 1);
            assert_eq!(idx.len(), LANES);
            for _ in 0..200 {
                let c = &checks[rng.random_range(0..checks.len())];
                let pick = |rng: &mut rand_chacha::ChaCha8Rng, lo: u32, span: u32| match rng.random_range(0..4) {
                    0 => lo,
                    1 => lo.wrapping_add(span),
                    2 => lo.wrapping_add(span).wrapping_add(1),
                    _ => rng.random(),
                };
                let mut f = Fields {
                    d: [
                        pick(&mut rng, c.src_lo, c.src_span),
                        pick(&mut rng, c.dst_lo, c.dst_span),
                        pick(&mut rng, c.sport_lo as u32, c.sport_span as u32) & 0xffff,
                        pick(&mut rng, c.dport_lo as u32, c.dport_span as u32) & 0xffff,
                        0,
                        0,
                        0,
                        0,
                    ],
                    hi: rng.random::<u32>() & 0x1ff,
                    ports: 0,
                };
                f.ports = f.d[2] | f.d[3] << 16;
                let want: u32 = checks
                    .iter()
                    .enumerate()
                    .map(|(l, c)| (c.matches(&f) as u32) << l)
                    .sum();
                assert_eq!(blocks[0].mask_scalar(&f), want, "scalar {f:?}");
                if have_avx2() {
                    assert_eq!(blocks[0].mask(&f, true), want, "avx2 {f:?}");
                }
            }
        }
    }

    #[test]
    fn test_empty_lanes_never_match() {
        let f = Fields::default();
        assert_eq!(Block::EMPTY.mask_scalar(&f), 0);
        assert_eq!(Block::EMPTY.mask(&f, have_avx2()), 0);
        let any = Check {
            src_span: u32::MAX,
            dst_span: u32::MAX,
            sport_span: u16::MAX,
            dport_span: u16::MAX,
            ..Default::default()
        };
        let (mut blocks, mut idx) = (Vec::new(), Vec::new());
        pack(&[0, 0, 0], &[any], &mut blocks, &mut idx);
        assert_eq!(
            blocks[0].mask(&f, have_avx2()),
            0b111,
            "three copies of a match-all rule, five empty lanes"
        );
        assert_eq!(&idx[3..], &[NO_INDEX; 5]);
    }
}
