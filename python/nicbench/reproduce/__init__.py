"""`nicbench reproduce`: run every experiment of one or more studies, then build their reports.

For each study folder (`studies/<study>/study.toml`): run each listed spec (resumable, as
`nicbench run`), write one page per experiment under `reports/<study>/<experiment>/` and
the study index `reports/<study>/index.html` with the published-vs-nicbench comparison.

The top of the harness below the CLI: it runs specs (`nicbench.experiments`) and the study's
prediction devices (`predictions`, which reads few-shot measurements with `nicbench.calibrate`),
and draws the pages (`nicbench.report`); nothing under it imports it.
"""

from __future__ import annotations

import concurrent.futures as cf
import difflib
import math
import multiprocessing
import os
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.experiments import feature_matrix
from nicbench.experiments.runner import Progress, RunSummary, run_experiment
from nicbench.experiments.spec import load_spec
from nicbench.experiments.store import results_root
from nicbench.interrupts import ignore_sigint_in_worker, sigint_held
from nicbench.reproduce.sets import sets_for
from nicbench.vocab.study import SUMMARY_GROUPS, Study, default_studies_dir, find_studies, group_of, load_study

__all__ = ["reproduce_study", "StudyOutcome", "resolve_studies"]


@dataclass
class StudyOutcome:
    study: str
    index: Path
    runs: list[RunSummary] = field(default_factory=list)
    pages: list[Any] = field(default_factory=list)
    predictions: list[Any] = field(default_factory=list)  # DevicePredictions per predicted device
    feature_matrix: Any = None  # feature_matrix.MatrixOutcome when the study has a feature_matrix.toml

    def all_runs(self) -> list[RunSummary]:
        return self.runs + [r for d in self.predictions for r in d.runs]

    def as_dict(self) -> dict[str, Any]:
        comparisons = [c for p in self.pages for c in p.as_dict()["comparisons"]]
        return {
            "study": self.study,
            "report": str(self.index),
            "experiments": [r.as_dict() for r in self.runs],
            "pages": [p.as_dict() for p in self.pages],
            "references": len(comparisons),
            "passed": sum(c["status"] == "pass" for c in comparisons),
            "summary": group_summary(comparisons),
            "predictions": [d.as_dict() for d in self.predictions],
            "feature_matrix": self.feature_matrix.as_dict() if self.feature_matrix is not None else None,
        }


