"""The runner: executes a spec's runs in parallel and stores each as it ends.

- Runs go to a backend: `--jobs` local worker processes (default: the number of cores; 1 runs
  in-process; `local_pool.py`), or a Dask cluster (`--scheduler`; `scheduler.py`). Local
  workers write each run's record file themselves (atomically); Dask workers only compute and
  return the run's records, and this process writes them, once per run key — so a task Dask
  retries after losing a worker cannot duplicate a record. Either way the store grows one
  complete run at a time whatever happens to this process.
- Before anything runs, the store is listed: a request whose run file exists is answered
  from the store (a cached run), so re-running an interrupted command does only what is
  missing — even for adaptive designs, which replay their stored probes.
- A failing run records its error (message + traceback) under `failed/` and the sweep goes
  on; the next run of the command retries it. So does a run stopped at its timeout
  (`[experiment] timeout`, `--timeout`; "timed out after N s").
- At the end, the run files are compacted into one Parquet part; after a complete sweep of
  the spec as written, runs of older spec versions (run keys not requested) are moved to
  `stale/`, so the store matches the spec.
"""

from __future__ import annotations

import collections
import dataclasses
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.backends import get_backend, results_name, with_backend
from nicbench.experiments.designs.base import Derived, RunOutcome, RunRequest, Task
from nicbench.experiments.environment import collect_environment, study_of
from nicbench.experiments.fingerprint import code_fingerprint, fingerprint
from nicbench.experiments.keys import code_version
from nicbench.experiments.local_pool import LocalPool, announce_start, timeout_message
from nicbench.experiments.spec import Spec
from nicbench.experiments.store import ExperimentStore, build_table, error_text, now_iso, results_root
from nicbench.experiments.targets import RunContext, get_target

__all__ = ["run_experiment", "RunSummary", "Progress", "execute_run", "compute_run", "select_points"]


@dataclass
class RunSummary:
    experiment: str
    store: str
    points: int
    planned_runs: int
    executed: int = 0
    cached: int = 0
    stale_reused: int = 0
    failed: int = 0
    stale_moved: int = 0
    elapsed_s: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)
    # Under Dask: workers that left during the sweep, and runs Dask re-ran because of it.
    workers_lost: list[str] = field(default_factory=list)
    retried: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


class Progress:
    """What the runner tells its caller; the CLI renders it with rich. Default: silent."""

    def start(self, spec: Spec, total_runs: int) -> None: ...

    def run_done(self, request: RunRequest, outcome: RunOutcome) -> None: ...

    def workers(self, alive: int) -> None:
        """Workers connected (Dask backends only)."""

    def finish(self, summary: RunSummary) -> None: ...


