"""Flow-host targets: the virtual Napatech card + flow-metering host (study argus100g).

- `flowhost.run`: one deployment — cores (and processes per core: SMT), flows, frame size,
  offered rate, optional filter / slicing / Zipf popularity — simulated in time bins; reports
  offered and processed rates, drops, imbalance, CPU use, the cache model's view and, with
  `search_cores`, the fewest cores that meter the load without drops.

The card and host profiles are parameters `card` and `host` (not `nic`: `nicbench calibrate`
replaces a point's `nic` with the calibrated profile, while here the calibrated profile is the
host). Calibration overrides reach the model through `nicbench.flowhost.simulate`, which merges
`nicbench.profiles.current_overrides()`.

Invariant: a run's result depends only on its parameters, the profiles and `ctx.seed`.
"""

from __future__ import annotations

import math

from nicbench import flowhost
from nicbench.experiments.targets import RunContext, target
from nicbench.units import parse_duration_ns
from nicbench.vocab.params import Param

VERSION = "1"

_METRICS = {**flowhost.METRICS, "processed_ratio": "", "processed_mbps_per_process": "Mbps"}


def _above_line_rate(p: dict) -> str | None:
    link = flowhost.above_line_rate(p["card"], float(p["rate"]) / 1e9)
    if link is None:
        return None
    return (f"rate {float(p['rate']) / 1e9:g} Gbps is above the line rate of card {p['card']} ({link:g} Gbps on the "
            "wire); give at most that")


@target(
    "flowhost.run",
    params=[
        Param("card", "str", flowhost.DEFAULT_NIC, "capture-NIC profile (profiles/<card>.toml) or path",
              profile_kinds=("flowhost",), profile_role=("capture card", "link_gbps")),
        Param("host", "str", flowhost.DEFAULT_HOST, "flow-meter host profile (profiles/<host>.toml) or path",
              profile_kinds=("flowhost",), profile_role=("host", "cpu_ghz")),
        Param("cores", "int", 8, "physical cores running flow meters (one stream per process)",
              minimum=1, maximum=4096),
        Param("processes_per_core", "int", 1, "flow-meter processes per core (2: SMT siblings)",
              minimum=1, maximum=8),
        Param("flows", "count", 16_384, "distinct TCP flows (endpoint pairs, static ports)", minimum=1),
        Param("flows_per_core", "count", None, "flows = this × cores (load grows with the host)",
              none_word="none"),
        Param("size", "size_bytes", 750, "frame size incl. FCS", minimum=64, maximum=16_384),
        Param("rate", "rate_bps", 100e9, "offered rate on the wire (at most the capture card's line rate)"),
        Param("zipf", "float", 0.0, "Zipf exponent of flow popularity (0: equal flows)", minimum=0.0, maximum=5.0),
        Param("filter_keep", "fraction", 1.0, "fraction of flows the card's filter passes"),
        Param("slice", "size_bytes", None, "payload slicing: bytes kept per frame", none_word="none"),
        Param("duration", "duration_ns", parse_duration_ns("2s"), "virtual time simulated", minimum=1_000_000),
        Param("bin", "duration_ns", parse_duration_ns("100us"), "time step", minimum=1_000),
        Param("window", "duration_ns", parse_duration_ns("100ms"), "window of the short-term max rate",
              minimum=1_000),
        Param("search_cores", "bool", False, "also search the fewest cores without drops (cores_needed)"),
        Param("max_cores", "int", 1024, "upper limit of the search", minimum=1, maximum=4096),
    ],
    metrics=_METRICS,
    version=VERSION,
    why_not=_above_line_rate,
)
def run(p: dict, ctx: RunContext) -> dict:
    """One flow-metering deployment behind the virtual Napatech card."""
    request = {
        "nic": p["card"], "host": p["host"], "seed": int(ctx.seed), "cores": p["cores"],
        "processes_per_core": p["processes_per_core"], "flows": p["flows"], "frame_bytes": float(p["size"]),
        "rate_gbps": float(p["rate"]) / 1e9, "zipf_exponent": float(p["zipf"]),
        "filter_keep": float(p["filter_keep"]), "duration_ns": p["duration"], "bin_ns": p["bin"],
        "window_ns": p["window"], "search_cores": bool(p["search_cores"]), "max_cores": p["max_cores"],
    }
    if p.get("flows_per_core"):
        request["flows_per_core"] = float(p["flows_per_core"])
    if p.get("slice"):
        request["slice_bytes"] = float(p["slice"])
    metrics = flowhost.result_metrics(flowhost.simulate(request))
    offered = metrics["offered_mpps"]
    metrics["processed_ratio"] = metrics["processed_mpps"] / offered if offered > 0 else math.nan
    metrics["processed_mbps_per_process"] = metrics["processed_mbps_per_core"] / p["processes_per_core"]
    return metrics
