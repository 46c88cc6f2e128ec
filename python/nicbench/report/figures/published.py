"""Which published values a drawn figure can show, and where (`place`); drawn by `overlay`.

A reference entry sits on a figure when its metric is the one the figure draws (its value
converted to the drawn unit), its point satisfies the figure's `where`, and its point fixes the
figure's x and hue: from the entry's own `where`, or, for what it leaves open, from the model's
runs it selects (one value each, as the comparison table selects one summary row). Line and box
figures get points (a box figure: any statistic its boxes show). A time series gets the scalar
values it can show: `<y>_after` (the mean over the last second) as a segment at the end of the
series, and an outage (`outage*`, a duration) as a bracket from the disturbance's start (the
`start` parameter, else the first event). Every other entry gets a reason (`Skip`), so that a
page can list what it did not draw instead of dropping it silently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from nicbench.experiments.spec import FigureSpec
from nicbench.experiments.stats import scalar_records
from nicbench.report.compare import convert
from nicbench.report.figures.common import Drawn, Units
from nicbench.units import UnitError
from nicbench.vocab.study import Reference, summary_group

__all__ = ["Mark", "Skip", "place", "is_digitized", "AFTER_SUFFIX", "AFTER_WINDOW_S"]

# A time series' "after" value (pam21 Fig. 3): the mean of `<y>` over the last second of the run.
AFTER_SUFFIX = "_after"
AFTER_WINDOW_S = 1.0


@dataclass(frozen=True)
class Mark:
    """One published value on a figure, in the figure's coordinates and drawn unit."""

    ref: Reference
    shape: str  # "point" | "segment" (a level over [x, x_end]) | "bracket" (a duration [x, x_end])
    x: float
    y: float  # point, segment: the value; bracket: its row (0, 1, ...), one per hue
    color: str  # the colour of the model series it belongs to
    x_end: float | None = None
    low: float | None = None  # the published spread: y for points and segments, x_end for brackets
    high: float | None = None

    @property
    def group(self) -> str:
        return summary_group(self.ref)

    @property
    def digitized(self) -> bool:
        return is_digitized(self.ref)


@dataclass(frozen=True)
class Skip:
    """A reference entry this figure does not draw, and why. `close`: the entry is about what
    the figure draws (its metric), so the reason is specific; otherwise it is about another metric."""

    ref: Reference
    reason: str
    close: bool


def is_digitized(ref: Reference) -> bool:
    """A point read off a published plot (shared/data/...), as opposed to a value quoted in a text."""
    return "shared/data/" in ref.location


def place(
    drawn: Drawn | None,
    figure: FigureSpec,
    references: list[Reference],
    records: pd.DataFrame,
    target: Any,
    units: Units,
) -> tuple[list[Mark], list[Skip]]:
    """Marks for the entries this figure shows, skips (with reasons) for the others."""
    marks: list[Mark] = []
    skips: list[Skip] = []
    scalars = scalar_records(records) if not records.empty else records
    for ref in references:
        result = _place_one(drawn, figure, ref, scalars, target, units)
        (marks if isinstance(result, Mark) else skips).append(result)
    return marks, skips


def _place_one(drawn, figure, ref, scalars, target, units) -> Mark | Skip:
    if drawn is None:
        return Skip(ref, f"a {figure.kind} figure shows no published values", False)
    if drawn.kind == "timeseries":
        shape = _timeseries_shape(ref, figure)
        if shape is None:
            return Skip(
                ref, f"a time series shows only {figure.y}{AFTER_SUFFIX} and outage values, not {ref.metric}", False
            )
    elif ref.metric != figure.y:
        return Skip(ref, f"its metric {ref.metric} is not on this figure ({figure.y})", False)
    point = _point(ref, scalars, target, [figure.x if drawn.kind != "timeseries" else None, figure.hue, *figure.where])
    if isinstance(point, str):
        return Skip(ref, point, True)
    for k, v in figure.where.items():
        if not _equal(point[k], v):
            return Skip(ref, f"{k}={_text(point[k])}, the figure shows {k}={_text(v)}", True)
    hue = point.get(figure.hue) if figure.hue else None
    color = next((c for h, c in drawn.colors.items() if _equal(h, hue)), None)
    if color is None:
        return Skip(ref, f"the model has no series {figure.hue}={_text(hue)} on this figure", True)
    mismatch = _other_parameters(drawn, figure, point, hue)
    if mismatch:
        return Skip(ref, mismatch, True)
    if drawn.kind == "timeseries":
        return _timeseries_mark(drawn, figure, ref, hue, color, units, shape)
    if _canonical(ref.statistic) not in {_canonical(s) for s in drawn.stats}:
        return Skip(
            ref, f"its statistic ({ref.statistic}) is not what the figure shows ({', '.join(drawn.stats)})", True
        )
    try:
        y, low, high = _in_unit(ref, drawn.y_unit)
    except ValueError as exc:
        return Skip(ref, f"{exc} (the figure's y axis)", True)
    try:
        x = drawn.position(point[figure.x], hue) if drawn.position else None
    except (TypeError, ValueError):  # e.g. a word where the axis has numbers
        x = None
    if x is None or not math.isfinite(x):
        return Skip(ref, f"{figure.x}={_text(point[figure.x])} is not on this figure's x axis", True)
    return Mark(ref, "point", x, y, color, low=low, high=high)


