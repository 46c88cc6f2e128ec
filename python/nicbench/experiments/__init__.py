"""The experiment harness: spec files, sweep designs, a parallel resumable runner, a result store.

    spec = load_spec("experiments/gen-rate.toml")      # parse and check (SpecError on mistakes)
    run_experiment(spec, jobs=4)                       # runs what is missing, stores each run
    df = load_results("gen-rate")                      # tidy records (pandas)
    summarize(df)                                      # mean, std, p1..p99 per point and metric

Experiments are data (TOML); targets are registered functions (`targets/`); designs are
one class each (`designs/`); the store is one Parquet file per finished run (`store.py`).
None of this needs the native module; only targets that measure native parts do.
"""

from __future__ import annotations

from nicbench.experiments.errors import SpecError, StoreError, UnknownTargetError
from nicbench.experiments.params import Param
from nicbench.experiments.runner import RunSummary, run_experiment
from nicbench.experiments.spec import Spec, load_spec, parse_spec
from nicbench.experiments.stats import hdr_percentiles, summarize
from nicbench.experiments.store import load_results, results_root
from nicbench.experiments.targets import all_targets, get_target, target

__all__ = [
    "SpecError", "StoreError", "UnknownTargetError", "Param", "Spec", "load_spec", "parse_spec",
    "run_experiment", "RunSummary", "load_results", "results_root", "summarize", "hdr_percentiles",
    "target", "get_target", "all_targets",
]