def select_points(points: list[dict[str, Any]], only: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not only:
        return points
    return [p for p in points if all(p.get(k) == v for k, v in only.items())]


def run_experiment(
    spec: Spec,
    *,
    results: str | os.PathLike | None = None,
    jobs: int | None = None,
    fresh: bool = False,
    only: dict[str, Any] | None = None,
    reps: list[int] | None = None,
    rerun: bool = False,
    progress: Progress | None = None,
    prune_stale: bool = True,
    extra_meta: dict[str, Any] | None = None,
    scheduler: Any = None,
    timeout_s: float | None = None,
    reuse_stale: bool = False,
    whole_sweep: bool = True,
) -> RunSummary:
    """Run every missing run of `spec`; returns counts. Raises OSError/StoreError on store problems.

    `scheduler`: a `scheduler.DaskScheduler` to run on (default: local processes, `jobs`).
    `timeout_s`: per-run timeout (default: the spec's `timeout`).
    `reuse_stale`: answer a request from a stored run of the same identity made by other code or
    other input files (an explicit choice: its numbers may not be what the current code gives).
    The spec's target may be answered by another backend than its default (`nicbench.backends`):
    its runs then go to `<experiment>--<backend>`.
    `whole_sweep`: False when `spec` was narrowed by the caller (`--set`, `--repeat`); such a run,
    like one of `only`, `reps` or `spec.limit_points`, never marks the experiment `complete` (it
    keeps what the stored experiment said, unless a run failed)."""
    progress = progress or Progress()
    jobs = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    timeout_s = spec.timeout_s if timeout_s is None else timeout_s
    store = ExperimentStore(results_root(results), results_name(spec.name, spec.target))
    answers = spec.target.backend or spec.target.backends[0]
    points = select_points(spec.run_points(), only)
    if spec.target.why_not is not None:  # a point no backend can run: refused before anything starts
        for point in points:
            refused = spec.target.why_not(point)
            if refused:
                raise ValueError(f"{spec.name}: {refused}")
    if answers != spec.target.backends[0]:  # a point the backend cannot run: refused before anything starts
        chosen = get_backend(answers)
        for point in points:
            refused = chosen.why_not(spec.target.name, point)
            if refused:
                raise ValueError(f"backend {answers}: {refused}")
    store.prepare()  # unwritable folder: OSError before anything runs
    rep_list = reps if reps is not None else list(range(spec.repeat))
    if any(r < 0 for r in rep_list):
        raise ValueError("repetitions are numbered from 0")
    summary = RunSummary(
        experiment=spec.name,
        store=str(store.dir),
        points=len(points),
        planned_runs=spec.design.estimated_runs(len(points), len(rep_list)),
    )
    # Local workers are forked before the store lock is taken, so they never hold it.
    if scheduler is not None:
        backend = scheduler.backend()
    else:
        backend = LocalPool(jobs, execute_run, lock_path=str((store.dir / ".lock").resolve())) if jobs > 1 else None
    started = time.monotonic()
    try:
        with store.lock():
            if fresh:
                store.clear()
                store.prepare()
            # Whether the last whole run of this same spec text stored the whole sweep (--fresh forgets it).
            same_spec = (store.dir / "spec.toml").is_file() and (store.dir / "spec.toml").read_text() == spec.text
            before = store.read_json("experiment.json") if not fresh and same_spec else {}
            was_complete = bool(before.get("complete"))
            store.write_text("spec.toml", spec.text)
            meta = {
                "name": spec.name,
                "target": spec.target.name,
                "target_version": spec.target.version,
                "code_version": code_version(),
                "code_fingerprint": code_fingerprint(),
                "spec_file": str(Path(spec.file).resolve()),
                "study": study_of(spec.file),
                "design": spec.design.describe(),
                "points": len(points),
                "repeat": spec.repeat,
                "param_units": {p.name: p.unit for p in spec.target.params},
                "metric_units": spec.target.metrics,
                "started": now_iso(),
                "complete": False,
                "environment": {
                    **collect_environment(Path(spec.file).resolve().parent),
                    **get_backend(answers).environment(),
                },
                "backend": answers,
                "scheduler": scheduler.address if scheduler is not None else f"local, {jobs} jobs",
                "timeout_s": timeout_s,
                **(extra_meta or {}),
            }
            store.write_json("experiment.json", meta)
            tasks = spec.design.tasks(spec, points, rep_list)
            progress.start(spec, summary.planned_runs)
            requested = _drive(spec, store, tasks, backend, rerun, progress, summary, timeout_s, reuse_stale)
            # `complete`: the spec's whole sweep is stored. A narrowed run cannot tell, so it keeps
            # what the last whole run said (`results ls` and the reports read this).
            narrowed = bool(only) or reps is not None or spec.limit_points is not None or not whole_sweep
            complete = summary.failed == 0 and (was_complete if narrowed else True)
            sweep_runs, sweep_exact = _sweep_size(spec, whole_sweep, before)
            if complete and not narrowed:
                sweep_runs, sweep_exact = len(requested), True  # what the whole sweep really took
            prune = complete and prune_stale and not only and reps is None
            summary.stale_moved = store.compact(keep=requested if prune else None)
            summary.elapsed_s = time.monotonic() - started
            meta.update(
                finished=now_iso(),
                complete=complete,
                runs=len(requested),
                sweep_runs=sweep_runs,
                sweep_runs_exact=sweep_exact,
                executed=summary.executed,
                cached=summary.cached,
                failed=summary.failed,
            )
            store.write_json("experiment.json", meta)
    finally:
        if backend is not None:
            backend.close()
    progress.finish(summary)
    return summary


def _sweep_size(spec: Spec, whole_sweep: bool, before: dict[str, Any]) -> tuple[int | None, bool]:
    """Runs in the spec's whole sweep (`results ls` shows "stored of sweep"), and whether exact.

    A spec narrowed by the caller (`--set`, `--repeat`) does not know its whole sweep: it keeps what
    the last run of the same spec text stored. Otherwise the design's plan for every point (`only`
    and `--limit-points` narrow what runs, not the sweep); a search design (zero-loss) plans an upper
    bound."""
    if not whole_sweep:
        return before.get("sweep_runs"), bool(before.get("sweep_runs_exact"))
    every = dataclasses.replace(spec, limit_points=None)
    n_points = len(every.points())
    planned = spec.design.estimated_runs(n_points, spec.repeat)
    exact = planned == len(every.run_points()) * spec.repeat
    return planned, exact


def _drive(
    spec: Spec,
    store: ExperimentStore,
    tasks: list[Task],
    backend: Any,
    rerun: bool,
    progress: Progress,
    summary: RunSummary,
    timeout_s: float | None,
    reuse_stale: bool = False,
) -> set[str]:
    done = store.done_keys()
    # identity -> a stored run of it (stale when its key is not the one requested now)
    stored_by_identity = (
        {ident: run for run, (ident, _, _) in store.provenance().items() if ident} if reuse_stale else {}
    )
    executed_now: set[str] = set()
    requested: set[str] = set()
    waiting: dict[str, list[tuple[Task, RunRequest]]] = {}
    queue: collections.deque[RunRequest] = collections.deque()
    ready: collections.deque[tuple[Task, RunOutcome | None]] = collections.deque((t, None) for t in tasks)
    inflight: dict[Any, RunRequest] = {}
    # Records name the spec's experiment; the folder (`store`) also names a non-default backend.
    job_base = {
        "experiment": spec.name,
        "store": store.experiment,
        "target": spec.target.name,
        "root": str(store.dir.parent),
        "keep": spec.metrics,
        "timeout_s": timeout_s,
        "backend": spec.target.backend or spec.target.backends[0],
    }

    def resolve(req: RunRequest, result: dict[str, Any]) -> None:
        if not result.get("stored", True):  # computed elsewhere (Dask) or stopped: this process writes it
            write_result(store, {**job_base, **_job(req)}, result)
        outcome = _outcome(result)
        if outcome.status == "ok":
            done.add(req.key)
            if outcome.cached:
                summary.cached += 1
            else:
                summary.executed += 1
                executed_now.add(req.key)
        else:
            summary.failed += 1
            summary.failures.append(
                {
                    "run": req.key,
                    "rep": req.rep,
                    "params": req.params,
                    "error": (outcome.error or "").splitlines()[0] if outcome.error else "",
                }
            )
        progress.run_done(req, outcome)
        for task, _ in waiting.pop(req.key, []):
            ready.append((task, outcome))

    while ready or queue or inflight:
        while ready:
            task, outcome = ready.popleft()
            try:
                req = task.send(outcome) if outcome is not None else next(task)
            except StopIteration as stop:
                for derived in stop.value or []:
                    _store_derived(spec, store, derived)
                    requested.add(derived.key)
                continue
            requested.add(req.key)
            if req.key in done and (not rerun or req.key in executed_now):
                cached = RunOutcome(
                    req.key, "ok", _stored_metrics(store, req.key) if req.needs_outcome else {}, cached=True
                )
                summary.cached += 1
                progress.run_done(req, cached)
                ready.append((task, cached))
            elif req.key not in done and not rerun and req.identity in stored_by_identity:
                old = stored_by_identity[req.identity]
                requested.add(old)
                reused = RunOutcome(old, "ok", _stored_metrics(store, old) if req.needs_outcome else {}, cached=True)
                summary.cached += 1
                summary.stale_reused += 1
                progress.run_done(req, reused)
                ready.append((task, reused))
            elif req.key in waiting:
                waiting[req.key].append((task, req))
            else:
                waiting[req.key] = [(task, req)]
                queue.append(req)
        if backend is None:
            if queue:
                req = queue.popleft()
                resolve(req, execute_run({**job_base, **_job(req), "alarm": True}))
            continue
        while queue and len(inflight) < backend.capacity:
            req = queue.popleft()
            inflight[backend.submit({**job_base, **_job(req)})] = req
        if inflight:
            for handle in backend.wait(list(inflight)):
                resolve(inflight.pop(handle), backend.result(handle))
            status = backend.status()
            if "workers" in status:
                progress.workers(status["workers"])
    status = backend.status() if backend is not None else {}
    summary.workers_lost = list(status.get("lost", []))
    summary.retried = int(status.get("retried", 0))
    return requested


def _job(req: RunRequest) -> dict[str, Any]:
    fp = req.fingerprint
    provenance = {
        "run_identity": req.identity or None,
        "code_fingerprint": fp.code if fp else None,
        "input_files": fp.inputs if fp else None,
    }  # + "backend", from the job's base
    return {"key": req.key, "params": req.params, "rep": req.rep, "seed": req.seed, "provenance": provenance}


def _outcome(result: dict[str, Any]) -> RunOutcome:
    return RunOutcome(result["key"], result["status"], result["metrics"], result.get("error"))


def _stored_metrics(store: ExperimentStore, key: str) -> dict[str, float]:
    table = store.read_run(key)
    metrics, values, ts = (table.column(c).to_pylist() for c in ("metric", "value", "t"))
    return {m: v for m, v, t in zip(metrics, values, ts) if t is None and m is not None}


def _store_derived(spec: Spec, store: ExperimentStore, d: Derived) -> None:
    status = "ok" if d.error is None else "error"
    fp = fingerprint(d.params)
    table = build_table(
        experiment=spec.name,
        target=spec.target.name,
        run=d.key,
        rep=d.rep,
        seed=d.seed,
        status=status,
        error=d.error,
        search=d.search,
        params=d.params,
        rows=d.rows,
        provenance={
            "code_fingerprint": fp.code,
            "input_files": fp.inputs,
            "backend": spec.target.backend or spec.target.backends[0],
        },
    )
    store.write_run(d.key, table, failed=d.error is not None)


class RunTimeout(Exception):
    """A run in this process passed its deadline (in-process runs only: `--jobs 1`)."""


def compute_run(job: dict[str, Any]) -> dict[str, Any]:
    """Run one target call; returns its status, metrics and record rows (nothing is stored).

    With `job["alarm"]` and a timeout, an in-process run is interrupted by SIGALRM at its
    deadline: this stops Python code and sleeps, not a native call that never returns (that
    needs a worker process: `--jobs 2` or more, or Dask)."""
    target = with_backend(get_target(job["target"]), job.get("backend"))
    ctx = RunContext(seed=job["seed"], rep=job["rep"], target=target)
    t0 = time.time()
    timeout_s = job.get("timeout_s")
    alarm = bool(job.get("alarm") and timeout_s and threading.current_thread() is threading.main_thread())
    try:
        if alarm:
            previous = signal.signal(signal.SIGALRM, _raise_timeout)
            signal.setitimer(signal.ITIMER_REAL, timeout_s)
        try:
            rows = target.run(job["params"], ctx)
        finally:
            if alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
        status, error = "ok", None
    except RunTimeout:
        rows, status, error = [], "error", timeout_message(timeout_s)
    except Exception as exc:  # a failing point is recorded, the sweep goes on
        rows, status, error = [], "error", error_text(exc)
    metrics = {m: v for m, v, _, t in rows if t is None}
    keep = job.get("keep")
    if keep is not None:
        rows = [r for r in rows if r[0] in keep or r[0].startswith("event:")]
    return {
        "key": job["key"],
        "status": status,
        "metrics": metrics,
        "error": error,
        "rows": rows,
        "stored": False,
        "meta": {"started_unix": t0, "wall_s": time.time() - t0, "pid": os.getpid()},
    }


def _raise_timeout(signum: int, frame: Any) -> None:
    raise RunTimeout()


def write_result(store: ExperimentStore, job: dict[str, Any], result: dict[str, Any]) -> None:
    """Store one run's records (or its error record) under its run key."""
    table = build_table(
        experiment=job["experiment"],
        target=job["target"],
        run=job["key"],
        rep=job["rep"],
        seed=job["seed"],
        status=result["status"],
        error=result["error"],
        search=None,
        params=job["params"],
        rows=result.get("rows") or [],
        provenance={**(job.get("provenance") or {}), "backend": job.get("backend")},
    )
    store.write_run(job["key"], table, failed=result["status"] != "ok", metadata=result.get("meta") or None)


def execute_run(job: dict[str, Any]) -> dict[str, Any]:
    """Run one target call and store its records; runs in a local worker process (or in-process)."""
    announce_start(job["key"])
    result = compute_run(job)
    write_result(ExperimentStore(job["root"], job.get("store", job["experiment"])), job, result)
    # The records are on disk: only what the runner needs goes back to it.
    return {**result, "rows": None, "stored": True}
