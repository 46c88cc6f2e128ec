#!/usr/bin/env python3
"""Bracket argus-host's `llc_miss_ns` by the 1500 B flow-table knee of seed 003.

The seed gives the cost of a flow record that misses the LLC only as drop / no-drop flags (no rate at
more than 16,384 flows per socket), so no least-squares fit can pin it: its Jacobian is zero almost
everywhere. Instead this script finds, with every other parameter of the profile as it is, the interval
of `llc_miss_ns` in which the model reproduces both calibration entries of the 1500 B knee:

    flows-1500-131072-no-drops   16 cores, 1500 B, 131,072 flows: no drops  -> llc_miss_ns <= high
    flows-1500-262144-drops      16 cores, 1500 B, 262,144 flows: drops     -> llc_miss_ns >= low

(drops grow with the miss cost, so each flag is one bound, found by bisection on the study's own run of
that point). The profile's value is the middle of [low, high]; its provenance names both entries.

    python3 studies/argus100g/bracket_miss_cost.py             # prints low, high, middle
"""

from __future__ import annotations

import sys
from pathlib import Path

from nicbench.calibrate.problem import Evaluator, build_problem
from nicbench.vocab.study import load_study

HERE = Path(__file__).resolve().parent
NO_DROPS, DROPS = "flows-1500-131072-no-drops", "flows-1500-262144-drops"
SEARCH_NS = (60.0, 600.0)
STEPS = 30  # bisection steps: (600 - 60) / 2^30 ns


def bracket(profile: str = "argus-host") -> tuple[float, float]:
    study = load_study(HERE)
    refs = {r.id: r for r in study.references}
    problem = build_problem(study, [refs[NO_DROPS], refs[DROPS]], nic=profile)
    with Evaluator(problem, jobs=1) as ev:

        def drops(index: int, miss_ns: float) -> bool:
            point = problem.ref_point[index]
            return ev.run([point], {"llc_miss_ns": miss_ns})[point]["drops"] >= 0.5

        def edge(index: int) -> float:
            """The smallest miss cost with drops at the entry's point (drops are monotone in it)."""
            lo, hi = SEARCH_NS
            if drops(index, lo) or not drops(index, hi):
                raise SystemExit(f"{problem.references[index].id}: no drop edge in {SEARCH_NS} ns")
            for _ in range(STEPS):
                mid = 0.5 * (lo + hi)
                lo, hi = (lo, mid) if drops(index, mid) else (mid, hi)
            return hi

        return edge(1), edge(0)


def main() -> None:
    low, high = bracket(*sys.argv[1:2])
    status = "" if low <= high else "  (empty: no value reproduces both flags)"
    print(
        f"llc_miss_ns: drops at 262,144 flows from {low:.2f} ns, none at 131,072 flows up to {high:.2f} ns; "
        f"middle {0.5 * (low + high):.1f} ns{status}"
    )


if __name__ == "__main__":
    main()
