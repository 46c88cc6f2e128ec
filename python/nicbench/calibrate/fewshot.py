"""Few-shot calibration: a new device's profile from a base profile and a few measurements.

    nicbench calibrate --base connectx5 --measurements mine.csv -o mine.toml
    nicbench calibrate connectx4        # repeats the fit recorded in profiles/connectx4.toml

What it does, in order:

1. **Start** from the base profile (`--base`): every parameter is inherited with provenance
   "inherited from <base>: <its provenance>", except the device's own facts — parameters of the
   output profile, if it exists, whose provenance is neither inherited nor fitted (datasheet
   differences such as ConnectX-6's 32 PCIe lanes), and `--set NAME=VALUE`.
2. **Measurements** (`nicbench.calibrate.measurements`): tidy exports or digitized-figure CSVs, each
   value a point of one of the base study's experiment specs. The *zero-shot* error is the start
   profile's error on them.
3. **Which parameters to free**: the candidates are the study's fit list (`calibration.toml`) minus
   the testbed's (`[fewshot] keep`) and the device facts. A probe finds the points each candidate
   moves, and its one-parameter runs give the Jacobian of the tolerance-scaled residuals at the start
   (forward differences, scaled to each parameter's whole search range): how much. Candidates are taken
   greedily, largest effect first (column-pivoted Gram-Schmidt): one is freed when its effect not
   already explained by the freed ones moves the residuals by at least `MIN_EFFECT` tolerances over
   its range and keeps `MIN_NEW_SHARE` of its effect; at most one free parameter per
   `POINTS_PER_PARAM` independent points. Every candidate gets its reason (freed, moves no measured
   point, too weak, degenerate with a freed one, budget).
4. **Fit** the freed parameters: coordinate descent over their whole ranges finds the basin
   (`fit`, `[fewshot] sweeps/line_evals`), Levenberg-Marquardt steps settle in it (`polish`, `[fewshot]
   polish`); report their standard errors from the last Jacobian (`identify`), write the profile
   with provenance "fitted on <files> (N values)" and the `[fitted_on]` record (base, study,
   measurement files relative to the profile, parameters), which `nicbench calibrate <profile>`
   repeats.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nicbench.calibrate.fit import FitParam, fit, polish, probe_influences
from nicbench.calibrate.identify import ParamCertainty, identifiability, independent_points
from nicbench.calibrate.measurements import load_measurements
from nicbench.calibrate.problem import Evaluator, build_problem, error_summary, model_values, residual
from nicbench.calibrate.profile import ProfileParam, default_bounds, read_params, render_profile
from nicbench.errors import NicbenchError
from nicbench.outputs import atomic_output
from nicbench.vocab.study import Reference, default_studies_dir, load_study

__all__ = ["fewshot", "refit", "FewshotOutcome", "Selection", "INHERITED", "select_free"]

INHERITED = "inherited from "
# A candidate is freed when its own effect (what the freed ones do not already explain) moves the
# residuals by at least this many tolerances (Euclidean norm) over its whole search range ...
MIN_EFFECT = 1.0
# ... and is at least this share of its total effect (else it is degenerate with a freed one).
MIN_NEW_SHARE = 0.2
# Independent measured points per free parameter, at least ("clearly more points than parameters").
POINTS_PER_PARAM = 3


@dataclass
class Selection:
    name: str
    free: bool
    reason: str
    effect: float  # residual norm over the parameter's search range (tolerance units)
    points_moved: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "free": self.free,
            "reason": self.reason,
            "effect": self.effect,
            "points_moved": self.points_moved,
        }


@dataclass
class FewshotOutcome:
    profile: Path
    base: str
    study: str
    measurements: list[str]
    points: int
    selection: list[Selection]
    parameters: dict[str, dict[str, float]]  # freed name -> start, fitted, low, high
    certainty: dict[str, ParamCertainty]
    zero_shot: dict[str, Any]  # error_summary of the start profile on the measurements
    fitted: dict[str, Any]  # error_summary of the written profile on the measurements
    rows: list[dict[str, Any]]
    runs: int
    elapsed_s: float
    written: bool
    errors: dict[str, str] = field(default_factory=dict)
    never_freed: list[str] = field(default_factory=list)  # the testbed's and the device's own values

    def as_dict(self) -> dict[str, Any]:
        return {
            "profile": str(self.profile),
            "base": self.base,
            "study": self.study,
            "measurements": self.measurements,
            "points": self.points,
            "free_parameters": len(self.parameters),
            "selection": [s.as_dict() for s in self.selection],
            "parameters": self.parameters,
            "certainty": {k: v.as_dict() for k, v in self.certainty.items()},
            "summary": {"zero-shot": self.zero_shot, "fitted": self.fitted},
            "references": self.rows,
            "runs": self.runs,
            "elapsed_s": self.elapsed_s,
            "written": self.written,
            "errors": self.errors,
            "never_freed": self.never_freed,
        }


def _device_facts(output: Path, base_params: dict[str, ProfileParam]) -> tuple[dict[str, ProfileParam], dict]:
    """The parameters of an existing output profile that are its own (neither inherited nor fitted on
    measurements), and its top-level keys to keep (name, description)."""
    if not output.is_file():
        return {}, {}
    from nicbench.profiles import load

    doc = load(output)
    fitted_before = set((doc.get("fitted_on") or {}).get("parameters", []))
    own = {}
    for name, p in read_params(output).items():
        if name not in base_params:
            raise NicbenchError(f"{output}: parameter {name} is not one of the base profile's")
        if p.provenance.startswith(INHERITED) or name in fitted_before:
            continue
        own[name] = p
    return own, {"name": doc["name"], "description": doc.get("description", "")}


def _parse_sets(sets: dict[str, float], base_params: dict[str, ProfileParam]) -> dict[str, ProfileParam]:
    out = {}
    for name, value in sets.items():
        if name not in base_params:
            raise NicbenchError(
                f"--set {name}: not a parameter of the base profile (known: {', '.join(sorted(base_params))})"
            )
        b = base_params[name]
        out[name] = ProfileParam(
            name=name,
            value=float(value),
            unit=b.unit,
            fitted=False,
            integer=b.integer,
            provenance=f"set by the user at calibration (--set {name}={value:g})",
            minimum=b.minimum,
            maximum=b.maximum,
        )
    return out


def _fit_param(p: ProfileParam, bounds: dict[str, tuple[float, float]]) -> FitParam:
    low, high, log = default_bounds(p)
    if p.name in bounds:
        low, high = bounds[p.name]
        log = low > 0 and high / low > 20.0
    return FitParam(p.name, min(max(p.value, low), high), low, high, log=log, integer=p.integer)


def select_free(
    params: list[FitParam], jac: np.ndarray, influences: dict[str, list[int]], points: int
) -> list[Selection]:
    """Which candidates the measurements identify (see the module doc, step 3); in candidate order."""
    span = np.array([p.u_high - p.u_low for p in params])
    cols = jac * span  # residual change over each parameter's whole range, linearized
    effect = np.linalg.norm(cols, axis=0)
    budget = max(0, points // POINTS_PER_PARAM)
    chosen: list[int] = []
    basis: list[np.ndarray] = []
    reasons: dict[int, str] = {}
    remaining = [j for j in range(len(params)) if influences.get(params[j].name)]
    for j in range(len(params)):
        if j not in remaining:
            reasons[j] = "moves no measured point"
    while remaining:

        def own(j: int) -> np.ndarray:
            v = cols[:, j].copy()
            for q in basis:
                v -= (q @ v) * q
            return v

        best = max(remaining, key=lambda j: float(np.linalg.norm(own(j))))
        v = own(best)
        new = float(np.linalg.norm(v))
        if len(chosen) >= budget:
            for j in remaining:
                reasons[j] = (
                    f"over the budget of {budget} free parameters ({points} independent points, "
                    f"{POINTS_PER_PARAM} per parameter)"
                )
            break
        if new < MIN_EFFECT:
            for j in remaining:
                nj = float(np.linalg.norm(own(j)))
                if effect[j] < MIN_EFFECT:
                    reasons[j] = f"too weak: moves the measured residuals by {effect[j]:.2g} tolerances over its range"
                else:
                    partner = _closest(cols, j, chosen, params)
                    reasons[j] = f"degenerate with {partner}: only {nj / effect[j]:.0%} of its effect is its own"
            break
        remaining.remove(best)
        if new < MIN_NEW_SHARE * effect[best]:
            reasons[best] = (
                f"degenerate with {_closest(cols, best, chosen, params)}: only "
                f"{new / effect[best]:.0%} of its effect is its own"
            )
            continue
        chosen.append(best)
        basis.append(v / new)
        reasons[best] = (
            f"moves {len(influences[params[best].name])} runs by {effect[best]:.3g} tolerances "
            f"over its range, {new / effect[best]:.0%} of it its own"
        )
    return [
        Selection(p.name, j in chosen, reasons.get(j, ""), float(effect[j]), len(influences.get(p.name, [])))
        for j, p in enumerate(params)
    ]


def _closest(cols: np.ndarray, j: int, chosen: list[int], params: list[FitParam]) -> str:
    if not chosen:
        return "the freed parameters"
    a = cols[:, j]
    cos = [
        abs(float(a @ cols[:, k])) / max(1e-300, float(np.linalg.norm(a) * np.linalg.norm(cols[:, k]))) for k in chosen
    ]
    return params[chosen[int(np.argmax(cos))]].name


def _rows(refs: list[Reference], start: list[float], fitted: list[float]) -> list[dict[str, Any]]:
    out = []
    for r, m0, m1 in zip(refs, start, fitted):
        rel = lambda m: (m - r.value) / abs(r.value) if math.isfinite(m) and r.value else math.nan  # noqa: E731, B023
        out.append(
            {
                "id": r.id,
                "experiment": r.experiment,
                "where": dict(r.where),
                "metric": r.metric,
                "value": r.value,
                "zero_shot": m0,
                "model": m1,
                "zero_shot_rel_error": rel(m0),
                "rel_error": rel(m1),
                "status": "pass" if r.passes(m1) else "fail",
            }
        )
    return out


def _check_start_profile(start_file: Path, sets: dict[str, float], output: Path) -> None:
    """The start profile must load before any run: a `--set` value the model refuses (a negative
    cache size) is named as the option, not as the fit's temporary file, and before minutes of probing."""
    from nicbench.profiles import load

    try:
        load(start_file)
    except NicbenchError as exc:
        message = str(exc).replace(f"profile {start_file}: ", "")
        given = [n for n in sets if f"'{n}'" in message]
        where = f"--set {given[0]}={sets[given[0]]:g}" if given else f"-o {output} (its own parameters)"
        raise NicbenchError(f"{where}: {message}") from None


