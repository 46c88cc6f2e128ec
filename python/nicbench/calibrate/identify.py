"""What a fit can claim: how many independent points it has, and how well the data pin each parameter.

- `independent_points(refs[, device])`: calibration entries that are distinct observations — distinct
  (scenario, metric, statistic), and one sentence giving one number for several scenarios once; with a
  device, only the entries about it (`about_device`).
- `identifiability(...)`: at the fitted values, the Jacobian of the residuals (each residual in units of its
  reference's tolerance) with respect to the parameters, by central differences in the parameter's search
  space (log for log-scaled parameters); the covariance `(JᵀJ)⁺ · max(1, χ²/(m − n))` treats a tolerance as one
  standard error and inflates it when the model misfits. Per parameter: its standard error (in its own units),
  the relative one, the strongest correlation with another parameter, and whether the data constrain it — a
  parameter is *unconstrained* when no calibration point moves it, when it lies in the (numerical) null space of
  J, or when its 1-σ interval spans more than half its bounds.

Invariant: no randomness; the Jacobian runs go through the same evaluator (seeded runs) as the fit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nicbench.calibrate.fit import FitParam
from nicbench.calibrate.problem import Evaluator, Problem, model_values, residual
from nicbench.vocab.study import Reference

__all__ = ["about_device", "independent_points", "identifiability", "jacobian", "ParamCertainty"]

# Relative step of the central difference, as a share of the parameter's search range.
STEP = 0.02
# Singular values below this share of the largest span the null space (no information).
RANK_TOL = 1e-6


def _sentence(quote: str) -> str:
    """A text entry's published sentence without the reference file's annotation in parentheses at
    its end ("... with eight cores. (3 cores: processed / cores)")."""
    return re.sub(r"\s*\([^()]*\)\s*$", "", quote).strip()


def about_device(refs: list[Reference], device: str) -> list[Reference]:
    """The entries about `device` (their `nic` is its profile, by name or path) or about no device."""
    return [r for r in refs if "nic" not in r.where or Path(str(r.where["nic"])).stem == device]


def independent_points(refs: list[Reference], device: str | None = None) -> int:
    """Distinct published observations among `refs`: one per (scenario, metric, statistic), and a
    sentence that gives one number for several scenarios ("each core adds around 2.4M pps") counts
    once. With `device`, only the entries about that device (or about none): another device's points
    are run with its own profile, so they pin none of this one's parameters."""
    if device is not None:
        refs = about_device(refs, device)
    seen_observations: set[tuple] = set()
    seen_sentences: set[tuple] = set()
    count = 0
    for r in refs:
        sentence = (_sentence(r.quote), r.metric, r.statistic, r.value)
        if r.observation() in seen_observations or (not r.digitized and sentence in seen_sentences):
            continue
        seen_observations.add(r.observation())
        if not r.digitized:
            seen_sentences.add(sentence)
        count += 1
    return count


@dataclass
class ParamCertainty:
    value: float
    sigma: float  # standard error in the parameter's unit (inf: unconstrained)
    rel_sigma: float  # sigma / |value|
    constrained: bool
    reason: str  # why unconstrained ("" when constrained)
    max_correlation: float  # with `correlated_with`
    correlated_with: str

    def as_dict(self) -> dict[str, float | bool | str]:
        return {
            "value": self.value,
            "sigma": self.sigma,
            "rel_sigma": self.rel_sigma,
            "constrained": self.constrained,
            "reason": self.reason,
            "max_correlation": self.max_correlation,
            "correlated_with": self.correlated_with,
        }


