"""Harness overhead: points per second through the runner and the result store.

    python benches/harness.py [--points 2000] [--jobs 1,2] [--scheduler local:2]

Runs a sweep of the trivial `synthetic.noop` target (one repetition per point) into a
temporary results folder and prints runs/s for each job count, then the time to load the
records back. Target: ≥ 200 points/s (issue 4). With `--scheduler`, the same sweep also goes
through Dask (a scheduler address, or local:N), cluster start-up not counted.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from nicbench.experiments import load_results, parse_spec, run_experiment

SPEC = """
[experiment]
name = "bench-harness"
target = "synthetic.noop"
repeat = 1
seed = 1
[sweep]
x = "1-{points} step 1"
"""


def measure(points: int, jobs: int, scheduler=None) -> dict:
    spec = parse_spec(SPEC.format(points=points), "<bench>")
    with tempfile.TemporaryDirectory() as root:
        t0 = time.perf_counter()
        summary = run_experiment(spec, results=root, jobs=jobs, scheduler=scheduler)
        run_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        records = load_results(f"{root}/bench-harness")
        load_s = time.perf_counter() - t1
    assert summary.executed == points and summary.failed == 0, summary
    return {
        "points": points,
        "jobs": scheduler.address if scheduler else jobs,
        "run_s": round(run_s, 3),
        "points_per_s": round(points / run_s, 1),
        "load_s": round(load_s, 3),
        "records": len(records),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2000)
    parser.add_argument("--jobs", default="1,2", help="comma-separated job counts")
    parser.add_argument("--scheduler", default=None, help="also through Dask: tcp://HOST:PORT or local:N")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(args.points, int(j)) for j in args.jobs.split(",")]
    if args.scheduler:
        from nicbench.experiments.scheduler import open_scheduler

        with open_scheduler(args.scheduler) as sched:
            rows.append(measure(args.points, 1, sched))
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    for r in rows:
        print(
            f"harness: {r['points']} points, jobs={r['jobs']}: {r['points_per_s']:.0f} points/s "
            f"({r['run_s']:.2f} s); load_results: {r['records']} records in {r['load_s']:.2f} s"
        )


if __name__ == "__main__":
    main()
