//! Open vSwitch flows, the two syntaxes OVS users have them in:
//!
//! - OpenFlow rules ([`OfRule`]) as `ovs-ofctl add-flow` takes them and `ovs-ofctl dump-flows`
//!   prints them: table, priority, match fields with masks, an action list.
//! - Datapath flows ([`DpFlow`], the megaflows) as `ovs-appctl dpctl/dump-flows` prints them:
//!   the keys the datapath matches on (each with a mask), statistics, where the flow runs
//!   (`offloaded:`, `dp:`), and datapath actions.
//!
//! Parsers and writers: [`parse_rule`] / [`parse_file`] / [`parse_file_all`] and
//! [`rule_to_string`] for OpenFlow; [`parse_dp_flow`] / [`parse_dp_flows`] /
//! [`parse_dp_flows_all`] and [`dp_flow_to_string`] for datapath flows. Errors carry
//! file:line:col; writing then parsing gives back the same value; `tests/ovs_oracle.rs`
//! checks both against Open vSwitch 3.1 itself.
//!
//! Both share [`OfField`]: one name per header or metadata field, with its width, so that the
//! virtual OVS datapath (nicbench-models `vswitch/`) can turn the fields an OpenFlow lookup
//! consulted into a megaflow's mask, and compare it with what real OVS printed.
//!
//! Values and masks are right-aligned in a `u128` (a MAC address is its 48 bits, an IPv6
//! address its 128); a mask of all ones in the field's width is an exact match.

use serde::{Deserialize, Serialize};

/// A field OVS matches on or sets. OpenFlow names (`ovs-fields(7)`); datapath keys map onto
/// the same variants (`ipv4(src=..)` is [`OfField::NwSrc`], `tunnel(tun_id=..)` is
/// [`OfField::TunId`], ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OfField {
    /// Datapath only: `recirc_id(N)`.
    RecircId,
    /// Ingress port. In OpenFlow rules it is a [`PortRef`] ([`OfMatch::in_port`]); in datapath
    /// flows the datapath port number.
    InPort,
    DlSrc,
    DlDst,
    DlType,
    /// 802.1Q TCI with the CFI/present bit (0x1000) as OVS keeps it; `dl_vlan`/`dl_vlan_pcp`
    /// are parts of it.
    VlanTci,
    NwSrc,
    NwDst,
    Ipv6Src,
    Ipv6Dst,
    NwProto,
    /// The whole IPv4 TOS / IPv6 traffic-class byte (DSCP and ECN).
    NwTos,
    NwTtl,
    /// Fragment state (`nw_frag`; datapath `frag=no|first|later`): 2 bits, 1 = fragment,
    /// 2 = later fragment.
    NwFrag,
    TpSrc,
    TpDst,
    TcpFlags,
    TunId,
    TunSrc,
    TunDst,
    CtState,
    CtZone,
    CtMark,
    /// OpenFlow pipeline metadata (`metadata`).
    Metadata,
}

impl OfField {
    /// Width in bits.
    pub fn bits(self) -> u32 {
        use OfField::*;
        match self {
            RecircId | InPort | NwSrc | NwDst | TunSrc | TunDst | CtState | CtMark => 32,
            DlSrc | DlDst => 48,
            DlType | VlanTci | TpSrc | TpDst | CtZone => 16,
            Ipv6Src | Ipv6Dst => 128,
            NwProto | NwTos | NwTtl => 8,
            NwFrag => 2,
            TcpFlags => 12,
            TunId | Metadata => 64,
        }
    }

    /// All ones in the field's width: an exact match.
    pub fn full_mask(self) -> u128 {
        let bits = self.bits();
        if bits == 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        }
    }
}

/// A port as a rule names it: a number, or a name that `ovs-ofctl` resolves on the bridge
/// (`output:v1p`), or one of OpenFlow's reserved ports.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PortRef {
    Number(u32),
    Name(String),
    /// `IN_PORT`, `LOCAL`, `CONTROLLER`, `NORMAL`, `FLOOD`, `ALL`, `NONE`.
    Reserved(String),
}

/// One field's value under a mask. `value & !mask == 0` (parsers reject or clear other bits,
/// as `ovs-ofctl` does).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct FieldMatch {
    pub field: OfField,
    pub value: u128,
    pub mask: u128,
}

/// The match of an OpenFlow rule. Protocol shorthands (`ip`, `tcp`, `udp6`, ...) are stored
/// as the fields they stand for (`dl_type`, `nw_proto`); fields are kept sorted by
/// [`OfField`] order, one entry per field.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OfMatch {
    pub in_port: Option<PortRef>,
    pub fields: Vec<FieldMatch>,
}

/// An OpenFlow action (`ovs-actions(7)`), the subset nicbench's datapath models.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum OfAction {
    Output {
        port: PortRef,
    },
    /// `drop`, or an empty action list.
    Drop,
    /// `normal`: the L2 learning switch.
    Normal,
    /// `mod_dl_src:`, `mod_nw_dst:`, `mod_tp_src:`, `mod_vlan_vid:`, `set_field:V->F`, ...
    SetField {
        field: OfField,
        value: u128,
        mask: u128,
    },
    PushVlan {
        tpid: u16,
    },
    /// `strip_vlan` / `pop_vlan`.
    PopVlan,
    /// `set_tunnel:` / `set_tunnel64:` (the tunnel id, i.e. VNI).
    SetTunnel {
        id: u64,
    },
    /// `resubmit:PORT`, `resubmit(,TABLE)`, `resubmit(PORT,TABLE)`.
    Resubmit {
        port: Option<PortRef>,
        table: Option<u8>,
    },
    GotoTable {
        table: u8,
    },
    /// `ct(commit,zone=N,table=T,nat...)`: the options nicbench models, the rest kept as text.
    Ct {
        commit: bool,
        zone: Option<u16>,
        table: Option<u8>,
        other: Vec<String>,
    },
    DecTtl,
    Controller,
}

