//! `hw-offload=true`: each new megaflow is offered to tc flower, first through OVS's own tc
//! layer (lib/netdev-offload-tc.c `netdev_tc_flow_put`, `test_key_and_mask`), then to the NIC
//! driver; the decision and its reason, and where the flow then runs.
//!
//! Where a flow ends up, by `other_config:tc-policy` (vswitch.xml) and who refused it:
//!
//! | tc-policy | OVS's tc layer refuses | the NIC refuses            | the NIC accepts            |
//! |-----------|------------------------|----------------------------|----------------------------|
//! | none      | `dp:ovs` (kernel)      | `dp:tc`, `offloaded:no`    | `dp:tc`, `offloaded:yes`   |
//! | skip_sw   | `dp:ovs`               | `dp:ovs` (see below)       | `dp:tc`, `offloaded:yes`   |
//! | skip_hw   | `dp:ovs`               | not offered                | —                          |
//!
//! `none`: the kernel keeps a flower filter the hardware refused in tc's software classifier.
//! `skip_sw`: the filter add fails; the upcall path calls `dpif_operate(..., DPIF_OFFLOAD_AUTO)`
//! and dpif-netlink's `dpif_netlink_operate` then puts every op whose offload failed into the
//! kernel datapath, so a refused flow is not lost but runs in `dp:ovs` on host cores (a stricter
//! reading, "refused flows are not installed at all", is not what OVS 2.9–3.1 do on this path).
//!
//! Reasons are OVS's log text where OVS's tc layer refuses (`vlan partial mask`,
//! `unsupported put action type: N`), and `<driver>: <what>` naming the
//! capability and its source where the NIC does.
//!
//! What a NIC takes is device data, in its profile: the `[device.ovs_tc_offload]` section
//! ([`OffloadSection`], read by [`super::nic::caps`]), each capability with its source.

use std::collections::HashSet;

use nicbench_rules::openflow::{DpAction, DpFlow, OfField};
use serde::{Deserialize, Serialize};

use super::key::{self, Fields};
use super::tunnel::{tunnel_action, TunnelAction};

/// `other_config:tc-policy`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TcPolicy {
    #[default]
    None,
    SkipSw,
    SkipHw,
}

/// A datapath action as a tc flower offload sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OffloadAction {
    Output,
    Drop,
    PushVlan,
    PopVlan,
    SetEthernet,
    SetIpv4,
    SetIpv6,
    SetTransport,
    /// Encapsulation: `set(tunnel(..))` or the userspace datapath's `tnl_push` (tc: `tunnel_key set`).
    SetTunnel,
    /// Decapsulation: the userspace datapath's `tnl_pop` (tc: the rule on the VXLAN device with
    /// `enc_*` keys and `tunnel_key unset`; under OVS-TC the kernel's VXLAN port decapsulates).
    TunnelDecap,
    Ct,
    Recirc,
    Userspace,
    Other,
}

/// One capability and where it comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Source {
    pub what: String,
    pub provenance: String,
}

/// What a NIC's tc flower offload takes: data, with provenance.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OffloadCaps {
    pub nic: String,
    /// The kernel driver (names the refusal reasons).
    pub driver: String,
    /// Datapath key fields the NIC matches (`recirc_id(0)`, `in_port` and `eth_type` are
    /// implied by a tc filter on chain 0 of the port).
    #[schemars(with = "Vec<String>")]
    pub match_fields: Vec<OfField>,
    /// ICMP type/code (in `tp_src`/`tp_dst`) matchable.
    pub icmp_match: bool,
    pub actions: Vec<OffloadAction>,
    /// Header rewrites of IPv4/IPv6 fields only on TCP/UDP packets (checksum fix-up).
    pub ip_rewrite_needs_tcp_udp: bool,
    /// Distinct megaflow masks the NIC holds at once; `None`: no limit known.
    pub max_masks: Option<u32>,
    /// Offloaded flows the NIC holds at once; `None`: no limit known.
    pub max_flows: Option<u64>,
    pub sources: Vec<Source>,
}