def identifiability(
    problem: Problem,
    params: list[FitParam],
    values: dict[str, float],
    evaluator: Evaluator,
    influences: dict[str, list[int]],
    precomputed: tuple[np.ndarray, np.ndarray] | None = None,
) -> dict[str, ParamCertainty]:
    """Standard errors and constrained flags of `params` at `values` (see the module doc);
    `precomputed` = (residuals, Jacobian d r / d u) at `values` saves the runs."""
    r0, jac = precomputed if precomputed is not None else jacobian(problem, params, values, evaluator, influences)
    m, n = jac.shape
    chi2 = float(r0 @ r0)
    scale = max(1.0, chi2 / (m - n)) if m > n else math.inf
    u_s, s, vt = np.linalg.svd(jac, full_matrices=False)
    s_max = float(s.max()) if s.size else 0.0
    keep = s > RANK_TOL * s_max if s_max > 0 else np.zeros_like(s, dtype=bool)
    inv = np.zeros_like(s)
    inv[keep] = 1.0 / s[keep] ** 2
    cov = (vt.T * inv) @ vt * scale
    null = vt[~keep] if (~keep).any() else np.zeros((0, n))
    out: dict[str, ParamCertainty] = {}
    for j, p in enumerate(params):
        x = values[p.name]
        var_u = float(cov[j, j])
        reason = ""
        if not influences.get(p.name):
            reason = "no calibration point moves it"
        elif not math.isfinite(scale):
            reason = "as many free parameters as points (saturated)"
        elif null.size and float(np.abs(null[:, j]).max()) > 0.1:
            reason = "degenerate with other parameters (null space of the Jacobian)"
        sigma_u = math.sqrt(var_u) if var_u > 0 and not reason else math.inf
        if math.isfinite(sigma_u) and 2 * sigma_u > 0.5 * (p.u_high - p.u_low):
            reason = "its 1-sigma interval spans more than half its bounds"
        # On a log scale the interval is a factor e^sigma_u; beyond ~e^700 that is no bound at all.
        sigma = (abs(x) * math.expm1(sigma_u) if sigma_u < 700.0 else math.inf) if p.log else sigma_u
        corr, partner = 0.0, ""
        if math.isfinite(sigma_u) and sigma_u > 0:
            for k, q in enumerate(params):
                if k != j and cov[k, k] > 0:
                    c = float(cov[j, k] / math.sqrt(cov[j, j] * cov[k, k]))
                    if abs(c) > abs(corr):
                        corr, partner = c, q.name
        out[p.name] = ParamCertainty(
            value=x,
            sigma=sigma,
            rel_sigma=sigma / abs(x) if x else math.inf,
            constrained=not reason,
            reason=reason,
            max_correlation=corr,
            correlated_with=partner,
        )
    return out


def jacobian(
    problem: Problem,
    params: list[FitParam],
    values: dict[str, float],
    evaluator: Evaluator,
    influences: dict[str, list[int]],
    base: dict[int, dict[str, float]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(residuals at `values`, d residual / d u) by central differences in each parameter's search space
    (u: log for log-scaled parameters), re-running only the points a parameter moves; `base` (every
    point at `values`) saves a full run."""
    all_points = list(range(len(problem.points)))
    if base is None:
        base = evaluator.run(all_points, values)
    r0 = np.array(_residuals(problem, base))
    jac = np.zeros((len(r0), len(params)))
    for j, p in enumerate(params):
        pts = influences.get(p.name) or []
        if not pts:
            continue
        u = p.to_u(values[p.name])
        h = STEP * (p.u_high - p.u_low)
        lo, hi = max(p.u_low, u - h), min(p.u_high, u + h)
        if hi <= lo:
            continue
        up = evaluator.run(pts, {**values, p.name: _raw(p, hi)})
        down = evaluator.run(pts, {**values, p.name: _raw(p, lo)})
        r_up = np.array(_residuals(problem, {**base, **up}))
        r_down = np.array(_residuals(problem, {**base, **down}))
        jac[:, j] = (r_up - r_down) / (hi - lo)
    return r0, jac


def _residuals(problem: Problem, metrics: dict) -> list[float]:
    return [residual(ref, mv) for ref, mv in zip(problem.references, model_values(problem, metrics))]


def _raw(p: FitParam, u: float) -> float:
    """The parameter value at search coordinate `u` (no rounding: the derivative needs the step)."""
    return math.exp(u) if p.log else u
