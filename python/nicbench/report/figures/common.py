"""Shared figure helpers: selecting records, axis labels with units, what a kind drew."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import (
    EngFormatter,
    Formatter,
    FuncFormatter,
    LogFormatterSciNotation,
    LogLocator,
    MultipleLocator,
    NullLocator,
)

from nicbench.experiments.spec import FigureSpec
from nicbench.experiments.stats import scalar_records
from nicbench.units import format_size_bytes, is_binary_size


class EmptyFigure(ValueError):
    """The records hold nothing to draw for this figure."""


@dataclass
class Units:
    params: dict[str, str] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)

    def label(self, name: str, records: pd.DataFrame | None = None) -> str:
        """`Throughput (Gb/s)`: the name as people say it, then the unit as they write it."""
        unit = unit_text(self.unit(name, records))
        return f"{human_name(name)} ({unit})" if unit else human_name(name)

    def unit(self, name: str, records: pd.DataFrame | None = None) -> str:
        """The unit of a parameter or metric ("" if unknown); `t` is always in seconds."""
        if name == "t":
            return "s"
        unit = self.params.get(name) or self.metrics.get(name)
        if not unit and records is not None and "unit" in records and not records.empty:
            units = records.loc[records["metric"] == name, "unit"].dropna().unique()
            unit = units[0] if len(units) == 1 else ""
        return unit or ""

    def title(self, name: str, records: pd.DataFrame | None = None) -> str:
        """The axis title: the name alone when the ticks carry the unit (see `set_axis`)."""
        return human_name(name) if _si_formatter(self.unit(name, records)) else self.label(name, records)

    def text(self, name: str, value) -> str:
        """One value of `name` as a tick label ("100 Gb/s" for 1e11 bps; "4 KiB" for a binary size)."""
        if self.unit(name, None) == "B" and not isinstance(value, str) and is_binary_size(value):
            return format_size_bytes(float(value))
        formatter = _si_formatter(self.unit(name, None))
        if formatter is None or isinstance(value, str) or not pd.notna(value):
            return _fmt(value)
        return formatter(float(value))

    def set_axis(
        self, axis, name: str, records: pd.DataFrame | None = None, stat: str | None = None, values=None
    ) -> None:
        """Labels `axis` (`ax.xaxis` or `ax.yaxis`) with `name` (and the statistic drawn: "Throughput
        (Gb/s), median"); values in a base unit (bps, pps, B, s, ns, rules/s) get SI-prefixed ticks
        ("100 Gb/s", "50 µs") instead of "1e11". Sizes in bytes whose drawn `values` are all binary
        (payloads of 4 KiB .. 16 MiB) get ticks at powers of two, in KiB/MiB ("1 KiB", not "1.024 kB")."""
        formatter = _si_formatter(self.unit(name, records))
        drawn = [] if values is None else [v for v in pd.Series(values).dropna().unique()]
        if self.unit(name, records) == "B" and drawn and all(is_binary_size(v) for v in drawn):
            _binary_axis(axis, drawn)
        elif formatter is not None:
            axis.set_major_formatter(formatter)
            if axis.get_scale() == "log":
                axis.set_minor_formatter(_LogMinor(_si_formatter(self.unit(name, records))))
                axis.set_tick_params(which="minor", labelsize="small")  # "30 kB" is wider than "3×10⁴"
        axis.set_label_text(self.title(name, records) + (f", {stat}" if stat else ""))


# Names of metrics and parameters as an axis says them, where reading the name's parts (below) would
# not: a bare unit as a name (`gbps`), or a word people put otherwise.
HUMAN_NAMES = {
    "gbps": "Throughput",
    "mpps": "Packet rate",
    "t": "Time",
    "rx_gbps": "Received throughput",
    "line_gbps": "Line-rate throughput",
    "throughput_gbps": "Throughput",
    "latency_us": "Latency",
    "latency_mean_us": "Mean latency",
    "pcie_mpps_total": "PCIe packets, all links",
    "pcie_mpps_max": "PCIe packets, busiest link",
    "pcie1_mpps": "PCIe1 packets",
    "install_rate_krules_s": "Rule installation rate",
    "install_rate": "Offered rule installation rate",
    "update_rate": "Offered rule update rate",
    "steering_cache_hit_rate": "Steering cache hit rate",
    "ndr_rate": "No-drop rate",
    "smt_gain": "Gain from SMT",
    "payload": "Payload",
    "nic": "NIC",
    "doorbell_batch": "Doorbell batch",
    "processes_per_core": "Processes per core",
}

# Words of a name read out (`pcie` → PCIe); a rate's unit word says what it measures.
_WORDS = {
    "pcie": "PCIe",
    "rx": "RX",
    "tx": "TX",
    "ndr": "NDR",
    "smt": "SMT",
    "gbps": "throughput",
    "mpps": "packet rate",
}
# A unit spelled at a name's end (`latency_p99_us`, `outage_s`): the label gives the unit itself.
_UNIT_WORDS = ("us", "ns", "ms", "s", "krules", "pct")


def human_name(name: str) -> str:
    """`Throughput` for gbps, `Latency p99` for latency_p99_us: a metric or parameter name as an axis
    label says it (HUMAN_NAMES, else its words, with the unit at its end dropped)."""
    if name in HUMAN_NAMES:
        return HUMAN_NAMES[name]
    words = name.split("_")
    while len(words) > 1 and words[-1] in _UNIT_WORDS:
        words.pop()
    text = " ".join(_WORDS.get(w, w) for w in words if w)
    return text[:1].upper() + text[1:] if text else name


# Units as people write them on an axis (the harness stores Gbps, us).
_UNIT_TEXT = {"Gbps": "Gb/s", "Mbps": "Mb/s", "kbps": "kb/s", "bps": "b/s", "us": "µs", "1/s": "/s"}


def unit_text(unit: str) -> str:
    return _UNIT_TEXT.get(unit, unit)


# Units written without a prefix (the harness stores base units): shown with an SI prefix.
_SI_UNITS = {"bps", "pps", "B", "s", "rules/s", "Hz"}


# Units with a prefix already that read better in the best prefix of their base unit ("30 µs").
_PREFIXED = {"ns": ("s", 1e-9), "us": ("s", 1e-6), "µs": ("s", 1e-6), "ms": ("s", 1e-3)}


def _si_formatter(unit: str):
    if unit in _SI_UNITS:
        return EngFormatter(unit=unit_text(unit), sep=" ")  # "100 Gb/s", not "100 Gbps"
    if unit in _PREFIXED:  # e.g. stored in ns, shown in the best prefix of seconds
        base, scale = _PREFIXED[unit]
        engineering = EngFormatter(unit=base, sep=" ")
        return FuncFormatter(lambda v, pos=None: engineering(v * scale, pos))
    return None


def _binary_axis(axis, values: list) -> None:
    """Ticks at powers of two (log axis) or multiples of one (linear), labelled in B/KiB/MiB/GiB."""
    axis.set_major_formatter(FuncFormatter(lambda v, pos=None: format_size_bytes(v) if v > 0 else "0"))
    if axis.get_scale() == "log":
        axis.set_major_locator(LogLocator(base=2, numticks=8))  # at most ~8 labels: every 2nd octave or more
    else:
        span = max(float(max(values)), 1.0)
        axis.set_major_locator(MultipleLocator(2 ** math.ceil(math.log2(span / 8))))
    axis.set_minor_locator(NullLocator())  # base-10 minor ticks between powers of two mean nothing here


class _LogMinor(Formatter):
    """Labels the minor ticks that matplotlib's log formatter would label (few, when the axis spans
    little more than a decade), in the SI form of the major ticks instead of "3×10¹"."""

    def __init__(self, formatter):
        self.choose = LogFormatterSciNotation(labelOnlyBase=False)
        self.formatter = formatter

    def set_axis(self, axis):
        super().set_axis(axis)
        self.choose.set_axis(axis)
        self.formatter.set_axis(axis)

    def set_locs(self, locs):
        self.choose.set_locs(locs)

    def __call__(self, x, pos=None):
        return self.formatter(x, pos) if self.choose(x, pos) else ""


def where(records: pd.DataFrame, figure: FigureSpec) -> pd.DataFrame:
    for k, v in figure.where.items():
        if k in records.columns:
            records = records[records[k] == v]
    return records


def metric_values(records: pd.DataFrame, figure: FigureSpec, metric: str, units: Units | None = None) -> pd.DataFrame:
    scalars = scalar_records(records)
    of_metric = scalars[scalars["metric"] == metric] if "metric" in scalars else scalars.iloc[0:0]
    data = where(of_metric, figure)
    if data.empty or data["value"].notna().sum() == 0:
        raise empty_figure(of_metric, figure, metric, units=units)
    return data


# How many of a parameter's values an empty figure's reason lists.
_VALUES_SHOWN = 6


def empty_figure(
    of_metric: pd.DataFrame, figure: FigureSpec, metric: str, what: str = "records", units: Units | None = None
) -> EmptyFigure:
    """Why a figure has nothing to draw, for the page and the command line: the metric has no values at
    all, or no row matched the figure's `where` (then what the records hold instead: a typo or a
    value of another unit in a spec's `where` otherwise reads as "no data")."""
    if of_metric.empty or of_metric["value"].notna().sum() == 0 or not figure.where:
        return EmptyFigure(f"no {what} of metric {metric!r}")

    def show(k: str, v: Any) -> str:
        return units.text(k, v) if units is not None else _fmt(v)

    have = []
    for k, v in figure.where.items():
        if k not in of_metric.columns:
            continue
        present = of_metric[k].dropna().unique()
        if v not in set(present):
            values = sorted(present) if all(isinstance(x, (int, float)) for x in present) else present
            shown = ", ".join(show(k, x) for x in values[:_VALUES_SHOWN])
            have.append(f"{k} in {{{shown}{', ...' if len(values) > _VALUES_SHOWN else ''}}}")
    selection = ", ".join(f"{k}={show(k, v)}" for k, v in figure.where.items())
    found = f"; its {len(of_metric):,} {what} of {metric} have {'; '.join(have)}" if have else ""
    return EmptyFigure(f"no rows matched its selection {selection}{found}")