def fewshot(
    base: str,
    measurements: list[str | Path],
    output: str | Path,
    *,
    sets: dict[str, float] | None = None,
    study: str | None = None,
    studies_dir: str | os.PathLike | None = None,
    jobs: int | None = None,
    write: bool = True,
    name: str | None = None,
    log: Callable[[str], None] = lambda s: None,
    scheduler: Any = None,
) -> FewshotOutcome:
    """Fit a profile for another device from `base` and `measurements`; write it to `output`."""
    from nicbench.calibrate import load_config, profile_study, resolve_profile
    from nicbench.profiles import load

    started = time.monotonic()
    base_path = resolve_profile(base)
    base_doc = load(base_path)
    base_params = read_params(base_path)
    study = study or profile_study(base_path)
    folder = Path(study) if Path(study, "study.toml").is_file() else Path(studies_dir or default_studies_dir()) / study
    st = load_study(folder)
    cfg = load_config(st.dir / "calibration.toml")
    output = Path(output)
    if output.suffix != ".toml":
        raise NicbenchError(f"-o {output}: a profile file name ends in .toml")
    files = [Path(f) for f in measurements]
    if not files:
        raise NicbenchError("--measurements: give at least one file of measurements")
    refs = load_measurements(files, st, log)
    points = independent_points(refs)

    own, keep_top = _device_facts(output, base_params)
    own.update(_parse_sets(sets or {}, base_params))
    start_params = {n: own.get(n, p) for n, p in base_params.items()}
    candidates = [
        n
        for n in (cfg.parameters or [p.name for p in base_params.values() if p.fitted])
        if n in base_params and n not in cfg.fewshot_keep and n not in own
    ]
    fit_params = [_fit_param(start_params[n], cfg.bounds) for n in candidates]
    start_values = {p.name: p.start for p in fit_params}

    with tempfile.TemporaryDirectory(prefix="nicbench-fewshot-") as tmp:
        # The start profile as a file: the runs read it, the fit overrides its free parameters.
        start_file = Path(tmp) / f"{output.stem}.toml"
        header = {
            "name": keep_top.get("name") or name or output.stem,
            "kind": base_doc["kind"],
            "description": keep_top.get("description")
            or f"{base_doc.get('description', '')} (few-shot fit of {output.stem} from {base_doc['name']})".strip(),
        }
        start_file.write_text(
            render_profile(
                header, None, _param_rows(start_params, base_doc["name"], own, {}, ""), base_doc.get("device")
            )
        )
        _check_start_profile(start_file, sets or {}, output)
        problem = build_problem(st, refs, nic=str(start_file), experiment_params=cfg.experiment_params)
        every = list(range(len(problem.points)))
        jobs = max(1, jobs if jobs is not None else (os.cpu_count() or 1))
        log(
            f"{len(refs)} measurements ({points} independent points, {len(problem.points)} runs) on study "
            f"{st.name}; {len(candidates)} candidate parameters"
        )
        with Evaluator(problem, jobs, scheduler) as ev:
            metrics0 = ev.run(every, start_values)
            zero = model_values(problem, metrics0)
            log(f"zero-shot ({base_doc['name']} values): {_brief(error_summary(refs, zero))}")
            probes: dict[str, tuple[float, dict]] = {}
            influences = probe_influences(problem, fit_params, ev, start_values, metrics0, record=probes)
            log(f"probe: {ev.runs} runs so far")
            selection = select_free(
                fit_params, _forward_jacobian(problem, fit_params, start_values, metrics0, probes), influences, points
            )
            free = [p for p, s in zip(fit_params, selection) if s.free]
            for s in selection:
                log(f"{'free' if s.free else 'kept'} {s.name}: {s.reason}")
            if free:
                moved = {p.name: influences[p.name] for p in free}
                coarse = fit(
                    problem,
                    free,
                    ev,
                    sweeps=cfg.fewshot_sweeps,
                    line_evals=cfg.fewshot_line_evals,
                    influences=moved,
                    log=log,
                )
                log(f"coordinate descent: {ev.runs} runs so far")
                result, jac = polish(problem, free, ev, coarse.values, moved, iterations=cfg.fewshot_polish, log=log)
                values = result.values
                log(f"polish: {ev.runs} runs so far")
                r_fit = np.array([residual(r, m) for r, m in zip(problem.references, result.models)])
                certainty = identifiability(problem, free, values, ev, moved, precomputed=(r_fit, jac))
                fitted_models = result.models
            else:
                values, certainty, fitted_models = {}, {}, zero
            runs, errors = ev.runs, dict(ev.errors)

    rel_files = [os.path.relpath(f.resolve(), output.resolve().parent) for f in files]
    label = ", ".join(f.name for f in files)
    fitted_prov = f"fitted on {label} ({len(refs)} values)"
    # The study by name when it is the studies folder's, else by its path relative to the profile.
    known = (Path(studies_dir or default_studies_dir()) / st.name).resolve() == st.dir.resolve()
    study_ref = st.name if known else os.path.relpath(st.dir.resolve(), output.resolve().parent)
    record = {"base": base_doc["name"], "study": study_ref, "measurements": rel_files, "parameters": sorted(values)}
    text = render_profile(
        header,
        record,
        _param_rows(start_params, base_doc["name"], own, values, fitted_prov, {p.name: (p.low, p.high) for p in free}),
        base_doc.get("device"),
    )
    if write:
        output.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(output) as tmp_out:
            tmp_out.write_text(text)
            load(tmp_out)  # never write a file the models cannot read
        log(f"wrote {output}")
    parameters = {p.name: {"start": p.start, "fitted": values[p.name], "low": p.low, "high": p.high} for p in free}
    return FewshotOutcome(
        profile=output,
        base=base_doc["name"],
        study=st.name,
        measurements=[str(f) for f in files],
        points=points,
        selection=selection,
        parameters=parameters,
        certainty=certainty,
        zero_shot=error_summary(refs, zero),
        fitted=error_summary(refs, fitted_models),
        rows=_rows(refs, zero, fitted_models),
        runs=runs,
        elapsed_s=time.monotonic() - started,
        written=write,
        errors=errors,
        never_freed=[n for n in (cfg.parameters or []) if n in cfg.fewshot_keep or n in own],
    )


