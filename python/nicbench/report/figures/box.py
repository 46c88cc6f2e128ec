"""Boxplot per point (PAM'21 style): box p25..p75, median line, whiskers at p1 and p99.

The statistics are computed here (numpy's linear percentiles, as `summarize` reports them) and
drawn with `bxp`: matplotlib's `boxplot(whis=(1, 99))` would end the whiskers at the furthest
repetition *inside* p1..p99, so with PAM'21's 5 repetitions (the paper's; the pam21 specs run one,
`--repeat 5` five) they would collapse onto the box and the lowest and highest repetitions would be
drawn as outliers. A point whose runs agree gets a model marker: its box is a dash.
"""

from __future__ import annotations

import numpy as np

from nicbench.report.figures.common import SOURCE, Drawn, Units, human_name, main_source, metric_values, sources, where


def box_stats(values: np.ndarray, label: str) -> dict:
    """What one box shows; repetitions beyond p1 or p99 are drawn as points."""
    if values.size == 0:
        return {
            "label": label,
            "whislo": np.nan,
            "q1": np.nan,
            "med": np.nan,
            "q3": np.nan,
            "whishi": np.nan,
            "fliers": values,
        }
    p1, p25, p50, p75, p99 = np.percentile(values, [1, 25, 50, 75, 99])
    return {
        "label": label,
        "whislo": p1,
        "q1": p25,
        "med": p50,
        "q3": p75,
        "whishi": p99,
        "fliers": values[(values < p1) | (values > p99)],
    }


# What a box shows of its point: the published value of any of these statistics has its place on it.
BOX_STATS = ("p1", "p25", "median", "p75", "p99")


def draw(ax, records, figure, units: Units) -> Drawn:
    data = metric_values(records, figure, figure.y, units)
    keys = [figure.x] + ([figure.hue] if figure.hue else [])
    folders = sources(data)
    groups = list(data.groupby(keys, dropna=False, sort=True))
    points = [k if isinstance(k, tuple) else (k,) for k, _ in groups]
    labels = [", ".join(units.text(n, v) for n, v in zip(keys, point)) for point in points]
    # The report's own boxes (where published values go) are the first of each point's group.
    own_offset = 0.0 if folders == [None] else -(len(folders) - 1) / 2 * (0.8 / len(folders))
    if folders == [None]:
        values = [frame["value"].dropna().to_numpy(float) for _, frame in groups]
        ax.bxp([box_stats(v, label) for v, label in zip(values, labels)], showfliers=True)
        # A point whose runs all agree (one repetition, or a deterministic model) has no box: its median
        # line alone is a dash easily lost under the paper's markers, so it gets a marker of its own.
        flat = [(i + 1, v[0]) for i, v in enumerate(values) if v.size and np.ptp(v) == 0]
        if flat:
            xs, ys = zip(*flat)
            ax.plot(
                xs,
                ys,
                ls="none",
                marker="o",
                ms=4.5,
                color="C1",
                zorder=3,
                label="model (its runs agree: no spread to box)",
            )
            ax.legend(fontsize=8)
    else:
        # Several result folders: side by side at each point, one colour per folder.
        width = 0.8 / len(folders)
        for k, src in enumerate(folders):
            stats = [
                box_stats(frame.loc[frame[SOURCE] == src, "value"].dropna().to_numpy(float), label)
                for (_, frame), label in zip(groups, labels)
            ]
            offset = (k - (len(folders) - 1) / 2) * width
            ax.bxp(
                stats,
                positions=[i + 1 + offset for i in range(len(stats))],
                widths=width * 0.9,
                showfliers=True,
                boxprops={"color": f"C{k % 10}"},
                medianprops={"color": f"C{k % 10}"},
                whiskerprops={"color": f"C{k % 10}"},
                capprops={"color": f"C{k % 10}"},
                manage_ticks=False,
            )
            ax.plot([], [], color=f"C{k % 10}", label=str(src))
        ax.set_xticks(range(1, len(labels) + 1), labels)
        ax.legend(fontsize=8)
    if len(labels) > 6:
        # Slanted and anchored at their tick's end, so that long labels do not print over each other.
        ax.tick_params(
            axis="x", labelrotation=45 if len(labels) <= 12 else 60, labelsize=None if len(labels) <= 12 else 8
        )
        for tick in ax.get_xticklabels():
            tick.set_horizontalalignment("right")
            tick.set_rotation_mode("anchor")
    ax.set_xlabel(units.title(figure.x) + (f", {human_name(figure.hue)}" if figure.hue else ""))
    units.set_axis(ax.yaxis, figure.y, data)

    def position(x, hue):
        """The box of (x, hue) on the categorical axis (bxp puts box i at i + 1); None: no such box."""
        wanted = (x, hue) if figure.hue else (x,)
        return next((i + 1.0 + own_offset for i, point in enumerate(points) if point == wanted), None)

    # Boxes have no colour per hue (the position says which point): one colour apart from the
    # boxes' black and the medians' orange.
    hues = {p[1] for p in points} if figure.hue else {None}
    return Drawn(
        "box",
        figure.y,
        units.unit(figure.y, data),
        BOX_STATS,
        {h: "C3" for h in hues},
        main_source(where(records, figure)),
        position=position,
    )
