//! Frame templates: build a flow's frame once with etherparse, then re-emit it
//! at any legal size by copying the header bytes and patching what the size
//! changes.
//!
//! Why this is enough: the payload is all zeros, and zeros add nothing to a
//! ones'-complement sum, so a size change alters only the length fields (IPv4
//! total length, IPv6 payload length, UDP length — outer and inner) and the
//! checksums that cover them (IPv4 header checksum; UDP/TCP/ICMPv6 checksums
//! through their pseudo-header length, UDP also through its own length field).
//! Those checksums are updated incrementally (RFC 1624 eqn. 3) — a handful of
//! adds — instead of being recomputed. The VXLAN outer UDP checksum is 0, so
//! no checksum depends on bytes of another layer. The unit tests compare
//! patched frames byte-for-byte with frames etherparse builds at that size.
//!
//! Invariant: a [`PatchPlan`] depends only on the header *shape* (family,
//! L4, tags, VXLAN) and the template's frame size, not on addresses or ports,
//! so a [`TemplateSet`] of same-shape flows shares one plan and stores only
//! `header_len` bytes per flow (cache-friendly for many flows).

use super::{captured_len, BuildError, FrameSpec, L4Spec, VxlanSpec, MAX_FRAME_SIZE_BYTES};

/// Offset marker for "this patch has no such field".
const ABSENT: u16 = u16::MAX;

/// One length value that follows the frame size, where it is stored, and
/// which checksum covers it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct LenPatch {
    /// The length value at the plan's frame size.
    base_len: u16,
    /// Offset of the 16-bit big-endian length field, or `ABSENT` (TCP and
    /// ICMPv6 carry their length only in the checksum pseudo-header).
    len_at: u16,
    /// Offset of the checksum covering this length, or `ABSENT`.
    csum_at: u16,
    /// How many times the length enters that checksum's sum (UDP: twice,
    /// pseudo-header and header).
    csum_weight: u8,
    /// UDP: a computed checksum of 0 is sent as 0xFFFF (0 means "none").
    zero_is_none: bool,
}

/// Where a template's size-dependent fields are; shared by same-shape flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PatchPlan {
    /// Frame size (incl. FCS) the template bytes were built at.
    frame_size_bytes: u32,
    /// Smallest frame size (incl. FCS) the headers fit in.
    min_frame_size_bytes: u32,
    header_len: usize,
    patches: [LenPatch; 4],
    n_patches: usize,
}

impl PatchPlan {
    /// Plan for `spec` at `spec.frame_size_bytes`. The spec must be valid
    /// (the caller has built it successfully).
    fn for_spec(spec: &FrameSpec) -> PatchPlan {
        let cap = captured_len(spec.frame_size_bytes);
        let mut plan = PatchPlan {
            frame_size_bytes: spec.frame_size_bytes,
            min_frame_size_bytes: spec.min_frame_size_bytes(),
            header_len: spec.header_len_bytes(),
            patches: [LenPatch::default(); 4],
            n_patches: 0,
        };
        // Offsets and lengths are < 9018, so the u16 casts below are lossless.
        let mut push = |base: usize, len_at: usize, csum_at: Option<usize>, csum_weight: u8, zero_is_none: bool| {
            plan.patches[plan.n_patches] = LenPatch {
                base_len: base as u16,
                len_at: if len_at == usize::MAX { ABSENT } else { len_at as u16 },
                csum_at: csum_at.map_or(ABSENT, |c| c as u16),
                csum_weight,
                zero_is_none,
            };
            plan.n_patches += 1;
        };
        let l2_len = 14 + spec.vlan.len_bytes();
        let ip_at = match spec.vxlan {
            Some(_) => {
                let outer_ip_at = l2_len;
                push(cap - outer_ip_at, outer_ip_at + 2, Some(outer_ip_at + 10), 1, false);
                let outer_udp_at = outer_ip_at + 20;
                // Outer UDP checksum is 0: length only.
                push(cap - outer_udp_at, outer_udp_at + 4, None, 0, false);
                l2_len + VxlanSpec::OUTER_LEN_BYTES
            }
            None => l2_len,
        };
        let ipv6 = spec.is_ipv6();
        let l4_at = ip_at + if ipv6 { 40 } else { 20 };
        let l4_len = cap - l4_at;
        if ipv6 {
            push(l4_len, ip_at + 4, None, 0, false);
        } else {
            push(cap - ip_at, ip_at + 2, Some(ip_at + 10), 1, false);
        }
        match spec.l4 {
            L4Spec::Udp { .. } => push(l4_len, l4_at + 4, Some(l4_at + 6), 2, true),
            L4Spec::Tcp { .. } => push(l4_len, usize::MAX, Some(l4_at + 16), 1, false),
            L4Spec::IcmpEcho { .. } if ipv6 => push(l4_len, usize::MAX, Some(l4_at + 2), 1, false),
            // The ICMPv4 checksum covers only the (zero-padded) message: size-independent.
            L4Spec::IcmpEcho { .. } => {}
        }
        plan
    }

