"""PVP targets: the seed-002 experiments (Red Hat PVP through an OVS-TC offload NIC) on the analytic
PVP model (`nicbench.pvp`).

- `pvp.run`      one run (nic, flows, frame size, VXLAN, datapath): Mpps, Gb/s, loss, latency, host cores,
                 offload counts, the bottleneck (0/1 per stage) and the NIC's mechanism quantities.
- `pvp.compare`  run a vs run b (another NIC, or another flow count): their rates and the ratio a / b,
                 for the seed's "2.4X better", "drops by 1.9X", "more than 50%" and "2X".

Every prediction goes through `nicbench.pvp.predict`, which applies calibration overrides to the
profile that declares them.

Invariant: a run's result depends only on its parameters and the profiles (analytic; one
repetition suffices).
"""

from __future__ import annotations

import math
from typing import Any

from nicbench import pvp
from nicbench.experiments.targets import RunContext, target
from nicbench.experiments.targets import finite_or_nan as _num
from nicbench.options import pvp as options
from nicbench.options.pvp import MAX_FLOWS, OPTIONS
from nicbench.vocab.params import Param

VERSION = "2"
STAGES = ("wire", "nic", "pcie", "vm", "host_datapath", "offered")
_DETAIL = (
    "steering_cache_hit_rate",
    "steering_misses_per_packet",
    "steering_working_set_stes",
    "emem_hit_rate",
    "thread_bound_mpps",
    "core_bound_mpps",
)

_RUN_METRICS = {
    "mpps": "Mpps",
    "gbps": "Gbps",
    "line_gbps": "Gbps",
    "offered_mpps": "Mpps",
    "loss": "",
    "latency_us": "us",
    "host_cores_busy": "cores",
    "megaflows_offloaded": "",
    "megaflows_software": "",
    "masks_offloaded": "",
    "refused_megaflows": "",
    "nic_service_ns": "ns",
    "nic_limit_mpps": "Mpps",
    **{f"bottleneck_{s}": "" for s in STAGES},
    **{d: "" for d in _DETAIL},
}
_COMPARE_METRICS = {"a_mpps": "Mpps", "b_mpps": "Mpps", "ratio": "", "change": ""}


def run_metrics(result: dict[str, Any]) -> dict[str, float]:
    """Flatten one response into metrics (NaN for a mechanism the NIC does not have)."""
    out = {
        k: _num(result.get(k))
        for k in (
            "mpps",
            "gbps",
            "line_gbps",
            "offered_mpps",
            "loss",
            "latency_us",
            "host_cores_busy",
            "megaflows_offloaded",
            "megaflows_software",
            "masks_offloaded",
            "nic_service_ns",
        )
    }
    out["refused_megaflows"] = float(sum(int(r.get("megaflows", 0)) for r in result.get("refused") or []))
    out["nic_limit_mpps"] = _num((result.get("limits_mpps") or {}).get("nic"))
    for s in STAGES:
        out[f"bottleneck_{s}"] = 1.0 if result.get("bottleneck") == s else 0.0
    detail = result.get("detail") or {}
    for d in _DETAIL:
        out[d] = _num(detail.get(d))
    return out


def _nic(name: str = "nic", default: str = "connectx5-25g") -> Param:
    return OPTIONS["nic"].param(name, default=default, help="profile name (profiles/<nic>.toml) or path to a .toml")


_COMMON = OPTIONS.params("flows", "size", "vxlan", "flow_order")


def _why_not(p: dict[str, Any]) -> str | None:
    return options.check(p)


@target(
    "pvp.run",
    params=[_nic(), *_COMMON, OPTIONS["datapath"].param(), OPTIONS["gbps"].param()],
    metrics=_RUN_METRICS,
    version=VERSION,
    backends=("virtual", "ovs"),
    why_not=_why_not,
    added=("gbps",),
)
def run(p: dict, ctx: RunContext) -> dict:
    """Seed 002 Fig. 7/8/9 and the datapath comparison: one PVP run at 25 Gb/s offered (or `gbps`)."""
    return run_metrics(pvp.predict(p["nic"], p["flows"], p["size"], **options.predict_kwargs(p)))


@target(
    "pvp.compare",
    params=[
        Param("label", "str", "", "name of the comparison (selects the point in reference.toml)"),
        _nic(),
        *_COMMON,
        OPTIONS["datapath"].param(help="a's OVS datapath"),
        _nic("b_nic", "connectx5-25g"),
        Param("b_flows", "count", None, "b's flows (same: as a's)", minimum=1, maximum=MAX_FLOWS, none_word="same"),
        OPTIONS["datapath"].param("b_datapath", help="b's OVS datapath"),
    ],
    metrics=_COMPARE_METRICS,
    version=VERSION,
)
def compare(p: dict, ctx: RunContext) -> dict:
    """Seed 002 ratios: run a (nic, flows, datapath) over run b (b_nic, b_flows, b_datapath), same frames and
    encapsulation."""
    a = pvp.predict(
        p["nic"], p["flows"], p["size"], vxlan=p["vxlan"], datapath=p["datapath"], flow_order=p["flow_order"]
    )
    b_flows = p["b_flows"] if p["b_flows"] is not None else p["flows"]
    b = pvp.predict(
        p["b_nic"], b_flows, p["size"], vxlan=p["vxlan"], datapath=p["b_datapath"], flow_order=p["flow_order"]
    )
    a_mpps, b_mpps = _num(a.get("mpps")), _num(b.get("mpps"))
    ratio = a_mpps / b_mpps if math.isfinite(a_mpps) and math.isfinite(b_mpps) and b_mpps > 0 else math.nan
    return {"a_mpps": a_mpps, "b_mpps": b_mpps, "ratio": ratio, "change": ratio - 1.0}
