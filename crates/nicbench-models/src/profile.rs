//! Device profiles: `profiles/<name>.toml`, one `[param.NAME]` table per parameter.
//!
//! ```toml
//! name = "connectx5"
//! description = "NVIDIA Mellanox ConnectX-5 100 GbE"
//! [param.root_table_capacity]
//! value = 65536
//! unit = "entries"
//! provenance = "seed 000, §2.1: 'space for 65 536 rule entries'"
//! [param.steering_cache_entries]
//! value = 20000
//! unit = "STEs"
//! provenance = "fitted: pam21-cx5 fig2b"
//! fitted = true
//! ```
//!
//! Invariants: every parameter a model reads is declared in [`NicParams`] and must be
//! present in the profile with a finite value (a missing or unknown name is an error,
//! never a silent default); overrides may only name declared parameters. Models read
//! parameters only through [`NicParams`], so what a run used is exactly the profile plus
//! its overrides.

use crate::error::ModelError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One parameter with its unit and where its value comes from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    pub value: f64,
    pub unit: String,
    pub provenance: String,
    /// Set by `nicbench calibrate` when it wrote the value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fitted: Option<bool>,
}

/// A device profile as loaded from TOML (plus overrides, if any were applied).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Which model reads the profile: absent or "steering" (the ConnectX steering model,
    /// checked against [`NicParams`]), or another model's kind ("offpath", "flowhost"), whose
    /// own loader checks its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The study whose calibration set `nicbench calibrate` fits this profile on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_study: Option<String>,
    #[serde(rename = "param")]
    pub params: BTreeMap<String, Param>,
    /// File the profile was read from (not part of the TOML).
    #[serde(default, skip_deserializing)]
    pub path: Option<PathBuf>,
}

impl Profile {
    pub fn from_toml(text: &str, origin: &str) -> Result<Profile, ModelError> {
        let profile: Profile = toml::from_str(text)
            .map_err(|e| ModelError::Profile(format!("{origin}: {}", e.message().replace('\n', " "))))?;
        if !profile.is_steering() {
            return Ok(profile);
        }
        NicParams::from_profile(&profile).map_err(|e| match e {
            ModelError::Profile(m) => ModelError::Profile(format!("{origin}: {m}")),
            other => other,
        })?;
        Ok(profile)
    }

    /// True when the ConnectX steering model reads this profile (`kind` absent or "steering").
    pub fn is_steering(&self) -> bool {
        self.kind.as_deref().is_none_or(|k| k == STEERING_KIND)
    }

    /// Loads `name_or_path`: a path to a `.toml` file, or a profile name looked up as
    /// `<profiles_dir>/<name>.toml`.
    pub fn load(name_or_path: &str, profiles_dir: Option<&Path>) -> Result<Profile, ModelError> {
        let path = resolve(name_or_path, profiles_dir)?;
        let text = std::fs::read_to_string(&path)
            .map_err(|e| ModelError::Profile(format!("{}: {e}", path.display())))?;
        let mut profile = Profile::from_toml(&text, &path.display().to_string())?;
        profile.path = Some(path);
        Ok(profile)
    }

    /// Replaces values; each name must be a declared parameter.
    pub fn apply_overrides(&mut self, overrides: &BTreeMap<String, f64>) -> Result<(), ModelError> {
        for (name, &value) in overrides {
            if !NicParams::NAMES.contains(&name.as_str()) {
                return Err(ModelError::Profile(format!("override of unknown parameter '{name}'")));
            }
            if !value.is_finite() {
                return Err(ModelError::Profile(format!("override {name} = {value} is not a finite number")));
            }
            let param = self.params.entry(name.clone()).or_insert_with(|| Param {
                value,
                unit: String::new(),
                provenance: String::new(),
                fitted: None,
            });
            param.value = value;
            param.provenance = format!("override (was: {})", param.provenance);
        }
        NicParams::from_profile(self).map(|_| ())
    }

    pub fn params(&self) -> Result<NicParams, ModelError> {
        if !self.is_steering() {
            let kind = self.kind.as_deref().unwrap_or_default();
            return Err(ModelError::Profile(format!(
                "profile '{}' is a {kind} profile, not a ConnectX steering profile",
                self.name
            )));
        }
        NicParams::from_profile(self)
    }
}

