"""Empirical CDF of a metric over all runs (scalar records, or time-series samples if none)."""

from __future__ import annotations

import numpy as np

from nicbench.report.figures.common import (
    SOURCE_STYLES,
    Units,
    empty_figure,
    hue_groups,
    source_groups,
    sources,
    where,
)


def draw(ax, records, figure, units: Units) -> None:
    of_metric = records[(records["status"] == "ok") & (records["metric"] == figure.x)]
    data = where(of_metric, figure)
    scalar = data[data["t"].isna()]
    data = scalar if not scalar.empty else data
    if data["value"].notna().sum() == 0:
        raise empty_figure(of_metric, figure, figure.x, units=units)
    folders = sources(data)
    for h, (_, label, hue_frame) in enumerate(hue_groups(data, figure.hue, units)):
        for k, name, frame in source_groups(hue_frame, label, folders):
            v = np.sort(frame["value"].dropna().to_numpy(float))
            ax.step(
                v,
                np.arange(1, len(v) + 1) / len(v),
                where="post",
                label=name,
                color=f"C{h % 10}",
                ls=SOURCE_STYLES[k % 4],
            )
    units.set_axis(ax.xaxis, figure.x, data, values=data["value"])
    ax.set_ylabel("fraction of runs ≤ x")
    ax.set_ylim(0, 1.02)
    if figure.hue or folders != [None]:
        # A CDF rises from the lower left to the upper right: the lower right is free
        # (and loc="best" would test every step of every curve).
        ax.legend(fontsize=8, loc="lower right")
