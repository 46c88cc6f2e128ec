"""Time series (e.g. throughput over time) with event markers (records named `event:<label>`)."""

from __future__ import annotations

from nicbench.report.figures.common import EmptyFigure, Units, hue_groups, where


def draw(ax, records, figure, units: Units) -> None:
    data = where(records[(records["status"] == "ok") & records["t"].notna()], figure)
    series = data[data["metric"] == figure.y]
    if series.empty:
        raise EmptyFigure(f"no time-series records of metric {figure.y!r}")
    n_hues = 0
    for h, (label, frame) in enumerate(hue_groups(series, figure.hue, units)):
        n_hues = h + 1
        # One colour per hue value: every run of it is drawn alike (the label is on the first).
        for i, (run, run_frame) in enumerate(frame.groupby("run", sort=True)):
            run_frame = run_frame.sort_values("t")
            ax.plot(run_frame["t"], run_frame["value"], lw=1.2, alpha=0.85,
                    label=label if i == 0 else None, color=f"C{h % 10}")
    events = data[data["metric"].fillna("").str.startswith("event:")]
    for j, (label, frame) in enumerate(events.groupby("metric", sort=True)):
        for k, t in enumerate(sorted(frame["t"].unique())):
            ax.axvline(t, color=f"C{(n_hues + j) % 10}", ls="--", lw=1,
                       label=label.removeprefix("event:") if k == 0 else None)
    units.set_axis(ax.xaxis, "t")
    units.set_axis(ax.yaxis, figure.y, series)
    if figure.hue or not events.empty:
        # Outside the axes: a timeline has no free corner to rely on, and loc="best" would
        # test every vertex of every run (seconds per figure for 8 s timelines at 10 ms bins).
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        # Widen the figure for it, so the plot keeps its size.
        width_in, height_in = ax.figure.get_size_inches()
        ax.figure.set_size_inches(width_in + 3.6, height_in)
