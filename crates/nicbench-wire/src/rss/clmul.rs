//! Toeplitz of a 12-byte IPv4 input by carry-less multiplication (PCLMULQDQ):
//! 3 multiplies instead of 12 table loads.
//!
//! Why it works: input bit `i` (most significant first) selects key bits
//! `i..i+32` (most significant first). Put the input in a 96-bit integer the
//! natural way (bit `i` at position `95 - i`) and the key bit-reversed (key bit
//! `j` at position `j`). Their carry-less product XORs, at position `95 + t`,
//! every `input[i] & key[i + t]`: that is hash bit `t` counted from the most
//! significant end. So the hash is bits 95..127 of the product, bit-reversed.
//! Only key bits `0..127` take part (`i + t <= 95 + 31`), so keys of at least
//! 16 bytes qualify; shorter keys cut the input and keep the tables.
//!
//! With `input = hi·2^64 + lo` (`hi` 32 bits) and the reversed key
//! `k = kh·2^64 + kl`, bits 95..127 of the product come from `lo·kl` (its high
//! half) and from the low halves of `lo·kh` and `hi·kl`; `hi·kh` starts at bit
//! 128. The key is stored shifted left by one (its bit 127, never used, drops
//! out) so that the wanted bits are exactly the top 32 of each 64-bit lane.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m128i, _mm_clmulepi64_si128, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_set_epi64x, _mm_unpackhi_epi64, _mm_xor_si128,
};

/// The first 16 key bytes, prepared once per key.
#[derive(Clone, Copy, Debug)]
pub(super) struct ClmulKey {
    /// Key bit `j` (most significant first) at position `j + 1` of a 128-bit
    /// little-endian integer: `[low 64 bits, high 64 bits]`.
    reversed: [u64; 2],
}

impl ClmulKey {
    /// `Some` when the CPU has PCLMULQDQ (checked here, at run time) and the key
    /// covers a 12-byte input without cutting it.
    pub(super) fn new(key: &[u8]) -> Option<ClmulKey> {
        #[cfg(target_arch = "x86_64")]
        {
            let first: [u8; 16] = key.get(..16)?.try_into().ok()?;
            if !std::arch::is_x86_feature_detected!("pclmulqdq") {
                return None;
            }
            let reversed = u128::from_be_bytes(first).reverse_bits() << 1;
            Some(ClmulKey { reversed: [reversed as u64, (reversed >> 64) as u64] })
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = key;
            None
        }
    }

    /// Toeplitz hash of the 12 bytes `addrs` (big-endian, 8 bytes) then `ports`
    /// (big-endian, 4 bytes).
    #[cfg(target_arch = "x86_64")]
    #[inline]
    pub(super) fn hash_ipv4(&self, addrs: u64, ports: u32) -> u32 {
        // SAFETY: a `ClmulKey` exists only where `new` detected PCLMULQDQ.
        unsafe { hash_ipv4_clmul(&self.reversed, addrs, ports) }
    }

    #[cfg(not(target_arch = "x86_64"))]
    pub(super) fn hash_ipv4(&self, _addrs: u64, _ports: u32) -> u32 {
        unreachable!("ClmulKey::new returns None off x86_64: {:?}", self.reversed)
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "pclmulqdq")]
unsafe fn hash_ipv4_clmul(key: &[u64; 2], addrs: u64, ports: u32) -> u32 {
    let key = _mm_loadu_si128(key.as_ptr().cast::<__m128i>());
    let hi = addrs >> 32;
    let lo = (addrs << 32) | u64::from(ports);
    let input = _mm_set_epi64x(hi as i64, lo as i64);
    // lo·kl (its high lane holds product bits 64..127), lo·kh and hi·kl (their
    // low lanes hold product bits 64..127 once shifted by 64).
    let low = _mm_clmulepi64_si128::<0x00>(input, key);
    let cross = _mm_xor_si128(_mm_clmulepi64_si128::<0x10>(input, key), _mm_clmulepi64_si128::<0x01>(input, key));
    let lanes = _mm_xor_si128(_mm_unpackhi_epi64(low, low), cross);
    let bits = _mm_cvtsi128_si64(lanes) as u64;
    ((bits >> 32) as u32).reverse_bits()
}
