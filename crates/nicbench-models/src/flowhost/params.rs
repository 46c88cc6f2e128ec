//! Flow-host profiles: `kind = "flowhost"`, in one of two roles, each with its own parameter
//! set: a capture NIC ([`CaptureNicParams`], e.g. `napatech-nt100`) or a flow-metering host
//! ([`HostParams`], e.g. `argus-host`). A profile's role is given by the parameters it
//! declares; it must declare exactly the parameters of one role.
//!
//! Invariants: every parameter the model reads is declared here and present with a finite,
//! in-range value (no silent defaults); overrides may only name parameters of the role they
//! are applied to; the model reads parameters only through these structs.

use super::KIND;
use crate::error::ModelError;
use crate::profile::params::{model_params, require_whole};
use crate::profile::{ModelParams, Profile};

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

/// The role whose parameter set `p` declares, checked in full.
pub fn role(p: &Profile) -> Result<Role, ModelError> {
    let has = |role: Role| role.names().iter().any(|n| p.params.contains_key(*n));
    let role = match (has(Role::CaptureNic), has(Role::Host)) {
        (true, false) => Role::CaptureNic,
        (false, true) => Role::Host,
        _ => return Err(p.error("declares neither exactly the capture-NIC parameters nor the host parameters")),
    };
    match role {
        Role::CaptureNic => p.params::<CaptureNicParams>().map(drop)?,
        Role::Host => p.params::<HostParams>().map(drop)?,
    }
    Ok(role)
}

/// Expects `p` to have `role`, with a message naming the profile and the slot otherwise.
pub fn expect_role(p: &Profile, role: Role, slot: &str) -> Result<(), ModelError> {
    let found = self::role(p)?;
    if found != role {
        return Err(p.error(format_args!("is {}, but '{slot}' needs {}", found.what(), role.what())));
    }
    Ok(())
}

model_params! {
    /// A capture NIC's parameters (e.g. `napatech-nt100`).
    CaptureNicParams, kind KIND => {
    /// Ethernet line rate [Gb/s].
    link_gbps in [0.001, 10_000.0],
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
}}

model_params! {
    /// A flow-metering host's parameters (e.g. `argus-host`).
    HostParams, kind KIND => {
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
    /// Load latency one hardware thread hides behind its own out-of-order window (reorder
    /// buffer entries / issue width) \[cycles\]: a miss waits this long with the core still
    /// issuing the thread's work; only the rest leaves the core to an SMT sibling.
    ooo_hidden_latency_cycles in [0.0, 10_000.0],
}}

impl HostParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        require_whole(&[
            ("cores_per_socket", self.cores_per_socket),
            ("smt_threads_per_core", self.smt_threads_per_core),
        ])
    }
}

impl CaptureNicParams {
    pub(crate) fn validate(&self) -> Result<(), ModelError> {
        Ok(())
    }

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
    use crate::profile::tests::dir;

    #[test]
    fn test_builtin_profiles_load() {
        let nic = Profile::load("napatech-nt100", &dir()).expect("nic profile");
        expect_role(&nic, Role::CaptureNic, "nic").expect("nic role");
        let p: CaptureNicParams = nic.params().expect("params");
        assert_eq!(p.stored_bytes(64.0, None), 80.0, "64 B + 16 B descriptor");
        assert_eq!(p.stored_bytes(1500.0, Some(128.0)), 144.0);
        let host = Profile::load("argus-host", &dir()).expect("host profile");
        expect_role(&host, Role::Host, "host").expect("host role");
        assert_eq!(host.calibration_study.as_deref(), Some("argus100g"));
        host.params::<HostParams>().expect("host params");
        let msg = expect_role(&nic, Role::Host, "host")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg.contains("capture-NIC profile") && msg.contains("'host'"), "{msg}");
    }

    #[test]
    fn test_bad_profiles_give_clear_errors() {
        let err = |r: Result<Profile, ModelError>| {
            r.and_then(|p| crate::registry::check_profile(&p))
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        let base = "name = \"x\"\nkind = \"flowhost\"\n";
        let unknown = format!("{base}[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n[param.bogus]\nvalue = 1.0\nunit = \"x\"\nprovenance = \"t\"\n");
        let msg = err(Profile::from_toml(&unknown, "x.toml"));
        assert!(msg.contains("unknown parameter 'bogus'"), "{msg}");
        let partial = format!("{base}[param.link_gbps]\nvalue = 1.0\nunit = \"Gbps\"\nprovenance = \"t\"\n");
        let msg = err(Profile::from_toml(&partial, "x.toml"));
        assert!(msg.contains("missing parameter 'fpga_max_mpps'"), "{msg}");
        let mut host = Profile::load("argus-host", &dir()).expect("host");
        host.set("ooo_hidden_latency_cycles", -1.0).expect("finite");
        let msg = host
            .params::<HostParams>()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            msg.contains("'ooo_hidden_latency_cycles' = -1 is out of range"),
            "{msg}"
        );
        assert!(host.set("nope", 1.0).is_err());
        assert!(host.set("ooo_hidden_latency_cycles", f64::NAN).is_err());
    }
}
