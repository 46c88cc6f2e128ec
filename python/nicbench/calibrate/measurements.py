"""A user's measurements as calibration references of a study.

Two formats, told apart by their header:

- **Tidy records** — what `nicbench results export DIR --csv` writes (and what a backend run of a study
  spec stores): columns `experiment`, the run's parameters, `metric`, `value`, `unit`, `t`, `status`. Scalar
  records (`t` empty) of successful runs are grouped by experiment, point and metric; the median over the
  repetitions is the measurement.
- **Digitized figures** — the CSVs of `../shared/data/pam21-*` (columns `figure`, `nic`, `panel`,
  `series`, `x`, `x_nominal`, `y`, ...): mapped to the study's experiments by the study's own
  `make_reference.py` (`references_from_csv(path)`), the same mapping that builds its reference file.

Either way each measurement becomes a `set = "calibration"` reference that selects one point of one of the
study's experiment specs (checked when the fit builds its problem), with the study's tolerance for that
kind of value where the study has one.
"""

from __future__ import annotations

import csv
import difflib
import importlib.util
import math
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

from nicbench.errors import NicbenchError
from nicbench.experiments.spec import load_spec
from nicbench.inputs import refuse_special_file
from nicbench.vocab.records import RESERVED_NAMES
from nicbench.vocab.study import Reference, Study

__all__ = ["load_measurements", "DIGITIZED_COLUMNS", "TIDY_COLUMNS"]

# Every column a study's make_reference.py reads (the format of ../shared/data/pam21-*): a file without
# `x` or `x_unit` was taken as digitized and failed in the mapper with a KeyError traceback.
DIGITIZED_COLUMNS = {"figure", "nic", "panel", "series", "x", "x_nominal", "x_unit", "y", "y_unit"}
TIDY_COLUMNS = {"experiment", "metric", "value"}
# Tolerance of a measurement when the study has no reference of the same kind to copy it from.
DEFAULT_TOLERANCE = ("relative", 0.15)


def load_measurements(
    files: list[str | Path], study: Study, log: Callable[[str], None] = lambda s: None
) -> list[Reference]:
    """Every measurement in `files` as a calibration reference of `study` (NicbenchError naming the file
    and what is wrong when a file is neither format or names no experiment of the study). Tidy records
    of metrics the experiment's model does not report (a backend's own counters, such as testpmd's
    `dpdk_*`) are no measurement of the model: they are left out, and `log` says which."""
    refs: list[Reference] = []
    for f in files:
        path = Path(f)
        if path.is_dir():
            entries = _tidy_rows(_result_rows(path), path, study, log)
            if not entries:
                raise NicbenchError(
                    f"measurements {path}: no successful scalar record maps to an experiment of study {study.name}"
                )
            refs += [_reference(e, f"m-{path.name}-{i + 1:03d}") for i, e in enumerate(entries)]
            continue
        refuse_special_file(path, "measurement file")  # a device or a pipe would be read without end
        try:
            with path.open(newline="") as fh:
                header = set(next(csv.reader(fh), []))
                # Every line decodes: a bad byte past the header was a UnicodeDecodeError line naming
                # no file, raised by the readers below (found by fuzzing, issue 38).
                for _ in fh:
                    pass
        except OSError as exc:
            raise NicbenchError(f"measurements {path}: {exc.strerror or exc}") from None
        except UnicodeDecodeError:  # a pcap or a Parquet file given by mistake
            raise NicbenchError(
                f"measurements {path}: not a text (CSV) file; give a CSV export "
                "(nicbench results export DIR --csv) or a results folder"
            ) from None
        if DIGITIZED_COLUMNS <= header:
            entries = _digitized(path, study)
        elif TIDY_COLUMNS <= header:
            entries = _tidy(path, study, log)
        else:
            raise NicbenchError(
                f"measurements {path}: neither a tidy record export (columns "
                f"{', '.join(sorted(TIDY_COLUMNS))}, ...) nor a digitized figure (columns "
                f"{', '.join(sorted(DIGITIZED_COLUMNS))}, ...)"
            )
        if not entries:
            raise NicbenchError(f"measurements {path}: no value maps to an experiment of study {study.name}")
        refs += [_reference(e, f"m-{path.stem}-{i + 1:03d}") for i, e in enumerate(entries)]
    declared = {
        (sp.name, m): u for sp in (load_spec(p) for p in study.experiments) for m, u in sp.target.metrics.items()
    }
    for ref in refs:
        _check_sign(ref, declared.get((ref.experiment, ref.metric), ref.unit))
    return refs


# Units of magnitudes that cannot be negative (rates, times, counts, sizes): a negative measurement
# of one is a sign slip or a column mix-up, and a fit on it would move parameters to match nonsense.
NON_NEGATIVE_UNITS = frozenset(
    {
        "Gbps",
        "Mbps",
        "Mpps",
        "pps",
        "1/s",
        "krules/s",
        "rules/s",
        "ns",
        "us",
        "ms",
        "s",
        "B",
        "packets",
        "rules",
        "flows",
        "cores",
        "processes",
    }
)