/// A NIC's capabilities as its profile holds them (`[device.ovs_tc_offload]`, read by
/// [`super::nic::caps`]): [`OffloadCaps`] without the NIC's name, which is the profile's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffloadSection {
    pub driver: String,
    pub match_fields: Vec<OfField>,
    pub icmp_match: bool,
    pub actions: Vec<OffloadAction>,
    pub ip_rewrite_needs_tcp_udp: bool,
    #[serde(default)]
    pub max_flows: Option<u64>,
    pub sources: Vec<Source>,
}

impl OffloadSection {
    /// The capabilities of NIC `nic`, whose mask table holds `max_masks` masks (a number, so a
    /// profile parameter with its unit and provenance, not part of this section).
    pub fn into_caps(self, nic: &str, max_masks: Option<u32>) -> OffloadCaps {
        OffloadCaps {
            nic: nic.to_string(),
            driver: self.driver,
            match_fields: self.match_fields,
            icmp_match: self.icmp_match,
            actions: self.actions,
            ip_rewrite_needs_tcp_udp: self.ip_rewrite_needs_tcp_udp,
            max_masks,
            max_flows: self.max_flows,
            sources: self.sources,
        }
    }
}

fn action_kind(a: &DpAction) -> OffloadAction {
    use OfField::*;
    match a {
        DpAction::Output { .. } => OffloadAction::Output,
        DpAction::Drop => OffloadAction::Drop,
        DpAction::PushVlan { .. } => OffloadAction::PushVlan,
        DpAction::PopVlan => OffloadAction::PopVlan,
        DpAction::Set {
            field: DlSrc | DlDst, ..
        } => OffloadAction::SetEthernet,
        DpAction::Set {
            field: NwSrc | NwDst | NwTos | NwTtl,
            ..
        } => OffloadAction::SetIpv4,
        DpAction::Set {
            field: Ipv6Src | Ipv6Dst,
            ..
        } => OffloadAction::SetIpv6,
        DpAction::Set {
            field: TpSrc | TpDst, ..
        } => OffloadAction::SetTransport,
        DpAction::Set { .. } => OffloadAction::Other,
        DpAction::SetTunnel { .. } | DpAction::Tunnel { .. } => match tunnel_action(a) {
            Some(TunnelAction::Pop(_)) => OffloadAction::TunnelDecap,
            _ => OffloadAction::SetTunnel,
        },
        DpAction::Ct { .. } => OffloadAction::Ct,
        DpAction::Recirc { .. } => OffloadAction::Recirc,
        DpAction::Other { text } if text.starts_with("userspace") => OffloadAction::Userspace,
        DpAction::Other { .. } => OffloadAction::Other,
    }
}

/// OVS's tc layer (`netdev_tc_flow_put`): `Err(OVS's log text)` when OVS itself cannot put the
/// megaflow into a flower filter.
pub fn ovs_tc_refusal(flow_key: &Fields, mask: &Fields, actions: &[DpAction]) -> Option<String> {
    use OfField::*;
    // ICMP type/code are no refusal here: OVS 3.1's netdev_tc_flow_put puts them into flower's
    // icmp_type/icmp_code keys (OVS 2.9's test_key_and_mask refused them with "offloading
    // attribute icmp_type isn't supported"); whether the NIC matches them is `icmp_match`.
    let tci = mask[VlanTci];
    // An untagged packet's megaflow has no VLAN attribute (its exact eth_type says "no tag").
    if tci != 0 && flow_key[VlanTci] & key::VLAN_CFI != 0 {
        let (vid, pcp) = (tci & 0x0fff, tci & 0xe000);
        let whole = (vid == 0 || vid == 0x0fff) && (pcp == 0 || pcp == 0xe000) && (vid != 0 || pcp != 0);
        if !(tci & key::VLAN_CFI != 0 && whole) {
            return Some("vlan partial mask (netdev_tc_flow_put returns EOPNOTSUPP)".into());
        }
    }
    for a in actions {
        // OVS_ACTION_ATTR_USERSPACE = 2, SAMPLE = 6, HASH = 8 (include/linux/openvswitch.h).
        match action_kind(a) {
            OffloadAction::Userspace => return Some("unsupported put action type: 2".into()),
            OffloadAction::Other => return Some("unsupported put action type".into()),
            _ => {}
        }
    }
    None
}

