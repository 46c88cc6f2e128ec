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
from nicbench.options import flowhost as options
from nicbench.options.flowhost import OPTIONS

VERSION = "1"

_METRICS = {**flowhost.METRICS, "processed_ratio": "", "processed_mbps_per_process": "Mbps"}


@target(
    "flowhost.run",
    params=[o.param() for o in OPTIONS],
    metrics=_METRICS,
    version=VERSION,
    why_not=options.check,
)
def run(p: dict, ctx: RunContext) -> dict:
    """One flow-metering deployment behind the virtual Napatech card."""
    request = options.request(p, ctx.seed)
    metrics = flowhost.result_metrics(flowhost.simulate(request))
    offered = metrics["offered_mpps"]
    metrics["processed_ratio"] = metrics["processed_mpps"] / offered if offered > 0 else math.nan
    metrics["processed_mbps_per_process"] = metrics["processed_mbps_per_core"] / p["processes_per_core"]
    return metrics
