"""Published values over the model's curves, read back from the matplotlib Axes: each marker at the
reference's (x, y) in the figure's unit, on its series, in its class (calibration filled, independent
validation open, restating grey), with the published spread as error bars; and every reference the
figure cannot show reported with why. Synthetic records and references; expectations written here."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from nicbench.experiments.spec import FigureSpec  # noqa: E402
from nicbench.report.figures import draw_figure, render  # noqa: E402
from nicbench.report.figures.common import Units  # noqa: E402
from nicbench.vocab.params import Param  # noqa: E402
from nicbench.vocab.study import Reference  # noqa: E402

DIGITIZED = "shared/data/study-x/fig-2.csv, panel 2a"
TEXT = "shared/seeds/000_x.txt, §3.1"
WHITE, GREY = to_rgba("white"), to_rgba("#c8c8c8")


class FakeTarget:
    """The part of a target the figures use: its parameter schema (to parse a reference's `where`)."""

    PARAMS = {
        "rules": Param("rules", "count"),
        "size": Param("size", "size_bytes"),
        "nic": Param("nic", "str"),
        "rate": Param("rate", "rate_bps"),
        "batch": Param("batch", "count"),
        "start": Param("start", "duration_ns"),
        "core": Param("core", "str"),
    }

    def param(self, name):
        return self.PARAMS.get(name)


def ref(
    id_: str,
    value: float,
    where: dict,
    *,
    metric: str = "rx_gbps",
    unit: str = "Gbps",
    set_: str = "validation",
    location: str = DIGITIZED,
    restates: str | None = None,
    statistic: str = "median",
    **over,
) -> Reference:
    return Reference(
        id=id_,
        quote=f"quote {id_}",
        location=location,
        experiment="exp",
        where=where,
        metric=metric,
        statistic=statistic,
        value=value,
        unit=unit,
        tolerance_kind="relative",
        tolerance=0.1,
        set=set_,
        restates=restates,
        **over,
    )


def rx_records() -> pd.DataFrame:
    """rx_gbps (Gbps) by rules and size, 3 repetitions, one nic: the model's curves."""
    rows = []
    for size in (64, 1500):
        for rules in (1000, 2000, 4000):
            for rep in range(3):
                rows.append(
                    {
                        "run": f"{size}-{rules}-{rep}",
                        "rep": rep,
                        "status": "ok",
                        "t": None,
                        "metric": "rx_gbps",
                        "unit": "Gbps",
                        "value": 100.0 - rules / 100 - size / 100 + rep,
                        "rules": rules,
                        "size": size,
                        "nic": "cx5",
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def ax():
    fig, axes = plt.subplots()
    yield axes
    plt.close(fig)


def artist(ax, gid: str):
    found = [a for a in [*ax.lines, *ax.collections, *ax.texts] if a.get_gid() == gid]
    assert len(found) == 1, f"{gid}: {len(found)} artists"
    return found[0]


def series_color(ax, label: str):
    [container] = [c for c in ax.containers if c.get_label() == label]
    return to_rgba(container.lines[0].get_color())


LINE = FigureSpec(kind="line", x="rules", y="rx_gbps", hue="size", stat="median", where={"nic": "cx5"})


def test_line_markers_sit_on_their_series_in_their_class(ax):
    refs = [
        ref("cal", 90.0, {"nic": "cx5", "size": 64, "rules": 1000}, set_="calibration", low=85.0, high=92.5),
        ref("val", 70000.0, {"nic": "cx5", "size": "1500B", "rules": "2k"}, unit="Mbps", location=TEXT),
        ref("again", 80.0, {"nic": "cx5", "size": 1500, "rules": 4000}, restates="cal"),
        # a point the model did not run: published values are drawn on the numeric axis all the same
        ref("between", 95.0, {"nic": "cx5", "size": 64, "rules": 3000}),
    ]
    marks, skips = draw_figure(ax, LINE, rx_records(), Units(), refs, FakeTarget())
    assert skips == [] and [m.ref.id for m in marks] == ["cal", "val", "again", "between"]
    blue, orange = series_color(ax, "size=64"), series_color(ax, "size=1500")
    expected = {  # id: (x, y in Gbps, face, edge, marker)
        "cal": (1000, 90.0, blue, blue, "D"),
        "val": (2000, 70.0, WHITE, orange, "^"),  # 70,000 Mbps on a Gbps axis; a text value: triangle
        "again": (4000, 80.0, GREY, to_rgba("#707070"), "D"),
        "between": (3000, 95.0, WHITE, blue, "D"),
    }
    for id_, (x, y, face, edge, marker) in expected.items():
        line = artist(ax, f"published:{id_}")
        assert list(line.get_xdata()) == [x] and list(line.get_ydata()) == pytest.approx([y]), id_
        assert to_rgba(line.get_markerfacecolor()) == face and to_rgba(line.get_markeredgecolor()) == edge, id_
        assert line.get_marker() == marker and line.get_linestyle() == "None", id_
    # The published spread of "cal" as its error bar: from low to high at its x.
    [segment] = artist(ax, "published:cal:spread").get_segments()
    assert segment.tolist() == [[1000, 85.0], [1000, 92.5]]
    assert not [a for a in ax.collections if a.get_gid() == "published:val:spread"]  # no spread published
    # Text values carry their id; digitized points do not.
    assert artist(ax, "published:val:label").get_text() == "val"
    assert not [t for t in ax.texts if t.get_gid() == "published:cal:label"]


def test_legend_has_one_entry_per_class_not_per_point(ax):
    refs = [ref(f"v{i}", 90.0 - i, {"size": 64, "rules": r}) for i, r in enumerate((1000, 2000, 4000))]
    refs += [ref(f"c{i}", 80.0 - i, {"size": 1500, "rules": r}, set_="calibration") for i, r in enumerate((1000, 2000))]
    refs.append(ref("t", 60.0, {"size": 1500, "rules": 4000}, location=TEXT))
    draw_figure(ax, LINE, rx_records(), Units(), refs, FakeTarget())
    [legend] = [lg for lg in ax.figure.legends if lg.get_gid() == "published-legend"]
    texts = [t.get_text() for t in legend.get_texts() if t.get_text().strip()]
    # Six points, three classes: three entries; the model's series join them below the plot.
    assert sorted(texts) == [
        "paper, calibration",
        "paper, text value (id)",
        "paper, validation",
        "size=1500",
        "size=64",
    ]
    assert ax.get_legend() is None
    ax.figure.canvas.draw()  # each entry in its row: the model's series, then the paper's classes
    rows = {t.get_text(): round(t.get_window_extent().y0) for t in legend.get_texts() if t.get_text().strip()}
    assert rows["size=64"] == rows["size=1500"] > rows["paper, calibration"] == rows["paper, validation"]


def test_references_the_figure_cannot_show_are_skipped_with_why(ax):
    records = rx_records()
    records = pd.concat([records, records.assign(nic="cx6", run=records["run"] + "-cx6")], ignore_index=True)
    refs = [
        ref("other-metric", 1.0, {"nic": "cx5", "size": 64, "rules": 1000}, metric="loss_ratio", unit=""),
        ref("other-nic", 90.0, {"nic": "cx6", "size": 64, "rules": 1000}),
        ref("open-x", 90.0, {"nic": "cx5", "size": 64}),  # its runs have 3 rules values
        ref("no-series", 90.0, {"nic": "cx5", "size": 512, "rules": 1000}),
        ref("tail", 90.0, {"nic": "cx5", "size": 64, "rules": 1000}, statistic="p99"),
        ref("units", 90.0, {"nic": "cx5", "size": 64, "rules": 1000}, unit="Mpps"),
        ref("open-nic", 90.0, {"size": 64, "rules": 1000}),  # selects runs of both nics
        ref("no-param", 90.0, {"nic": "cx5", "size": 64, "rules": 1000, "rate": "7Gbps"}),  # the runs have no rate
        ref("no-run", 90.0, {"nic": "cx5", "size": 64, "rate": "7Gbps"}),  # selects nothing: rules stays open
        ref("other-flows", 90.0, {"nic": "cx5", "size": 64, "rules": 1000, "flows": 20}),  # the series has 10
        ref("word-x", 90.0, {"nic": "cx5", "size": 64, "rules": "max"}),  # the schema refuses it
    ]
    records["flows"] = 10
    marks, skips = draw_figure(ax, LINE, records, Units(), refs, FakeTarget())
    assert marks == []
    why = {s.ref.id: (s.reason, s.close) for s in skips}
    assert why == {
        "other-metric": ("its metric loss_ratio is not on this figure (rx_gbps)", False),
        "other-nic": ("nic=cx6, the figure shows nic=cx5", True),
        "open-x": ("its where does not fix rules (the runs it selects have 3 values)", True),
        "no-series": ("the model has no series size=512 on this figure", True),
        "tail": ("its statistic (p99) is not what the figure shows (median)", True),
        "units": ("cannot convert Mpps to Gbps (the figure's y axis)", True),
        "open-nic": ("its where does not fix nic (the runs it selects have 2 values)", True),
        "no-param": ("the runs have no parameter rate", True),
        "no-run": ("its where does not fix rules (and selects no model run that would)", True),
        "other-flows": ("flows=20, the figure's series has flows=10", True),
        "word-x": ("where.rules: expected a count such as 10000, 10k or 1M, found 'max'", True),
    }
    assert not [a for a in ax.lines if (a.get_gid() or "").startswith("published:")]


def test_a_value_with_no_place_on_the_axis_is_skipped_not_a_crash(ax):
    # Without a schema the word stays a word: a numeric axis has no place for it.
    marks, skips = draw_figure(
        ax, LINE, rx_records(), Units(), [ref("w", 90.0, {"nic": "cx5", "size": 64, "rules": "max"})], None
    )
    assert marks == [] and [s.reason for s in skips] == ["rules=max is not on this figure's x axis"]


def test_open_parameters_come_from_the_runs_the_reference_selects(ax):
    # The reference does not name the device (one in the runs) nor the hue (one frame size here).
    records = rx_records()
    records = records[records["size"] == 1500]
    marks, skips = draw_figure(ax, LINE, records, Units(), [ref("r", 77.0, {"rules": 2000})], FakeTarget())
    assert skips == [] and [(m.x, m.y) for m in marks] == [(2000.0, 77.0)]


def test_log_axes_put_values_at_or_below_zero_on_their_low_end(ax):
    figure = FigureSpec(kind="line", x="rules", y="rx_gbps", hue="size", stat="median", logx=True, logy=True)
    refs = [
        ref("zero", 0.0, {"size": 64, "rules": 4000}, location=TEXT),
        ref("small", 0.02, {"size": 64, "rules": 2000}),
        ref("no-rules", 99.0, {"size": 64, "rules": 0}, low=97.0, high=99.5),
    ]  # x = 0 on a log axis
    marks, skips = draw_figure(ax, figure, rx_records(), Units(), refs, FakeTarget())
    assert skips == []
    (left, right), (bottom, top) = ax.get_xlim(), ax.get_ylim()
    assert 0 < bottom <= 0.02 and top > 90 and 0 < left < 1000
    zero = artist(ax, "published:zero")
    assert list(zero.get_ydata()) == [bottom] and zero.get_marker() == "v"  # on the axis, pointing down
    assert list(zero.get_xdata()) == [4000]
    assert list(artist(ax, "published:small").get_ydata()) == [0.02]
    no_rules = artist(ax, "published:no-rules")
    assert list(no_rules.get_xdata()) == [left] and list(no_rules.get_ydata()) == [99.0]
    assert no_rules.get_marker() == "<"
    [segment] = artist(ax, "published:no-rules:spread").get_segments()  # its spread is still drawn
    assert segment.tolist() == [[left, 97.0], [left, 99.5]]
    ax.figure.canvas.draw()
    assert ax.get_xlim() == (left, right) and ax.get_ylim() == (bottom, top)  # the markers did not move the axes


def box_records() -> pd.DataFrame:
    rows = [
        {
            "run": f"{p}-{r}",
            "rep": r,
            "status": "ok",
            "t": None,
            "metric": "mpps",
            "unit": "Mpps",
            "value": 70.0 + p + r / 10,
            "processes": p,
        }
        for p in (1, 2)
        for r in range(5)
    ]
    return pd.DataFrame(rows)


def test_box_markers_sit_on_their_box_for_any_statistic_it_shows(ax):
    figure = FigureSpec(kind="box", x="processes", y="mpps")
    refs = [
        ref("one", 71.4, {"processes": 1}, metric="mpps", unit="Mpps", set_="calibration"),
        ref("two-p99", 72.5, {"processes": 2}, metric="mpps", unit="Mpps", statistic="p99"),
        ref("mean", 72.0, {"processes": 2}, metric="mpps", unit="Mpps", statistic="mean"),
        ref("three", 73.0, {"processes": 3}, metric="mpps", unit="Mpps"),
    ]
    marks, skips = draw_figure(ax, figure, box_records(), Units(), refs, None)
    # bxp puts the boxes at 1 and 2 (processes 1 and 2)
    assert list(artist(ax, "published:one").get_xdata()) == [1.0]
    assert list(artist(ax, "published:two-p99").get_xdata()) == [2.0]
    assert list(artist(ax, "published:two-p99").get_ydata()) == [72.5]
    assert {s.ref.id: s.reason for s in skips} == {
        "mean": "its statistic (mean) is not what the figure shows (p1, p25, median, p75, p99)",
        "three": "processes=3 is not on this figure's x axis",
    }


def timeline_records() -> pd.DataFrame:
    """Two batch sizes, 4 s at 0.5 s bins, the batch at 1 s (`start`, in ns), events too."""
    rows = []
    for batch, dip in ((1, 0), (1000, 2)):
        for k in range(9):
            t = k * 0.5
            down = 1.0 <= t < 1.0 + dip
            rows.append(
                {
                    "run": f"b{batch}",
                    "rep": 0,
                    "status": "ok",
                    "t": t,
                    "metric": "rx_gbps",
                    "unit": "Gbps",
                    "value": 0.0 if down else 100.0,
                    "batch": batch,
                    "start": 1_000_000_000,
                    "core": "same",
                }
            )
        rows.append(
            {
                "run": f"b{batch}",
                "rep": 0,
                "status": "ok",
                "t": 1.0,
                "metric": "event:batch starts",
                "unit": "",
                "value": 1.0,
                "batch": batch,
                "start": 1_000_000_000,
                "core": "same",
            }
        )
        for metric, value, unit in (("outage_s", float(dip), "s"), ("lost_packets", 1e6, "packets")):
            rows.append(
                {
                    "run": f"b{batch}",
                    "rep": 0,
                    "status": "ok",
                    "t": None,
                    "metric": metric,
                    "unit": unit,
                    "value": value,
                    "batch": batch,
                    "start": 1_000_000_000,
                    "core": "same",
                }
            )
    return pd.DataFrame(rows)


def test_timeseries_shows_the_level_after_as_a_segment_and_the_outage_as_a_bracket(ax):
    figure = FigureSpec(kind="timeseries", x="t", y="rx_gbps", hue="batch", where={"core": "same"})
    refs = [
        ref("after", 98.0, {"batch": 1000, "core": "same"}, metric="rx_gbps_after", set_="calibration"),
        ref(
            "outage",
            1800.0,
            {"batch": 1000, "core": "same"},
            metric="outage_s",
            unit="ms",
            location=TEXT,
            low=1500.0,
            high=2100.0,
        ),
        ref("none", 0.0, {"batch": 1, "core": "same"}, metric="outage_s", unit="s", restates="x"),
        ref("lost", 1e6, {"batch": 1000, "core": "same"}, metric="lost_packets", unit="packets"),
    ]
    marks, skips = draw_figure(ax, figure, timeline_records(), Units(params={"start": "ns"}), refs, FakeTarget())
    assert [s.ref.id for s in skips] == ["lost"]
    assert skips[0].reason == "a time series shows only rx_gbps_after and outage values, not lost_packets"
    orange = to_rgba("C1")  # batch=1000 is the second series
    after = artist(ax, "published:after")
    assert list(after.get_xdata()) == [3.0, 4.0] and list(after.get_ydata()) == [98.0, 98.0]  # the last second
    assert to_rgba(after.get_color())[:3] == orange[:3]
    end = artist(ax, "published:after:end")
    assert to_rgba(end.get_markerfacecolor()) == orange  # calibration: filled
    # The outage: a bracket from the batch start (1 s) for 1.8 s, its spread 1.5..2.1 s after the start.
    outage = artist(ax, "published:outage")
    assert min(outage.get_xdata()) == 1.0 and max(outage.get_xdata()) == pytest.approx(2.8)
    assert np.asarray(artist(ax, "published:outage:spread").get_xdata()).tolist() == pytest.approx([2.5, 3.1])
    assert to_rgba(artist(ax, "published:outage:end").get_markerfacecolor()) == WHITE
    assert artist(ax, "published:outage:label").get_text() == "outage"
    # A zero outage: a bracket of no length at the start, grey (restates calibration).
    none = artist(ax, "published:none")
    assert set(none.get_xdata()) == {1.0} and to_rgba(none.get_color()) == to_rgba("#707070")
    # Brackets in a strip above the plot (not values on its y axis), one row per series.
    top = ax.get_window_extent().y1
    heights = [line.get_transform().transform((1.0, 1.0))[1] for line in (none, outage)]
    assert top < heights[0] < heights[1]


def test_render_keeps_marks_and_skips_and_names_them_in_the_svg(tmp_path):
    refs = [
        ref("cal", 90.0, {"size": 64, "rules": 1000}, set_="calibration"),
        ref("other", 1.0, {"size": 64, "rules": 1000}, metric="loss_ratio", unit=""),
    ]
    figure = FigureSpec(kind="line", x="rules", y="rx_gbps", hue="size", stat="median", name="fig")
    out = render(figure, rx_records(), tmp_path, Units(), refs, FakeTarget())
    assert [m.ref.id for m in out.marks] == ["cal"] and [s.ref.id for s in out.skips] == ["other"]
    svg = out.svg.read_text()
    assert 'id="published:cal"' in svg and "paper, calibration" in svg


@pytest.mark.parametrize(
    "kind, axes", [("cdf", {"x": "rx_gbps"}), ("heatmap", {"x": "rules", "y": "size", "z": "rx_gbps"})]
)
def test_kinds_without_published_values_say_so(ax, kind, axes):
    marks, skips = draw_figure(
        ax,
        FigureSpec(kind=kind, **axes),
        rx_records(),
        Units(),
        [ref("r", 90.0, {"size": 64, "rules": 1000})],
        FakeTarget(),
    )
    assert marks == []
    assert [(s.reason, s.close) for s in skips] == [(f"a {kind} figure shows no published values", False)]
