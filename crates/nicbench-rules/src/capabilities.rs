//! What a NIC's driver takes at all: the rte_flow items and actions its PMD implements, per rule
//! with the rule's line — the "capability lint" of `nicbench advise`.
//!
//! A table per PMD and DPDK version, copied from DPDK's own feature matrix, so a rule the real
//! driver refuses whatever its table state is reported before any model runs:
//!
//! - `mlx5` (ConnectX-4/5/6, BlueField): `doc/guides/nics/features/mlx5.ini` of DPDK v21.05,
//!   sections `[rte_flow items]` and `[rte_flow actions]` — the first DPDK release whose feature
//!   matrix lists rte_flow support (the PAM'21 seed ran v20.11, whose matrix has no such section);
//!   v22.11's lists add items and actions but none of nicbench's rule model. Every entry there is
//!   `Y` or `I` (supported, or through the indirect-action API). Items and actions of the rule
//!   model not listed: the `sctp` item and the `passthru` action.

use crate::ruleset::{action_kind, NumberedRule};

/// A PMD's rte_flow support, by testpmd name.
#[derive(Clone, Copy, Debug)]
pub struct PmdCapabilities {
    pub pmd: &'static str,
    pub dpdk: &'static str,
    /// Where the lists come from (for the lint's provenance).
    pub source: &'static str,
    pub items: &'static [&'static str],
    pub actions: &'static [&'static str],
}

/// mlx5, DPDK v21.05 (`doc/guides/nics/features/mlx5.ini`).
pub const MLX5_DPDK_21_05: PmdCapabilities = PmdCapabilities {
    pmd: "mlx5",
    dpdk: "21.05",
    source: "DPDK v21.05 doc/guides/nics/features/mlx5.ini, [rte_flow items] and [rte_flow actions]",
    items: &[
        "conntrack",
        "ecpri",
        "eth",
        "geneve",
        "geneve_opt",
        "gre",
        "gre_key",
        "gtp",
        "gtp_psc",
        "icmp",
        "icmp6",
        "integrity",
        "ipv4",
        "ipv6",
        "ipv6_frag_ext",
        "mark",
        "meta",
        "mpls",
        "nvgre",
        "phy_port",
        "port_id",
        "tag",
        "tcp",
        "udp",
        "vlan",
        "vxlan",
        "vxlan_gpe",
    ],
    actions: &[
        "age",
        "conntrack",
        "count",
        "dec_tcp_ack",
        "dec_tcp_seq",
        "dec_ttl",
        "drop",
        "flag",
        "inc_tcp_ack",
        "inc_tcp_seq",
        "jump",
        "mark",
        "meter",
        "modify_field",
        "nvgre_decap",
        "nvgre_encap",
        "of_pop_vlan",
        "of_push_vlan",
        "of_set_vlan_pcp",
        "of_set_vlan_vid",
        "port_id",
        "queue",
        "raw_decap",
        "raw_encap",
        "rss",
        "sample",
        "set_ipv4_dscp",
        "set_ipv4_dst",
        "set_ipv4_src",
        "set_ipv6_dscp",
        "set_ipv6_dst",
        "set_ipv6_src",
        "set_mac_dst",
        "set_mac_src",
        "set_meta",
        "set_tag",
        "set_tp_dst",
        "set_tp_src",
        "set_ttl",
        "vxlan_decap",
        "vxlan_encap",
    ],
};

/// A PMD's table by name.
pub fn pmd(name: &str) -> Option<PmdCapabilities> {
    (name == MLX5_DPDK_21_05.pmd).then_some(MLX5_DPDK_21_05)
}

/// One rule the PMD cannot take: its line and what is missing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Unsupported {
    pub line: usize,
    /// `item` or `action`.
    pub kind: &'static str,
    pub name: String,
}

/// Every item and action of `rules` that `caps` does not list, in line order.
pub fn lint(rules: &[NumberedRule], caps: &PmdCapabilities) -> Vec<Unsupported> {
    let mut out = Vec::new();
    for r in rules {
        for item in &r.rule.pattern {
            let name = item.kind().name();
            if !caps.items.contains(&name) {
                out.push(Unsupported {
                    line: r.line,
                    kind: "item",
                    name: name.to_string(),
                });
            }
        }
        for action in &r.rule.actions {
            let name = action_kind(action);
            if !caps.actions.contains(&name.as_str()) {
                out.push(Unsupported {
                    line: r.line,
                    kind: "action",
                    name,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ruleset::{load, Syntax};

    #[test]
    fn test_sctp_and_passthru_are_not_mlx5s_and_the_rest_is() {
        let text =
            "flow create 0 ingress pattern eth / ipv4 / udp dst is 53 / end actions count / queue index 1 / end\n\
                    flow create 0 ingress pattern eth / ipv4 / sctp dst is 9 / end actions drop / end\n\
                    flow create 0 ingress pattern eth / end actions passthru / end\n";
        let file = load(text, "r", Syntax::Testpmd, false).expect("loads");
        let found = lint(&file.rules, &MLX5_DPDK_21_05);
        assert_eq!(
            found,
            vec![
                Unsupported {
                    line: 2,
                    kind: "item",
                    name: "sctp".into()
                },
                Unsupported {
                    line: 3,
                    kind: "action",
                    name: "passthru".into()
                },
            ]
        );
    }
}
