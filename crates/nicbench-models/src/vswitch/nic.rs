//! The device data a run reads from profiles: the OVS-TC NIC's offload capabilities (its
//! profile's `[device.ovs_tc_offload]` section) and the host's costs (the PVP host's
//! `sw_packet_ns`, `upcall_us`, `revalidate_flow_us` parameters).
//!
//! The NICs are the profiles of the kinds the PVP testbed reads ([`crate::pvp::PROFILE_KINDS`]):
//! the list is the profiles folder's, never written in code.

use std::collections::BTreeMap;
use std::path::Path;

use crate::profile::{self, Profile};
use crate::ModelError;

use super::offload::{OffloadCaps, OffloadSection};
use super::{CostParam, HostCosts};

/// The profile section of a NIC's OVS-TC offload capabilities (see [`OffloadSection`]).
pub const OFFLOAD_SECTION: &str = "ovs_tc_offload";

/// The host whose costs price a run without a NIC: the seed's PVP server, which both OVS-TC
/// profiles describe (agilio-cx-25g's host is connectx5-25g's).
pub const DEFAULT_HOST: &str = "connectx5-25g";

/// The OVS-TC NICs in `dir`: the profiles of the PVP kinds, sorted.
pub fn nics(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = crate::pvp::PROFILE_KINDS
        .iter()
        .flat_map(|kind| profile::names_of_kind(dir, kind))
        .collect();
    names.sort();
    names
}

/// Loads NIC profile `name` (a name or a path) with `overrides`: one of [`nics`], or a profile of
/// their kinds.
pub fn load(name: &str, dir: &Path, overrides: &BTreeMap<String, f64>) -> Result<Profile, ModelError> {
    let known = || nics(dir).join(", ");
    if profile::resolve(name, dir).is_err() {
        return Err(ModelError::Scenario(format!(
            "nic '{name}' is not known (nics: {})",
            known()
        )));
    }
    let mut p = Profile::load(name, dir)?;
    if !crate::pvp::PROFILE_KINDS.contains(&p.kind.as_str()) {
        return Err(ModelError::Scenario(format!(
            "nic '{name}': its profile is of kind '{}', which has no OVS-TC offload (nics: {})",
            p.kind,
            known()
        )));
    }
    p.apply_overrides(overrides)?;
    crate::pvp::check_nic(&p)?;
    Ok(p)
}

/// The NIC's capabilities from its profile.
pub fn caps(p: &Profile) -> Result<OffloadCaps, ModelError> {
    let section: OffloadSection = p.device(OFFLOAD_SECTION)?.ok_or_else(|| {
        p.error(format_args!(
            "no [device.{OFFLOAD_SECTION}] section: the NIC's OVS-TC offload capabilities (match fields, \
             actions, limits, with their provenance)"
        ))
    })?;
    // The mask table's size is the NIC model's parameter (Agilio: the flower firmware's mask ids),
    // so an override of it moves the offload decision and the NIC's cost together.
    let max_masks = if p.declares(MASK_TABLE_PARAM) {
        Some(p.value(MASK_TABLE_PARAM)? as u32)
    } else {
        None
    };
    Ok(section.into_caps(&p.name, max_masks))
}

/// The profile parameter that sizes a NIC's megaflow mask table, where the NIC has one [masks].
pub const MASK_TABLE_PARAM: &str = "mask_table_entries";

/// The host's costs from a profile's parameters, with their units and provenance.
pub fn host_costs(p: &Profile) -> Result<HostCosts, ModelError> {
    let cost = |name: &str| -> Result<CostParam, ModelError> {
        let value = p.value(name)?;
        let param = &p.params[name];
        Ok(CostParam {
            value,
            unit: param.unit.clone(),
            provenance: param.provenance.clone(),
        })
    };
    Ok(HostCosts {
        sw_packet_ns: cost("sw_packet_ns")?,
        upcall_us: cost("upcall_us")?,
        revalidate_flow_us: cost("revalidate_flow_us")?,
        upcall_queue: cost("upcall_queue")?,
        host_datapath_cores: cost("host_datapath_cores")?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tests::dir;

    #[test]
    fn test_every_nic_profile_has_its_capabilities_and_host_costs() {
        let names = nics(&dir());
        assert_eq!(names, ["agilio-cx-25g", "connectx5-25g"]);
        for name in &names {
            let p = load(name, &dir(), &BTreeMap::new()).expect("loads");
            let c = caps(&p).expect("caps");
            assert_eq!(&c.nic, name);
            assert!(
                !c.match_fields.is_empty() && !c.actions.is_empty() && !c.sources.is_empty(),
                "{name}"
            );
            assert!(
                c.sources.iter().all(|s| !s.what.is_empty() && !s.provenance.is_empty()),
                "{name}"
            );
            let h = host_costs(&p).expect("host costs");
            assert!(
                h.upcall_us.provenance.starts_with("measured on this project machine"),
                "{name}"
            );
            assert!(
                h.revalidate_flow_us
                    .provenance
                    .starts_with("measured on this project machine"),
                "{name}"
            );
            assert_eq!(h.upcall_queue.unit, "upcalls", "{name}");
        }
    }

    #[test]
    fn test_unknown_and_wrong_kind_nics_name_the_nics() {
        let err = |n: &str| {
            load(n, &dir(), &BTreeMap::new())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert_eq!(
            err("bluefield"),
            "scenario: nic 'bluefield' is not known (nics: agilio-cx-25g, connectx5-25g)"
        );
        assert!(
            err("connectx5")
                .contains("nic 'connectx5': its profile is of kind 'connectx', which has no OVS-TC offload"),
            "{}",
            err("connectx5")
        );
        let host = Profile::load("connectx5", &dir()).expect("loads");
        assert!(
            host_costs(&host).is_err(),
            "a profile without a PVP host has no host costs"
        );
        let o: BTreeMap<String, f64> = [("upcall_us".to_string(), 5.0)].into();
        let p = load("agilio-cx-25g", &dir(), &o).expect("override");
        assert_eq!(host_costs(&p).expect("costs").upcall_us.value, 5.0);
    }
}
