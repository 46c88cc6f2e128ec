"""Studies: one folder per published study, its experiments and its reference values.

    studies/<study>/study.toml
        [study]
        name = "foundation"
        title = "..."
        description = "..."
        experiments = ["experiments/<spec>.toml"]       # relative to the study folder

    studies/<study>/reference.toml                       # published values (may be empty)
        [[reference]]
        id = "pam21-fig3-64B"
        quote = "ConnectX-5 forwards 64 B frames at 77 Mpps"
        location = "seeds/pam21.pdf, Figure 3, p. 6"
        experiment = "pam21-forwarding"
        where = { size = 64 }          # point parameters (parsed with the target's schema)
        metric = "mpps"
        statistic = "median"           # mean | median | p1 | p25 | p50 | p75 | p99 | min | max
        value = 77.0
        unit = "Mpps"
        tolerance = { relative = 0.1 } # or { absolute = 5.0 } (in `unit`)
        set = "validation"             # or "calibration"

    studies/<study>/study.toml  (optional)
        [predictions]
        devices = ["connectx4"]        # profiles the study's specs are also run with (`reproduce`)
        repeat = 1                     # repetitions of those runs
        claims = "claims.toml"         # qualitative claims checked on every device (below)

    studies/<study>/claims.toml
        [[claim]]                      # the keys of a [[reference]], plus:
        devices = ["connectx5", "connectx6"]   # where the source makes the claim (default: all)

Published numbers live only here; they are compared with results, never used to produce them.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench import data_files
from nicbench.vocab.errors import SpecError

__all__ = [
    "Study",
    "Reference",
    "Claim",
    "load_study",
    "find_studies",
    "default_studies_dir",
    "STUDY_FILE",
    "REFERENCE_FILE",
]

STUDY_FILE = "study.toml"
REFERENCE_FILE = "reference.toml"
REFERENCE_SETS = ("calibration", "validation")
REFERENCE_STATS = ("mean", "median", "min", "max", "p1", "p25", "p50", "p75", "p99")
_REF_KEYS = (
    "id",
    "quote",
    "location",
    "experiment",
    "where",
    "metric",
    "statistic",
    "value",
    "unit",
    "tolerance",
    "set",
    "search",
    "derived_from",
    "low",
    "high",
    "echo",
)

# Metrics that are an experiment's inputs, not outcomes: an entry on one echoes the input.
INPUT_METRICS = frozenset({"offered_gbps", "offered_mpps"})
TOLERANCE_KINDS = ("relative", "absolute", "factor")


@dataclass(frozen=True)
class Reference:
    id: str
    quote: str
    location: str
    experiment: str
    where: dict[str, Any]
    metric: str
    statistic: str
    value: float
    unit: str
    tolerance_kind: str  # "relative" | "absolute" | "factor"
    tolerance: float
    set: str
    # The published spread around `value` where the source shows one (whiskers, error bars).
    low: float | None = None
    high: float | None = None
    # Ids of the references whose scenarios this value is a function of (e.g. a ratio of two
    # published points); empty: the value is a measurement of its own scenario.
    derived_from: tuple[str, ...] = ()
    # The calibration entry this validation entry restates (same scenario, or derived only from
    # calibration scenarios); set by the study loader, None when the entry is independent.
    restates: str | None = None
    # Why the entry's value is an input of the model rather than an outcome (the offered load; a
    # parameter set from the same sentence): `echo = "..."` in the file, or the loader for an
    # input metric. None for an outcome.
    echo: str | None = None
    # The validation entries counted instead of this one (one published observation counts once): the
    # digitized point a text claim on the same observation restates, or the counted points a ratio is
    # made of; set by the study loader.
    repeats: str | None = None

    def passes(self, model_value: float) -> bool:
        if not math.isfinite(model_value):
            return False
        if self.tolerance_kind == "factor":
            # Values that span decades: within a factor of the published value (same sign).
            if self.value == 0 or model_value * self.value <= 0:
                return False
            ratio = model_value / self.value
            return 1.0 / self.tolerance <= ratio <= self.tolerance
        err = abs(model_value - self.value)
        limit = self.tolerance * abs(self.value) if self.tolerance_kind == "relative" else self.tolerance
        return err <= limit

    @property
    def independent(self) -> bool:
        """A validation entry that neither is a calibration scenario nor a function of calibration
        values only: the only kind of entry that tests a prediction."""
        return self.set == "validation" and self.restates is None and self.repeats is None and self.echo is None

    def scenario(self) -> tuple[str, tuple]:
        """Which run the entry is about: the experiment and its point (device included)."""
        return self.experiment, tuple(sorted((k, repr(v)) for k, v in self.where.items()))

    def observation(self) -> tuple:
        """What was observed: the run, the metric and the statistic (two entries with the same one
        are one published observation)."""
        return self.scenario(), self.metric, self.statistic

    @property
    def digitized(self) -> bool:
        """A point digitized from a published plot (its location is a data file), not a sentence."""
        return self.location.startswith("shared/data/")


# How summaries group references: calibration, validation that tests a prediction, validation that
# restates calibration, and validation that repeats an observation counted elsewhere or echoes an
# input (the last two reported apart, never mixed into the prediction figures).
SUMMARY_GROUPS = (
    "calibration",
    "validation (independent)",
    "validation (restates calibration)",
    "validation (repeats an observation or an input)",
)


def group_of(set_: str, restates: str | None, repeats: str | None, echo: str | None) -> str:
    """The summary group of an entry from its set and the loader's marks (also for comparison dicts)."""
    if set_ == "calibration":
        return SUMMARY_GROUPS[0]
    if restates is not None:
        return SUMMARY_GROUPS[2]
    if repeats is not None or echo is not None:
        return SUMMARY_GROUPS[3]
    return SUMMARY_GROUPS[1]


