"""Boxplot per point (PAM'21 style): box p25..p75, median line, whiskers at p1 and p99."""

from __future__ import annotations

from nicbench.report.figures.common import Units, metric_values


def draw(ax, records, figure, units: Units) -> None:
    data = metric_values(records, figure, figure.y)
    keys = [figure.x] + ([figure.hue] if figure.hue else [])
    groups = list(data.groupby(keys, dropna=False, sort=True))
    values = [frame["value"].dropna().to_numpy(float) for _, frame in groups]
    labels = [", ".join(units.text(n, v) for n, v in zip(keys, k if isinstance(k, tuple) else (k,))) for k, _ in groups]
    ax.boxplot(values, whis=(1, 99), tick_labels=labels, showfliers=True)
    if len(labels) > 6:
        ax.tick_params(axis="x", labelrotation=45)
    ax.set_xlabel(units.title(figure.x) + (f", {figure.hue}" if figure.hue else ""))
    units.set_axis(ax.yaxis, figure.y, data)
