"""The experiment harness: spec files, sweep designs, a parallel resumable runner, a result store.

    spec = load_spec("studies/foundation/experiments/gen-rate.toml")   # parse and check (SpecError on mistakes)
    run_experiment(spec, jobs=4)                       # runs what is missing, stores each run
    df = load_results("foundation-gen-rate")                           # tidy records (pandas)
    summarize(df)                                      # mean, std, p1..p99 per point and metric

Experiments are data (TOML); targets are registered functions (`targets/`); designs are
one class each (`designs/`); the store is one Parquet file per finished run (`store.py`).
What several layers share (`Param`, `SpecError`, the study and record types) is `nicbench.vocab`.
None of this needs the native module; only targets that measure native parts do.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nicbench.experiments.runner import RunSummary, run_experiment
    from nicbench.experiments.spec import Spec, load_spec, parse_spec
    from nicbench.experiments.stats import hdr_percentiles, summarize
    from nicbench.experiments.store import load_results, results_root
    from nicbench.experiments.targets import all_targets, get_target, target

# Public name -> the sub-module that defines it. Loaded on first use (PEP 562): the runner
# and the store pull in pandas and pyarrow (~1 s), which a command that only needs one
# sub-module (or nothing of the harness at all) should not pay for.
_EXPORTS = {
    "RunSummary": "runner",
    "run_experiment": "runner",
    "Spec": "spec",
    "load_spec": "spec",
    "parse_spec": "spec",
    "hdr_percentiles": "stats",
    "summarize": "stats",
    "load_results": "store",
    "results_root": "store",
    "all_targets": "targets",
    "get_target": "targets",
    "target": "targets",
}

__all__ = [
    "Spec",
    "load_spec",
    "parse_spec",
    "run_experiment",
    "RunSummary",
    "load_results",
    "results_root",
    "summarize",
    "hdr_percentiles",
    "target",
    "get_target",
    "all_targets",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'nicbench.experiments' has no attribute {name!r}")
    value = getattr(import_module(f"nicbench.experiments.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
