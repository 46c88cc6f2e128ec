//! What the virtual OVS datapath hands a NIC for one PVP run: its megaflows, counted per mask.
//!
//! The datapath (issue 16, `vswitch/`) decides which megaflows exist, their masks, and which the
//! NIC took (tc flower, `hw-offload`); the NIC models only need counts: per mask, on which
//! ingress port its tc filters sit (OVS installs a tc flower filter on the ingress qdisc of the
//! megaflow's `in_port`), how many megaflows it holds, how many of them are offloaded, and
//! whether they match tunnel metadata (VXLAN decap) or push a tunnel header (encap).
//!
//! Invariants: traffic is spread uniformly over the flows; every packet takes two passes through
//! the NIC (uplink → VF, VF → uplink) and hits exactly one megaflow per pass; a pass's packets
//! split over its ingress's masks in proportion to their megaflows.

use crate::error::ModelError;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The ingress port whose tc filters hold a mask's megaflows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Ingress {
    /// The physical port: pass 1 (generator → VM).
    Uplink,
    /// The VM's VF (its representor): pass 2 (VM → generator).
    Vf,
}

/// One megaflow mask (one tc flower priority on one ingress port).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaskLoad {
    pub ingress: Ingress,
    /// Megaflows under this mask.
    pub megaflows: u64,
    /// Of those, the ones the NIC accepted (the rest run in the host's kernel datapath).
    pub offloaded: u64,
    /// The megaflows match tunnel metadata (VXLAN decap on the uplink).
    #[serde(default)]
    pub decap: bool,
    /// The megaflows' actions push a tunnel header (VXLAN encap towards the uplink), one
    /// distinct header per megaflow (the seed's 1:1 rules to VNIs).
    #[serde(default)]
    pub encap: bool,
}

/// The megaflows of a run, per mask.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MegaflowLoad {
    pub masks: Vec<MaskLoad>,
}

impl MegaflowLoad {
    /// Red Hat PVP as the seed runs it: two OpenFlow rules per flow (exact IPv4 src/dst, one
    /// towards the VM, one back) become two exact megaflows per flow, one mask per direction,
    /// all offloaded. With `vxlan`: the uplink rules decap (match the VNI), the VF rules encap
    /// (one VNI per rule).
    pub fn pvp(flows: u64, vxlan: bool) -> MegaflowLoad {
        MegaflowLoad {
            masks: vec![
                MaskLoad {
                    ingress: Ingress::Uplink,
                    megaflows: flows,
                    offloaded: flows,
                    decap: vxlan,
                    encap: false,
                },
                MaskLoad {
                    ingress: Ingress::Vf,
                    megaflows: flows,
                    offloaded: flows,
                    decap: false,
                    encap: vxlan,
                },
            ],
        }
    }

    /// Checks counts; `where_` names the request field in messages.
    pub fn validate(&self, where_: &str) -> Result<(), ModelError> {
        for ingress in [Ingress::Uplink, Ingress::Vf] {
            if self.megaflows_on(ingress) == 0 {
                return Err(ModelError::Scenario(format!(
                    "{where_}: no megaflows on the {} ingress (a PVP packet passes the NIC from the uplink and from the VF; allowed: at least one mask per ingress with megaflows >= 1)",
                    ingress.name()
                )));
            }
        }
        for (i, m) in self.masks.iter().enumerate() {
            if m.offloaded > m.megaflows {
                return Err(ModelError::Scenario(format!(
                    "{where_}.masks[{i}]: offloaded = {} exceeds megaflows = {} (allowed: 0..=megaflows)",
                    m.offloaded, m.megaflows
                )));
            }
        }
        Ok(())
    }

    /// Megaflows installed on `ingress`.
    pub fn megaflows_on(&self, ingress: Ingress) -> u64 {
        self.masks
            .iter()
            .filter(|m| m.ingress == ingress)
            .map(|m| m.megaflows)
            .sum()
    }

    /// Share of `ingress`'s packets that hit mask `m` and are handled by the NIC.
    pub fn offloaded_share(&self, m: &MaskLoad) -> f64 {
        let total = self.megaflows_on(m.ingress);
        if total == 0 {
            0.0
        } else {
            m.offloaded as f64 / total as f64
        }
    }

    /// Passes per packet that run in the host's kernel datapath (0..=2).
    pub fn software_passes(&self) -> f64 {
        [Ingress::Uplink, Ingress::Vf]
            .iter()
            .map(|&i| {
                1.0 - self
                    .masks
                    .iter()
                    .filter(|m| m.ingress == i)
                    .map(|m| self.offloaded_share(m))
                    .sum::<f64>()
            })
            .sum::<f64>()
            .max(0.0)
    }

    /// Megaflows offloaded in total, and their distinct masks.
    pub fn offloaded(&self) -> (u64, usize) {
        let masks = self.masks.iter().filter(|m| m.offloaded > 0).count();
        (self.masks.iter().map(|m| m.offloaded).sum(), masks)
    }
}

impl Ingress {
    pub fn name(self) -> &'static str {
        match self {
            Ingress::Uplink => "uplink",
            Ingress::Vf => "vf",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_pvp_load_counts_and_shares() {
        let l = MegaflowLoad::pvp(16_384, false);
        assert_eq!(l.offloaded(), (32_768, 2));
        assert_eq!(l.software_passes(), 0.0);
        l.validate("megaflows").expect("valid");
        let mut half = l.clone();
        half.masks[1].offloaded = 8_192;
        assert!((half.software_passes() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn test_bad_counts_are_named() {
        let mut l = MegaflowLoad::pvp(10, false);
        l.masks[0].offloaded = 11;
        let msg = l.validate("megaflows").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            msg.contains("megaflows.masks[0]: offloaded = 11 exceeds megaflows = 10"),
            "{msg}"
        );
        l.masks.remove(1);
        l.masks[0].offloaded = 1;
        let msg = l.validate("megaflows").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(msg.contains("no megaflows on the vf ingress"), "{msg}");
    }
}
