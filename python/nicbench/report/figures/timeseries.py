"""Time series (e.g. throughput over time) with event markers (records named `event:<label>`)."""

from __future__ import annotations

from nicbench.report.figures.common import EmptyFigure, Units, hue_groups, where


def draw(ax, records, figure, units: Units) -> None:
    data = where(records[(records["status"] == "ok") & records["t"].notna()], figure)
    series = data[data["metric"] == figure.y]
    if series.empty:
        raise EmptyFigure(f"no time-series records of metric {figure.y!r}")
    for label, frame in hue_groups(series, figure.hue, units):
        for i, (run, run_frame) in enumerate(frame.groupby("run", sort=True)):
            run_frame = run_frame.sort_values("t")
            ax.plot(run_frame["t"], run_frame["value"], lw=1.2, alpha=0.85,
                    label=label if i == 0 else None, color=None)
    events = data[data["metric"].fillna("").str.startswith("event:")]
    for j, (label, frame) in enumerate(events.groupby("metric", sort=True)):
        for k, t in enumerate(sorted(frame["t"].unique())):
            ax.axvline(t, color=f"C{(j + 3) % 10}", ls="--", lw=1,
                       label=label.removeprefix("event:") if k == 0 else None)
    units.set_axis(ax.xaxis, "t")
    units.set_axis(ax.yaxis, figure.y, series)
    if figure.hue or not events.empty:
        ax.legend(fontsize=8)