fn resolve(name_or_path: &str, profiles_dir: Option<&Path>) -> Result<PathBuf, ModelError> {
    let as_path = Path::new(name_or_path);
    if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
        return Ok(as_path.to_path_buf());
    }
    let dir = profiles_dir.ok_or_else(|| {
        ModelError::Profile(format!("'{name_or_path}': no profiles folder given (set profiles_dir or NICBENCH_PROFILES)"))
    })?;
    let path = dir.join(format!("{name_or_path}.toml"));
    if !path.is_file() {
        let known = builtin_profiles(dir).join(", ");
        return Err(ModelError::Profile(format!("'{name_or_path}' not found in {} (known: {known})", dir.display())));
    }
    Ok(path)
}

/// `kind` of a profile whose TOML has no `kind` key: the ConnectX steering model.
pub const STEERING_KIND: &str = "steering";

/// Names of the profiles in `dir` whose `kind` is `kind` ("steering" also matches profiles
/// without a `kind` key), sorted. Unreadable files are left out.
pub fn profiles_of_kind(dir: &Path, kind: &str) -> Vec<String> {
    #[derive(Deserialize)]
    struct KindOnly {
        kind: Option<String>,
    }
    builtin_profiles(dir)
        .into_iter()
        .filter(|name| {
            let text = std::fs::read_to_string(dir.join(format!("{name}.toml"))).unwrap_or_default();
            toml::from_str::<KindOnly>(&text)
                .map(|k| k.kind.as_deref().unwrap_or(STEERING_KIND) == kind)
                .unwrap_or(false)
        })
        .collect()
}

/// Names of the profiles in `dir` (`*.toml`), sorted.
pub fn builtin_profiles(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}

