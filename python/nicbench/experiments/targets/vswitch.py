"""Virtual OVS datapath targets (`nicbench.vswitch`, the native `vswitch` model).

- `vswitch.megaflows`  a trace through an OpenFlow rule file on the virtual OVS datapath, with or
                       without hw-offload to an OVS-TC NIC: the megaflows it installs, the upcalls,
                       how many flows the NIC takes, the host cores the datapath keeps busy.

Invariant: a run's result depends only on its parameters and the files they name (the datapath is
deterministic: one repetition suffices).
"""

from __future__ import annotations

from typing import Any

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
            profile_kinds=("agilio", "connectx-eswitch"),
        ),
        Param("tc_policy", "choice", "none", "OVS's tc-policy", choices=("none", "skip_sw", "skip_hw")),
    ],
)
def megaflows(p: dict[str, Any], ctx: RunContext) -> dict[str, float]:
    """The megaflows a trace installs on the virtual OVS datapath, and where they run."""
    from nicbench import vswitch

    if not p["openflow"] or not p["trace"]:
        raise ValueError("vswitch.megaflows needs openflow = RULES and trace = PCAP")
    rules = vswitch.load_openflow(p["openflow"])
    return result_metrics(
        vswitch.megaflows(rules, p["trace"], in_port=p["in_port"], nic=p["nic"], tc_policy=p["tc_policy"])
    )