def group_summary(comparisons: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per summary group (calibration, independent validation, validation restating calibration,
    validation repeating an observation or an input):
    entries, passed and the median |relative error| of comparison dicts."""
    out: dict[str, dict[str, Any]] = {}
    for group in SUMMARY_GROUPS:
        rows = [c for c in comparisons if _group(c) == group]
        if not rows:
            continue
        errors = [abs(c["relative_error"]) for c in rows if math.isfinite(c["relative_error"])]
        out[group] = {
            "entries": len(rows),
            "passed": sum(c["status"] == "pass" for c in rows),
            "median_abs_rel_error": statistics.median(errors) if errors else math.nan,
        }
    return out


def _group(c: dict[str, Any]) -> str:
    return group_of(c["set"], c.get("restates"), c.get("repeats"), c.get("echo"))


def resolve_studies(names: list[str], all_: bool, studies_dir: str | os.PathLike | None = None) -> list[Study]:
    """Study folders by name or path (`foundation`, `studies/foundation`), or all of them."""
    if studies_dir is None:
        studies_dir = default_studies_dir()
    if all_ and names:  # which one was meant? --all would silently run minutes of other studies
        raise ValueError(f"--all runs every study: give either --all or study names ({', '.join(names)}), not both")
    if all_:
        folders = find_studies(studies_dir)
        if not folders:
            raise FileNotFoundError(2, "no studies found (folders with a study.toml)", str(studies_dir))
    else:
        if not names:
            raise ValueError("name a study (e.g. `nicbench reproduce foundation`) or pass --all")
        folders = [Path(n) if Path(n, "study.toml").is_file() else Path(studies_dir) / n for n in names]
        for name, folder in zip(names, folders):
            if not (folder / "study.toml").is_file():
                known = sorted(f.name for f in find_studies(studies_dir))
                close = difflib.get_close_matches(name.lower(), known, n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                raise FileNotFoundError(
                    2, f"no such study ({hint}studies in {studies_dir}: {', '.join(known) or 'none'})", name
                )
    return [load_study(f) for f in folders]


def reproduce_study(
    study: Study,
    *,
    results: str | os.PathLike | None = None,
    reports: str | os.PathLike = "reports",
    jobs: int | None = None,
    repeat: int | None = None,
    limit_points: int | None = None,
    sets: dict[str, str] | None = None,
    progress: Progress | None = None,
    predictions: bool = True,
    scheduler: Any = None,
    timeout_s: float | None = None,
    reuse_stale: bool = False,
) -> StudyOutcome:
    """Run `study`'s experiments and report them; then (unless `predictions` is False or `sets`
    chooses the device) its prediction devices (`nicbench.reproduce.predictions`).
    `scheduler` (a Dask scheduler, `scheduler.open_scheduler`), `timeout_s`: as `run_experiment`'s."""
    from nicbench.report import study_report  # matplotlib only when reporting
    from nicbench.reproduce.predictions import run_predictions

    specs = [load_spec(p, repeat=repeat, limit_points=limit_points, sets=sets_for(p, sets)) for p in study.experiments]
    out_dir = Path(reports) / study.name
    outcome = StudyOutcome(study.name, out_dir / "index.html")
    for spec in specs:
        # A narrowed run stores part of the sweep; more repetitions than the spec's still store all of it.
        quick = limit_points is not None or bool(sets) or spec.fewer_repetitions
        outcome.runs.append(
            run_experiment(
                spec,
                results=results,
                jobs=jobs,
                progress=progress,
                scheduler=scheduler,
                timeout_s=timeout_s,
                prune_stale=not quick,
                extra_meta={"study": str(study.dir)},
                reuse_stale=reuse_stale,
                whole_sweep=not quick,
            )
        )
    root = results_root(results)
    pages = [(root / spec.name, out_dir / spec.name / "index.html") for spec in specs]
    outcome.pages.extend(_write_pages(pages, study, None, jobs))
    if predictions and study.predictions and "nic" not in (sets or {}):
        outcome.predictions = run_predictions(
            study,
            results=results,
            reports=reports,
            jobs=jobs,
            repeat=repeat,
            limit_points=limit_points,
            sets=sets,
            progress=progress,
            pages_fn=lambda pairs, view, device: _write_pages(pairs, view, device, jobs),
            scheduler=scheduler,
            timeout_s=timeout_s,
            reuse_stale=reuse_stale,
        )
    matrix = study.dir / feature_matrix.FILE
    if matrix.is_file():
        outcome.feature_matrix = feature_matrix.run_matrix(matrix)
    study_report(
        study, outcome.pages, outcome.index, predictions=outcome.predictions, feature_matrix=outcome.feature_matrix
    )
    return outcome


def _write_pages(pages: list[tuple[Path, Path]], study: Study, prediction: str | None, jobs: int | None) -> list[Any]:
    """The experiment pages of (results folder, page path) pairs."""
    from nicbench.report import experiment_report

    if not pages:
        return []
    workers = min(len(pages), max(1, jobs if jobs is not None else (os.cpu_count() or 1)))
    if workers > 1:
        # Figures are drawn on the CPU (matplotlib): one experiment page per worker process,
        # as the runs were (fork: the parent has already imported the report modules).
        with cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork"), initializer=ignore_sigint_in_worker
        ) as pool:
            with sigint_held():  # the first submit forks the workers
                pages_drawn = pool.map(experiment_report, *zip(*pages), [study] * len(pages), [prediction] * len(pages))
            return list(pages_drawn)
    return [experiment_report(exp_dir, out_html, study=study, prediction=prediction) for exp_dir, out_html in pages]
