"""Axis labels and ticks: values stored in base units are shown with SI prefixes, names and units as
people write them ("Throughput (Gb/s), median", not "gbps [Gbps] (median)")."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from nicbench.experiments.spec import FigureSpec  # noqa: E402
from nicbench.report.figures import line  # noqa: E402
from nicbench.report.figures.common import Units  # noqa: E402


def test_base_units_get_prefixed_ticks_and_a_bare_title():
    u = Units(params={"rate": "bps", "duration": "ns", "rules": ""}, metrics={"rx_gbps": "Gbps"})
    assert u.text("rate", 1e11) == "100 Gb/s"
    assert u.text("duration", 50_000) == "50 µs"
    assert Units(metrics={"lat": "us"}).text("lat", 30.0) == "30 µs"
    assert u.text("rules", 65536) == "65,536" and u.text("rules", 2_000_000) == "2M"  # counts
    assert u.title("rate") == "Rate" and u.title("rx_gbps") == "Received throughput (Gb/s)"


def test_line_figure_ticks_read_in_gbps():
    runs = [
        {
            "run": f"r{i}",
            "status": "ok",
            "t": None,
            "metric": "rx_gbps",
            "unit": "Gbps",
            "value": 10.0 * i,
            "rate": rate,
            "repetition": 0,
        }
        for i, rate in enumerate([25e9, 50e9, 100e9])
    ]
    fig, ax = plt.subplots()
    spec = FigureSpec(kind="line", x="rate", y="rx_gbps")
    line.draw(ax, pd.DataFrame(runs), spec, Units(params={"rate": "bps"}, metrics={"rx_gbps": "Gbps"}))
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ax.get_xlabel() == "Rate" and any(t.endswith("Gb/s") for t in ticks), ticks
    assert ax.get_ylabel() == "Received throughput (Gb/s), mean"
    plt.close(fig)


def test_timeseries_folds_events_into_one_legend_entry_per_kind():
    from nicbench.report.figures import timeseries

    rows = [
        {"run": "r0", "status": "ok", "t": t / 10, "metric": "rx_gbps", "unit": "Gbps", "value": 90.0}
        for t in range(50)
    ]
    rows += [
        {
            "run": "r0",
            "status": "ok",
            "t": 0.5 + i,
            "metric": f"event:matcher rehash to {2 ** (10 + i)} entries (group {i % 2})",
            "unit": "",
            "value": 1.0,
        }
        for i in range(4)
    ]
    rows += [
        {
            "run": "r0",
            "status": "ok",
            "t": 0.2,
            "metric": "event:batch of 1000 operations done (group 1)",
            "unit": "",
            "value": 1.0,
        }
    ]
    fig, ax = plt.subplots()
    timeseries.draw(
        ax, pd.DataFrame(rows), FigureSpec(kind="timeseries", x="t", y="rx_gbps"), Units(metrics={"rx_gbps": "Gbps"})
    )
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["batch of N operations done", "matcher rehash to N entries (×4)"], labels
    assert len(ax.lines) == 1 + 5  # the series and every event still drawn
    plt.close(fig)


def test_log_axis_labels_its_minor_ticks_in_si_units_too():
    # Latency over 25-200 µs on a log axis: matplotlib labels a few minor ticks (the axis spans less
    # than a decade and a half); they read "30 µs" like the major ones, not "3×10¹".
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    ax.plot([0, 1], [25.0, 200.0])
    Units(metrics={"latency_us": "us"}).set_axis(ax.yaxis, "latency_us")
    fig.canvas.draw()
    minor = [t.get_text() for t in ax.get_yticklabels(minor=True) if t.get_text()]
    major = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert minor and all(label.endswith("µs") and "$" not in label for label in minor), minor  # no mathtext
    assert "100 µs" in major and ax.get_ylabel() == "Latency"
    plt.close(fig)


def test_labels_read_as_people_write_them():
    """A metric's name said in words, its unit as written (Gb/s, µs), the statistic after a comma;
    names the table does not list are read from their parts, the unit at their end dropped."""
    from nicbench.report.figures.common import human_name

    u = Units(metrics={"gbps": "Gbps", "mpps": "Mpps", "latency_p99_us": "us", "pcie_mpps_total": "Mpps"})
    fig, ax = plt.subplots()
    u.set_axis(ax.yaxis, "gbps", stat="median")
    assert ax.get_ylabel() == "Throughput (Gb/s), median"
    u.set_axis(ax.yaxis, "mpps", stat="p99")
    assert ax.get_ylabel() == "Packet rate (Mpps), p99"
    u.set_axis(ax.yaxis, "latency_p99_us")  # the ticks carry the unit (µs, ms): not repeated
    assert ax.get_ylabel() == "Latency p99"
    plt.close(fig)
    assert u.label("pcie_mpps_total") == "PCIe packets, all links (Mpps)"
    assert human_name("processed_mpps_per_core") == "Processed packet rate per core"
    assert human_name("outage_s") == "Outage" and human_name("s") == "S"  # a lone unit word stays a name


def test_binary_payloads_tick_in_kib_and_mib():
    """A payload axis swept in powers of two (Wei et al. Fig. 9: 4 KiB .. 16 MiB, log) ticks at powers of
    two labelled 4 KiB .. 16 MiB; a frame-size axis (64 .. 1518 B, not binary) keeps its decimal ticks."""
    payloads = [4096 * 4**k for k in range(7)]  # 4 KiB .. 16 MiB
    rows = [
        {"run": f"r{i}", "status": "ok", "t": None, "metric": "gbps", "unit": "Gbps", "value": 100.0, "payload": p}
        for i, p in enumerate(payloads)
    ]
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    u = Units(params={"payload": "B"}, metrics={"gbps": "Gbps"})
    line.draw(ax, pd.DataFrame(rows), FigureSpec(kind="line", x="payload", y="gbps", stat="median"), u)
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert {"4 KiB", "64 KiB", "1 MiB", "16 MiB"} <= set(ticks), ticks
    assert not any("kB" in t or "MB" in t for t in ticks), ticks
    assert u.text("payload", 1024) == "1 KiB" and u.text("payload", 1500) == "1.5 kB"  # a hue label, a box tick
    plt.close(fig)
    frames = [{**r, "payload": s} for r, s in zip(rows, [64, 128, 256, 512, 1024, 1280, 1518])]
    fig, ax = plt.subplots()
    line.draw(ax, pd.DataFrame(frames), FigureSpec(kind="line", x="payload", y="gbps", stat="median"), u)
    fig.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert any(t.endswith(" kB") for t in ticks) and not any("KiB" in t for t in ticks), ticks
    plt.close(fig)
