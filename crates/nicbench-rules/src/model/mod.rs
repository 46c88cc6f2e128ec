//! The rule model, close to DPDK rte_flow: attributes, a pattern of items, a list of actions.
//!
//! All syntaxes parse into and write from these types. `Display` on [`Rule`] and
//! [`Command`] is the canonical form: testpmd `flow create` syntax.

mod actions;
mod field;
mod items;

pub use actions::{Action, RssAction, RssFunc, RssRefusal, RssType, VxlanTunnel, MLX5_RSS_KEY_BYTES};
pub use field::{Field, FieldBits, MacAddr};
pub use items::{
    EthItem, GreItem, GreKeyItem, Icmp6Item, IcmpItem, Ipv4Item, Ipv6Item, Item, ItemKind, MplsItem, SctpItem, TcpItem,
    UdpItem, VlanItem, VxlanItem,
};

pub(crate) use field::{mask_prefix_len, ones, prefix_mask};
pub(crate) use items::{RawSlots, SlotDesc, ValueKind, MAX_SLOTS};

use serde::{Deserialize, Serialize};
use std::fmt;

/// Rule attributes (rte_flow_attr).
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Attr {
    /// Group (table) the rule lives in; group 0 is the root table.
    pub group: u32,
    /// Priority within the group; lower value = matched first.
    pub priority: u32,
    pub ingress: bool,
    pub egress: bool,
    /// Switch-level (e-switch / FDB) rule.
    pub transfer: bool,
}

/// One match-action rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rule {
    pub attr: Attr,
    /// Items from the outermost header inwards.
    pub pattern: Vec<Item>,
    pub actions: Vec<Action>,
}

impl Rule {
    /// Whether the pattern constrains no field (`eth / end`, `eth / ipv4 / end`): a catch-all
    /// of its protocols, as rule layouts put last in a table.
    pub fn is_catch_all(&self) -> bool {
        self.pattern.iter().all(Item::is_presence_only)
    }
}

/// A testpmd `flow` command.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    Create { port: u16, rule: Rule },
    Validate { port: u16, rule: Rule },
    Destroy { port: u16, rule_ids: Vec<u32> },
    Flush { port: u16 },
}

impl Command {
    /// The rule of a `create`/`validate` command.
    pub fn rule(&self) -> Option<&Rule> {
        match self {
            Command::Create { rule, .. } | Command::Validate { rule, .. } => Some(rule),
            _ => None,
        }
    }
}

impl fmt::Display for Rule {
    /// testpmd syntax without the `flow create PORT` prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::testpmd::write_rule(f, self)
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::testpmd::write_command(f, self)
    }
}
