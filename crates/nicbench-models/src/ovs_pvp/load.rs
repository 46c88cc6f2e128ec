//! The PVP model's load from a datapath pass: its installed megaflows counted per mask (the set
//! of (field, mask) pairs: one tc flower priority on the ingress port), with whether they
//! decapsulate or encapsulate.
//!
//! Decided from the megaflows' keys and typed actions: a megaflow matching the tunnel id is a
//! decap (its tc rule takes the decap to the NIC), one with an encap action
//! ([`TunnelAction::Push`]) an encap. A `tnl_pop` megaflow ([`TunnelAction::Pop`]) is left out: it
//! is the userspace datapath's decap step, which under OVS-TC the kernel's VXLAN port does, with
//! no tc rule of its own.

use std::collections::HashMap;

use nicbench_rules::openflow::OfField;

use crate::ovs_nic::{Ingress, MaskLoad};
use crate::vswitch::result::Result as PassResult;
use crate::vswitch::tunnel::{tunnel_action, TunnelAction};

/// What tells two masks apart: the (field, mask) pairs, sorted, and whether the megaflows decap and encap.
type MaskKey = (Vec<(OfField, u128)>, bool, bool);

/// The installed megaflows of `pass` per mask, in the order their masks first appear, as
/// `ingress`'s [`MaskLoad`]s.
pub fn mask_load(pass: &PassResult, ingress: Ingress) -> Vec<MaskLoad> {
    let mut masks: Vec<MaskLoad> = Vec::new();
    let mut index: HashMap<MaskKey, usize> = HashMap::new();
    for mf in pass.megaflows.iter().filter(|m| m.installed) {
        let tunnel: Vec<TunnelAction> = mf.flow.actions.iter().filter_map(tunnel_action).collect();
        if tunnel.iter().any(|t| matches!(t, TunnelAction::Pop(_))) {
            continue;
        }
        let decap = mf.flow.keys.iter().any(|k| k.field == OfField::TunId);
        let encap = tunnel.contains(&TunnelAction::Push);
        let mut signature: Vec<(OfField, u128)> = mf.flow.keys.iter().map(|k| (k.field, k.mask)).collect();
        signature.sort_unstable();
        let at = *index.entry((signature, decap, encap)).or_insert_with(|| {
            masks.push(MaskLoad {
                ingress,
                megaflows: 0,
                offloaded: 0,
                decap,
                encap,
            });
            masks.len() - 1
        });
        masks[at].megaflows += 1;
        masks[at].offloaded += u64::from(mf.flow.placement.offloaded == Some(true));
    }
    masks
}