def _check_sign(ref: Reference, unit: str) -> None:
    """Refuse a negative value of a non-negative magnitude, by the unit the experiment's target
    declares for the metric. A difference (`lat_diff_us_*`, `*_delta_*`) may be negative."""
    signed = any(word in ref.metric for word in ("diff", "delta"))
    if unit in NON_NEGATIVE_UNITS and not signed and ref.value < 0:
        raise NicbenchError(
            f"measurements {ref.location}: {ref.experiment} {ref.metric} = {ref.value:g} {unit}: a "
            f"{unit} measurement cannot be negative (a sign slip or a column mix-up?)"
        )


def _digitized(path: Path, study: Study) -> list[dict[str, Any]]:
    script = study.dir / "make_reference.py"
    spec = importlib.util.spec_from_file_location(f"nicbench_study_{study.name}", script)
    if spec is None or spec.loader is None or not script.is_file():
        raise NicbenchError(
            f"measurements {path}: study {study.name} has no make_reference.py to map digitized "
            "figures to its experiments"
        )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    mapper = getattr(module, "references_from_csv", None)
    if mapper is None:
        raise NicbenchError(f"measurements {path}: {script} does not map digitized figures (no references_from_csv)")
    with path.open(newline="") as fh:
        for line, row in enumerate(csv.DictReader(fh), start=2):
            _check_fields(f"{path}:{line}", row)
    # The mapper is the study's own script, written for its own data files: on a user's file a value
    # it cannot read (y = "abc", a figure-3 series it does not know) raised from inside it, a
    # traceback or a bare "could not convert string to float". One line naming the file instead.
    try:
        return list(mapper(path))
    except (KeyError, ValueError, TypeError, IndexError) as exc:
        what = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise NicbenchError(
            f"measurements {path}: study {study.name}'s {script.name} cannot map this digitized figure "
            f"({what}); give the digitized format of its data files (numbers in x, x_nominal, y; "
            "the panels and series it plots)"
        ) from None


def _tidy(path: Path, study: Study, log: Callable[[str], None]) -> list[dict[str, Any]]:
    with path.open(newline="") as fh:
        return _tidy_rows(
            ((f"{path}:{line}", row) for line, row in enumerate(csv.DictReader(fh), start=2)), path, study, log
        )


def _result_rows(folder: Path):
    """A result folder's records (`results/<experiment>[--<backend>]`, what `nicbench run` stores) as
    the rows `nicbench results export --csv` would write: no export step between a backend run and a
    fit."""
    from nicbench.experiments.store import load_results

    try:
        df = load_results(folder)
    except (OSError, ValueError) as exc:
        raise NicbenchError(f"measurements {folder}: not a result folder of `nicbench run` ({exc})") from None
    for i, row in enumerate(df.to_dict("records")):
        yield f"{folder} (record {i + 1})", {k: ("" if v is None else str(v)) for k, v in row.items()}