/// The NIC's answer: `Some(reason)` when it refuses.
pub fn nic_refusal(
    caps: &OffloadCaps,
    flow_key: &Fields,
    flow: &DpFlow,
    masks_in_use: &HashSet<Vec<(OfField, u128)>>,
    offloaded_flows: u64,
) -> Option<String> {
    use OfField::*;
    let d = &caps.driver;
    for k in &flow.keys {
        let implied = matches!(k.field, InPort | DlType) || (k.field == RecircId && k.value == 0);
        if implied {
            continue;
        }
        if matches!(k.field, TpSrc | TpDst) && key::is_icmp_any(flow_key) {
            if !caps.icmp_match {
                return Some(format!("{d}: cannot match ICMP type/code"));
            }
            continue;
        }
        if !caps.match_fields.contains(&k.field) {
            return Some(format!("{d}: cannot match {}", field_name(k.field)));
        }
    }
    let l4_tcp_udp = matches!(flow_key[NwProto], key::IPPROTO_TCP | key::IPPROTO_UDP);
    for a in &flow.actions {
        let kind = action_kind(a);
        if !caps.actions.contains(&kind) {
            return Some(format!(
                "{d}: cannot do action {}",
                serde_json::to_string(&kind).unwrap_or_default().trim_matches('"')
            ));
        }
        if caps.ip_rewrite_needs_tcp_udp
            && matches!(kind, OffloadAction::SetIpv4 | OffloadAction::SetIpv6)
            && !l4_tcp_udp
        {
            return Some(format!("{d}: IP header rewrite only for TCP and UDP"));
        }
    }
    if let Some(max) = caps.max_masks {
        let m = mask_signature(flow);
        if !masks_in_use.contains(&m) && masks_in_use.len() as u64 >= u64::from(max) {
            return Some(format!("{d}: no free mask ({max} masks in use)"));
        }
    }
    if caps.max_flows.is_some_and(|max| offloaded_flows >= max) {
        return Some(format!("{d}: flow table full"));
    }
    None
}

/// The mask of a megaflow (fields and masks), as the NIC's mask table keys it.
pub fn mask_signature(flow: &DpFlow) -> Vec<(OfField, u128)> {
    flow.keys.iter().map(|k| (k.field, k.mask)).collect()
}

pub fn field_name(f: OfField) -> String {
    serde_json::to_string(&f)
        .unwrap_or_default()
        .trim_matches('"')
        .to_string()
}

/// Where a megaflow runs and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub offloaded: bool,
    /// `tc` or `ovs`.
    pub dp: &'static str,
    pub reason: Option<String>,
}

