//! Flow-host profiles: `profiles/<name>.toml` with top-level `kind = "flowhost"`.
//!
//! Two roles share the format of the NIC profiles (`[param.NAME]` with value, unit,
//! provenance): a capture NIC ([`CaptureNicParams`], e.g. `napatech-nt100`) and a
//! flow-metering host ([`HostParams`], e.g. `argus-host`). A profile's role is given by
//! the parameters it declares; it must declare exactly the parameters of one role.
//!
//! Invariants: every parameter the model reads is declared here and present with a finite,
//! in-range value (no silent defaults); overrides may only name parameters of the role they
//! are applied to; the model reads parameters only through these structs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::ModelError;
use crate::profile::Param;

/// The top-level `kind` of a flow-host profile.
pub const KIND: &str = "flowhost";

/// A flow-host profile as read from TOML.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowProfile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub kind: String,
    /// The study `nicbench calibrate` fits this profile on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_study: Option<String>,
    #[serde(rename = "param")]
    pub params: BTreeMap<String, Param>,
    #[serde(default, skip_deserializing)]
    pub path: Option<PathBuf>,
}

/// Which part of the deployment a profile describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    CaptureNic,
    Host,
}

impl Role {
    fn names(self) -> &'static [&'static str] {
        match self {
            Role::CaptureNic => CaptureNicParams::NAMES,
            Role::Host => HostParams::NAMES,
        }
    }
    fn what(self) -> &'static str {
        match self {
            Role::CaptureNic => "a capture-NIC profile",
            Role::Host => "a flow-meter host profile",
        }
    }
}

impl FlowProfile {
    pub fn from_toml(text: &str, origin: &str) -> Result<FlowProfile, ModelError> {
        let profile: FlowProfile = toml::from_str(text)
            .map_err(|e| ModelError::Profile(format!("{origin}: {}", e.message().replace('\n', " "))))?;
        if profile.kind != KIND {
            return Err(ModelError::Profile(format!(
                "{origin}: kind = '{}', expected '{KIND}' for a flow-host model profile",
                profile.kind
            )));
        }
        profile.role().map_err(|e| prefix(e, origin))?;
        Ok(profile)
    }

    /// Loads a profile by name (`<dir>/<name>.toml`) or path.
    pub fn load(name_or_path: &str, dir: &Path) -> Result<FlowProfile, ModelError> {
        let as_path = Path::new(name_or_path);
        let path = if name_or_path.ends_with(".toml") || as_path.components().count() > 1 {
            as_path.to_path_buf()
        } else {
            dir.join(format!("{name_or_path}.toml"))
        };
        if !path.is_file() {
            return Err(ModelError::Profile(format!(
                "'{name_or_path}' not found ({} is not a file)",
                path.display()
            )));
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| ModelError::Profile(format!("{}: {e}", path.display())))?;
        let mut profile = FlowProfile::from_toml(&text, &path.display().to_string())?;
        profile.path = Some(path);
        Ok(profile)
    }

