"""Line with error bars: a statistic of a metric across repetitions vs a parameter, per hue.

Error bars: ± one standard deviation around the mean when `stat = "mean"`; the inter-quartile
range (p25..p75) for any other statistic.
"""

from __future__ import annotations

import numpy as np

from nicbench.experiments.stats import summarize
from nicbench.report.figures.common import (
    SOURCE,
    SOURCE_MARKERS,
    SOURCE_STYLES,
    Drawn,
    Units,
    hue_groups,
    main_source,
    metric_values,
    source_groups,
    sources,
    where,
)


def draw(ax, records, figure, units: Units) -> Drawn:
    data = metric_values(records, figure, figure.y, units)
    folders = sources(data)
    by = [figure.x] + ([figure.hue] if figure.hue else []) + ([SOURCE] if folders != [None] else [])
    summary = summarize(data, by=by)
    summary = summary[summary[figure.x].notna()]
    lines = []
    for value, label, hue_frame in hue_groups(summary, figure.hue, units):
        # One colour per hue value; each result folder of it its own line style and marker.
        for i, series, frame in source_groups(hue_frame, label, folders):
            frame = frame.sort_values(figure.x)
            y = frame[figure.stat].to_numpy(float)
            if figure.stat == "mean":
                err = np.nan_to_num(frame["std"].to_numpy(float))
                yerr = [err, err]
            else:
                yerr = [y - frame["p25"].to_numpy(float), frame["p75"].to_numpy(float) - y]
            lines.append((value, i, series, frame[figure.x].to_numpy(float), y, yerr))
    colors = {}
    every = np.concatenate([y for *_, y, _ in lines]) if lines else np.array([])
    every = every[np.isfinite(every)]
    span = float(every.max() - every.min()) if every.size else 0.0
    for k, (value, i, series, x, y, yerr) in enumerate(lines):
        bars = ax.errorbar(
            x,
            y,
            yerr=yerr,
            marker=SOURCE_MARKERS[i % 4],
            ms=4,
            capsize=3,
            label=series and series + _hidden_under(lines, k, span),
            color=colors.get(value),
            ls=SOURCE_STYLES[i % 4],
        )
        colors.setdefault(value, bars.lines[0].get_color())
    units.set_axis(ax.xaxis, figure.x, values=summary[figure.x])
    units.set_axis(ax.yaxis, figure.y, data, stat=figure.stat)
    if figure.hue or folders != [None]:
        ax.legend(fontsize=8)
    # A numeric axis: any x value has its place, swept or not.
    return Drawn(
        "line",
        figure.y,
        units.unit(figure.y, data),
        (figure.stat,),
        colors,
        main_source(where(records, figure)),
        position=lambda x, hue: float(x),
    )


def _hidden_under(lines: list, k: int, span: float) -> str:
    """` (≈ flows=128K, under it)` when a series drawn later lies on this one (within 1% of the
    plot's y `span`, or of each value): its line covers this one, which the legend would otherwise
    list with no line to be seen (Fig. 8's 64K and 128K flows differ by 0.3%)."""
    _, i, _, x, y, _ = lines[k]
    for _, j, later, x2, y2, _ in lines[k + 1 :]:
        if j != i or len(x2) != len(x) or not np.array_equal(x2, x):
            continue
        gap = np.abs(y2 - y)
        with np.errstate(divide="ignore", invalid="ignore"):
            close = (gap <= 0.01 * span) | (gap <= 0.01 * np.abs(y)) | (np.isnan(y) & np.isnan(y2))
        if close.all():
            return f" (≈ {later}, under it)"
    return ""
