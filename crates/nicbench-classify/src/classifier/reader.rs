//! The lookup side: [`Reader`] handles (one per thread) and [`Snapshot`]s.
//!
//! A lookup (or a burst, or a snapshot) enters the current left-right copy and pins the
//! published version ([`crate::version`]) for its whole duration: every packet of it sees
//! one rule set, in the copy and in the shared exact tables alike. Pins nest (a lookup
//! inside [`Reader::with_snapshot`] keeps the snapshot's version); the outermost one is
//! released when it ends, also on unwinding. A nested section uses the copy of the
//! outermost one (left-right would hand it whichever copy is current).

use super::Classifier;
use crate::counters::Counters;
use crate::group::XCtx;
use crate::key::{FiveTuple, PacketKey};
use crate::state::{Hop, Outcome, State};
use crate::version::{Clock, Pin, Pinned};
use std::cell::Cell;
use std::sync::Arc;

/// A lookup handle, usable from another thread. Lookups never block.
///
/// If the [`Classifier`] was dropped, every lookup is `Unmatched` with no group traversed.
pub struct Reader {
    h: left_right::ReadHandle<State>,
    counters: Arc<Counters>,
    start_group: u32,
    count: bool,
    clock: Arc<Clock>,
    pin: Arc<Pin>,
    /// Nesting depth of pinned sections, and the version the outermost one pinned.
    depth: Cell<u32>,
    pinned: Cell<u64>,
    /// The copy the outermost pinned section entered (valid while `depth > 0`).
    cur: CurCopy,
}

/// The copy pointer of the outermost pinned section.
struct CurCopy(Cell<*const State>);

// SAFETY: the pointer is only dereferenced inside a pinned section, on the thread running
// it (a `Reader` is `!Sync`, so sections cannot span threads); moving the handle between
// sections carries nothing live.
unsafe impl Send for CurCopy {}

impl CurCopy {
    fn get(&self) -> *const State {
        self.0.get()
    }
    fn set(&self, p: *const State) {
        self.0.set(p)
    }
}

impl Clone for Reader {
    fn clone(&self) -> Reader {
        Reader {
            h: self.h.clone(),
            counters: self.counters.clone(),
            start_group: self.start_group,
            count: self.count,
            clock: self.clock.clone(),
            pin: self.clock.register(),
            depth: Cell::new(0),
            pinned: Cell::new(0),
            cur: CurCopy(Cell::new(std::ptr::null())),
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.clock.unregister(&self.pin);
    }
}

/// Releases the pin of the outermost pinned section when dropped.
struct PinScope<'a> {
    r: &'a Reader,
}

impl Drop for PinScope<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        let d = self.r.depth.get() - 1;
        self.r.depth.set(d);
        if d == 0 {
            self.r.clock.unpin(&self.r.pin);
        }
    }
}

impl Reader {
    pub(super) fn new(c: &Classifier) -> Reader {
        Reader {
            h: (*c.w).clone(),
            counters: c.counters.clone(),
            start_group: c.config.start_group,
            count: c.config.count,
            clock: c.clock.clone(),
            pin: c.clock.register(),
            depth: Cell::new(0),
            pinned: Cell::new(0),
            cur: CurCopy(Cell::new(std::ptr::null())),
        }
    }

    /// Whether this reader updates the rule counters (the classifier's setting by default).
    pub fn set_counting(&mut self, count: bool) {
        self.count = count;
    }

    fn counters(&self) -> Option<&Counters> {
        self.count.then_some(&*self.counters)
    }

    /// Enters the current copy and pins a version it shows (outermost section only): at
    /// least the copy's `floor` and below its `until`. A reader that entered a copy just
    /// as the writer swapped it out can find the published version already past `until`;
    /// it leaves and enters the new copy (the swap precedes the version store, so the
    /// retry finds it).
    #[inline(always)]
    fn enter_pinned(&self) -> Option<(left_right::ReadGuard<'_, State>, PinScope<'_>, u64)> {
        debug_assert_eq!(self.depth.get(), 0);
        loop {
            let guard = self.h.enter()?;
            let v = self.clock.pin(&self.pin, guard.floor);
            self.depth.set(1);
            let scope = PinScope { r: self };
            if v < guard.until.get() {
                self.pinned.set(v);
                self.cur.set(&*guard as *const State);
                return Some((guard, scope, v));
            }
            drop(scope);
            drop(guard);
            std::hint::spin_loop();
        }
    }

