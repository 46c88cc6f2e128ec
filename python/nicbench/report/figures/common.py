"""Shared figure helpers: selecting records, axis labels with units."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from nicbench.experiments.spec import FigureSpec
from nicbench.experiments.stats import scalar_records


class EmptyFigure(ValueError):
    """The records hold nothing to draw for this figure."""


@dataclass
class Units:
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)

    def label(self, name: str, records: pd.DataFrame | None = None) -> str:
        unit = self.params.get(name) or self.metrics.get(name)
        if not unit and records is not None and "unit" in records and not records.empty:
            units = records.loc[records["metric"] == name, "unit"].dropna().unique()
            unit = units[0] if len(units) == 1 else ""
        if name == "t":
            unit = "s"
        return f"{name} [{unit}]" if unit else name


def where(records: pd.DataFrame, figure: FigureSpec) -> pd.DataFrame:
    for k, v in figure.where.items():
        if k in records.columns:
            records = records[records[k] == v]
    return records


def metric_values(records: pd.DataFrame, figure: FigureSpec, metric: str) -> pd.DataFrame:
    data = where(scalar_records(records), figure)
    data = data[data["metric"] == metric]
    if data.empty or data["value"].notna().sum() == 0:
        raise EmptyFigure(f"no records of metric {metric!r}")
    return data


def hue_groups(data: pd.DataFrame, hue: str | None):
    """(label, frame) per hue value (one unnamed group when no hue)."""
    if hue is None or hue not in data.columns:
        yield None, data
        return
    for value, frame in data.groupby(hue, dropna=False, sort=True):
        yield f"{hue}={_fmt(value)}", frame


def _fmt(v) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, (int, float)) and abs(v) >= 1e4:
        return f"{v:.3g}"
    return str(v)
