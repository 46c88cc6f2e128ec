"""What each figure kind draws, read back from the matplotlib Axes and compared with what the records
imply, computed here with numpy from the raw values (not with the report's own `summarize`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402

from nicbench.experiments.spec import FigureSpec  # noqa: E402
from nicbench.report.figures import EmptyFigure, box, cdf, heatmap, line, render, timeseries  # noqa: E402
from nicbench.report.figures.common import Units  # noqa: E402

# Five repetitions per point, as in PAM'21 ("the 1st, 25th, 50th, 75th and 99th values obtained
# across these 5 iterations"); uneven values so that every statistic differs.
SIZES = [64, 512, 1500]
REPS = {64: [10.0, 11.0, 13.0, 17.0, 30.0], 512: [40.0, 42.0, 41.0, 47.0, 39.0], 1500: [80.0, 20.0, 79.0, 81.0, 83.0]}


def record(metric: str, value: float, rep: int, t=None, status: str = "ok", unit: str = "Mpps", **params) -> dict:
    return {
        "run": f"{sorted(params.items())}-{rep}",
        "rep": rep,
        "status": status,
        "t": t,
        "metric": metric,
        "unit": unit,
        "value": value,
        **params,
    }


def box_records() -> pd.DataFrame:
    rows = [record("mpps", v, rep, size=size) for size, vs in REPS.items() for rep, v in enumerate(vs)]
    rows.append(record("mpps", 999.0, 9, status="error", size=64))  # a failed run: never drawn
    rows.append(record("loss", 5.0, 0, size=64))  # another metric: never drawn
    rows.append(record("mpps", 1e6, 0, t=0.5, size=64))  # a time-series sample: not a repetition
    return pd.DataFrame(rows)


@pytest.fixture
def ax():
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def box_parts(ax, position: int) -> dict:
    """The lines drawn for the box at x = `position` (bxp: whiskers and caps, the box outline,
    the median, the fliers), read back by their shape."""
    parts = {"whiskers": [], "caps": [], "fliers": []}
    for artist in ax.lines:
        x, y = np.asarray(artist.get_xdata(), float), np.asarray(artist.get_ydata(), float)
        if x.size == 0 or not np.all(np.abs(x - position) < 0.5):
            continue
        if artist.get_linestyle() == "None":
            parts["fliers"] = sorted(y)
        elif x.size == 5:
            parts["box"] = (y.min(), y.max())
        elif x[0] == x[1]:
            parts["whiskers"].append(tuple(sorted(y)))
        elif artist.get_color() == plt.rcParams["boxplot.medianprops.color"]:
            parts["median"] = y[0]
        else:
            parts["caps"].append(y[0])
    return parts


def test_box_draws_the_pam21_percentiles_of_each_point(ax):
    box.draw(ax, box_records(), FigureSpec(kind="box", x="size", y="mpps"), Units())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["64", "512", "1500"]
    for position, size in enumerate(SIZES, start=1):
        values = np.array(REPS[size])
        p1, p25, p50, p75, p99 = np.percentile(values, [1, 25, 50, 75, 99])
        parts = box_parts(ax, position)
        assert parts["box"] == pytest.approx((p25, p75)), size
        assert parts["median"] == pytest.approx(p50), size
        assert sorted(parts["caps"]) == pytest.approx([p1, p99]), size
        assert [end for w in sorted(parts["whiskers"]) for end in w] == pytest.approx([p1, p25, p75, p99]), size
        assert parts["fliers"] == sorted(v for v in values if v < p1 or v > p99), size
    assert ax.get_xlabel() == "Size" and ax.get_ylabel() == "Packet rate (Mpps)"


def test_box_marks_points_whose_runs_agree(ax):
    """One run per point (or runs that agree) leave no box, only a median dash: the point gets a marker
    and a legend entry; points with a spread do not."""
    rows = [record("mpps", 5.0, 0, size=64), record("mpps", 7.0, 0, size=512), record("mpps", 7.0, 1, size=512)]
    rows += [record("mpps", v, rep, size=1500) for rep, v in enumerate(REPS[1500])]
    box.draw(ax, pd.DataFrame(rows), FigureSpec(kind="box", x="size", y="mpps"), Units())
    marked = [line for line in ax.lines if line.get_label().startswith("model")]
    assert len(marked) == 1
    assert list(marked[0].get_xdata()) == [1, 2] and list(marked[0].get_ydata()) == [5.0, 7.0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["model (its runs agree: no spread to box)"]


def test_box_without_agreeing_runs_has_no_marker_or_legend(ax):
    box.draw(ax, box_records(), FigureSpec(kind="box", x="size", y="mpps"), Units())
    assert not [line for line in ax.lines if line.get_label().startswith("model")] and ax.get_legend() is None


def test_box_groups_by_hue_and_applies_where(ax):
    rows = [
        record("mpps", v + nic, rep, size=size, nic=nic, duration=1)
        for nic in (0, 100)
        for size, vs in REPS.items()
        for rep, v in enumerate(vs)
    ]
    rows += [record("mpps", -1.0, rep, size=64, nic=0, duration=2) for rep in range(5)]  # filtered out
    figure = FigureSpec(kind="box", x="size", y="mpps", hue="nic", where={"duration": 1})
    box.draw(ax, pd.DataFrame(rows), figure, Units())
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == [f"{size}, {nic}" for size in SIZES for nic in (0, 100)]
    for position, (size, nic) in enumerate([(s, n) for s in SIZES for n in (0, 100)], start=1):
        assert box_parts(ax, position)["median"] == pytest.approx(np.median(np.array(REPS[size]) + nic))
    assert ax.get_xlabel() == "Size, NIC"


def test_cdf_steps_through_every_sorted_value_per_hue(ax):
    rows = [
        record("latency", v, rep, unit="us", load=load)
        for load, vs in ((1, [5.0, 1.0, 3.0, 3.0]), (2, [9.0, 7.0, 8.0]))
        for rep, v in enumerate(vs)
    ]
    rows.append(record("latency", 100.0, 0, t=1.0, unit="us", load=1))  # a time-series sample: left out
    cdf.draw(ax, pd.DataFrame(rows), FigureSpec(kind="cdf", x="latency", hue="load"), Units())
    steps = {artist.get_label(): artist for artist in ax.lines}
    assert set(steps) == {"load=1", "load=2"}
    for label, values in (("load=1", [1.0, 3.0, 3.0, 5.0]), ("load=2", [7.0, 8.0, 9.0])):
        artist = steps[label]
        assert artist.get_drawstyle() == "steps-post"
        assert list(artist.get_xdata()) == values
        assert list(artist.get_ydata()) == pytest.approx([(i + 1) / len(values) for i in range(len(values))])
    # Microseconds read as SI-prefixed seconds on the ticks ("3 µs"), so the title is the bare name.
    assert ax.get_ylim() == (0, 1.02) and ax.get_xlabel() == "Latency"
    assert ax.xaxis.get_major_formatter()(3.0) == "3 µs" and ax.xaxis.get_major_formatter()(2500.0) == "2.5 ms"


def test_cdf_of_time_series_samples_when_there_is_no_scalar(ax):
    rows = [record("rx_gbps", v, 0, t=i / 10) for i, v in enumerate([3.0, 1.0, 2.0])]
    cdf.draw(ax, pd.DataFrame(rows), FigureSpec(kind="cdf", x="rx_gbps"), Units())
    [artist] = ax.lines
    assert list(artist.get_xdata()) == [1.0, 2.0, 3.0]


def test_heatmap_cells_are_the_statistic_of_each_point(ax):
    rows = []
    for i, rules in enumerate([1000, 10000]):
        for j, rate in enumerate([1e9, 1e10, 1e11]):
            for rep in range(3):
                rows.append(record("loss", 10 * i + j + rep * (i + 1), rep, unit="%", rules=rules, rate=rate))
    figure = FigureSpec(kind="heatmap", x="rate", y="rules", z="loss", stat="median")
    heatmap.draw(ax, pd.DataFrame(rows), figure, Units(params={"rate": "bps"}))
    # numpy's own: the median over the 3 repetitions of each (rules, rate), rows = rules ascending.
    expected = np.array(
        [[np.median([10 * i + j + rep * (i + 1) for rep in range(3)]) for j in range(3)] for i in range(2)]
    )
    [image] = ax.images
    assert np.asarray(image.get_array()).tolist() == expected.tolist()
    assert image.origin == "lower"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1 Gb/s", "10 Gb/s", "100 Gb/s"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1000", "10K"]
    cells = {(t.get_position(), t.get_text()) for t in ax.texts}
    assert cells == {((j, i), f"{expected[i, j]:.3g}") for i in range(2) for j in range(3)}
    colorbar = ax.figure.axes[-1]
    assert colorbar.get_ylabel() == "Loss (%), median"


def test_line_points_and_error_bars(ax):
    rows = [record("mpps", v, rep, size=size) for size, vs in REPS.items() for rep, v in enumerate(vs)]
    line.draw(ax, pd.DataFrame(rows), FigureSpec(kind="line", x="size", y="mpps", stat="median"), Units())
    [container] = ax.containers  # an ErrorbarContainer: (data line, caps, (bars,))
    data_line, _, (bars,) = container.lines
    medians = [np.median(REPS[s]) for s in SIZES]
    assert list(data_line.get_xdata()) == SIZES
    assert list(data_line.get_ydata()) == pytest.approx(medians)
    assert isinstance(bars, LineCollection)
    ends = [end for seg in bars.get_segments() for end in seg[:, 1]]  # p25..p75 around the median
    assert ends == pytest.approx([end for s in SIZES for end in np.percentile(REPS[s], [25, 75])])


def test_line_mean_has_standard_deviation_bars(ax):
    rows = [record("mpps", v, rep, size=size) for size, vs in REPS.items() for rep, v in enumerate(vs)]
    line.draw(ax, pd.DataFrame(rows), FigureSpec(kind="line", x="size", y="mpps", stat="mean"), Units())
    [container] = ax.containers
    ends = [end for seg in container.lines[2][0].get_segments() for end in seg[:, 1]]
    expected = [np.mean(REPS[s]) + sign * np.std(REPS[s], ddof=1) for s in SIZES for sign in (-1, 1)]
    assert ends == pytest.approx(expected)


def test_timeseries_draws_each_run_in_time_order(ax):
    rows = [record("rx_gbps", float(v), 0, t=t, batch=1) for t, v in ((0.2, 3), (0.0, 1), (0.1, 2))]
    rows += [record("rx_gbps", float(v), 1, t=t, batch=1) for t, v in ((0.0, 4), (0.1, 5))]
    rows += [record("rx_gbps", float(v), 0, t=t, batch=2) for t, v in ((0.0, 7), (0.1, 8))]
    figure = FigureSpec(kind="timeseries", x="t", y="rx_gbps", hue="batch")
    timeseries.draw(ax, pd.DataFrame(rows), figure, Units())
    drawn = sorted((artist.get_color(), list(artist.get_xdata()), list(artist.get_ydata())) for artist in ax.lines)
    assert drawn == sorted(
        [("C0", [0.0, 0.1, 0.2], [1.0, 2.0, 3.0]), ("C0", [0.0, 0.1], [4.0, 5.0]), ("C1", [0.0, 0.1], [7.0, 8.0])]
    )
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["batch=1", "batch=2"]


@pytest.mark.parametrize(
    "kind, axes",
    [
        ("box", {"x": "size", "y": "nope"}),
        ("line", {"x": "size", "y": "nope"}),
        ("cdf", {"x": "nope"}),
        ("heatmap", {"x": "size", "y": "rep", "z": "nope"}),
        ("timeseries", {"x": "t", "y": "nope"}),
    ],
)
def test_nothing_to_draw_is_an_empty_figure(ax, kind, axes):
    with pytest.raises(EmptyFigure, match="nope"):
        {"box": box, "line": line, "cdf": cdf, "heatmap": heatmap, "timeseries": timeseries}[kind].draw(
            ax, box_records(), FigureSpec(kind=kind, **axes), Units()
        )


def test_render_writes_png_and_svg_of_the_drawn_figure(tmp_path):
    figure = FigureSpec(kind="box", x="size", y="mpps", name="box-fig", logy=True)
    out = render(figure, box_records(), tmp_path, Units())
    assert out.title == "mpps by size"
    assert out.png.read_bytes().startswith(b"\x89PNG") and out.svg.read_text().lstrip().startswith("<?xml")
    # The SVG holds the tick labels of the three points and the title.
    svg = out.svg.read_text()
    assert "mpps by size" in svg and all(f"{s}" in svg for s in SIZES)


def test_line_a_series_covered_by_a_later_one_says_so_in_the_legend(ax):
    """Two hue series 0.3% apart (Fig. 8's 64K and 128K flows) draw one visible line: the legend
    says which one covers the other instead of listing a line nobody can see."""
    ys = {1: [10.0, 20.0, 30.0], 2: [10.03, 20.05, 30.0], 3: [5.0, 25.0, 40.0]}
    rows = [
        record("mpps", y, 0, size=size, flows=flows) for flows, vs in ys.items() for size, y in zip((64, 128, 256), vs)
    ]
    line.draw(ax, pd.DataFrame(rows), FigureSpec(kind="line", x="size", y="mpps", hue="flows"), Units())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "flows=1 (≈ flows=2, under it)",
        "flows=2",
        "flows=3",
    ]


def test_timeseries_that_barely_moves_is_drawn_from_zero(ax):
    """99.8-100 Gbps autoscaled would fill the plot with ±0.1% jitter; drawn from 0 it reads as flat.
    A series that does move (100 → 40) keeps its autoscaled axis."""
    rows = [record("rx_gbps", v, 0, t=t, batch=1) for t, v in ((0.0, 99.8), (0.1, 100.0), (0.2, 99.9))]
    timeseries.draw(ax, pd.DataFrame(rows), FigureSpec(kind="timeseries", x="t", y="rx_gbps"), Units())
    assert ax.get_ylim() == pytest.approx((0.0, 105.0))
    fig, moving = plt.subplots()
    rows = [record("rx_gbps", v, 0, t=t, batch=1) for t, v in ((0.0, 100.0), (0.1, 70.0), (0.2, 40.0))]
    timeseries.draw(moving, pd.DataFrame(rows), FigureSpec(kind="timeseries", x="t", y="rx_gbps"), Units())
    assert moving.get_ylim()[0] > 30.0
    plt.close(fig)


def test_box_and_line_figures_that_barely_move_are_drawn_from_zero():
    """argus-ht's totals (71.0-72.2 Mpps at 1 and 2 processes per core) autoscaled read as a large
    SMT loss; drawn from 0 they read as equal. Values that move, and log axes, keep their autoscale;
    a published value far from the model's counts (its mark must stay on the plot)."""
    from nicbench.report.figures import draw_figure
    from nicbench.report.figures.common import from_zero_when_flat

    flat = pd.DataFrame(
        [
            record("mpps", v, rep, ppc=ppc)
            for ppc, vs in ((1, [72.2, 71.5, 71.6]), (2, [71.2, 71.4, 71.5]))
            for rep, v in enumerate(vs)
        ]
    )
    for kind in ("box", "line"):
        fig, ax = plt.subplots()
        draw_figure(ax, FigureSpec(kind=kind, x="ppc", y="mpps"), flat, Units())
        assert ax.get_ylim()[0] == 0.0, kind
        plt.close(fig)
    fig, ax = plt.subplots()
    draw_figure(ax, FigureSpec(kind="box", x="ppc", y="mpps", logy=True), flat, Units())
    assert ax.get_ylim()[0] > 0.0
    plt.close(fig)
    fig, ax = plt.subplots()
    draw_figure(ax, FigureSpec(kind="box", x="size", y="mpps"), box_records(), Units())
    assert ax.get_ylim()[0] != 0.0
    plt.close(fig)
    fig, ax = plt.subplots()
    assert not from_zero_when_flat(ax, [71.0, 72.2, 100.0]) and from_zero_when_flat(ax, [71.0, 72.2])
    assert not from_zero_when_flat(ax, [-1.0, -1.05]) and not from_zero_when_flat(ax, [0.0, 0.0])
    plt.close(fig)
