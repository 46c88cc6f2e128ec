//! nicbench-classify: a software match-action classifier with atomic updates.
//!
//! ```text
//!  frame ──parse──▶ ParsedFrame ──extract──▶ PacketKey (26 × u64, once per packet)
//!                                                │
//!   group 0 ─ tables by best priority ─▶ winning rule ──jump──▶ group g ─▶ … ─▶ fate
//! ```
//!
//! - Groups (tables) with `jump`; the group graph is kept acyclic (a cycle is refused at
//!   update time). Lookup starts in group 0 (configurable) and follows jumps.
//! - Within a group the highest-priority matching rule wins (lower number = higher
//!   priority); **ties go to the rule inserted first** (a modify keeps the original place).
//!   A group where nothing matches ends the walk as [`Verdict::Unmatched`].
//! - Matching semantics follow nicbench-rules / rte_flow (see [`compile`] for details):
//!   outer headers first, `vxlan`/`gre` and what follows match the encapsulated frame.
//! - Exact 5-tuple rules (both IPv4 addresses /32, both ports exact, no range) go to
//!   per-group exact-match tables ([`group`]'s `exact` module; [`ClassifierConfig::exact_match`]):
//!   32-byte entries with rank, rule id and a packed action inline, so a hit costs one cache
//!   line, and burst lookups hash and prefetch all keys before probing any.
//! - Data structure ([`Algorithm`]): by default [`Algorithm::Hybrid`] — per group a decision
//!   tree on the outer 5-tuple (HiCuts/EffiCuts-style, rebuilt in the background) plus
//!   TupleMerge hash tables holding the rules changed since the last build. Plain TupleMerge
//!   and tuple space search with range expansion (the OVS-style baseline,
//!   [`Algorithm::TupleSpace`]) are kept; the crate's benches compare all three.
//! - Updates: insert / delete / modify-in-place, singly or in atomic [`Batch`]es. Exact
//!   5-tuple rules are updated in place in multi-version tables shared by all readers (a
//!   batch becomes visible with one version store); other rules go through left-right (two
//!   copies + operation log). Readers never block; see the `classifier` module for the
//!   versioning. [`Reader`] is `Send`; bursts run under one snapshot.
//! - Per-rule hit/byte counters (relaxed atomics shared by all readers).
//! - [`classify_pcap`]: classify a capture, report per queue / per rule.
//! - [`witness`]: a frame that meets each rule of a set (traffic for a rule file), checked by
//!   lookup, or the reason none does.
//! - [`rss`]: the queue of each outcome: `rss` actions resolved per packet as the mlx5 PMD
//!   programs a ConnectX, the port's default RSS for packets no rule sends anywhere.

mod classifier;
pub mod compile;
mod counters;
pub mod group;
pub mod key;
mod key_view;
pub mod measure;
mod report;
pub mod rss;
mod state;
mod table;
mod version;
pub mod witness;
pub mod workload;

pub use classifier::{
    Batch, Classifier, ClassifierConfig, ClassifierStats, Reader, RuleInfo, Snapshot, Update, UpdateError,
    DEFERRED_MAX_DELAY, DEFERRED_MAX_OPS,
};
pub use compile::{CompileError, Fate};
pub use group::Algorithm;
pub use key::{FiveTuple, PacketKey};
pub use report::{classify_pcap, ClassifyError, ClassifyReport, RuleHits};
pub use rss::{QueueResolver, RssQueuePicker, RssRuleError, RssSetupError};
pub use state::{Hop, Outcome, RuleId, Verdict};