def _forward_jacobian(
    problem, params: list[FitParam], values: dict[str, float], metrics0: dict, probes: dict[str, tuple[float, dict]]
) -> np.ndarray:
    """d residual / d u from the probe's one-parameter perturbations (forward differences)."""
    r0 = np.array([residual(r, m) for r, m in zip(problem.references, model_values(problem, metrics0))])
    jac = np.zeros((len(r0), len(params)))
    for j, p in enumerate(params):
        if p.name not in probes:
            continue
        x, moved = probes[p.name]
        du = p.to_u(x) - p.to_u(values[p.name])
        if du == 0:
            continue
        r1 = np.array(
            [residual(r, m) for r, m in zip(problem.references, model_values(problem, {**metrics0, **moved}))]
        )
        jac[:, j] = (r1 - r0) / du
    return jac


def _brief(s: dict[str, Any]) -> str:
    return f"{s['passed']}/{s['entries']} within tolerance, median |error| {s['median_abs_rel_error']:.1%}"


def _param_rows(
    params: dict[str, ProfileParam],
    base: str,
    own: dict[str, ProfileParam],
    fitted: dict[str, float],
    fitted_prov: str,
    fit_bounds: dict[str, tuple[float, float]] | None = None,
) -> list[dict[str, Any]]:
    """The `[param.NAME]` tables of the written profile: fitted, the device's own, or inherited. A fitted
    value on a bound of its fit (`fit_bounds`) says so: the measurements would have taken it further."""
    rows = []
    for name, p in params.items():
        if name in fitted:
            hypothesis = _hypothesis(p.provenance)
            prov = f"{fitted_prov}; as in {base}: {hypothesis}" if hypothesis else fitted_prov
            low, high = (fit_bounds or {}).get(name, (None, None))
            for bound, side in ((low, "lower"), (high, "upper")):
                if bound is not None and math.isclose(fitted[name], bound, rel_tol=1e-6, abs_tol=1e-12):
                    prov += f" (at the {side} bound of its fit, {bound:g}: the measurements would take it further)"
            value = float(round(fitted[name])) if p.integer else float(f"{fitted[name]:.6g}")
        elif name in own:
            prov, value = p.provenance, p.value
        else:
            prov = p.provenance if p.provenance.startswith(INHERITED) else f"{INHERITED}{base}: {p.provenance}"
            value = p.value
        row = {"name": name, "value": value, "unit": p.unit, "provenance": prov, "integer": p.integer}
        if p.minimum is not None and p.maximum is not None:
            row["bounds"] = (p.minimum, p.maximum)
        rows.append(row)
    return rows


