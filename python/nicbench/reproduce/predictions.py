"""Predictions: a study's specs run with the profiles of devices the study did not measure.

`nicbench reproduce STUDY` runs, after the study's own experiments, every spec that has a `nic`
parameter once more per device of the study's `[predictions] devices`, with that device's profile
(results under `<results>/predictions/<device>/`, pages under `<reports>/<study>/predictions/<device>/`),
and reports them marked as predictions. What each device page compares with:

- the device's own measurements, if its profile is a few-shot fit (`[fitted_on]`): they are its
  calibration, drawn on the figures they belong to;
- the study's qualitative claims (`claims.toml`) that the source makes for that device.

The published values of the study's device are never compared with another device's predictions.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.experiments.runner import Progress, RunSummary, run_experiment
from nicbench.experiments.spec import load_spec
from nicbench.experiments.store import results_root
from nicbench.reproduce.sets import sets_for, target_params
from nicbench.vocab.study import Claim, Reference, Study

__all__ = ["DevicePredictions", "run_predictions", "claim_reference", "device_references"]


@dataclass
class DevicePredictions:
    device: str
    description: str
    fitted_on: dict[str, Any] | None
    runs: list[RunSummary] = field(default_factory=list)
    pages: list[Any] = field(default_factory=list)  # report ExperimentPage per spec

    def comparisons(self) -> list[Any]:
        return [c for p in self.pages for c in p.comparisons]

    def as_dict(self) -> dict[str, Any]:
        comps = self.comparisons()
        claims = [c for c in comps if c.reference.id.startswith(CLAIM_PREFIX)]
        measured = [c for c in comps if not c.reference.id.startswith(CLAIM_PREFIX)]
        errors = sorted(abs(c.relative_error) for c in measured if math.isfinite(c.relative_error))
        return {
            "device": self.device,
            "description": self.description,
            "fitted_on": self.fitted_on,
            "experiments": [r.as_dict() for r in self.runs],
            "pages": [str(p.path) for p in self.pages],
            "measurements": {
                "entries": len(measured),
                "passed": sum(c.status == "pass" for c in measured),
                "median_abs_rel_error": errors[len(errors) // 2] if errors else math.nan,
            },
            "claims": {
                c.reference.id[len(CLAIM_PREFIX) :]: {"status": c.status, "model": c.model_value} for c in claims
            },
            "comparisons": [{"id": c.reference.id, "status": c.status, "model": c.model_value} for c in measured],
        }


CLAIM_PREFIX = "claim:"


def claim_reference(claim: Claim, device: str) -> Reference:
    """The claim as a reference entry about `device`'s run of the same scenario."""
    r = claim.reference
    where = {**r.where, "nic": device} if "nic" in r.where else dict(r.where)
    return dataclasses.replace(
        r, id=f"{CLAIM_PREFIX}{r.id}", where=where, set="validation", restates=None, repeats=None
    )


def device_references(study: Study, device: str, profile: dict[str, Any]) -> list[Reference]:
    """What a device's prediction pages compare with: its few-shot measurements (calibration of that
    device) and the claims the source makes about it."""
    refs: list[Reference] = []
    record = profile.get("fitted_on")
    if record and record.get("study") == study.name and profile.get("path"):
        from nicbench.calibrate.measurements import load_measurements

        folder = Path(profile["path"]).parent
        # Files that are not here (a checkout without ../shared) leave the device with claims only.
        files = [folder / f for f in record["measurements"] if (folder / f).is_file()]
        for r in load_measurements(files, study) if files else []:
            refs.append(dataclasses.replace(r, where={**r.where, "nic": device}) if "nic" in r.where else r)
    refs += [claim_reference(c, device) for c in study.claims if c.applies_to(device)]
    return refs


def _has_nic(spec_path: Path) -> bool:
    return "nic" in target_params(spec_path)


def run_predictions(
    study: Study,
    *,
    results: str | Path | None,
    reports: str | Path,
    jobs: int | None,
    repeat: int | None,
    limit_points: int | None,
    sets: dict[str, str] | None,
    progress: Progress | None,
    pages_fn,
    scheduler: Any = None,
    timeout_s: float | None = None,
    reuse_stale: bool = False,
) -> list[DevicePredictions]:
    """Run and report every prediction device of `study` (see the module doc). `pages_fn(pairs,
    study)` writes the experiment pages of (results folder, page path) pairs and returns them.
    `scheduler`, `timeout_s`: as `run_experiment`'s."""
    from nicbench import profiles

    out = []
    root = results_root(results) / "predictions"
    specs_paths = [p for p in study.experiments if _has_nic(p)]
    for device in study.predictions:
        profile = profiles.load(device)
        profile.setdefault("path", str(profiles.resolve(device)))
        dp = DevicePredictions(device, profile.get("description", ""), profile.get("fitted_on"))
        device_sets = {**(sets or {}), "nic": device}
        specs = [
            load_spec(
                p, repeat=repeat or study.prediction_repeat, limit_points=limit_points, sets=sets_for(p, device_sets)
            )
            for p in specs_paths
        ]
        for spec in specs:
            dp.runs.append(
                run_experiment(
                    spec,
                    results=root / device,
                    jobs=jobs,
                    progress=progress,
                    scheduler=scheduler,
                    timeout_s=timeout_s,
                    prune_stale=False,
                    extra_meta={"study": str(study.dir), "prediction": device},
                    reuse_stale=reuse_stale,
                )
            )
        view = dataclasses.replace(study, references=device_references(study, device, profile))
        out_dir = Path(reports) / study.name / "predictions" / device
        pairs = [(root / device / spec.name, out_dir / spec.name / "index.html") for spec in specs]
        dp.pages = pages_fn(pairs, view, device)
        out.append(dp)
    return out
