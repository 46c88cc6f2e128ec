"""Software-classifier targets, measured on the machine that runs them.

`classifier.lookup`: lookup rate on one core vs rule-set kind and size (exact 5-tuples,
ClassBench-like generated sets, or a ClassBench file such as `acl1_10k`), packets that hit
the rules (ClassBench trace_generator style). `classifier.update`: the lookup rate while
rules are modified in place at a target rate from another core or from the lookup core
itself — the software analogue of PAM'21 Fig. 4. Both time inside Rust.
"""

from __future__ import annotations

import json

from nicbench.experiments.targets import RunContext, target
from nicbench.vocab.params import Param

ALGORITHMS = ("hybrid", "tuplemerge", "tss")


@target(
    "classifier.lookup",
    params=[
        Param("workload", "str", "exact5", "exact5 | acl | fw | ipc (generated) | a ClassBench file name"),
        Param("rules", "count", 10_000, "rules in generated workloads", minimum=1),
        Param("algorithm", "choice", "hybrid", "classifier data structure", choices=ALGORITHMS),
        Param("duration", "duration_ns", 200_000_000, "how long to look up"),
    ],
    metrics={"mpps": "Mpps", "memory_bytes_per_rule": "B", "rules_loaded": "rules"},
    backends=("software",),
)
def classifier_lookup(p: dict, ctx: RunContext) -> dict:
    """Lookup rate (one core) of the software classifier on a rule-set workload."""
    from nicbench import _native

    out = json.loads(_native.classifier_load(p["workload"], p["rules"], ctx.seed, p["duration"] / 1e9, p["algorithm"]))
    return {
        "mpps": out["lookup_mpps"],
        "memory_bytes_per_rule": out["memory_bytes_per_rule"],
        "rules_loaded": out["rules"],
    }


@target(
    "classifier.update",
    params=[
        Param("rules", "count", 100_000, "exact 5-tuple rules installed", minimum=1),
        Param("update_rate", "count", 100_000, "rule modifications per second (10k, 1M; 0: none)", minimum=0),
        Param("placement", "choice", "other_core", "where updates run", choices=("other_core", "same_core")),
        Param("duration", "duration_ns", 500_000_000, "how long to measure"),
    ],
    metrics={"lookup_mpps": "Mpps", "updates_per_s": "rules/s"},
    backends=("software",),
)
def classifier_update(p: dict, ctx: RunContext) -> dict:
    """Lookup rate while rules are modified at a rate, from another core or the same one."""
    from nicbench import _native

    out = json.loads(
        _native.classifier_load(
            "exact5", p["rules"], ctx.seed, p["duration"] / 1e9, "hybrid", float(p["update_rate"]), p["placement"]
        )
    )
    return {"lookup_mpps": out["lookup_mpps"], "updates_per_s": out["updates_per_s"]}
