//! nicbench-rules: the rte_flow-like rule model and the syntaxes people write rules in.
//!
//! - [`model`]: [`Rule`] = [`Attr`] (group, priority, direction) + pattern [`Item`]s with
//!   per-field value/mask/last ([`Field`]) + [`Action`]s. `Display` is testpmd syntax.
//! - [`testpmd`]: DPDK 22.11 `flow create/validate/destroy/flush` lines.
//! - [`tc`]: `tc filter add ... flower ... action ...` lines.
//! - [`classbench`]: ClassBench filter sets.
//! - [`generate`]: seeded synthetic rule sets (ClassBench-like, PAM'21 group chains).
//! - [`openflow`]: Open vSwitch OpenFlow rules (`ovs-ofctl`) and datapath flows (`dpctl/dump-flows`).
//! - [`ruleset`]: rule files as users have them: syntax detection, loading, summary, conversion.
//! - [`checks`]: whole-set checks every load runs: reversed ranges, jump cycles.
//!
//! Every parser returns [`ParseError`]s naming file, line and column, never panics on
//! malformed input, and writing then re-parsing gives back the same model.

pub mod capabilities;
pub mod checks;
pub mod classbench;
pub mod error;
pub mod generate;
mod lex;
pub mod model;
pub mod openflow;
pub mod ruleset;
pub mod tc;
pub mod testpmd;

pub use error::{ParseError, ParseReport, WriteError};
pub use model::{Action, Attr, Command, Field, Item, ItemKind, MacAddr, Rule};