    fn origin(&self) -> String {
        self.path
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| self.name.clone())
    }

    /// The role whose parameter list this profile declares exactly.
    pub fn role(&self) -> Result<Role, ModelError> {
        let has = |role: Role| role.names().iter().any(|n| self.params.contains_key(*n));
        let role = match (has(Role::CaptureNic), has(Role::Host)) {
            (true, false) => Role::CaptureNic,
            (false, true) => Role::Host,
            _ => {
                return Err(ModelError::Profile(
                    "declares neither exactly the capture-NIC parameters nor the host parameters".into(),
                ))
            }
        };
        for name in self.params.keys() {
            if !role.names().contains(&name.as_str()) {
                return Err(ModelError::Profile(format!(
                    "unknown parameter '{name}' for {}",
                    role.what()
                )));
            }
        }
        Ok(role)
    }

    /// Expects `role`, with a message naming the profile otherwise.
    pub fn expect_role(&self, role: Role, slot: &str) -> Result<(), ModelError> {
        let found = self.role().map_err(|e| prefix(e, &self.origin()))?;
        if found != role {
            return Err(ModelError::Profile(format!(
                "{} is {}, but '{slot}' needs {}",
                self.origin(),
                found.what(),
                role.what()
            )));
        }
        Ok(())
    }

    /// Whether `name` is a parameter of this profile's role.
    pub fn declares(&self, name: &str) -> bool {
        self.role().map(|r| r.names().contains(&name)).unwrap_or(false)
    }

    /// Sets one declared parameter (calibration overrides).
    pub fn set(&mut self, name: &str, value: f64) -> Result<(), ModelError> {
        if !value.is_finite() {
            return Err(ModelError::Profile(format!(
                "override {name} = {value} is not a finite number"
            )));
        }
        let param = self
            .params
            .get_mut(name)
            .ok_or_else(|| ModelError::Profile(format!("override of unknown parameter '{name}'")))?;
        param.value = value;
        param.provenance = format!("override (was: {})", param.provenance);
        Ok(())
    }

    fn get(&self, name: &str) -> Result<f64, ModelError> {
        let v = self
            .params
            .get(name)
            .ok_or_else(|| ModelError::Profile(format!("{}: missing parameter '{name}'", self.origin())))?
            .value;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(ModelError::Profile(format!(
                "{}: parameter '{name}' = {v} is not finite",
                self.origin()
            )))
        }
    }
}

fn prefix(err: ModelError, origin: &str) -> ModelError {
    match err {
        ModelError::Profile(m) => ModelError::Profile(format!("{origin}: {m}")),
        other => other,
    }
}

fn check(origin: &str, name: &str, value: f64, low: f64, high: f64) -> Result<(), ModelError> {
    if value < low || value > high {
        return Err(ModelError::Profile(format!(
            "{origin}: parameter '{name}' = {value} is out of range [{low}, {high}]"
        )));
    }
    Ok(())
}

