"""Published value vs result: the comparison table of a study's reference values.

A reference entry selects one summary row (experiment, point parameters, metric, search)
and one statistic of it; the row's value is converted to the entry's unit and compared
with the tolerance. Entries that select nothing (or more than one row) are reported as
"no result" / "ambiguous" rather than silently skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from nicbench.experiments.targets import Target
from nicbench.units import UnitError
from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import Reference

__all__ = ["Comparison", "compare", "convert"]

# Scale of each unit to its base unit, per dimension.
_SCALES = {
    "bps": ("rate", 1.0),
    "kbps": ("rate", 1e3),
    "Mbps": ("rate", 1e6),
    "Gbps": ("rate", 1e9),
    "Tbps": ("rate", 1e12),
    "pps": ("prate", 1.0),
    "kpps": ("prate", 1e3),
    "Mpps": ("prate", 1e6),
    "Gpps": ("prate", 1e9),
    "ns": ("time", 1e-9),
    "us": ("time", 1e-6),
    "µs": ("time", 1e-6),
    "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "B": ("size", 1.0),
    "KiB": ("size", 1024.0),
    "MiB": ("size", 1024.0**2),
    "kB": ("size", 1e3),
    "MB": ("size", 1e6),
    "": ("ratio", 1.0),
    "%": ("ratio", 0.01),
}


def convert(value: float, from_unit: str, to_unit: str) -> float:
    if from_unit == to_unit:
        return value
    a, b = _SCALES.get(from_unit), _SCALES.get(to_unit)
    if a is None or b is None or a[0] != b[0]:
        raise ValueError(f"cannot convert {from_unit or 'a number'} to {to_unit or 'a number'}")
    return value * a[1] / b[1]


@dataclass
class Comparison:
    reference: Reference
    model_value: float  # in the reference's unit; nan when missing
    status: str  # "pass" | "fail" | "no result" | "ambiguous" | "unit mismatch"
    note: str = ""

    @property
    def relative_error(self) -> float:
        if not math.isfinite(self.model_value) or self.reference.value == 0:
            return math.nan
        return (self.model_value - self.reference.value) / abs(self.reference.value)


def compare(
    references: list[Reference], summaries: dict[str, pd.DataFrame], targets: dict[str, Target]
) -> list[Comparison]:
    """One comparison per reference entry; `summaries`: experiment → `summarize()` frame."""
    out = []
    for ref in references:
        summary = summaries.get(ref.experiment)
        if summary is None or summary.empty:
            out.append(Comparison(ref, math.nan, "no result", f"experiment {ref.experiment!r} has no results"))
            continue
        rows = summary[summary["metric"] == ref.metric]
        target = targets.get(ref.experiment)
        for k, raw in ref.where.items():
            value = raw
            param = target.param(k) if target else None
            if param is not None:
                try:
                    value = param.parse(raw)
                except UnitError as exc:
                    raise SpecError(f"reference {ref.id}: where.{k}: {exc}") from None
            if k not in rows.columns:
                rows = rows.iloc[0:0]
                break
            rows = rows[rows[k] == value]
        if len(rows) != 1:
            status = "no result" if rows.empty else "ambiguous"
            out.append(Comparison(ref, math.nan, status, f"{len(rows)} matching summary rows"))
            continue
        row = rows.iloc[0]
        try:
            model = convert(float(row[ref.statistic]), str(row["unit"] or ""), ref.unit)
        except ValueError as exc:
            out.append(Comparison(ref, math.nan, "unit mismatch", str(exc)))
            continue
        out.append(Comparison(ref, model, "pass" if ref.passes(model) else "fail"))
    return out
