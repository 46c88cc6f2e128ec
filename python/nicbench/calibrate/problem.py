"""The calibration problem: which model runs a reference set needs, and how far off they are.

Each reference entry of a study names an experiment and a point (`where`); the point is
found among the experiment spec's points (exactly one must match). Distinct points are run
once each (repetition 0, with the seed the study's runner would use), optionally with
faster parameter variants (`calibration.toml` `[experiment_params]`), and each reference's
residual is its error in units of its tolerance:

    r = (model − published) / tolerance     (relative tolerance: tolerance × |published|)

so |r| ≤ 1 means "passes" and least squares weighs every entry by what the study accepts.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
import multiprocessing
import statistics
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.experiments.keys import derive_seed, point_key
from nicbench.experiments.spec import Spec, load_spec
from nicbench.experiments.targets import RunContext, get_target
from nicbench.interrupts import ignore_sigint_in_worker, sigint_held
from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import Reference, Study

__all__ = ["Point", "Problem", "build_problem", "Evaluator", "residual", "error_summary", "MISSING_RESIDUAL"]

# Residual of a reference whose model value is missing (NaN, failed run): large but finite.
MISSING_RESIDUAL = 10.0


@dataclass
class Point:
    experiment: str
    target: str
    params: dict[str, Any]
    seed: int
    refs: list[int] = field(default_factory=list)  # indexes into Problem.references
    # False for points of another device than the calibrated one (e.g. the RNIC baseline in a
    # SmartNIC study): they run with their own profile and without the fit's overrides.
    calibrated: bool = True

    @property
    def label(self) -> str:
        return f"{self.experiment}:{point_key(self.params)}"


@dataclass
class Problem:
    references: list[Reference]
    points: list[Point]
    ref_point: list[int]  # reference index -> point index


def _match(spec: Spec, ref: Reference) -> dict[str, Any]:
    where = spec.parse_params(ref.where, f"reference {ref.id}: where.")
    found = [pt for pt in spec.points() if all(pt.get(k) == v for k, v in where.items())]
    if len(found) != 1:
        raise SpecError(
            f"reference {ref.id}: where {ref.where} matches {len(found)} points of {spec.name} (expected exactly one)"
        )
    return found[0]


def calibrated_device(point_nics: list[Any], nic: str | None) -> str | None:
    """Which points' device the fitted profile stands for: the profile's own name if points use it
    (a SmartNIC study whose baseline RNIC points keep their profile), else the study's most common
    device (calibrating a copy, e.g. `my-cx5.toml` on pam21's `connectx5` points)."""
    if nic is None:
        return None
    stems = [Path(str(n)).stem for n in point_nics]
    own = Path(nic).stem
    if own in stems or not stems:
        return own
    return Counter(stems).most_common(1)[0][0]


def build_problem(
    study: Study,
    references: list[Reference],
    *,
    nic: str | None = None,
    experiment_params: dict[str, dict[str, Any]] | None = None,
) -> Problem:
    """The distinct runs `references` need. `nic` replaces the points' `nic` (e.g. a profile path);
    `experiment_params[experiment]` replaces point parameters (raw spec values) for speed."""
    specs = {}
    for path in study.experiments:
        spec = load_spec(path)
        specs[spec.name] = spec
    points: list[Point] = []
    index: dict[str, int] = {}
    ref_point: list[int] = []
    matched: list[tuple[Spec, dict[str, Any]]] = []
    for ref in references:
        spec = specs.get(ref.experiment)
        if spec is None:
            raise SpecError(f"reference {ref.id}: the study has no experiment {ref.experiment!r}")
        matched.append((spec, _match(spec, ref)))
    device = calibrated_device([pt["nic"] for _, pt in matched if "nic" in pt], nic)
    for i, (spec, original) in enumerate(matched):
        params = dict(original)
        for k, raw in (experiment_params or {}).get(spec.name, {}).items():
            p = spec.target.param(k)
            if p is None:
                raise SpecError(f"calibration experiment_params.{spec.name}.{k}: no such parameter")
            params[k] = p.parse(raw)
        calibrated = True
        if nic is not None and "nic" in params:
            # Only the calibrated device's points take the fitted profile; `nic` may be a path.
            calibrated = Path(str(params["nic"])).stem == device
            if calibrated:
                params["nic"] = nic
        key = f"{spec.name}|{point_key(params)}"
        if key not in index:
            index[key] = len(points)
            seed = derive_seed(spec.seed, spec.target.key_point(original), 0)
            points.append(Point(spec.name, spec.target.name, params, seed, calibrated=calibrated))
        points[index[key]].refs.append(i)
        ref_point.append(index[key])
    return Problem(references=list(references), points=points, ref_point=ref_point)


def residual(ref: Reference, model: float) -> float:
    if model is None or not math.isfinite(model):
        return MISSING_RESIDUAL
    if ref.tolerance_kind == "factor":
        # On a log scale: one unit of residual at the edge of the factor band.
        if model <= 0 or ref.value <= 0:
            return MISSING_RESIDUAL
        return math.log(model / ref.value) / max(math.log(ref.tolerance), 1e-12)
    scale = ref.tolerance * abs(ref.value) if ref.tolerance_kind == "relative" else ref.tolerance
    return (model - ref.value) / max(scale, 1e-12)


def _run_point(job: tuple[str, dict[str, Any], int, dict[str, float]]) -> dict[str, float] | str:
    """Run one point with overrides; metrics, or the error text (in a worker or in-process)."""
    from nicbench.profiles import parameter_overrides

    target_name, params, seed, overrides = job
    target = get_target(target_name)
    ctx = RunContext(seed=seed, rep=0, target=target)
    try:
        with parameter_overrides(overrides):
            result = target.fn(dict(params), ctx) or {}
        return {k: float(v) for k, v in result.items()}
    except Exception as exc:  # a failing point costs its references, the fit goes on
        return f"{type(exc).__name__}: {exc}"


def _run_point_checked(
    job: tuple[str, dict[str, Any], int, dict[str, float]], fingerprint: dict[str, str], inputs: dict[str, str]
) -> dict[str, float] | str:
    """`_run_point` on a Dask worker, after checking that the worker runs the client's code and
    profiles and reads the same files (a few-shot fit's start profile is a temporary file of the
    client: workers on other machines do not have it)."""
    from nicbench.experiments.scheduler import check_worker

    check_worker(fingerprint, job[1], inputs)
    return _run_point(job)


# How often a wait on the pool looks at signals (Ctrl-C answered well within a second).
POOL_POLL_S = 0.1


class Evaluator:
    """Runs points with given overrides, on `jobs` processes (1: in-process), or as Dask tasks on
    `scheduler` (a connected `DaskScheduler`; the caller opens and closes it)."""

    def __init__(self, problem: Problem, jobs: int = 1, scheduler: Any = None):
        self.problem = problem
        self.jobs = max(1, jobs)
        self.scheduler = scheduler
        self.runs = 0
        self.errors: dict[str, str] = {}
        self._pool: cf.ProcessPoolExecutor | None = None

    def __enter__(self) -> Evaluator:
        if self.scheduler is None and self.jobs > 1:
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.jobs,
                mp_context=multiprocessing.get_context("fork"),
                initializer=ignore_sigint_in_worker,
            )
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if self._pool is None:
            return
        if exc_type is not None:
            # Stopped (Ctrl-C, an error): the runs in flight are not wanted, and the interpreter would
            # wait for them at exit. The pool has no public way to stop a running task.
            for proc in list((self._pool._processes or {}).values()):
                proc.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)

    def run(self, indexes: list[int], overrides: dict[str, float]) -> dict[int, dict[str, float]]:
        points = self.problem.points
        jobs = [
            (points[i].target, points[i].params, points[i].seed, dict(overrides) if points[i].calibrated else {})
            for i in indexes
        ]
        if self.scheduler is not None:
            outs = self._run_on_dask(jobs)
        elif self._pool is None:
            outs = [_run_point(j) for j in jobs]
        else:
            outs = self._run_on_pool(jobs)
        self.runs += len(jobs)
        result: dict[int, dict[str, float]] = {}
        for i, out in zip(indexes, outs):
            if isinstance(out, str):
                self.errors[self.problem.points[i].label] = out
                result[i] = {}
            else:
                result[i] = out
        return result

    def _run_on_pool(
        self, jobs: list[tuple[str, dict[str, Any], int, dict[str, float]]]
    ) -> list[dict[str, float] | str]:
        """The jobs on the pool, in order; Ctrl-C raised within `POOL_POLL_S` (see nicbench.interrupts)."""
        assert self._pool is not None
        with sigint_held():  # the first submit forks the workers
            futures = [self._pool.submit(_run_point, job) for job in jobs]
        pending = set(futures)
        while pending:
            _, pending = cf.wait(pending, timeout=POOL_POLL_S)
        return [f.result() for f in futures]

    def _run_on_dask(
        self, jobs: list[tuple[str, dict[str, Any], int, dict[str, float]]]
    ) -> list[dict[str, float] | str]:
        """One Dask task per point; a task Dask retries after losing its worker returns the same
        value (a point's run is a pure function of its job), so nothing is counted twice."""
        from nicbench.experiments.fingerprint import input_hashes
        from nicbench.experiments.scheduler import EnvironmentMismatch

        client = self.scheduler.client
        futures = [
            client.submit(_run_point_checked, job, self.scheduler.fingerprint, input_hashes(job[1]), pure=False)
            for job in jobs
        ]
        try:
            return client.gather(futures)
        except EnvironmentMismatch as exc:
            raise EnvironmentMismatch(str(exc)) from None


def model_values(problem: Problem, metrics: dict[int, dict[str, float]]) -> list[float]:
    return [metrics.get(problem.ref_point[i], {}).get(ref.metric, math.nan) for i, ref in enumerate(problem.references)]


def error_summary(references: list[Reference], models: list[float]) -> dict[str, Any]:
    """Pass count and median |relative error| (entries with a published 0 have no relative error)."""
    rel = [abs(m - r.value) / abs(r.value) for r, m in zip(references, models) if math.isfinite(m) and r.value != 0]
    passed = sum(1 for r, m in zip(references, models) if r.passes(m))
    return {
        "entries": len(references),
        "passed": passed,
        "failed": len(references) - passed,
        "median_abs_rel_error": statistics.median(rel) if rel else math.nan,
        "rms_residual": math.sqrt(
            sum(residual(r, m) ** 2 for r, m in zip(references, models)) / max(1, len(references))
        ),
    }


ProgressFn = Callable[[str], None]