macro_rules! role_params {
    ($ty:ident { $($(#[$doc:meta])* $name:ident in [$low:expr, $high:expr]),* $(,)? }) => {
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct $ty { $($(#[$doc])* pub $name: f64,)* }

        impl $ty {
            pub const NAMES: &'static [&'static str] = &[$(stringify!($name)),*];

            pub fn from_profile(p: &FlowProfile) -> Result<$ty, ModelError> {
                let origin = p.origin();
                let out = $ty { $($name: p.get(stringify!($name))?,)* };
                $(check(&origin, stringify!($name), out.$name, $low, $high)?;)*
                Ok(out)
            }
        }
    };
}

role_params!(CaptureNicParams {
    /// Ethernet line rate [Gb/s].
    link_gbps in [0.001, 10_000.0],
    /// Preamble, SFD and inter-frame gap per frame on the wire \[B\].
    wire_overhead_bytes in [0.0, 64.0],
    /// Packets per second the FPGA pipeline (capture, hash, filter, slice) sustains \[Mpps\].
    fpga_max_mpps in [0.001, 10_000.0],
    /// Usable PCIe bandwidth towards the host after encoding and TLP overheads [Gb/s].
    pcie_gbps in [0.001, 10_000.0],
    /// Descriptor stored with each packet in the host buffer \[B\].
    descriptor_bytes in [0.0, 256.0],
    /// Alignment of packets in the host buffer \[B\].
    host_buffer_align_bytes in [1.0, 4096.0],
    /// Host buffer per stream \[B\]; when it is full the card drops packets of that stream.
    host_buffer_bytes_per_stream in [4096.0, 1e12],
    /// Most streams (host buffers) the card can distribute to.
    max_streams in [1.0, 4096.0],
    /// 1: the hash covers addresses and ports (5-tuple); 0: addresses only.
    hash_ports in [0.0, 1.0],
});

role_params!(HostParams {
    /// Core clock \[GHz\].
    cpu_ghz in [0.1, 10.0],
    /// CPU sockets (NUMA nodes) of the host.
    sockets in [1.0, 64.0],
    /// Physical cores per socket.
    cores_per_socket in [1.0, 1024.0],
    /// Hardware threads per core (SMT).
    smt_threads_per_core in [1.0, 8.0],
    /// Private L2 cache per core \[B\].
    l2_bytes_per_core in [1024.0, 1e9],
    /// Last-level cache per socket, shared by its cores \[B\].
    llc_bytes_per_socket in [1024.0, 1e10],
    /// Cost of a flow-record cache line that misses L2 and hits the LLC \[ns\].
    llc_hit_ns in [0.0, 1000.0],
    /// Cost of a flow-record cache line that misses the LLC \[ns\].
    llc_miss_ns in [0.0, 10_000.0],
    /// Flow meter work per packet when its flow record is in L2 \[cycles\].
    base_cycles_per_packet in [1.0, 1e7],
    /// Flow-record bytes a flow keeps hot (record, hash bucket, queue links) \[B\].
    flow_record_bytes in [8.0, 1e6],
    /// Flow-record cache lines touched per packet.
    flow_lines_per_packet in [0.0, 1000.0],
    /// Mean time between processing stalls of a flow-meter process \[µs\].
    stall_interval_us in [1.0, 1e9],
    /// Mean stall duration \[µs\] (housekeeping, record output, interrupts).
    stall_mean_us in [0.0, 1e9],
    /// Throughput of a core running two processes relative to one (SMT gain).
    smt_gain in [0.1, 4.0],
});

impl CaptureNicParams {
    /// Bytes a captured frame occupies in a host buffer and on PCIe.
    pub fn stored_bytes(&self, frame_bytes: f64, slice_bytes: Option<f64>) -> f64 {
        let kept = slice_bytes.map_or(frame_bytes, |s| frame_bytes.min(s));
        let raw = kept + self.descriptor_bytes;
        (raw / self.host_buffer_align_bytes).ceil() * self.host_buffer_align_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../profiles")
    }

    #[test]
    fn test_builtin_profiles_load() {
        let nic = FlowProfile::load("napatech-nt100", &dir()).expect("nic profile");
        nic.expect_role(Role::CaptureNic, "nic").expect("nic role");
        let p = CaptureNicParams::from_profile(&nic).expect("params");
        assert_eq!(p.stored_bytes(64.0, None), 80.0, "64 B + 16 B descriptor");
        assert_eq!(p.stored_bytes(1500.0, Some(128.0)), 144.0);
        let host = FlowProfile::load("argus-host", &dir()).expect("host profile");
        host.expect_role(Role::Host, "host").expect("host role");
        assert_eq!(host.calibration_study.as_deref(), Some("argus100g"));
        HostParams::from_profile(&host).expect("host params");
        for p in [&nic, &host] {
            for (name, param) in &p.params {
                assert!(
                    !param.provenance.trim().is_empty() && !param.unit.is_empty(),
                    "{}.{name}",
                    p.name
                );
            }
        }
        let msg = nic
            .expect_role(Role::Host, "host")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("capture-NIC profile") && msg.contains("'host'"), "{msg}");
    }

    #[test]
    fn test_bad_profiles_give_clear_errors() {
        let base = "name = \"x\"\nkind = \"flowhost\"\n";
        let unknown = format!("{base}[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n[param.bogus]\nvalue = 1.0\nunit = \"x\"\nprovenance = \"t\"\n");
        let msg = FlowProfile::from_toml(&unknown, "x.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("unknown parameter 'bogus'"), "{msg}");
        let wrong_kind =
            "name = \"x\"\nkind = \"vnic\"\n[param.link_gbps]\nvalue = 1.0\nunit = \"G\"\nprovenance = \"t\"\n";
        let msg = FlowProfile::from_toml(wrong_kind, "x.toml")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("kind = 'vnic'"), "{msg}");
        let partial = format!("{base}[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n");
        let p = FlowProfile::from_toml(&partial, "x.toml").expect("role is clear");
        let msg = CaptureNicParams::from_profile(&p)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("missing parameter 'wire_overhead_bytes'"), "{msg}");
        let mut host = FlowProfile::load("argus-host", &dir()).expect("host");
        host.set("smt_gain", -1.0).expect("finite");
        let msg = HostParams::from_profile(&host)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("'smt_gain' = -1 is out of range"), "{msg}");
        assert!(host.set("nope", 1.0).is_err());
        assert!(host.set("smt_gain", f64::NAN).is_err());
    }
}
