"""Empirical CDF of a metric over all runs (scalar records, or time-series samples if none)."""

from __future__ import annotations

import numpy as np

from nicbench.report.figures.common import EmptyFigure, Units, hue_groups, where


def draw(ax, records, figure, units: Units) -> None:
    data = where(records[(records["status"] == "ok") & (records["metric"] == figure.x)], figure)
    scalar = data[data["t"].isna()]
    data = scalar if not scalar.empty else data
    if data["value"].notna().sum() == 0:
        raise EmptyFigure(f"no records of metric {figure.x!r}")
    for _, label, frame in hue_groups(data, figure.hue, units):
        v = np.sort(frame["value"].dropna().to_numpy(float))
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=label)
    units.set_axis(ax.xaxis, figure.x, data)
    ax.set_ylabel("fraction of runs ≤ x")
    ax.set_ylim(0, 1.02)
    if figure.hue:
        # A CDF rises from the lower left to the upper right: the lower right is free
        # (and loc="best" would test every step of every curve).
        ax.legend(fontsize=8, loc="lower right")
