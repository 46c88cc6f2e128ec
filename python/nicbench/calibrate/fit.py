"""The fitter: bounded least squares over a profile's opaque parameters, by coordinate descent.

Why this method: each model run costs real time (a simulation), and most parameters drive
only a few of the calibration points (the root-table knee moves Fig. 2a/2c, the per-rule
firmware cost Fig. 3-5, ...). So the fitter first *probes* which points each parameter
influences (group testing: perturb half of a parameter set at a time, re-running only the
points that moved), then minimizes the sum of squared residuals one parameter at a time
with a golden-section line search that re-runs only those points. Sweeps repeat over all
parameters with a shrinking bracket. (A point whose change is masked by another perturbed
parameter in the same probe could be missed; perturbations are small, 15% of the range.)

Deterministic: no random numbers; the runs themselves are seeded. A run result depends on
all parameters, so the residuals of the points a parameter influences are recomputed with
the current values of all others; points it does not influence keep their residuals.
Parameters are searched on a log scale when their bounds span more than 20×.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from nicbench.calibrate.problem import Evaluator, Problem, model_values, residual

__all__ = ["FitParam", "FitResult", "fit", "polish", "probe_influences"]

_GOLDEN = (math.sqrt(5) - 1) / 2


@dataclass
class FitParam:
    name: str
    start: float
    low: float
    high: float
    log: bool = False
    integer: bool = False

    def to_u(self, x: float) -> float:
        return math.log(x) if self.log else x

    def from_u(self, u: float) -> float:
        x = math.exp(u) if self.log else u
        x = min(max(x, self.low), self.high)
        return float(round(x)) if self.integer else x

    @property
    def u_low(self) -> float:
        return self.to_u(self.low)

    @property
    def u_high(self) -> float:
        return self.to_u(self.high)


@dataclass
class FitResult:
    values: dict[str, float]
    start_cost: float
    cost: float
    models: list[float]
    influences: dict[str, list[int]]  # parameter -> point indexes it moves
    runs: int
    history: list[tuple[str, float, float]] = field(default_factory=list)  # (param, value, cost) per accepted step


def _cost(residuals: list[float]) -> float:
    """Soft-L1 least squares (scipy's loss="soft_l1"): ≈ r² within tolerance, ≈ 2|r| far
    outside, so one grossly wrong point does not dictate every other parameter."""
    return sum(2.0 * (math.sqrt(1.0 + r * r) - 1.0) for r in residuals)


def fit(
    problem: Problem,
    params: list[FitParam],
    evaluator: Evaluator,
    *,
    sweeps: int = 2,
    line_evals: int = 8,
    shrink: float = 0.3,
    influences: dict[str, list[int]] | None = None,
    log: Callable[[str], None] = lambda s: None,
) -> FitResult:
    """Minimize the soft-L1 cost of the residuals over `params` within bounds; the best values seen.
    `influences` (parameter -> points it moves, from `probe_influences`) skips the probe."""
    values = {p.name: min(max(p.start, p.low), p.high) for p in params}
    all_points = list(range(len(problem.points)))
    metrics = evaluator.run(all_points, values)
    refs_of = [pt.refs for pt in problem.points]

    def residuals_now() -> list[float]:
        return [residual(ref, m) for ref, m in zip(problem.references, model_values(problem, metrics))]

    start_cost = _cost(residuals_now())
    log(f"start: cost {start_cost:.4g} over {len(problem.references)} references, {len(all_points)} runs")

    # 1. Probe: which points does each parameter move?
    if influences is None:
        influences = probe_influences(problem, params, evaluator, values, metrics, log=log)
    influences = {p.name: list(influences.get(p.name, [])) for p in params}

    # 2. Coordinate descent with golden-section line searches on the influenced points only.
    history: list[tuple[str, float, float]] = []
    width = 1.0
    for sweep in range(sweeps):
        # Worst first: the parameter whose points carry the most cost moves first, so a gross
        # misfit (a saturated core, a collapsed table) is repaired before finer parameters
        # are tuned around it. Sweep 1 brackets the whole range; later sweeps bracket the current
        # value (half the range either side, then shrinking), so they try new candidates.
        residuals = residuals_now()
        load = {p.name: _cost([residuals[r] for i in influences[p.name] for r in refs_of[i]]) for p in params}
        for p in sorted(params, key=lambda q: -load[q.name]):
            pts = influences[p.name]
            if not pts:
                continue
            ref_idx = [r for i in pts for r in refs_of[i]]

            def cost_at(
                x: float, _p: FitParam = p, _pts: list[int] = pts, _refs: list[int] = ref_idx
            ) -> tuple[float, dict]:
                m = evaluator.run(_pts, {**values, _p.name: x})
                merged = {**metrics, **m}
                models = model_values(problem, merged)
                return _cost([residual(problem.references[r], models[r]) for r in _refs]), m

            current = values[p.name]
            models_now = model_values(problem, metrics)  # already at the current values: no run
            best_x, best_m = current, {i: metrics[i] for i in pts}
            best_c = _cost([residual(problem.references[r], models_now[r]) for r in ref_idx])
            u0 = p.to_u(current)
            half = 0.5 * width * (p.u_high - p.u_low)
            a, b = max(p.u_low, u0 - half), min(p.u_high, u0 + half)
            if sweep == 0:
                a, b = p.u_low, p.u_high
            c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
            fc, mc = cost_at(p.from_u(c))
            fd, md = cost_at(p.from_u(d))
            for x, f, m in ((p.from_u(c), fc, mc), (p.from_u(d), fd, md)):
                if f < best_c:
                    best_x, best_c, best_m = x, f, m
            for _ in range(max(0, line_evals - 3)):
                if fc <= fd:
                    b, d, fd, md = d, c, fc, mc
                    c = b - _GOLDEN * (b - a)
                    fc, mc = cost_at(p.from_u(c))
                    if fc < best_c:
                        best_x, best_c, best_m = p.from_u(c), fc, mc
                else:
                    a, c, fc, mc = c, d, fd, md
                    d = a + _GOLDEN * (b - a)
                    fd, md = cost_at(p.from_u(d))
                    if fd < best_c:
                        best_x, best_c, best_m = p.from_u(d), fd, md
            values[p.name] = best_x
            metrics.update(best_m)
            total = _cost(residuals_now())
            history.append((p.name, best_x, total))
            log(f"sweep {sweep + 1}: {p.name} = {best_x:.6g} (cost {total:.4g})")
        if sweep >= 1:
            width *= shrink
    final_models = model_values(problem, metrics)
    return FitResult(
        values=values,
        start_cost=start_cost,
        cost=_cost(residuals_now()),
        models=final_models,
        influences=influences,
        runs=evaluator.runs,
        history=history,
    )


def probe_influences(
    problem: Problem,
    params: list[FitParam],
    evaluator: Evaluator,
    values: dict[str, float],
    metrics: dict[int, dict[str, float]],
    *,
    log: Callable[[str], None] = lambda s: None,
    record: dict[str, tuple[float, dict[int, dict[str, float]]]] | None = None,
) -> dict[str, list[int]]:
    """Which points each parameter moves (`metrics`: every point at `values`). Group testing:
    perturb a set of parameters at once by 15% of their range; points that do not move depend on
    none of them; split moving sets in halves until single parameters remain (cheap when each
    parameter moves few points). `record` receives, per parameter that moves something, its probe
    value and the metrics of the points it moved (a forward difference for free)."""
    all_points = list(range(len(problem.points)))
    refs_of = [pt.refs for pt in problem.points]
    probe_value = {}
    for p in params:
        u = p.to_u(values[p.name])
        step = 0.15 * (p.u_high - p.u_low)
        probe_value[p.name] = p.from_u(u + step if u + step <= p.u_high else u - step)
    influences: dict[str, list[int]] = {p.name: [] for p in params}
    stack: list[tuple[list[FitParam], list[int]]] = [(list(params), all_points)]
    while stack:
        group, pts = stack.pop()
        if not group or not pts:
            continue
        probe = evaluator.run(pts, {**values, **{p.name: probe_value[p.name] for p in group}})
        moved = [i for i in pts if _differs(metrics[i], probe[i], problem, refs_of[i])]
        if len(group) == 1:
            influences[group[0].name] = moved
            if record is not None and moved:
                record[group[0].name] = (probe_value[group[0].name], {i: probe[i] for i in moved})
            log(f"probe {group[0].name}: moves {len(moved)} of {len(all_points)} runs")
        elif moved:
            half = len(group) // 2
            stack += [(group[half:], moved), (group[:half], moved)]
        else:
            log(f"probe {', '.join(p.name for p in group)}: move nothing")
    return influences


def _differs(a: dict[str, float], b: dict[str, float], problem: Problem, refs: list[int]) -> bool:
    for r in refs:
        metric = problem.references[r].metric
        x, y = a.get(metric, math.nan), b.get(metric, math.nan)
        if math.isnan(x) and math.isnan(y):
            continue
        if math.isnan(x) != math.isnan(y) or abs(x - y) > 1e-9 * max(1.0, abs(x), abs(y)):
            return True
    return False


def polish(
    problem: Problem,
    params: list[FitParam],
    evaluator: Evaluator,
    values: dict[str, float],
    influences: dict[str, list[int]],
    *,
    iterations: int = 4,
    step: float = 0.02,
    log: Callable[[str], None] = lambda s: None,
) -> tuple[FitResult, np.ndarray]:
    """Levenberg-Marquardt steps from `values` on the soft-L1 cost (iteratively reweighted: each
    residual weighs 1/sqrt(1 + r^2), as the cost's curvature there), in each parameter's search
    space; Jacobian by forward differences (`step` of the range) on the points a parameter moves.
    Coordinate descent finds the basin; this settles in it. Returns the result and the Jacobian of
    the residuals at the returned values (d r / d u) for the standard errors."""
    all_points = list(range(len(problem.points)))
    refs_of = [pt.refs for pt in problem.points]
    values = dict(values)
    metrics = evaluator.run(all_points, values)

    def residuals(m: dict[int, dict[str, float]]) -> np.ndarray:
        return np.array([residual(ref, x) for ref, x in zip(problem.references, model_values(problem, m))])

    r = residuals(metrics)
    cost = _cost(list(r))
    start_cost = cost
    lam = 1e-2
    history: list[tuple[str, float, float]] = []
    jac = np.zeros((len(r), len(params)))
    for it in range(iterations + 1):
        jac = np.zeros((len(r), len(params)))
        for j, p in enumerate(params):
            pts = influences.get(p.name) or []
            if not pts:
                continue
            u = p.to_u(values[p.name])
            h = step * (p.u_high - p.u_low)
            h = h if u + h <= p.u_high else -h
            moved = evaluator.run(pts, {**values, p.name: math.exp(u + h) if p.log else u + h})
            rows = [k for i in pts for k in refs_of[i]]
            r1 = residuals({**metrics, **moved})
            jac[rows, j] = (r1[rows] - r[rows]) / h
        if it == iterations:
            break  # the Jacobian at the final values, for the standard errors
        before = cost
        w = (1.0 + r * r) ** -0.25
        jw, rw = jac * w[:, None], r * w
        a, g = jw.T @ jw, jw.T @ rw
        improved = False
        for _ in range(4):
            try:
                delta = -np.linalg.solve(a + lam * np.diag(np.maximum(np.diag(a), 1e-12)), g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            trial = {
                p.name: p.from_u(min(max(p.to_u(values[p.name]) + d, p.u_low), p.u_high)) for p, d in zip(params, delta)
            }
            changed = [i for p in params if trial[p.name] != values[p.name] for i in influences.get(p.name, [])]
            moved = evaluator.run(sorted(set(changed)), {**values, **trial}) if changed else {}
            r_trial = residuals({**metrics, **moved})
            c_trial = _cost(list(r_trial))
            if c_trial < cost:
                values, metrics, r, cost = {**values, **trial}, {**metrics, **moved}, r_trial, c_trial
                lam = max(lam / 3, 1e-6)
                improved = True
                history.append(("lm", float(it), cost))
                log(f"polish {it + 1}: cost {cost:.4g}")
                break
            lam *= 4
        if not improved or before - cost < 1e-3 * max(before, 1e-12):
            break
    result = FitResult(
        values=values,
        start_cost=start_cost,
        cost=cost,
        models=model_values(problem, metrics),
        influences=influences,
        runs=evaluator.runs,
        history=history,
    )
    return result, jac