/// The placement of a new megaflow (`hw_offload` false: every flow in `dp:ovs`).
pub fn decide(
    hw_offload: bool,
    policy: TcPolicy,
    ovs_refusal: Option<String>,
    nic: impl FnOnce() -> Option<String>,
) -> Decision {
    if !hw_offload {
        return Decision {
            offloaded: false,
            dp: "ovs",
            reason: None,
        };
    }
    if let Some(r) = ovs_refusal {
        return Decision {
            offloaded: false,
            dp: "ovs",
            reason: Some(r),
        };
    }
    match policy {
        TcPolicy::SkipHw => Decision {
            offloaded: false,
            dp: "tc",
            reason: None,
        },
        TcPolicy::None => match nic() {
            None => Decision {
                offloaded: true,
                dp: "tc",
                reason: None,
            },
            Some(r) => Decision {
                offloaded: false,
                dp: "tc",
                reason: Some(r),
            },
        },
        TcPolicy::SkipSw => match nic() {
            None => Decision {
                offloaded: true,
                dp: "tc",
                reason: None,
            },
            Some(r) => Decision {
                offloaded: false,
                dp: "ovs",
                reason: Some(r),
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nicbench_rules::openflow::FieldMatch;
    use OfField::*;

    /// A NIC's capabilities as its profile gives them (`profiles/` of the checkout).
    fn caps(name: &str) -> OffloadCaps {
        let p = crate::profile::Profile::load(name, &crate::profile::tests::dir()).expect("profile");
        crate::vswitch::nic::caps(&p).expect("caps")
    }

    fn agilio_cx_25g() -> OffloadCaps {
        caps("agilio-cx-25g")
    }

    fn connectx5_25g() -> OffloadCaps {
        caps("connectx5-25g")
    }

    fn flow(keys: &[(OfField, u128, u128)], actions: Vec<DpAction>) -> (Fields, DpFlow) {
        let mut k = Fields::default();
        for &(f, v, _) in keys {
            k[f] = v;
        }
        let keys = keys
            .iter()
            .map(|&(field, value, mask)| FieldMatch { field, value, mask })
            .collect();
        (
            k,
            DpFlow {
                keys,
                actions,
                ..DpFlow::default()
            },
        )
    }

    const BASE: [(OfField, u128, u128); 3] = [
        (RecircId, 0, 0xffff_ffff),
        (InPort, 2, 0xffff_ffff),
        (DlType, 0x0800, 0xffff),
    ];

    #[test]
    fn test_tcp_flags_match_is_refused_by_agilio_taken_by_connectx5() {
        let mut keys = BASE.to_vec();
        keys.extend([(NwProto, 6, 0xff), (TcpFlags, 2, 0xfff)]);
        let (k, f) = flow(&keys, vec![DpAction::Output { port: 3 }]);
        let none = HashSet::new();
        assert_eq!(
            nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0).as_deref(),
            Some("nfp: cannot match tcp_flags")
        );
        // mlx5 of 4.14/4.15 takes FLOW_DISSECTOR_KEY_TCP.
        assert_eq!(nic_refusal(&connectx5_25g(), &k, &f, &none, 0), None);
    }

    #[test]
    fn test_inner_ecn_match_of_an_encap_megaflow_is_taken_by_both() {
        let mut keys = BASE.to_vec();
        keys.extend([(NwProto, 17, 0xff), (NwTos, 0, 0x03)]);
        let push = DpAction::Tunnel {
            text: "tnl_push(tnl_port(4789),header(size=50,type=4))".into(),
        };
        let (k, f) = flow(&keys, vec![push, DpAction::Output { port: 3 }]);
        let none = HashSet::new();
        assert_eq!(nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0), None);
        assert_eq!(nic_refusal(&connectx5_25g(), &k, &f, &none, 0), None);
    }

    #[test]
    fn test_ttl_match_only_on_agilio_and_ip_rewrite_needs_tcp_udp_on_connectx5() {
        let mut keys = BASE.to_vec();
        keys.extend([(NwProto, 1, 0xff), (NwTtl, 64, 0xff)]);
        let (k, f) = flow(&keys, vec![DpAction::Output { port: 3 }]);
        let none = HashSet::new();
        assert_eq!(nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0), None);
        assert_eq!(
            nic_refusal(&connectx5_25g(), &k, &f, &none, 0).as_deref(),
            Some("mlx5_core: cannot match nw_ttl")
        );
        let (k, f) = flow(
            &BASE,
            vec![
                DpAction::Set {
                    field: NwDst,
                    value: 1,
                    mask: 0xffff_ffff,
                },
                DpAction::Output { port: 3 },
            ],
        );
        assert_eq!(
            nic_refusal(&connectx5_25g(), &k, &f, &none, 0).as_deref(),
            Some("mlx5_core: IP header rewrite only for TCP and UDP")
        );
        assert_eq!(nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0), None);
    }

    #[test]
    fn test_ovs_refuses_userspace_and_leaves_icmp_type_to_the_nic() {
        let (k, f) = flow(
            &BASE,
            vec![DpAction::Other {
                text: "userspace(pid=0)".into(),
            }],
        );
        assert_eq!(
            ovs_tc_refusal(&k, &Fields::default(), &f.actions).as_deref(),
            Some("unsupported put action type: 2")
        );
        let mut k = Fields::default();
        k[DlType] = 0x0800;
        k[NwProto] = 1;
        let mut m = Fields::default();
        m[TpSrc] = 0xff;
        assert_eq!(ovs_tc_refusal(&k, &m, &[]), None, "OVS 3.1 puts icmp_type into flower");
        let (_, f) = flow(
            &[
                (RecircId, 0, 0xffff_ffff),
                (DlType, 0x0800, 0xffff),
                (NwProto, 1, 0xff),
                (TpSrc, 8, 0xff),
            ],
            vec![DpAction::Output { port: 3 }],
        );
        let none = HashSet::new();
        assert_eq!(nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0), None);
        assert_eq!(
            nic_refusal(&connectx5_25g(), &k, &f, &none, 0).as_deref(),
            Some("mlx5_core: cannot match ICMP type/code")
        );
    }

    #[test]
    fn test_vlan_masks_ovs_tc_takes_and_refuses() {
        let mut tagged = Fields::default();
        tagged[VlanTci] = 0x1000 | 10;
        let mut m = Fields::default();
        m[VlanTci] = 0x1fff; // VID + CFI: flower's vlan_id
        assert_eq!(ovs_tc_refusal(&tagged, &m, &[]), None);
        m[VlanTci] = 0x1ff0; // part of the VID
        assert_eq!(
            ovs_tc_refusal(&tagged, &m, &[]).as_deref(),
            Some("vlan partial mask (netdev_tc_flow_put returns EOPNOTSUPP)")
        );
        // Untagged: the CFI-only mask nicbench keeps is no VLAN attribute at all.
        m[VlanTci] = 0x1000;
        assert_eq!(ovs_tc_refusal(&Fields::default(), &m, &[]), None);
    }

    #[test]
    fn test_ct_and_recirc_refused_by_both() {
        let (k, f) = flow(
            &BASE,
            vec![
                DpAction::Ct {
                    text: "ct(commit)".into(),
                },
                DpAction::Recirc { id: 1 },
            ],
        );
        let none = HashSet::new();
        assert_eq!(
            nic_refusal(&agilio_cx_25g(), &k, &f, &none, 0).as_deref(),
            Some("nfp: cannot do action ct")
        );
    }

    #[test]
    fn test_mask_limit() {
        let (k, f) = flow(&BASE, vec![DpAction::Output { port: 3 }]);
        let full: HashSet<_> = (0..256u128).map(|i| vec![(NwSrc, i)]).collect();
        assert_eq!(
            nic_refusal(&agilio_cx_25g(), &k, &f, &full, 0).as_deref(),
            Some("nfp: no free mask (256 masks in use)")
        );
        let mut has = full.clone();
        has.remove(&vec![(NwSrc, 0)]);
        has.insert(mask_signature(&f));
        assert_eq!(
            nic_refusal(&agilio_cx_25g(), &k, &f, &has, 0),
            None,
            "a mask already in use costs nothing"
        );
    }

    #[test]
    fn test_placement_by_policy() {
        let refuse = || Some("nic says no".to_string());
        let accept = || None;
        assert_eq!(
            decide(true, TcPolicy::None, None, refuse),
            Decision {
                offloaded: false,
                dp: "tc",
                reason: Some("nic says no".into())
            }
        );
        assert_eq!(decide(true, TcPolicy::SkipSw, None, refuse).dp, "ovs");
        assert_eq!(
            decide(true, TcPolicy::SkipSw, None, accept),
            Decision {
                offloaded: true,
                dp: "tc",
                reason: None
            }
        );
        assert_eq!(
            decide(true, TcPolicy::SkipHw, None, accept),
            Decision {
                offloaded: false,
                dp: "tc",
                reason: None
            }
        );
        assert_eq!(decide(true, TcPolicy::None, Some("x".into()), accept).dp, "ovs");
        assert_eq!(
            decide(false, TcPolicy::None, None, accept),
            Decision {
                offloaded: false,
                dp: "ovs",
                reason: None
            }
        );
    }
}
