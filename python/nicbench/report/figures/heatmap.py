"""Heatmap: a statistic of metric `z` over two parameters `x` and `y`, cells annotated."""

from __future__ import annotations

import numpy as np

from nicbench.experiments.stats import summarize
from nicbench.report.figures.common import Units, main_source, metric_values


def draw(ax, records, figure, units: Units) -> None:
    # A cell holds one value: the report's own results (the other folders are in its tables).
    data = main_source(metric_values(records, figure, figure.z, units))
    summary = summarize(data, by=[figure.x, figure.y])
    grid = summary.pivot_table(index=figure.y, columns=figure.x, values=figure.stat, aggfunc="first")
    grid = grid.sort_index().sort_index(axis=1)
    values = grid.to_numpy(float)
    image = ax.imshow(values, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(grid.columns)), [units.text(figure.x, v) for v in grid.columns])
    ax.set_yticks(range(len(grid.index)), [units.text(figure.y, v) for v in grid.index])
    if values.size <= 100:
        finite = values[np.isfinite(values)]
        mid = (finite.min() + finite.max()) / 2 if finite.size else 0
        for (i, j), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=7, color="black" if v > mid else "white")
    ax.figure.colorbar(image, ax=ax, label=f"{units.label(figure.z, data)}, {figure.stat}")
    ax.set_xlabel(units.title(figure.x))
    ax.set_ylabel(units.title(figure.y))
