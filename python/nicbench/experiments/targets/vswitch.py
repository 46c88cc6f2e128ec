"""Virtual OVS datapath targets (`nicbench.vswitch`: the native `vswitch` and `ovs-pvp` models).

- `vswitch.megaflows`  a trace through an OpenFlow rule file on the virtual OVS datapath, with or
                       without hw-offload to an OVS-TC NIC: the megaflows it installs, the upcalls,
                       how many flows the NIC takes, the host cores the datapath keeps busy.
- `ovs-pvp.run`        Red Hat PVP with a rule file and a trace through the datapath and an OVS-TC NIC
                       (`nicbench vswitch --openflow R --trace T`): the rate, loss, latency, host cores,
                       and the megaflows of both passes.

Invariant: a run's result depends only on its parameters and the files they name (the datapath is
deterministic: one repetition suffices).
"""

from __future__ import annotations

from typing import Any

from nicbench import models
from nicbench.experiments.targets import RunContext, target
from nicbench.experiments.targets import finite_or_nan as _num
from nicbench.vocab.params import Param

VERSION = "1"

_METRICS = {
    "packets": "packets",
    "megaflows": "",
    "megaflows_installed": "",
    "upcalls": "",
    "upcalls_per_s": "1/s",
    "flow_limit_hits": "",
    "offloaded_flows": "",
    "not_offloaded_flows": "",
    "hw_packets": "packets",
    "sw_packets": "packets",
    "host_cores_busy": "cores",
}


def _nic_kinds(model: str) -> tuple[str, ...]:
    """The profile kinds `model` reads (its registry entry): what a `nic` parameter may name."""
    return tuple(next(m for m in models.registry() if m["name"] == model)["profile_kinds"])


def result_metrics(result: dict[str, Any]) -> dict[str, float]:
    """Flatten one `vswitch.result` into scalar metrics (NaN where the run has none, e.g. a trace that
    spans no time has no upcall rate)."""
    out = {k: _num(result.get(k)) for k in _METRICS if k not in ("megaflows", "megaflows_installed")}
    flows = result.get("megaflows") or []
    out["megaflows"] = float(len(flows))
    out["megaflows_installed"] = float(sum(1 for mf in flows if mf.get("installed")))
    return out


@target(
    "vswitch.megaflows",
    version=VERSION,
    metrics=_METRICS,
    params=[
        Param(
            "openflow", "str", None, "OpenFlow rules: ovs-ofctl add-flow lines or dump-flows output", none_word="none"
        ),
        Param("trace", "str", None, "packets arriving on in_port (pcap, file order)", none_word="none"),
        Param("in_port", "str", "p0", "the port the packets arrive on"),
        Param(
            "nic",
            "str",
            None,
            "offload the megaflows to this OVS-TC NIC (hw-offload=true); none: no offload",
            none_word="none",
            profile_kinds=_nic_kinds("vswitch"),
        ),
        Param("tc_policy", "choice", "none", "OVS's tc-policy", choices=("none", "skip_sw", "skip_hw")),
    ],
)
def megaflows(p: dict[str, Any], ctx: RunContext) -> dict[str, float]:
    """The megaflows a trace installs on the virtual OVS datapath, and where they run."""
    from nicbench import vswitch

    if not p["openflow"] or not p["trace"]:
        raise ValueError("vswitch.megaflows needs openflow = RULES and trace = PCAP")
    return result_metrics(
        vswitch.megaflows(p["openflow"], p["trace"], in_port=p["in_port"], nic=p["nic"], tc_policy=p["tc_policy"])
    )


_PVP_METRICS = {
    "mpps": "Mpps",
    "gbps": "Gbps",
    "loss": "",
    "latency_us": "us",
    "host_cores_busy": "cores",
    "megaflows_offloaded": "",
    "megaflows_software": "",
    "frame_bytes": "B",
    "flows": "",
    "uplink_megaflows": "",
    "vf_megaflows": "",
    "upcalls": "",
}


def pvp_metrics(result: dict[str, Any]) -> dict[str, float]:
    """Flatten one `ovs-pvp.result` into scalar metrics."""
    pvp = result["pvp"]
    out = {
        k: _num(pvp.get(k))
        for k in ("mpps", "gbps", "loss", "latency_us", "host_cores_busy", "megaflows_offloaded", "megaflows_software")
    }
    passes = result["datapath"]
    out.update(
        frame_bytes=_num(result.get("frame_bytes")),
        flows=_num(result.get("flows")),
        uplink_megaflows=float(len(passes["uplink"]["megaflows"])),
        vf_megaflows=float(len(passes["vf"]["megaflows"])),
        upcalls=float(passes["uplink"]["upcalls"] + passes["vf"]["upcalls"]),
    )
    return out


@target(
    "ovs-pvp.run",
    version=VERSION,
    metrics=_PVP_METRICS,
    params=[
        Param(
            "openflow",
            "str",
            None,
            "OpenFlow rules for both directions: ovs-ofctl add-flow lines or dump-flows output",
            none_word="none",
        ),
        Param("trace", "str", None, "packets arriving on the uplink (pcap, file order)", none_word="none"),
        Param("nic", "str", "connectx5-25g", "the OVS-TC offload NIC", profile_kinds=_nic_kinds("ovs-pvp")),
        Param("uplink", "str", "p0", "the physical port's name in the rules"),
        Param("vm_port", "str", "vm", "the VM's port (VF representor) name in the rules"),
        Param(
            "port",
            "str",
            None,
            "a VXLAN port (`--port` syntax) with underlay=the uplink: the trace is VXLAN; none: no tunnel",
            none_word="none",
        ),
        Param("tc_policy", "choice", "none", "OVS's tc-policy", choices=("none", "skip_sw", "skip_hw")),
        Param(
            "flow_order",
            "choice",
            "round-robin",
            "order of the flows' packets at the NIC",
            choices=("round-robin", "random"),
        ),
    ],
)
def pvp_run(p: dict[str, Any], ctx: RunContext) -> dict[str, float]:
    """Red Hat PVP with the rules and the trace through the virtual OVS datapath: one native run."""
    from nicbench import vswitch

    if not p["openflow"] or not p["trace"]:
        raise ValueError("ovs-pvp.run needs openflow = RULES and trace = PCAP")
    tunnels = [vswitch.parse_port_spec(p["port"])] if p["port"] else None
    return pvp_metrics(
        vswitch.pvp_through_datapath(
            p["openflow"],
            p["trace"],
            nic=p["nic"],
            uplink=p["uplink"],
            vm_port=p["vm_port"],
            tc_policy=p["tc_policy"],
            flow_order=p["flow_order"],
            tunnels=tunnels,
        )
    )