    /// Header bytes per frame.
    pub fn header_len(&self) -> usize {
        self.header_len
    }

    /// Frame size (incl. FCS) the template was built at.
    pub fn frame_size_bytes(&self) -> u32 {
        self.frame_size_bytes
    }

    /// Smallest frame size (incl. FCS) these headers fit in (≥ 64).
    pub fn min_frame_size_bytes(&self) -> u32 {
        self.min_frame_size_bytes
    }

    /// Whether `frame_size_bytes` is a size this plan can emit.
    #[inline]
    pub fn accepts(&self, frame_size_bytes: u32) -> bool {
        (self.min_frame_size_bytes..=MAX_FRAME_SIZE_BYTES).contains(&frame_size_bytes)
    }

    /// Copies `headers` into `out` and patches them for `frame_size_bytes`.
    /// Preconditions (checked by callers): `accepts(frame_size_bytes)`,
    /// `headers.len() == header_len`, `out.len() >= header_len`.
    #[inline]
    fn apply(&self, headers: &[u8], frame_size_bytes: u32, out: &mut [u8]) {
        out[..self.header_len].copy_from_slice(headers);
        if frame_size_bytes == self.frame_size_bytes {
            return;
        }
        // Both sizes are ≤ 9018, so the difference fits; lengths stay ≥ header sizes.
        let delta = frame_size_bytes as i32 - self.frame_size_bytes as i32;
        for p in &self.patches[..self.n_patches] {
            let new_len = (p.base_len as i32 + delta) as u16;
            if p.len_at != ABSENT {
                write_be16(out, p.len_at as usize, new_len);
            }
            if p.csum_at != ABSENT {
                let at = p.csum_at as usize;
                let mut csum = read_be16(out, at);
                for _ in 0..p.csum_weight {
                    csum = checksum_replace(csum, p.base_len, new_len);
                }
                if p.zero_is_none && csum == 0 {
                    csum = 0xFFFF;
                }
                write_be16(out, at, csum);
            }
        }
    }
}

/// RFC 1624 eqn. 3: the checksum after one 16-bit word of the covered data
/// changes from `old` to `new`: HC' = ~(~HC + ~m + m').
#[inline]
pub(super) fn checksum_replace(checksum: u16, old: u16, new: u16) -> u16 {
    let mut sum = (!checksum) as u32 + (!old) as u32 + new as u32;
    sum = (sum & 0xFFFF) + (sum >> 16);
    sum = (sum & 0xFFFF) + (sum >> 16);
    !(sum as u16)
}

#[inline]
fn read_be16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

