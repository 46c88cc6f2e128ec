//! Versions and reader pins: what lets the exact-match tables be updated in place, by one
//! writer, while readers look up without locks and without ever seeing half a batch.
//!
//! - The writer publishes versions `1, 2, 3, …` ([`Clock::publish`]); a batch's changes are
//!   all stamped with the version that publishes them, so one store makes a batch visible.
//! - A reader *pins* the published version once per burst ([`Clock::pin`]) and sees an
//!   exact-table entry iff `ins <= v < del` ([`visible`]).
//! - Memory an old version may still use (an entry deleted at `d`, a table buffer replaced
//!   at `d`) is reused or freed only once every reader is idle or pinned at `>= d`
//!   ([`Clock::min_pinned`]). Readers never wait for the writer; the writer waits for a
//!   reader only in rare cases (see the callers), and then at most one burst.
//!
//! Entries store the low 32 bits of versions and compare them with wrapping arithmetic.
//! That is exact while every stored version lies within 2^31 of every pinned one, which the
//! writer keeps true: tables are swept every [`SWEEP_VERSIONS`] versions (old `ins` become
//! [`ALWAYS`], reclaimable entries are dropped) and the writer waits for a reader that
//! lags more than [`MAX_LAG_VERSIONS`] behind. Low halves `0` ([`ALWAYS`]) and `u32::MAX`
//! ([`NEVER`]) are never used as versions.
//!
//! Pin protocol (a Dekker handshake): the reader stores its pin, then re-reads the
//! published version and retries if it moved (both `SeqCst`). The writer publishes with a
//! release store (on x86 a plain store: a publish per single update must not drain the
//! store buffer and stall the next update's loads) and scans the pins after a `SeqCst`
//! fence ([`Clock::min_pinned`]); with the fence between its store and its loads the
//! handshake holds as with `SeqCst` accesses: when the writer, after publishing `g`, scans
//! the pins and finds a reader idle, that reader's next pin is `>= g`. A reader that loads
//! `g` acquires everything the writer did before publishing it (entries, buffer swaps,
//! left-right swaps and `until` marks).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// `ins` of an entry every reader sees (inserted long ago).
pub(crate) const ALWAYS: u32 = 0;
/// `del` of an entry not deleted.
pub(crate) const NEVER: u32 = u32::MAX;
/// Pin of a reader outside any lookup.
const IDLE: u64 = u64::MAX;
/// Tables are swept (see the module doc) at least this often, in versions.
pub(crate) const SWEEP_VERSIONS: u64 = 1 << 29;
/// The writer waits for readers pinned further behind than this.
pub(crate) const MAX_LAG_VERSIONS: u64 = 1 << 30;

/// The low half of a version, as entries store it.
#[inline(always)]
pub(crate) fn low(v: u64) -> u32 {
    v as u32
}

/// The version after `v` (skipping the low halves reserved for [`ALWAYS`] and [`NEVER`]).
pub(crate) fn next_version(v: u64) -> u64 {
    let mut n = v + 1;
    while low(n) == ALWAYS || low(n) == NEVER {
        n += 1;
    }
    n
}

/// Whether `a <= b` for low halves within 2^31 of each other.
#[inline(always)]
pub(crate) fn le(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) >= 0
}

/// Whether an entry inserted at `ins` and deleted at `del` exists at version `v`.
#[inline(always)]
pub(crate) fn visible(v: u32, ins: u32, del: u32) -> bool {
    (ins == ALWAYS || le(ins, v)) && (del == NEVER || !le(del, v))
}

/// Proof that the current thread holds a pin at version `v` for lifetime `'a`: what lets
/// a lookup read an exact table's buffer ([`crate::group::exact::ExactTable::view`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pinned<'a> {
    pub v: u32,
    _pin: std::marker::PhantomData<&'a Pin>,
}

impl Pinned<'_> {
    /// # Safety
    /// The caller holds a pin at (full) version `v` (or a newer one that no reclamation
    /// has passed) for all of `'a`, and `v` was read as [`Clock::pin`] returned it.
    #[inline(always)]
    pub unsafe fn assume(v: u64) -> Self {
        Pinned {
            v: low(v),
            _pin: std::marker::PhantomData,
        }
    }
}

/// One reader's pin, alone on its cache lines (readers write it every burst).
#[repr(align(128))]
pub(crate) struct Pin {
    v: AtomicU64,
}