/// One OpenFlow rule.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OfRule {
    pub table: u8,
    /// OpenFlow priority; `ovs-ofctl` defaults to 32768.
    pub priority: u16,
    pub cookie: u64,
    pub idle_timeout_s: u16,
    pub hard_timeout_s: u16,
    pub matches: OfMatch,
    pub actions: Vec<OfAction>,
}

/// A datapath action as `dpctl/dump-flows` prints it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "action")]
pub enum DpAction {
    /// A datapath port number.
    Output {
        port: u32,
    },
    Drop,
    PushVlan {
        tpid: u16,
        tci: u16,
    },
    PopVlan,
    /// `set(...)` / masked set of header fields: one per field (`set(ipv4(src=..,dst=..))` is
    /// two, in sub-field order; the writer joins consecutive ones of one key back).
    Set {
        field: OfField,
        value: u128,
        mask: u128,
    },
    /// `set(tunnel(tun_id=..,src=..,dst=..,...))`: tunnel metadata for an encap on output.
    SetTunnel {
        id: u64,
        src: u32,
        dst: u32,
    },
    /// `tnl_pop(N)` (userspace datapath decap) / `tnl_push(...)`, kept as text (the whole
    /// action as printed, e.g. `tnl_pop(4789)`).
    Tunnel {
        text: String,
    },
    /// `ct(...)`, kept as text (the whole action, e.g. `ct(commit,zone=5)`).
    Ct {
        text: String,
    },
    Recirc {
        id: u32,
    },
    /// `userspace(...)`, `sample(...)`, `clone(...)`, `hash(...)`, ...: kept as text.
    Other {
        text: String,
    },
}

/// Where a datapath flow runs, from `offloaded:` and `dp:` (`dpctl/dump-flows -m` or
/// `type=...`): `dp:ovs` (software), `dp:tc` (kernel tc, possibly in hardware), `dp:dpdk`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DpPlacement {
    pub offloaded: Option<bool>,
    pub dp: Option<String>,
}

/// One datapath flow (megaflow). `Default` is an empty flow (no keys, no actions), so code
/// building flows can name the fields it sets and leave the rest: `DpFlow { keys, actions,
/// ..Default::default() }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DpFlow {
    pub ufid: Option<String>,
    /// Matched keys, sorted by [`OfField`]; a key printed without a mask is exact. Keys OVS
    /// prints fully wildcarded are absent. Unlike OpenFlow matches, a value keeps the bits
    /// outside its mask that OVS prints (`ipv4(src=10.0.0.2/255.0.0.0)`: the packet that
    /// created the flow), so that a dump is written back identically; compare megaflows with
    /// [`DpFlow::masked_keys`].
    pub keys: Vec<FieldMatch>,
    /// Keys and sub-keys nicbench has no [`OfField`] for, as printed, so they round-trip:
    /// whole keys (`packet_type(ns=0,id=0)`, `skb_mark(0/0)`, `arp(...)`, an empty `eth()`)
    /// and, for keys nicbench reads, the sub-fields it does not (`ipv6(label=0x5)`,
    /// `tunnel(ttl=64,tp_dst=4789,flags(-df+csum+key))`). Additive (issue 16 syntaxes).
    #[serde(default)]
    pub other_keys: Vec<String>,
    pub packets: u64,
    pub bytes: u64,
    /// `used:` as printed (`never`, `0.512s`).
    pub used: Option<String>,
    pub placement: DpPlacement,
    pub actions: Vec<DpAction>,
    /// `flags:` (TCP flags seen, e.g. `S.`), when printed. Additive (issue 16 syntaxes).
    #[serde(default)]
    pub tcp_flags_seen: Option<String>,
    /// `dp-extra-info:` after the actions (`dpctl/dump-flows -m` on the userspace datapath),
    /// as printed. Additive (issue 16 syntaxes).
    #[serde(default)]
    pub dp_extra_info: Option<String>,
}

impl FieldMatch {
    /// The value with the bits outside the mask cleared.
    pub fn masked(&self) -> FieldMatch {
        FieldMatch {
            value: self.value & self.mask,
            ..*self
        }
    }
}

impl DpFlow {
    /// The keys with bits outside each mask cleared: what the flow matches.
    pub fn masked_keys(&self) -> Vec<FieldMatch> {
        self.keys.iter().map(FieldMatch::masked).collect()
    }
}

mod dpctl;
mod dpctl_keys;
mod dpctl_write;
mod fields;
mod ofctl;
mod ofctl_actions;
mod ofctl_write;
mod values;

pub use dpctl::{parse_dp_flow, parse_dp_flows, parse_dp_flows_all};
pub use dpctl_write::{dp_flow_to_string, dp_flows_to_string};
pub use ofctl::{looks_like_openflow, parse_file, parse_file_all, parse_rule, DEFAULT_PRIORITY};
pub use ofctl_write::{rule_to_string, rules_to_string};

#[cfg(test)]
mod dpctl_tests;
#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
