"""The ConnectX targets on the native model: what each PAM'21 experiment reports, end to end."""

from __future__ import annotations

import math

import pytest

from nicbench import connectx
from nicbench.experiments.targets import RunContext, get_target


def _rows(name: str, **params) -> list:
    t = get_target(name)
    return t.run({**t.defaults(), **params}, RunContext(seed=3, rep=0, target=t))


def _metrics(name: str, **params) -> dict:
    return {m: v for m, v, _, ts in _rows(name, **params) if ts is None}


def test_forward_table0_below_and_above_the_knee():
    low = _metrics("connectx.forward", rules=1000, duration=20_000_000)
    high = _metrics("connectx.forward", rules=65536, duration=20_000_000)
    assert low["offered_gbps"] == pytest.approx(100.0, rel=0.01) and low["loss_ratio"] < 0.01
    assert high["loss_ratio"] > 0.9 and high["root_table_occupancy"] == pytest.approx(1.0)
    assert low["root_table_occupancy"] == pytest.approx(1000 / 65536)
    assert math.isnan(low["latency_ratio"]), "no baseline asked for"


def test_forward_baseline_one_table_gives_ratios():
    m = _metrics("connectx.forward", groups=16, rules=100_000, duration=20_000_000, baseline="one_table")
    one = _metrics("connectx.forward", groups=1, rules=100_000, duration=20_000_000)
    assert m["rx_ratio"] == pytest.approx(m["rx_gbps"] / one["rx_gbps"])
    assert m["latency_ratio"] == pytest.approx(m["latency_p50_us"] / one["latency_p50_us"])
    assert m["rx_ratio"] < 0.5 < 1.0 < m["latency_ratio"], "16 chained tables are slower than one (Fig. 2b)"


def test_batch_install_records_timeline_events_and_outage():
    rows = _rows("connectx.batch_install", batch=1000, start=50_000_000, duration=300_000_000, bin=10_000_000)
    series = [(ts, v) for m, v, _, ts in rows if m == "rx_gbps" and ts is not None]
    events = [m for m, _, _, ts in rows if m.startswith("event:")]
    metrics = {m: v for m, v, _, ts in rows if ts is None}
    assert len(series) == 30 and [ts for ts, _ in series] == sorted(ts for ts, _ in series)
    assert any("batch of 1000 insert operations starts" in e for e in events), events
    install_s = metrics["install_s"]
    # A same-core batch on Table 0 stops forwarding while it runs (Fig. 3): the outage is the
    # batch's duration, within a bin at each end.
    assert metrics["outage_s"] == pytest.approx(install_s, abs=0.02)
    assert metrics["recovered"] == 1.0 and metrics["lost_packets"] > 0


def test_rate_install_same_core_costs_throughput():
    base = {"duration": 50_000_000, "install_rate": 20_000.0, "group": 0}
    same = _metrics("connectx.rate_install", core="same", baseline="no_install", **base)
    distinct = _metrics("connectx.rate_install", core="distinct", **base)
    assert distinct["rx_drop_gbps"] < 1.0 < same["rx_drop_gbps"]
    assert same["rx_ratio"] == pytest.approx(same["rx_gbps"] / (same["rx_gbps"] + same["rx_drop_gbps"]), rel=0.05)


def test_generator_setup_moves_the_latency_only():
    """PAM'21's Figs. 3-4 generator (a pcap replayed at its timestamps) adds the profile's
    timed_replay_latency_ns to every packet's latency; throughput and drops stay."""
    from nicbench import profiles

    extra_us = profiles.load("connectx5")["param"]["timed_replay_latency_ns"]["value"] / 1e3
    common = dict(pps=5e6, install_rate=2000.0, core="same", duration=20_000_000)
    play = _metrics("connectx.rate_install", **common)
    replay = _metrics("connectx.rate_install", generator="timed_replay", **common)
    assert replay["latency_mean_us"] == pytest.approx(play["latency_mean_us"] + extra_us, rel=0.01)
    assert replay["rx_gbps"] == play["rx_gbps"] and replay["dropped_packets"] == play["dropped_packets"]


def test_install_period_bunches_the_same_operations():
    common = dict(pps=5e6, install_rate=200_000.0, group=1, core="same", duration=20_000_000)
    one = _metrics("connectx.rate_install", **common)
    bunched = _metrics("connectx.rate_install", install_period=1_000_000, **common)
    assert bunched["install_rules"] == pytest.approx(one["install_rules"], rel=0.1)
    assert bunched["latency_max_us"] > 1.1 * one["latency_max_us"]


def test_install_rate_completes_its_batch_and_compares_matches():
    m = _metrics("connectx.install_rate", group=0, rules=500, match="ipv6", versus_match="ipv4")
    v4 = _metrics("connectx.install_rate", group=0, rules=500, match="ipv4")
    assert m["install_complete"] == 1.0
    assert m["rate_ratio"] == pytest.approx(m["install_rate_krules_s"] / v4["install_rate_krules_s"])
    fast = _metrics("connectx.install_rate", group=1, rules=2000, op="insert")
    assert fast["install_complete"] == 1.0 and fast["install_rate_krules_s"] > 5 * v4["install_rate_krules_s"]


def test_same_seed_same_result():
    sc = connectx.scenario(
        rules=connectx.generated_rules(100), duration_ns=5_000_000, traffic=connectx.parse_gen(""), seed=9
    )
    a, b = connectx.simulate(sc), connectx.simulate(sc)
    a.pop("sim"), b.pop("sim")
    assert a == b