def _hypothesis(provenance: str) -> str:
    """What a provenance says besides where the value came from (the mechanism, the figures)."""
    text = provenance
    if text.startswith(INHERITED):
        text = text.split(": ", 1)[1] if ": " in text else ""
    parts = [s.strip() for s in text.split(";")]
    return "; ".join(s for s in parts if s and not s.lower().startswith("fitted"))


def refit(
    nic: str,
    *,
    jobs: int | None = None,
    write: bool = True,
    studies_dir: str | os.PathLike | None = None,
    log: Callable[[str], None] = lambda s: None,
    scheduler: Any = None,
) -> FewshotOutcome:
    """Repeat the few-shot fit recorded in profile `nic`'s `[fitted_on]` (measurement paths are
    relative to the profile's folder), writing the profile in place."""
    from nicbench.calibrate import resolve_profile
    from nicbench.profiles import load

    path = resolve_profile(nic)
    record = load(path).get("fitted_on")
    if not record:
        raise NicbenchError(f"profile {path} has no [fitted_on] record: it is not a few-shot fit")
    files = [(path.parent / f) for f in record["measurements"]]
    missing = [f for f in files if not f.exists()]
    if missing:  # e.g. the profile was copied to another folder without its measurements
        raise NicbenchError(
            f"{path}: its [fitted_on] measurements name {os.path.normpath(missing[0].absolute())} "
            "(paths are relative to the profile's folder), which does not exist; put the measurements "
            "there, or fit again with --base ... --measurements FILE -o PROFILE"
        )
    study = record["study"]
    if (path.parent / study / "study.toml").is_file():
        study = str(path.parent / study)
    return fewshot(
        record["base"],
        files,
        path,
        study=study,
        studies_dir=studies_dir,
        jobs=jobs,
        write=write,
        log=log,
        scheduler=scheduler,
    )
