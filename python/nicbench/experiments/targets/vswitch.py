"""Virtual OVS datapath targets (`nicbench.vswitch`: the native `vswitch` and `ovs-pvp` models).

- `vswitch.megaflows`  a trace through an OpenFlow rule file on the virtual OVS datapath, with or
                       without hw-offload to an OVS-TC NIC: the megaflows it installs, the upcalls,
                       how many flows the NIC takes, the host cores the datapath keeps busy.
- `ovs-pvp.run`        Red Hat PVP with a rule file and a trace through the datapath and an OVS-TC NIC
                       (`nicbench vswitch --openflow R --trace T`): the rate, loss, latency, host cores,
                       and the megaflows of both passes.

The parameters are the commands' options (`nicbench.options.vswitch`).

Invariant: a run's result depends only on its parameters and the files they name (the datapath is
deterministic: one repetition suffices).
"""

from __future__ import annotations

from typing import Any

from nicbench.experiments.targets import RunContext, target
from nicbench.experiments.targets import finite_or_nan as _num
from nicbench.options import vswitch as options
from nicbench.options.vswitch import MEGAFLOW_OPTIONS, PVP_OPTIONS

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


# Parameters the table added to `vswitch.megaflows` (the command line had them): at their defaults a run's
# key is the one it had before.
_MEGAFLOW_ADDED = ("no_staged_lookup", "no_prefix_tries", "no_ports_trie", "port")


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
    params=[o.param() for o in MEGAFLOW_OPTIONS],
    added=_MEGAFLOW_ADDED,
)
def megaflows(p: dict[str, Any], ctx: RunContext) -> dict[str, float]:
    """The megaflows a trace installs on the virtual OVS datapath, and where they run."""
    from nicbench import vswitch

    problem = options.check(p)
    if problem:
        raise ValueError(f"vswitch.megaflows: {problem}")
    return result_metrics(vswitch.megaflows(p["openflow"], p["trace"], **options.megaflow_kwargs(p)))


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
    params=[o.param() for o in PVP_OPTIONS],
    added=("offered",),
)
def pvp_run(p: dict[str, Any], ctx: RunContext) -> dict[str, float]:
    """Red Hat PVP with the rules and the trace through the virtual OVS datapath: one native run."""
    from nicbench import vswitch

    problem = options.check(p)
    if problem:
        raise ValueError(f"ovs-pvp.run: {problem}")
    return pvp_metrics(vswitch.pvp_through_datapath(p["openflow"], p["trace"], **options.pvp_kwargs(p)))