def _point(ref: Reference, scalars: pd.DataFrame, target: Any, needed: list[str | None]) -> dict | str:
    """The entry's point: its `where` (parsed with the target's schema, as the comparison does), and each
    needed parameter it leaves open from the model runs it selects (a reason when they do not fix one)."""
    point: dict[str, Any] = {}
    for k, raw in ref.where.items():
        param = target.param(k) if target is not None else None
        try:
            point[k] = param.parse(raw) if param is not None else raw
        except UnitError as exc:
            return f"where.{k}: {exc}"
    open_ = [n for n in dict.fromkeys(needed) if n and n not in point]
    if not open_:
        return point
    rows = scalars[scalars["metric"] == ref.metric] if not scalars.empty else scalars
    for k, v in point.items():
        if k not in rows.columns:
            rows = rows.iloc[0:0]
            break
        rows = rows[rows[k] == v]
    for name in open_:
        if rows.empty or name not in rows.columns:
            return f"its where does not fix {name} (and selects no model run that would)"
        values = rows[name].drop_duplicates()
        if len(values) != 1:
            return f"its where does not fix {name} (the runs it selects have {len(values)} values)"
        point[name] = values.iloc[0]
    return point


def _other_parameters(drawn: Drawn, figure: FigureSpec, point: dict, hue: Any) -> str | None:
    """A parameter the entry fixes beyond the figure's x, hue and `where` must have that value all along
    the series it would sit on (else the entry is about another scenario than the one drawn)."""
    shown = {figure.hue, *figure.where} | ({figure.x} if drawn.kind != "timeseries" else set())
    extra = [k for k in point if k not in shown]
    if not extra:
        return None
    rows = drawn.data[drawn.data["metric"] == figure.y]
    if figure.hue:
        rows = _series(rows, figure.hue, hue)
    for k in extra:
        if k not in rows.columns:
            return f"the runs have no parameter {k}"
        values = rows[k].drop_duplicates().tolist()
        if not all(_equal(v, point[k]) for v in values):
            shown_values = ", ".join(_text(v) for v in values)
            return f"{k}={_text(point[k])}, the figure's series has {k}={shown_values}"
    return None


def _timeseries_shape(ref: Reference, figure: FigureSpec) -> str | None:
    if ref.metric == f"{figure.y}{AFTER_SUFFIX}":
        return "segment"
    if ref.metric.startswith("outage"):
        return "bracket"
    return None


def _timeseries_mark(
    drawn: Drawn, figure: FigureSpec, ref: Reference, hue: Any, color: str, units: Units, shape: str
) -> Mark | Skip:
    data = drawn.data if figure.hue is None else _series(drawn.data, figure.hue, hue)
    series = data[(data["metric"] == figure.y) & data["t"].notna()]
    if shape == "segment":
        try:
            y, low, high = _in_unit(ref, drawn.y_unit)
        except ValueError as exc:
            return Skip(ref, f"{exc} (the figure's y axis)", True)
        end = float(series["t"].max())
        return Mark(ref, "segment", end - AFTER_WINDOW_S, y, color, x_end=end, low=low, high=high)
    start = _start_s(data, units)
    if start is None:
        return Skip(ref, "the runs record no start of the disturbance (no `start` parameter, no event)", True)
    try:
        length, low, high = _in_unit(ref, "s")
    except ValueError as exc:
        return Skip(ref, f"{exc} (an outage is a duration on the time axis)", True)
    row = next(i for i, h in enumerate(drawn.colors) if _equal(h, hue))
    return Mark(
        ref,
        "bracket",
        start,
        float(row),
        color,
        x_end=start + length,
        low=None if low is None else start + low,
        high=None if high is None else start + high,
    )


def _start_s(data: pd.DataFrame, units: Units) -> float | None:
    """When the disturbance begins [s]: the runs' `start` parameter, else their first event."""
    if "start" in data.columns and data["start"].notna().any():
        try:
            return convert(float(data["start"].dropna().iloc[0]), units.unit("start") or "s", "s")
        except (TypeError, ValueError):
            pass
    events = data[data["metric"].fillna("").str.startswith("event:") & data["t"].notna()]
    return float(events["t"].min()) if not events.empty else None


def _in_unit(ref: Reference, unit: str) -> tuple[float, float | None, float | None]:
    """The entry's value and spread (low, high) in `unit`; ValueError when the units do not convert."""
    low, high = (None if v is None else convert(v, ref.unit, unit) for v in (ref.low, ref.high))
    return convert(ref.value, ref.unit, unit), low, high


def _series(rows: pd.DataFrame, hue: str, value: Any) -> pd.DataFrame:
    """The rows of one hue value (compared as the drawn series were grouped)."""
    return rows[rows[hue].isna()] if value is None else rows[rows[hue] == value]


def _canonical(stat: str) -> str:
    return "median" if stat == "p50" else stat


def _equal(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def _text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)