/// Declares a typed parameter struct `$params` read from a profile type `$profile` (anything
/// with a `params: BTreeMap<String, Param>` field): every declared name must be present and
/// finite, no other name may appear, and `$params::validate()` (written beside it) has the
/// last word. Shared by the steering, off-path and flow-host models.
macro_rules! profile_params {
    ($(#[$sdoc:meta])* $params:ident from $profile:ty { $($(#[$doc:meta])* $name:ident),* $(,)? }) => {
        $(#[$sdoc])*
        #[derive(Clone, Debug, PartialEq, serde::Serialize)]
        pub struct $params { $($(#[$doc])* pub $name: f64,)* }

        impl $params {
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            pub fn from_profile(p: &$profile) -> Result<$params, $crate::ModelError> {
                use $crate::ModelError;
                for name in p.params.keys() {
                    if !Self::NAMES.contains(&name.as_str()) {
                        return Err(ModelError::Profile(format!("unknown parameter '{name}'")));
                    }
                }
                let get = |name: &str| -> Result<f64, ModelError> {
                    let v = p.params.get(name)
                        .ok_or_else(|| ModelError::Profile(format!("missing parameter '{name}'")))?.value;
                    if v.is_finite() { Ok(v) } else {
                        Err(ModelError::Profile(format!("parameter '{name}' = {v} is not finite")))
                    }
                };
                let params = $params { $($name: get(stringify!($name))?,)* };
                params.validate()?;
                Ok(params)
            }
        }
    };
}
pub(crate) use profile_params;

profile_params! {
    /// Every parameter the steering models read (see each profile for units and provenance).
    NicParams from Profile {
    /// Ethernet line rate [Gb/s].
    link_gbps,
    /// One-way cable + PHY/MAC propagation \[ns\].
    link_propagation_ns,
    /// Fixed part of the end-to-end latency outside the modeled queues (generator
    /// tx/rx stacks, MAC/PHY pipelines) \[ns\].
    fixed_latency_ns,
    /// PCIe lanes to the host (two x16 slots count 32).
    pcie_lanes,
    /// PCIe signalling rate per lane [GT/s].
    pcie_gt_per_s,
    /// Line-code efficiency (128b/130b for PCIe 3.0).
    pcie_encoding_efficiency,
    /// Max payload per TLP \[B\].
    pcie_max_payload_bytes,
    /// Header, sequence, LCRC and framing bytes per TLP \[B\].
    pcie_tlp_overhead_bytes,
    /// Descriptor and completion bytes per received packet \[B\].
    pcie_descriptor_bytes_per_packet,
    /// NIC packet buffer in front of the steering pipeline \[B\].
    nic_buffer_bytes,
    /// RX descriptors per queue.
    rx_ring_descriptors,
    /// Packets per rx burst of the poll-mode NF.
    rx_burst_packets,
    /// NF core time per non-empty burst \[ns\].
    nf_burst_ns,
    /// NF core time per forwarded packet \[ns\].
    nf_packet_ns,
    /// Root table (group 0) capacity \[entries\].
    root_table_capacity,
    /// Occupancy above which root-table entries spill to the slow overflow path.
    root_table_knee_occupancy,
    /// Root-table lookup cost at zero occupancy \[ns\].
    root_lookup_base_ns,
    /// Extra root-table lookup cost per unit occupancy (chained-hash probes) \[ns\].
    root_lookup_ns_per_occupancy,
    /// Extra root-table lookup cost per entry above the knee (overflow scan) \[ns\].
    root_overflow_ns_per_entry,
    /// 1 when groups >= 1 are fast hardware-steering tables (0: firmware tables like the root).
    nonroot_fast_tables,
    /// Size of a steering table entry in ICM \[B\].
    ste_bytes,
    /// Initial hash-table size of a matcher \[entries\].
    ste_hash_initial_entries,
    /// Load (entries / buckets) above which a matcher's table is rehashed.
    ste_rehash_load,
    /// Growth factor of a rehash.
    ste_rehash_growth,
    /// Largest matcher hash table \[entries\]; beyond it entries chain in collision lists.
    ste_hash_max_entries,
    /// On-NIC steering cache \[STEs\].
    steering_cache_entries,
    /// Pipeline time per STE lookup that hits the cache \[ns\].
    steering_lookup_ns,
    /// ICM read latency on a steering-cache miss (PCIe round trip) \[ns\].
    steering_miss_latency_ns,
    /// Outstanding steering-cache misses the NIC keeps in flight.
    steering_outstanding_misses,
    /// Root-table insertion, firmware command path, IPv4 match [µs/rule].
    root_insert_ipv4_us,
    root_insert_ipv6_us,
    root_insert_vlan_us,
    root_insert_tunnel_us,
    /// Extra root insertion cost per entry above the knee, IPv4/VLAN/tunnel matches [µs/entry].
    root_insert_overflow_us_per_entry,
    /// Extra root insertion cost per entry above the knee, IPv6 matches [µs/entry].
    root_insert_overflow_ipv6_us_per_entry,
    /// Firmware time each packet traversing the root table takes from the firmware command
    /// path [ns/packet]: root-table commands stretch by 1 / (1 − root pps × this).
    root_cmd_ns_per_packet,
    /// Root-table deletion [µs/rule].
    root_delete_us,
    /// Non-root insertion, direct rule writes, IPv4 match [µs/rule].
    nonroot_insert_ipv4_us,
    nonroot_insert_ipv6_us,
    nonroot_insert_vlan_us,
    nonroot_insert_tunnel_us,
    /// Extra insertion cost per action beyond the first \[µs\].
    insert_per_extra_action_us,
    /// Non-root deletion [µs/rule].
    nonroot_delete_us,
    /// In-place rule update (the paper's dedicated API) [µs/rule].
    nonroot_update_inplace_us,
    /// Fixed cost of one batch call to the rule API \[µs\].
    install_batch_overhead_us,
    /// Core time to rewrite one STE during a matcher rehash \[ns\].
    rehash_ns_per_ste,
    /// Embedded Arm cores (BlueField), informational for host-side models.
    arm_cores,
    }
}

impl NicParams {
    fn validate(&self) -> Result<(), ModelError> {
        let positive = [
            ("link_gbps", self.link_gbps),
            ("pcie_lanes", self.pcie_lanes),
            ("pcie_gt_per_s", self.pcie_gt_per_s),
            ("pcie_encoding_efficiency", self.pcie_encoding_efficiency),
            ("pcie_max_payload_bytes", self.pcie_max_payload_bytes),
            ("nic_buffer_bytes", self.nic_buffer_bytes),
            ("rx_ring_descriptors", self.rx_ring_descriptors),
            ("rx_burst_packets", self.rx_burst_packets),
            ("root_table_capacity", self.root_table_capacity),
            ("ste_hash_initial_entries", self.ste_hash_initial_entries),
            ("ste_rehash_load", self.ste_rehash_load),
            ("ste_hash_max_entries", self.ste_hash_max_entries),
            ("steering_cache_entries", self.steering_cache_entries),
            ("steering_outstanding_misses", self.steering_outstanding_misses),
        ];
        for (name, v) in positive {
            if v <= 0.0 {
                return Err(ModelError::Profile(format!("parameter '{name}' must be > 0, got {v}")));
            }
        }
        if self.root_cmd_ns_per_packet < 0.0 {
            return Err(ModelError::Profile(format!("parameter 'root_cmd_ns_per_packet' must be >= 0, got {}", self.root_cmd_ns_per_packet)));
        }
        if self.ste_rehash_growth <= 1.0 {
            return Err(ModelError::Profile(format!("parameter 'ste_rehash_growth' must be > 1, got {}", self.ste_rehash_growth)));
        }
        if !(0.0..=1.0).contains(&self.root_table_knee_occupancy) {
            return Err(ModelError::Profile(format!(
                "parameter 'root_table_knee_occupancy' must be in [0, 1], got {}",
                self.root_table_knee_occupancy
            )));
        }
        Ok(())
    }

    /// PCIe payload capacity per direction [Gb/s] (before TLP overheads).
    pub fn pcie_gbps(&self) -> f64 {
        self.pcie_lanes * self.pcie_gt_per_s * self.pcie_encoding_efficiency
    }

    /// Bytes a received frame costs on PCIe: payload in max-payload TLPs plus descriptors.
    pub fn pcie_bytes(&self, frame_bytes: u32) -> f64 {
        let payload = f64::from(frame_bytes);
        let tlps = (payload / self.pcie_max_payload_bytes).ceil().max(1.0);
        payload + tlps * self.pcie_tlp_overhead_bytes + self.pcie_descriptor_bytes_per_packet
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn profiles_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
    }

    /// The ConnectX-5 profile's parameters (tests hold whatever calibration does within bounds).
    pub(crate) fn test_params() -> NicParams {
        Profile::load("connectx5", Some(&profiles_dir())).and_then(|p| p.params()).expect("connectx5 profile loads")
    }

    #[test]
    fn test_builtin_profiles_load_with_provenance() {
        let names = builtin_profiles(&profiles_dir());
        for want in ["bluefield1", "connectx4", "connectx5", "connectx6"] {
            assert!(names.contains(&want.to_string()), "{names:?}");
            let p = Profile::load(want, Some(&profiles_dir())).expect("loads");
            assert_eq!(p.name, want);
            assert_eq!(p.params.len(), NicParams::NAMES.len(), "{want}: every parameter declared");
            for (name, param) in &p.params {
                assert!(!param.provenance.trim().is_empty() && !param.unit.is_empty(), "{want}.{name}");
            }
        }
    }

    #[test]
    fn test_overrides_and_errors() {
        let mut p = Profile::load("connectx5", Some(&profiles_dir())).expect("loads");
        let o: BTreeMap<String, f64> = [("root_table_knee_occupancy".to_string(), 0.8)].into();
        p.apply_overrides(&o).expect("known parameter");
        assert_eq!(p.params().expect("valid").root_table_knee_occupancy, 0.8);
        let bad: BTreeMap<String, f64> = [("no_such_param".to_string(), 1.0)].into();
        let msg = p.apply_overrides(&bad).map(|_| String::new()).unwrap_or_else(|e| e.to_string());
        assert!(msg.contains("unknown parameter 'no_such_param'"), "{msg}");
        let out_of_range: BTreeMap<String, f64> = [("root_table_knee_occupancy".to_string(), 1.5)].into();
        assert!(p.apply_overrides(&out_of_range).is_err());
        let missing = "name = \"x\"\n[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n";
        let msg = Profile::from_toml(missing, "x.toml").map(|_| String::new()).unwrap_or_else(|e| e.to_string());
        assert!(msg.starts_with("profile x.toml: missing parameter"), "{msg}");
        assert!(Profile::from_toml("name = [", "bad.toml").is_err());
        let msg = Profile::load("nope", Some(&profiles_dir())).map(|_| String::new()).unwrap_or_else(|e| e.to_string());
        assert!(msg.contains("'nope' not found") && msg.contains("connectx5"), "{msg}");
    }

    #[test]
    fn test_pcie_bytes() {
        let p = test_params();
        // 1500 B: 6 TLPs of ≤256 B → 1500 + 6×24 + 128.
        assert_eq!(p.pcie_bytes(1500), 1500.0 + 6.0 * 24.0 + 128.0);
        assert!((p.pcie_gbps() - 16.0 * 8.0 * 0.9846).abs() < 1e-9);
    }
}