def hue_groups(data: pd.DataFrame, hue: str | None, units: Units | None = None):
    """(value, label, frame) per hue value (one unnamed group, value None, when no hue)."""
    if hue is None or hue not in data.columns:
        yield None, None, data
        return
    for value, frame in data.groupby(hue, dropna=False, sort=True):
        yield value, f"{hue}={units.text(hue, value) if units else _fmt(value)}", frame


# Records from several result folders drawn on one figure (`nicbench report DIR --with OTHER`,
# `nicbench compare A B --report`) carry the folder's label here; the report's own records come
# first in the frame (order of appearance is the folders' order). Not a parameter name a spec can use.
SOURCE = "_source"
SOURCE_STYLES = ("-", "--", ":", "-.")
SOURCE_MARKERS = ("o", "s", "^", "D")


def sources(data: pd.DataFrame) -> list:
    """The result folders in `data`, the report's own first ([None] when it holds one folder only)."""
    if SOURCE not in data.columns:
        return [None]
    found = list(pd.unique(data[SOURCE].dropna()))
    return found if len(found) > 1 else [None]


def source_groups(data: pd.DataFrame, label: str | None, all_sources: list):
    """(index, series label, frame) per result folder of one series; index 0 is the report's own
    results (solid line), the others get dashed/dotted lines and their folder's name in the label."""
    if all_sources == [None]:
        yield 0, label, data
        return
    for i, src in enumerate(all_sources):
        frame = data[data[SOURCE] == src]
        if frame.empty:
            continue
        yield i, (f"{label} · {src}" if label else str(src)), frame