def summary_group(r: Reference) -> str:
    return group_of(r.set, r.restates, r.repeats, r.echo)


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of the source, as a reference entry (its value and tolerance say
    what "holds" means), checked on each device in `devices` (empty: every device)."""

    reference: Reference
    devices: tuple[str, ...] = ()

    def applies_to(self, device: str) -> bool:
        return not self.devices or device in self.devices


@dataclass
class Study:
    dir: Path
    name: str
    title: str
    description: str
    experiments: list[Path]
    references: list[Reference] = field(default_factory=list)
    # Other devices whose predictions `reproduce` runs and reports (see the module doc).
    predictions: list[str] = field(default_factory=list)
    prediction_repeat: int | None = None
    claims: list[Claim] = field(default_factory=list)


def default_studies_dir() -> Path:
    """Where studies live: $NICBENCH_STUDIES, else ./studies, else the studies this installation
    carries (`nicbench.data_files.studies()`: the wheel's copies, or the checkout's studies/), so
    `nicbench reproduce` works from any directory."""
    env = os.environ.get("NICBENCH_STUDIES")
    if env:
        return Path(env)
    local = Path("studies")
    if local.is_dir():
        return local
    return data_files.studies()


def find_studies(root: str | Path | None = None) -> list[Path]:
    base = Path(root) if root is not None else default_studies_dir()
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if (p / STUDY_FILE).is_file())


def load_study(path: str | Path) -> Study:
    """Read `studies/<study>/` (or its study.toml); SpecError on mistakes."""
    folder = Path(path)
    if folder.is_file():
        folder = folder.parent
    file = folder / STUDY_FILE
    if not file.is_file():
        raise FileNotFoundError(2, "not a study folder (no study.toml)", str(folder))
    doc = _toml(file)
    table = doc.get("study")
    if not isinstance(table, dict):
        raise SpecError.at(file, "study", "missing [study] table")
    name = table.get("name", folder.name)
    experiments = table.get("experiments", [])
    if not isinstance(experiments, list) or not all(isinstance(e, str) for e in experiments):
        raise SpecError.at(file, "study.experiments", "expected a list of spec files relative to the study folder")
    paths = []
    for i, rel in enumerate(experiments):
        p = folder / rel
        if not p.is_file():
            raise SpecError.at(file, f"study.experiments[{i}]", f"no such spec file: {p}")
        paths.append(p)
    study = Study(
        dir=folder,
        name=str(name),
        title=str(table.get("title", name)),
        description=str(table.get("description", "")),
        experiments=paths,
    )
    ref_file = folder / REFERENCE_FILE
    if ref_file.is_file():
        study.references = _references(ref_file)
    _predictions(file, doc.get("predictions", {}), study)
    return study


def _predictions(file: Path, table: Any, study: Study) -> None:
    if not isinstance(table, dict):
        raise SpecError.at(file, "predictions", "expected a [predictions] table")
    for k in table:
        if k not in ("devices", "repeat", "claims"):
            raise SpecError.at(file, f"predictions.{k}", "unknown key (expected devices, repeat, claims)")
    devices = table.get("devices", [])
    if not isinstance(devices, list) or not all(isinstance(d, str) and d for d in devices):
        raise SpecError.at(file, "predictions.devices", "expected a list of profile names")
    repeat = table.get("repeat")
    if repeat is not None and (not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1):
        raise SpecError.at(file, "predictions.repeat", f"expected a whole number >= 1, found {repeat!r}")
    study.predictions, study.prediction_repeat = list(devices), repeat
    claims = table.get("claims")
    if claims is None:
        return
    claims_file = study.dir / str(claims)
    if not claims_file.is_file():
        raise SpecError.at(file, "predictions.claims", f"no such file: {claims_file}")
    doc = _toml(claims_file)
    refs = _references(claims_file, doc, table="claim", extra_keys=("devices",))
    for i, (ref, e) in enumerate(zip(refs, doc.get("claim", []))):
        devs = e.get("devices", [])
        if not isinstance(devs, list) or not all(isinstance(d, str) for d in devs):
            raise SpecError.at(claims_file, f"claim[{i}].devices", "expected a list of profile names")
        study.claims.append(Claim(ref, tuple(devs)))


def _references(
    file: Path, doc: dict[str, Any] | None = None, table: str = "reference", extra_keys: tuple[str, ...] = ()
) -> list[Reference]:
    doc = _toml(file) if doc is None else doc
    entries = doc.get(table, [])
    if not isinstance(entries, list):
        raise SpecError.at(file, table, f"expected [[{table}]] tables")
    out: list[Reference] = []
    seen: set[str] = set()
    keys = _REF_KEYS + extra_keys
    for i, e in enumerate(entries):
        key = f"{table}[{i}]"
        for k in e:
            if k not in keys:
                raise SpecError.at(file, f"{key}.{k}", f"unknown key (expected one of {', '.join(keys)})")
        for k in ("id", "experiment", "metric", "unit", "quote", "location"):
            if not isinstance(e.get(k), str):
                raise SpecError.at(file, f"{key}.{k}", "expected a string (required)")
        if e["id"] in seen:
            raise SpecError.at(file, f"{key}.id", f"duplicate id {e['id']!r}")
        seen.add(e["id"])
        value = e.get("value")
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise SpecError.at(file, f"{key}.value", f"expected a number, found {value!r}")
        stat = e.get("statistic", "median")
        if stat not in REFERENCE_STATS:
            raise SpecError.at(
                file, f"{key}.statistic", f"expected one of {', '.join(REFERENCE_STATS)}, found {stat!r}"
            )
        tol = e.get("tolerance")
        if not isinstance(tol, dict) or len(tol) != 1 or next(iter(tol)) not in TOLERANCE_KINDS:
            raise SpecError.at(
                file, f"{key}.tolerance", "expected { relative = 0.1 }, { absolute = 5.0 } or { factor = 2.0 }"
            )
        kind, limit = next(iter(tol.items()))
        if not isinstance(limit, (int, float)) or limit < 0:
            raise SpecError.at(file, f"{key}.tolerance.{kind}", f"expected a non-negative number, found {limit!r}")
        if kind == "factor" and limit < 1:
            raise SpecError.at(file, f"{key}.tolerance.factor", f"expected a factor >= 1, found {limit!r}")
        spread = {}
        for k in ("low", "high"):
            v = e.get(k)
            if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool)):
                raise SpecError.at(file, f"{key}.{k}", f"expected a number, found {v!r}")
            spread[k] = None if v is None else float(v)
        derived = e.get("derived_from", [])
        if not isinstance(derived, list) or not all(isinstance(d, str) for d in derived):
            raise SpecError.at(file, f"{key}.derived_from", "expected a list of reference ids")
        set_ = e.get("set", "validation")
        if set_ not in REFERENCE_SETS:
            raise SpecError.at(file, f"{key}.set", f"expected 'calibration' or 'validation', found {set_!r}")
        where = e.get("where", {})
        if not isinstance(where, dict):
            raise SpecError.at(file, f"{key}.where", "expected a table { param = value }")
        echo = e.get("echo")
        if echo is not None and not (isinstance(echo, str) and echo.strip()):
            raise SpecError.at(file, f"{key}.echo", "expected a reason (a non-empty string)")
        if echo is None and e["metric"] in INPUT_METRICS:
            echo = f"{e['metric']} is the experiment's input"
        out.append(
            Reference(
                id=e["id"],
                quote=e["quote"],
                location=e["location"],
                experiment=e["experiment"],
                where=where,
                metric=e["metric"],
                statistic=stat,
                value=float(value),
                unit=e["unit"],
                tolerance_kind=kind,
                tolerance=float(limit),
                set=set_,
                low=spread["low"],
                high=spread["high"],
                derived_from=tuple(derived),
                echo=echo,
            )
        )
    return _mark_repeats(_mark_restating(file, out))


def _mark_restating(file: Path, refs: list[Reference]) -> list[Reference]:
    """Marks each validation entry that restates calibration (see `Reference.independent`): its
    scenario is a calibration scenario, or every scenario it is derived from is one."""
    by_id = {r.id: r for r in refs}
    calibration = {}
    for r in refs:
        if r.set == "calibration":
            calibration.setdefault(r.scenario(), r.id)
    out = []
    for i, r in enumerate(refs):
        for d in r.derived_from:
            if d not in by_id:
                raise SpecError.at(file, f"reference[{i}].derived_from", f"no reference with id {d!r}")
        restates = None
        if r.set == "validation":
            restates = calibration.get(r.scenario())
            if restates is None and r.derived_from:
                sources = [calibration.get(by_id[d].scenario()) for d in r.derived_from]
                if all(sources):
                    restates = ", ".join(dict.fromkeys(s for s in sources if s))
        out.append(dataclasses.replace(r, restates=restates))
    return out


def _mark_repeats(refs: list[Reference]) -> list[Reference]:
    """Marks the independent validation entries that repeat an observation counted elsewhere: one
    published observation counts once.

    - An entry on the same scenario, metric and statistic as another independent validation entry
      repeats it. The digitized point is the one counted (the plot holds the measurement; a sentence
      rounds it), else the first in file order.
    - An entry derived from other entries (a ratio, a difference) whose every source is a calibration
      entry or a counted validation entry brings no observation of its own: it repeats those
      validation sources (derived from calibration alone, it already restates calibration)."""
    first: dict[tuple, Reference] = {}
    for r in sorted(refs, key=lambda r: not r.digitized):  # stable: digitized first, then file order
        if r.independent:
            first.setdefault(r.observation(), r)
    marked = []
    for r in refs:
        counted = first.get(r.observation()) if r.independent else None
        marked.append(r if counted is None or counted.id == r.id else dataclasses.replace(r, repeats=counted.id))
    by_id = {r.id: r for r in marked}
    out = []
    for r in marked:
        if r.independent and r.derived_from:
            sources = [by_id[d] for d in r.derived_from]
            observed = [d.repeats or d.id for d in sources if d.set != "calibration"]
            if observed and all(by_id[o].independent for o in observed):
                r = dataclasses.replace(r, repeats=", ".join(dict.fromkeys(observed)))
        out.append(r)
    return out


def _toml(file: Path) -> dict[str, Any]:
    from nicbench.inputs import read_toml

    return read_toml(file, SpecError, "study file")