#[inline]
fn write_be16(buf: &mut [u8], at: usize, value: u16) {
    buf[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

fn check_request(
    spec: &FrameSpec,
    plan: &PatchPlan,
    frame_size_bytes: u32,
    out_len: usize,
) -> Result<usize, BuildError> {
    if !plan.accepts(frame_size_bytes) {
        // Slow path: let the spec produce the precise error.
        spec.check_size(frame_size_bytes)?;
        return Err(BuildError::FrameSizeOutOfRange { frame_size_bytes });
    }
    let cap = captured_len(frame_size_bytes);
    if out_len < cap {
        return Err(BuildError::BufferTooSmall {
            needed_bytes: cap,
            got_bytes: out_len,
        });
    }
    Ok(cap)
}

/// One flow's frame, re-emittable at any size from its minimum to 9018 B.
#[derive(Clone, Debug)]
pub struct FrameTemplate {
    spec: FrameSpec,
    plan: PatchPlan,
    headers: Box<[u8]>,
}

impl FrameTemplate {
    /// Builds `spec` once (at `spec.frame_size_bytes`) with etherparse.
    pub fn new(spec: &FrameSpec) -> Result<FrameTemplate, BuildError> {
        let frame = spec.build()?;
        let plan = PatchPlan::for_spec(spec);
        Ok(FrameTemplate {
            spec: *spec,
            plan,
            headers: frame[..plan.header_len].into(),
        })
    }

    pub fn spec(&self) -> &FrameSpec {
        &self.spec
    }

    pub fn plan(&self) -> &PatchPlan {
        &self.plan
    }

    /// Writes only the headers for a `frame_size_bytes` frame into `out` and
    /// returns the captured length (`frame_size_bytes - 4`). The caller keeps
    /// `out[header_len..captured]` zero: that is the payload, and the patched
    /// checksums assume it is zero.
    #[inline]
    pub fn write_headers(&self, frame_size_bytes: u32, out: &mut [u8]) -> Result<usize, BuildError> {
        let cap = check_request(&self.spec, &self.plan, frame_size_bytes, out.len())?;
        self.plan.apply(&self.headers, frame_size_bytes, out);
        Ok(cap)
    }

    /// Writes the whole frame (headers + zero payload) into `out`; returns its length.
    pub fn write_frame(&self, frame_size_bytes: u32, out: &mut [u8]) -> Result<usize, BuildError> {
        let cap = self.write_headers(frame_size_bytes, out)?;
        out[self.plan.header_len..cap].fill(0);
        Ok(cap)
    }

    /// The frame at `frame_size_bytes` as a new vector.
    pub fn to_frame(&self, frame_size_bytes: u32) -> Result<Vec<u8>, BuildError> {
        let mut out = vec![0u8; captured_len(frame_size_bytes)];
        self.write_headers(frame_size_bytes, &mut out)?;
        Ok(out)
    }
}

/// Templates of many same-shape flows: one shared [`PatchPlan`] and
/// `header_len` bytes per flow, contiguous.
#[derive(Clone, Debug)]
pub struct TemplateSet {
    first_spec: FrameSpec,
    plan: PatchPlan,
    headers: Vec<u8>,
}

impl TemplateSet {
    /// Builds every spec once. All specs must have the same header shape and
    /// frame size (`ShapeMismatch` names the first that does not); at least one spec.
    pub fn new(specs: &[FrameSpec]) -> Result<TemplateSet, BuildError> {
        let first_spec = *specs.first().ok_or(BuildError::ShapeMismatch { index: 0 })?;
        let plan = PatchPlan::for_spec(&first_spec);
        let mut headers = Vec::with_capacity(plan.header_len * specs.len());
        let mut frame = Vec::with_capacity(captured_len(first_spec.frame_size_bytes));
        for (index, spec) in specs.iter().enumerate() {
            frame.clear();
            spec.build_into(&mut frame)?;
            if PatchPlan::for_spec(spec) != plan {
                return Err(BuildError::ShapeMismatch { index });
            }
            headers.extend_from_slice(&frame[..plan.header_len]);
        }
        Ok(TemplateSet {
            first_spec,
            plan,
            headers,
        })
    }

    pub fn len(&self) -> usize {
        self.headers.len() / self.plan.header_len
    }

    pub fn is_empty(&self) -> bool {
        self.headers.is_empty()
    }

    pub fn plan(&self) -> &PatchPlan {
        &self.plan
    }

    /// Like [`FrameTemplate::write_headers`] for flow `index`
    /// (`IndexOutOfRange` if there is no such flow).
    #[inline]
    pub fn write_headers(&self, index: usize, frame_size_bytes: u32, out: &mut [u8]) -> Result<usize, BuildError> {
        let cap = check_request(&self.first_spec, &self.plan, frame_size_bytes, out.len())?;
        let h = self.plan.header_len;
        let start = index.checked_mul(h).ok_or(BuildError::IndexOutOfRange { index })?;
        let headers = self
            .headers
            .get(start..start + h)
            .ok_or(BuildError::IndexOutOfRange { index })?;
        self.plan.apply(headers, frame_size_bytes, out);
        Ok(cap)
    }

    /// Like [`FrameTemplate::write_frame`] for flow `index`.
    pub fn write_frame(&self, index: usize, frame_size_bytes: u32, out: &mut [u8]) -> Result<usize, BuildError> {
        let cap = self.write_headers(index, frame_size_bytes, out)?;
        out[self.plan.header_len..cap].fill(0);
        Ok(cap)
    }
}