/// The published version and the readers' pins (shared by the writer and every reader).
pub(crate) struct Clock {
    published: AtomicU64,
    /// Rules installed as of the published version (for [`crate::Snapshot::rule_count`]).
    rules: AtomicUsize,
    /// Locked by the writer to scan and by readers only when created or dropped.
    pins: Mutex<Vec<Arc<Pin>>>,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            published: AtomicU64::new(1),
            rules: AtomicUsize::new(0),
            pins: Mutex::new(Vec::new()),
        }
    }
}

impl Clock {
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::SeqCst)
    }

    pub fn rules(&self) -> usize {
        self.rules.load(Ordering::Relaxed)
    }

    /// Makes version `v` (and everything stamped with it) visible: every reader that pins
    /// after this returns (in happens-before order) pins `v` or later.
    pub fn publish(&self, v: u64, rules: usize) {
        self.rules.store(rules, Ordering::Relaxed);
        self.published.store(v, Ordering::Release);
    }

    /// A new reader's pin (idle).
    pub fn register(&self) -> Arc<Pin> {
        let pin = Arc::new(Pin {
            v: AtomicU64::new(IDLE),
        });
        self.pins.lock().unwrap_or_else(|e| e.into_inner()).push(pin.clone());
        pin
    }

    /// Forgets a dropped reader's pin.
    pub fn unregister(&self, pin: &Arc<Pin>) {
        pin.v.store(IDLE, Ordering::SeqCst);
        self.pins
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|p| !Arc::ptr_eq(p, pin));
    }

    /// Pins `pin` at the published version, or at `floor` if that is newer (a left-right
    /// copy published ahead of the version store, see `Classifier::publish`). Returns it.
    #[inline(always)]
    pub fn pin(&self, pin: &Pin, floor: u64) -> u64 {
        loop {
            let g = self.published.load(Ordering::SeqCst);
            let v = g.max(floor);
            pin.v.store(v, Ordering::SeqCst);
            if self.published.load(Ordering::SeqCst) == g {
                return v;
            }
        }
    }

    #[inline(always)]
    pub fn unpin(&self, pin: &Pin) {
        pin.v.store(IDLE, Ordering::Release);
    }

    /// The oldest version a reader may be using: the smallest pin, idle readers counting as
    /// the published version.
    pub fn min_pinned(&self) -> u64 {
        // Orders the writer's release store of `published` before the loads of the pins
        // (the writer's half of the handshake, see the module doc).
        std::sync::atomic::fence(Ordering::SeqCst);
        let g = self.published.load(Ordering::SeqCst);
        let pins = self.pins.lock().unwrap_or_else(|e| e.into_inner());
        pins.iter()
            .map(|p| p.v.load(Ordering::SeqCst))
            .fold(g, |m, v| if v == IDLE { m } else { m.min(v) })
    }

    /// Waits until no reader uses a version older than `v` (at most one burst per reader,
    /// unless a reader thread is descheduled inside a lookup). Returns the new minimum.
    pub fn wait_for(&self, v: u64) -> u64 {
        let mut spins = 0u32;
        loop {
            let m = self.min_pinned();
            if m >= v {
                return m;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_visibility_window_and_wrapping() {
        assert!(visible(5, 5, NEVER));
        assert!(!visible(4, 5, NEVER));
        assert!(visible(5, ALWAYS, 6));
        assert!(!visible(6, ALWAYS, 6));
        assert!(!visible(5, 5, 5), "inserted and deleted by one batch: never visible");
        // Across the wrap of the low half.
        let (a, b) = (u32::MAX - 3, 2u32);
        assert!(le(a, b) && !le(b, a));
        assert!(visible(b, a, NEVER) && !visible(a, b, NEVER));
        let v = next_version(u32::MAX as u64 - 1);
        assert_eq!(v, u32::MAX as u64 + 2, "skips NEVER and ALWAYS");
    }

    #[test]
    fn test_min_pinned_tracks_pins_and_idle_readers() {
        let c = Clock::default();
        c.publish(10, 0);
        let (p, q) = (c.register(), c.register());
        assert_eq!(c.min_pinned(), 10, "idle readers count as the published version");
        assert_eq!(c.pin(&p, 0), 10);
        assert_eq!(c.pin(&q, 12), 12, "a newer floor wins");
        c.publish(20, 0);
        assert_eq!(c.min_pinned(), 10);
        c.unpin(&p);
        assert_eq!(c.min_pinned(), 12);
        c.unregister(&q);
        assert_eq!(c.wait_for(20), 20);
    }
}