def _tidy_rows(rows, path: Path, study: Study, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Tidy records (`where`, row) grouped per experiment, point and metric (the median of the runs)."""
    specs = {s.name: s for s in (load_spec(p) for p in study.experiments)}
    tolerances = {(r.experiment, r.metric): (r.tolerance_kind, r.tolerance) for r in study.references}
    groups: dict[tuple, list[float]] = {}
    units: dict[tuple, str] = {}
    not_modelled: set[str] = set()
    for where_text, row in rows:
        _check_fields(where_text, row)
        if row.get("status", "ok") not in ("ok", "") or row.get("t", "") not in ("", "nan", "NaN"):
            continue
        spec = specs.get(row["experiment"])
        if spec is None:
            raise NicbenchError(
                f"measurements {where_text}: experiment {row['experiment']!r} is not one of "
                f"study {study.name}'s ({', '.join(sorted(specs))})"
            )
        if row["metric"] not in spec.target.metrics:
            _check_backend_counter(where_text, row["metric"], spec)
            not_modelled.add(row["metric"])
            continue
        if row["value"] in ("", "nan", "NaN", "None"):
            continue  # a metric the run could not give (e.g. a ratio to a missing baseline): no measurement
        try:
            value = float(row["value"])
        except ValueError:
            raise NicbenchError(f"measurements {where_text}: value {row['value']!r} is not a number") from None
        if not math.isfinite(value):
            continue
        # The device is the profile being fitted, not what the run stored.
        where = {
            p.name: _number(row[p.name])
            for p in spec.target.params
            if p.name != "nic" and row.get(p.name) not in (None, "", "nan", "None")
        }
        _check_one_point(where_text, row, where, spec)
        _check_unit(where_text, row, spec)
        key = (row["experiment"], tuple(sorted(where.items())), row["metric"])
        groups.setdefault(key, []).append(value)
        units[key] = row.get("unit", "")
    if not_modelled:
        log(f"{path.name}: left out metrics the model does not report: {', '.join(sorted(not_modelled))}")
    out = []
    for (experiment, where, metric), values in sorted(groups.items()):
        kind, tol = tolerances.get((experiment, metric), DEFAULT_TOLERANCE)
        out.append(
            {
                "quote": f"measured: median of {len(values)} run(s) in {path.name}",
                "location": str(path),
                "experiment": experiment,
                "where": specs[experiment].parse_params(dict(where), f"{path}: "),
                "metric": metric,
                "statistic": "median",
                "value": statistics.median(values),
                "unit": units[(experiment, where, metric)],
                "tolerance": {kind: tol},
            }
        )
    return out


def _check_fields(where_text: str, row: dict) -> None:
    """A hand-written row with fewer or more fields than its header: refused (csv.DictReader fills the
    missing ones with None and keeps the extra ones under None)."""
    missing = [k for k, v in row.items() if k is not None and v is None]
    if missing or None in row:
        what = (
            f"no value for column(s) {', '.join(missing)}"
            if missing
            else f"{len(row[None])} field(s) more than the header's {len(row) - 1} columns"
        )
        raise NicbenchError(
            f"measurements {where_text}: {what} (every row has one field per header column, separated by commas)"
        )


def _check_unit(where_text: str, row: dict, spec: Any) -> None:
    """A value in another unit than the model's (80000 with unit Mbps for rx_gbps) would be fitted as
    if it were in the model's: refused, naming both. An empty unit is taken as the model's."""
    given, expected = (row.get("unit") or "").strip(), spec.target.metrics[row["metric"]]
    if given and given.lower() != expected.lower():
        wanted = (
            f"in {expected}; convert the value to {expected} (or leave the unit empty)"
            if expected
            else "as a plain number (a ratio: 0.1 for 10%); give it so, with an empty unit"
        )
        raise NicbenchError(
            f"measurements {where_text}: unit {given!r}, but {spec.name} reports {row['metric']} {wanted}"
        )


def _check_backend_counter(where_text: str, metric: str, spec: Any) -> None:
    """A metric the model does not report is left out only when it is a backend's own counter
    (`dpdk_*`, `ovs_*`, `perftest_*`); anything else is a typo or another experiment's metric."""
    from nicbench.backends import BACKENDS

    if metric.split("_", 1)[0] in BACKENDS:
        return
    close = difflib.get_close_matches(metric, spec.target.metrics, n=1)
    hint = f"did you mean {close[0]!r}? " if close else ""
    raise NicbenchError(
        f"measurements {where_text}: metric {metric!r} is not one {spec.name} reports ({hint}its "
        f"metrics: {', '.join(sorted(spec.target.metrics))})"
    )


_VALUES_SHOWN = 6


def _check_one_point(where_text: str, row: dict, where: dict[str, Any], spec: Any) -> None:
    """The row's parameters select exactly one point of the spec's sweep; otherwise the error says
    which values the sweep has, the columns that would tell its points apart, and any column that
    is no parameter of the experiment (a typo such as `rule` for `rules`)."""
    parsed = spec.parse_params(dict(where), f"measurements {where_text}: ")
    points = spec.points()
    found = [pt for pt in points if all(pt.get(k) == v for k, v in parsed.items())]
    if len(found) == 1:
        return
    names = {p.name for p in spec.target.params}
    strange = sorted(k for k in row if k not in names and k not in RESERVED_NAMES)
    note = (
        f"; column(s) {', '.join(strange)} are no parameter of {spec.name}'s target {spec.target.name}"
        if strange
        else ""
    )

    def values(name: str, among: list[dict[str, Any]]) -> str:
        shown = sorted({str(pt.get(name)) for pt in among}, key=lambda v: (len(v), v))
        return "{" + ", ".join(shown[:_VALUES_SHOWN]) + (", ..." if len(shown) > _VALUES_SHOWN else "") + "}"

    if not found:
        # The parameters whose value no point has (a --set run's duration), else the combination.
        odd = [k for k, v in parsed.items() if all(pt.get(k) != v for pt in points)] or list(parsed)
        have = "; ".join(f"{k} in {values(k, points)}" for k in odd)
        raise NicbenchError(
            f"measurements {where_text}: no point of {spec.name} has "
            f"{', '.join(f'{k}={where[k]}' for k in odd)} (its points have {have}){note}"
        )
    varying = [
        p.name
        for p in spec.target.params
        if p.name not in parsed and p.name != "nic" and len({str(pt.get(p.name)) for pt in found}) > 1
    ]
    raise NicbenchError(
        f"measurements {where_text}: matches {len(found)} points of {spec.name}; give column(s) "
        + ", ".join(f"{k} (values {values(k, found)})" for k in varying)
        + note
    )


def _number(text: str) -> Any:
    """A stored parameter as the spec would write it: an int or float when it is one."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _reference(e: dict[str, Any], id_: str) -> Reference:
    ((kind, tol),) = e["tolerance"].items()
    return Reference(
        id=id_,
        quote=e["quote"],
        location=e["location"],
        experiment=e["experiment"],
        where=dict(e["where"]),
        metric=e["metric"],
        statistic=e.get("statistic", "median"),
        value=float(e["value"]),
        unit=e["unit"],
        tolerance_kind=kind,
        tolerance=float(tol),
        set="calibration",
        low=e.get("low"),
        high=e.get("high"),
    )
