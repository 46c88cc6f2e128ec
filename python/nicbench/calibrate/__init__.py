"""`nicbench calibrate NIC`: fit a virtual NIC's opaque parameters to a study's calibration set.

    outcome = calibrate("connectx5")           # studies/pam21, profiles/connectx5.toml
    outcome.values                               # fitted parameter values
    outcome.summary["calibration"], outcome.summary["validation (independent)"]

What is fitted: the profile's parameters marked fitted (`fitted = true` or a provenance
starting with "fitted"), optionally restricted by the study's `calibration.toml`. Against
what: the study's reference entries with `set = "calibration"`; the `validation` entries are
never used by the fit, only reported afterwards. How: `nicbench.calibrate.fit` (bounded,
deterministic coordinate descent with golden-section searches; runs seeded).

`calibration.toml` (in the study folder, all keys optional):

    [calibration]
    set = "calibration"            # which reference set to fit
    parameters = ["a", "b"]        # fit only these (default: every fitted parameter)
    sweeps = 2                     # coordinate-descent sweeps
    line_evals = 8                 # runs per line search
    [bounds]
    root_collision_pool_entries = [0.0, 65536.0]
    [experiment_params."pam21-fig3"]   # faster variants of a spec's points, for the fit only
    start = "0.3s"
    duration = "3.3s"
    [fewshot]
    keep = ["nf_packet_ns"]        # never freed by a few-shot fit of another device (the testbed's)
    sweeps = 1                     # the few-shot fit's coordinate descent (it must stay quick) ...
    line_evals = 5
    polish = 4                     # ... then Levenberg-Marquardt iterations

Writing back keeps every other byte of the profile (see `profile.write_fitted`).

Few-shot profiles of devices a study did not measure (`nicbench calibrate --base connectx5
--measurements FILE... -o mine.toml`) are `nicbench.calibrate.fewshot`; a profile with a
`[fitted_on]` record is refit by `fewshot.refit`, not here.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.calibrate.fit import FitParam, FitResult, fit
from nicbench.calibrate.identify import ParamCertainty, about_device, identifiability, independent_points
from nicbench.calibrate.problem import Evaluator, build_problem, calibrated_device, error_summary, model_values
from nicbench.calibrate.profile import ProfileParam, default_bounds, read_params, write_fitted
from nicbench.errors import NicbenchError
from nicbench.inputs import read_toml
from nicbench.vocab.study import SUMMARY_GROUPS, Reference, default_studies_dir, load_study, summary_group

__all__ = ["calibrate", "CalibrationConfig", "CalibrationOutcome", "load_config", "resolve_profile", "profile_study"]

CONFIG_FILE = "calibration.toml"


@dataclass
class CalibrationConfig:
    set: str = "calibration"
    parameters: list[str] | None = None
    sweeps: int = 2
    line_evals: int = 8
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    experiment_params: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Parameters a few-shot fit of another device never frees: the testbed's and host's, not the NIC's.
    fewshot_keep: list[str] = field(default_factory=list)
    fewshot_sweeps: int = 1
    fewshot_line_evals: int = 5
    fewshot_polish: int = 4


def load_config(path: Path) -> CalibrationConfig:
    if not path.is_file():
        return CalibrationConfig()
    doc = read_toml(path, NicbenchError, "calibration file")
    table = doc.get("calibration", {})
    cfg = CalibrationConfig()
    cfg.set = str(table.get("set", cfg.set))
    params = table.get("parameters")
    if params is not None and (not isinstance(params, list) or not all(isinstance(p, str) for p in params)):
        raise NicbenchError(f"{path}: calibration.parameters: expected a list of parameter names")
    cfg.parameters = params
    for key in ("sweeps", "line_evals"):
        v = table.get(key, getattr(cfg, key))
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise NicbenchError(f"{path}: calibration.{key}: expected a whole number ≥ 1, found {v!r}")
        setattr(cfg, key, v)
    for name, b in doc.get("bounds", {}).items():
        if not (isinstance(b, list) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b) and b[0] < b[1]):
            raise NicbenchError(f"{path}: bounds.{name}: expected [low, high] with low < high")
        cfg.bounds[name] = (float(b[0]), float(b[1]))
    ep = doc.get("experiment_params", {})
    if not isinstance(ep, dict) or not all(isinstance(v, dict) for v in ep.values()):
        raise NicbenchError(f'{path}: experiment_params: expected tables [experiment_params."NAME"]')
    cfg.experiment_params = ep
    keep = doc.get("fewshot", {}).get("keep", [])
    if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
        raise NicbenchError(f"{path}: fewshot.keep: expected a list of parameter names")
    cfg.fewshot_keep = keep
    for key in ("sweeps", "line_evals", "polish"):
        v = doc.get("fewshot", {}).get(key, getattr(cfg, f"fewshot_{key}"))
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise NicbenchError(f"{path}: fewshot.{key}: expected a whole number ≥ 1, found {v!r}")
        setattr(cfg, f"fewshot_{key}", v)
    return cfg


def resolve_profile(nic: str) -> Path:
    """A profile path: `nic` itself if it is a file, else `<profiles>/<nic>.toml` (see nicbench.profiles)."""
    from nicbench.profiles import resolve

    return resolve(nic)


@dataclass
class CalibrationOutcome:
    profile: Path
    study: str
    parameters: dict[str, dict[str, float]]  # name -> {start, fitted, low, high}
    rows: list[dict[str, Any]]  # one per reference evaluated: id, set, ..., model, rel_error, status
    summary: dict[str, dict[str, Any]]  # SUMMARY_GROUPS entry -> error_summary
    runs: int
    elapsed_s: float
    written: bool
    errors: dict[str, str]
    fit: FitResult | None = None
    points: int = 0  # independent calibration points (distinct scenario × metric)
    certainty: dict[str, ParamCertainty] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": str(self.profile),
            "study": self.study,
            "parameters": self.parameters,
            "points": self.points,
            "free_parameters": len(self.parameters),
            "certainty": {k: v.as_dict() for k, v in self.certainty.items()},
            "summary": self.summary,
            "runs": self.runs,
            "elapsed_s": self.elapsed_s,
            "written": self.written,
            "errors": self.errors,
            "references": self.rows,
        }


def _study_parameters(study: str) -> set[str]:
    """Parameters declared by the profiles calibrated on `study` (its calibration_study)."""
    from nicbench import profiles

    out: set[str] = set()
    for name in profiles.names():
        try:
            doc = profiles.load(name)
        except Exception:  # noqa: BLE001 - a broken profile is reported where it is used
            continue
        if doc.get("calibration_study") == study:
            out.update(doc["param"])
    return out


def _fit_params(
    params: dict[str, ProfileParam], cfg: CalibrationConfig, only: list[str] | None, study: str | None = None
) -> list[FitParam]:
    chosen = [p for p in params.values() if p.fitted]
    names = only or cfg.parameters
    if names:
        unknown = sorted(set(names) - set(params))
        if unknown and not only and study is not None:
            # A study that calibrates several devices lists each one's parameters (one profile each):
            # this profile fits its own; a name no profile of the study declares is still an error.
            stray = sorted(set(unknown) - _study_parameters(study))
            if stray:
                raise NicbenchError(
                    f"calibration.toml names parameter(s) no profile of {study} declares: {', '.join(stray)}"
                )
            names = [n for n in names if n in params]
            unknown = [] if names else unknown
        if unknown:
            raise NicbenchError(f"no such profile parameter(s): {', '.join(unknown)}")
        chosen = [params[n] for n in names]
    if not chosen:
        raise NicbenchError('the profile marks no parameter as fitted (fitted = true or provenance "fitted: ...")')
    out = []
    for p in chosen:
        low, high, log = default_bounds(p)
        if p.name in cfg.bounds:
            low, high = cfg.bounds[p.name]
            log = low > 0 and high / low > 20.0
        start = min(max(p.value, low), high)
        out.append(FitParam(p.name, start, low, high, log=log, integer=p.integer))
    return out


def _rows(refs: list[Reference], models: list[float]) -> list[dict[str, Any]]:
    rows = []
    for r, m in zip(refs, models):
        rel = (m - r.value) / abs(r.value) if math.isfinite(m) and r.value != 0 else math.nan
        rows.append(
            {
                "id": r.id,
                "set": r.set,
                "experiment": r.experiment,
                "metric": r.metric,
                "unit": r.unit,
                "where": dict(r.where),
                "value": r.value,
                "model": m,
                "rel_error": rel,
                "status": "pass" if r.passes(m) else ("no result" if not math.isfinite(m) else "fail"),
            }
        )
    return rows


DEFAULT_STUDY = "pam21"


def profile_study(profile_path: Path) -> str:
    """The study a profile is calibrated on: its top-level `calibration_study`, else pam21."""
    from nicbench.profiles import load

    return load(profile_path).get("calibration_study") or DEFAULT_STUDY


def calibrate(
    nic: str,
    *,
    study: str | None = None,
    studies_dir: str | os.PathLike | None = None,
    write: bool = True,
    validate: bool = True,
    jobs: int | None = None,
    parameters: list[str] | None = None,
    sweeps: int | None = None,
    line_evals: int | None = None,
    allow_saturated: bool = False,
    log: Callable[[str], None] = lambda s: None,
    scheduler: Any = None,
) -> CalibrationOutcome:
    """Fit `nic`'s fitted parameters to `study`'s calibration set; write them back unless `write=False`.

    Refuses (NicbenchError) a fit with no more independent calibration points than free parameters
    unless `allow_saturated`: such a fit matches any data and shows nothing. With `scheduler` (a
    connected `nicbench.experiments.scheduler.DaskScheduler`) the model runs are Dask tasks."""
    started = time.monotonic()
    profile_path = resolve_profile(nic)
    from nicbench.profiles import load

    if load(profile_path).get("fitted_on"):
        raise NicbenchError(
            f"{profile_path} is a few-shot fit ([fitted_on]): repeat it with "
            "nicbench.calibrate.fewshot.refit (the CLI does)"
        )
    if study is None:
        study = profile_study(profile_path)
    folder = Path(study) if Path(study, "study.toml").is_file() else Path(studies_dir or default_studies_dir()) / study
    st = load_study(folder)
    cfg = load_config(st.dir / CONFIG_FILE)
    if sweeps is not None:
        cfg.sweeps = sweeps
    if line_evals is not None:
        cfg.line_evals = line_evals
    cal_refs = [r for r in st.references if r.set == cfg.set]
    if not cal_refs:
        raise NicbenchError(f"study {st.name} has no reference entries with set = {cfg.set!r}")
    params = read_params(profile_path)
    fit_params = _fit_params(params, cfg, parameters, st.name)
    # Per device: another device's points run with their own profile and pin nothing of this one.
    device = calibrated_device([r.where["nic"] for r in cal_refs if "nic" in r.where], str(profile_path))
    points = independent_points(cal_refs, device)
    saturated = points <= len(fit_params)
    if saturated and not allow_saturated:
        raise NicbenchError(
            f"{len(fit_params)} free parameters on {points} independent calibration points of "
            f"{st.name} about {device}: a saturated fit shows nothing (fit fewer parameters, add "
            "calibration points, or pass --allow-saturated: then the values are solved, not fitted)"
        )
    problem = build_problem(st, cal_refs, nic=str(profile_path), experiment_params=cfg.experiment_params)
    jobs = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
    log(
        f"calibrating {len(fit_params)} parameters of {profile_path} on {len(cal_refs)} references "
        f"({len(problem.points)} runs per full evaluation, "
        + (f"Dask {scheduler.address})" if scheduler is not None else f"{jobs} jobs)")
    )
    with Evaluator(problem, jobs, scheduler) as ev:
        result = fit(problem, fit_params, ev, sweeps=cfg.sweeps, line_evals=cfg.line_evals, log=log)
        log("standard errors at the fitted values (Jacobian by central differences)")
        certainty = identifiability(problem, fit_params, result.values, ev, result.influences)
        runs = ev.runs
        errors = dict(ev.errors)
    written = False
    if write:
        if saturated:  # as many points as parameters: the values are solved from those points
            own = [r.id for r in about_device(cal_refs, device)]
            head = (
                f"derived from reference{'s' if len(own) > 1 else ''} {', '.join(own)}: solved on {points} "
                f"calibration point{'s' if points > 1 else ''} of {st.name}, as many as free parameters (not a fit)"
            )
        else:
            head = f"fitted: {st.name} calibration set ({len(cal_refs)} values)"
        write_fitted(profile_path, result.values, head)
        written = True
        log(f"wrote {len(result.values)} fitted values to {profile_path}")
    summary = {}
    if validate:
        # Both sets on the study's own points (no faster variants), with the fitted values.
        refs = list(st.references)
        full = build_problem(st, refs, nic=str(profile_path))
        log(f"evaluating {len(refs)} references ({len(full.points)} runs) with the fitted values")
        with Evaluator(full, jobs, scheduler) as ev:
            metrics = ev.run(list(range(len(full.points))), result.values)
            runs += ev.runs
            errors.update(ev.errors)
        models = model_values(full, metrics)
        rows = _rows(refs, models)
        for group in SUMMARY_GROUPS:
            pairs = [(r, m) for r, m in zip(refs, models) if summary_group(r) == group]
            if pairs:
                summary[group] = error_summary([r for r, _ in pairs], [m for _, m in pairs])
    else:
        rows = _rows(cal_refs, result.models)
        summary["calibration"] = error_summary(cal_refs, result.models)
    parameters = {
        p.name: {"start": p.start, "fitted": result.values[p.name], "low": p.low, "high": p.high} for p in fit_params
    }
    return CalibrationOutcome(
        profile=profile_path,
        study=st.name,
        parameters=parameters,
        rows=rows,
        summary=summary,
        runs=runs,
        elapsed_s=time.monotonic() - started,
        written=written,
        errors=errors,
        fit=result,
        points=points,
        certainty=certainty,
    )