    /// Runs `f` with the exact tables pinned: on the current copy, or inside an enclosing
    /// pinned section (a lookup within [`with_snapshot`](Self::with_snapshot)) on that
    /// section's copy at its version.
    #[inline(always)]
    fn run<R>(&self, f: impl FnOnce(&State, XCtx<'_>) -> R) -> Option<R> {
        let d = self.depth.get();
        if d > 0 {
            // SAFETY: the outermost section's guard keeps `cur` alive until it ends, after
            // this nested one.
            let state = unsafe { self.cur.get().as_ref() }?;
            self.depth.set(d + 1);
            let _scope = PinScope { r: self };
            // SAFETY: the outermost section holds the pin at `pinned` until it ends.
            let pin = unsafe { Pinned::assume(self.pinned.get()) };
            return Some(f(
                state,
                XCtx {
                    pin,
                    ranks: &state.ranks,
                },
            ));
        }
        let (guard, scope, v) = self.enter_pinned()?;
        // SAFETY: `scope` holds the pin at `v` until it drops, after `f` returns.
        let pin = unsafe { Pinned::assume(v) };
        let r = f(
            &guard,
            XCtx {
                pin,
                ranks: &guard.ranks,
            },
        );
        drop(scope);
        Some(r)
    }

    pub fn lookup(&self, key: &PacketKey) -> Outcome {
        self.run(|s, x| s.lookup(key, self.start_group, self.counters(), x))
            .unwrap_or(Outcome::START)
    }

    /// Looks up every key under one snapshot (one read guard, one pinned version): all
    /// results come from the same rule set. Work is done 32 packets at a time with
    /// prefetching.
    pub fn lookup_burst(&self, keys: &[PacketKey], out: &mut [Outcome]) {
        if self
            .run(|s, x| s.lookup_burst(keys, out, self.start_group, self.counters(), x))
            .is_none()
        {
            out.iter_mut().for_each(|o| *o = Outcome::START);
        }
    }

    /// [`lookup_burst`](Self::lookup_burst) for compact IPv4 5-tuples ([`FiveTuple`]), under
    /// one snapshot: the same lookup, fed from a trace 14× smaller than its `PacketKey`s.
    /// `out[i]` is the outcome of `tuples[i]`'s key ([`FiveTuple::key`]).
    pub fn lookup_burst_tuples(&self, tuples: &[FiveTuple], out: &mut [Outcome]) {
        if self
            .run(|s, x| s.lookup_burst_tuples(tuples, out, self.start_group, self.counters(), x))
            .is_none()
        {
            out.iter_mut().for_each(|o| *o = Outcome::START);
        }
    }

    /// The full path of one lookup (no counting).
    pub fn trace(&self, key: &PacketKey) -> (Vec<Hop>, Outcome) {
        self.run(|s, x| s.trace(key, self.start_group, x))
            .unwrap_or((Vec::new(), Outcome::START))
    }

    /// Runs `f` with a snapshot: every lookup inside sees the same rule set.
    pub fn with_snapshot<R>(&self, f: impl FnOnce(&Snapshot<'_>) -> R) -> R {
        if self.depth.get() > 0 {
            // Nested in another section: its copy and version.
            // SAFETY: as in `run`.
            let state = unsafe { self.cur.get().as_ref() };
            self.depth.set(self.depth.get() + 1);
            let _scope = PinScope { r: self };
            let pin = unsafe { Pinned::assume(self.pinned.get()) };
            return f(&Snapshot {
                state,
                reader: self,
                pin,
                rules: self.clock.rules(),
            });
        }
        match self.enter_pinned() {
            Some((guard, _scope, v)) => {
                // SAFETY: `_scope` holds the pin at `v` until the end of this arm, and the
                // snapshot (hence the token) cannot escape `f`.
                let pin = unsafe { Pinned::assume(v) };
                f(&Snapshot {
                    state: Some(&guard),
                    reader: self,
                    pin,
                    rules: self.clock.rules(),
                })
            }
            // The classifier was dropped: nothing to pin.
            None => f(&Snapshot {
                state: None,
                reader: self,
                pin: unsafe { Pinned::assume(0) },
                rules: 0,
            }),
        }
    }
}

/// A consistent view of the rule set (see [`Reader::with_snapshot`]).
pub struct Snapshot<'a> {
    state: Option<&'a State>,
    reader: &'a Reader,
    pin: Pinned<'a>,
    rules: usize,
}

impl Snapshot<'_> {
    fn x(&self) -> Option<(&State, XCtx<'_>)> {
        self.state.map(|s| {
            (
                s,
                XCtx {
                    pin: self.pin,
                    ranks: &s.ranks,
                },
            )
        })
    }

    pub fn lookup(&self, key: &PacketKey) -> Outcome {
        self.x().map_or(Outcome::START, |(s, x)| {
            s.lookup(key, self.reader.start_group, self.reader.counters(), x)
        })
    }

    pub fn lookup_burst(&self, keys: &[PacketKey], out: &mut [Outcome]) {
        match self.x() {
            Some((s, x)) => s.lookup_burst(keys, out, self.reader.start_group, self.reader.counters(), x),
            None => out.iter_mut().for_each(|o| *o = Outcome::START),
        }
    }

    /// Rules installed (as of the latest publish when the snapshot was taken).
    pub fn rule_count(&self) -> usize {
        if self.state.is_some() {
            self.rules
        } else {
            0
        }
    }
}