def main_source(data: pd.DataFrame) -> pd.DataFrame:
    """The report's own records (published values are placed on them only)."""
    first = sources(data)[0]
    return data if first is None else data[data[SOURCE] == first]


@dataclass
class Drawn:
    """What a kind drew, so that published values can be put on it (`figures.published`).

    `colors` maps each hue value (None without a hue) to its series' colour; `position` maps
    (x value, hue value) to the x coordinate of that point (None: not on this axis), e.g. the
    box index of a categorical axis; `stats` are the statistics the drawn y of a point shows.
    """

    kind: str
    y: str
    y_unit: str
    stats: tuple[str, ...]
    colors: dict[Any, str]
    data: pd.DataFrame  # the records the figure drew from (after its `where`), events included
    position: Callable[[Any, Any], float | None] | None = None


def _fmt(v) -> str:
    """A parameter value without a unit: counts read as 100K, 2M or 65,536."""
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, int) and abs(v) >= 10_000:
        for div, suffix in ((1_000_000, "M"), (1_000, "K")):
            if v % div == 0:
                return f"{v // div}{suffix}"
        return f"{v:,}"
    if isinstance(v, float) and abs(v) >= 1e4:
        return f"{v:.3g}"
    return str(v)


def from_zero_when_flat(ax, values) -> bool:
    """Values that are all non-negative and move by under 10% of their top (Fig. 3d: 99.8-100.0 Gbps;
    argus-ht: 71.0-72.2 Mpps) are drawn from zero: autoscaled, a 1% spread fills the plot and reads
    as a large difference. True when the axis was set."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0 or values.min() < 0:
        return False
    top = float(values.max())
    if top > 0 and top - float(values.min()) < 0.1 * top:
        ax.set_ylim(0, top * 1.05)
        return True
    return False
