"""Time series (e.g. throughput over time) with event markers (records named `event:<label>`)."""

from __future__ import annotations

import re

from nicbench.report.figures.common import (
    SOURCE_STYLES,
    Drawn,
    Units,
    empty_figure,
    from_zero_when_flat,
    hue_groups,
    main_source,
    source_groups,
    sources,
    where,
)


def event_kind(label: str) -> str:
    """The legend entry of an event: its label without parenthesized details and with its
    numbers as N, so that e.g. every "matcher rehash to 65536 entries (group 1)" of a run
    shares one entry instead of one per table size and group."""
    kind = re.sub(r"\s*\([^)]*\)", "", label)
    return re.sub(r"\d[\d,.]*", "N", kind).strip() or label


def draw(ax, records, figure, units: Units) -> Drawn:
    timed = records[(records["status"] == "ok") & records["t"].notna()]
    data = where(timed, figure)
    series = data[data["metric"] == figure.y]
    if series.empty:
        raise empty_figure(timed[timed["metric"] == figure.y], figure, figure.y, "time-series records", units)
    n_hues, colors = 0, {}
    folders = sources(series)
    for h, (value, label, hue_frame) in enumerate(hue_groups(series, figure.hue, units)):
        n_hues = h + 1
        colors[value] = f"C{h % 10}"
        # One colour per hue value: every run of it is drawn alike (the label is on the first);
        # each result folder its own line style.
        for k, name, frame in source_groups(hue_frame, label, folders):
            for i, (_, run_frame) in enumerate(frame.groupby("run", sort=True)):
                run_frame = run_frame.sort_values("t")
                ax.plot(
                    run_frame["t"],
                    run_frame["value"],
                    lw=1.2,
                    alpha=0.85,
                    ls=SOURCE_STYLES[k % 4],
                    label=name if i == 0 else None,
                    color=colors[value],
                )
    # Events of the report's own runs only: another folder's would repeat them or crowd the legend.
    events = main_source(data)
    events = events[events["metric"].fillna("").str.startswith("event:")]
    kinds = events["metric"].str.removeprefix("event:").map(event_kind)
    # One colour and one legend entry per kind of event, with how many times it happened.
    for j, (kind, frame) in enumerate(events.groupby(kinds, sort=True)):
        times = sorted(frame["t"].unique())
        label = kind if len(times) == 1 else f"{kind} (×{len(times)})"
        for k, t in enumerate(times):
            ax.axvline(t, color=f"C{(n_hues + j) % 10}", ls="--", lw=1, label=label if k == 0 else None)
    units.set_axis(ax.xaxis, "t")
    units.set_axis(ax.yaxis, figure.y, series)
    from_zero_when_flat(ax, series["value"].to_numpy(float))
    if figure.hue or not events.empty or folders != [None]:
        # Outside the axes: a timeline has no free corner to rely on, and loc="best" would
        # test every vertex of every run (seconds per figure for 8 s timelines at 10 ms bins).
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
        # Widen the figure for it, so the plot keeps its size.
        width_in, height_in = ax.figure.get_size_inches()
        ax.figure.set_size_inches(width_in + 3.6, height_in)
    return Drawn(
        "timeseries",
        figure.y,
        units.unit(figure.y, series),
        (),
        colors,
        main_source(where(records[records["status"] == "ok"], figure)),
    )
