"""Published value vs model: tolerances (absolute, relative) at their edges, unit conversion, and
references that select no row, several rows or a value in another dimension."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from nicbench.experiments.targets import get_target
from nicbench.report.compare import compare, convert
from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import Reference

STATS = ("n", "mean", "std", "min", "p1", "p25", "p50", "p75", "p99", "max", "median")


def ref(value: float = 100.0, kind: str = "relative", tolerance: float = 0.1, **over) -> Reference:
    fields = {
        "id": "r1",
        "quote": "q",
        "location": "seed 000, Fig. 1",
        "experiment": "exp",
        "where": {},
        "metric": "throughput_gbps",
        "statistic": "median",
        "value": value,
        "unit": "Gbps",
        "tolerance_kind": kind,
        "tolerance": tolerance,
        "set": "validation",
    }
    fields.update(over)
    return Reference(**fields)


def summary_row(metric: str = "throughput_gbps", unit: str = "Gbps", median: float = 100.0, **params) -> dict:
    row = {**params, "metric": metric, "unit": unit, **{s: math.nan for s in STATS}}
    row.update(n=5, median=median, p50=median, p99=median * 2, mean=median + 1)
    return row


def one(reference: Reference, rows: list[dict], target: str | None = "synthetic.loss"):
    targets = {"exp": get_target(target)} if target else {}
    [comparison] = compare([reference], {"exp": pd.DataFrame(rows)}, targets)
    return comparison


@pytest.mark.parametrize(
    "model, passes",
    [
        (110.0, True),
        (90.0, True),  # exactly at the edge: |error| = 10% of 100
        (110.0001, False),
        (89.9999, False),
        (100.0, True),
        (math.nan, False),
        (math.inf, False),
    ],
)
def test_relative_tolerance_edges(model, passes):
    assert ref(100.0, "relative", 0.1).passes(model) is passes


def test_relative_tolerance_of_a_negative_value_uses_its_magnitude():
    r = ref(-50.0, "relative", 0.2)
    assert r.passes(-60.0) and r.passes(-40.0) and not r.passes(-60.01) and not r.passes(40.0)


def test_relative_tolerance_of_zero_needs_exactly_zero():
    r = ref(0.0, "relative", 0.5)
    assert r.passes(0.0) and not r.passes(1e-12)


@pytest.mark.parametrize("model, passes", [(103.0, True), (97.0, True), (103.01, False), (96.99, False)])
def test_absolute_tolerance_edges(model, passes):
    assert ref(100.0, "absolute", 3.0).passes(model) is passes


def test_absolute_tolerance_of_zero_value_and_zero_width():
    assert ref(0.0, "absolute", 1.0).passes(-1.0) and not ref(0.0, "absolute", 1.0).passes(1.5)
    assert ref(7.0, "absolute", 0.0).passes(7.0) and not ref(7.0, "absolute", 0.0).passes(7.0000001)


def test_relative_error_sign_and_missing_values():
    assert one(ref(100.0), [summary_row(median=90.0)]).relative_error == pytest.approx(-0.1)
    assert one(ref(-50.0, unit="Gbps"), [summary_row(median=-40.0)]).relative_error == pytest.approx(0.2)
    assert math.isnan(one(ref(0.0, "absolute", 1.0), [summary_row(median=0.5)]).relative_error)
    assert math.isnan(one(ref(), []).relative_error)


def test_pass_and_fail_against_a_summary_row():
    ok = one(ref(100.0, "relative", 0.1), [summary_row(median=109.0)])
    assert (ok.status, ok.model_value, ok.note) == ("pass", 109.0, "")
    bad = one(ref(100.0, "relative", 0.1), [summary_row(median=111.0)])
    assert (bad.status, bad.model_value) == ("fail", 111.0)


def test_the_statistic_named_by_the_reference_is_compared():
    rows = [summary_row(median=100.0)]  # p99 = 200, mean = 101
    assert one(ref(200.0, statistic="p99"), rows).model_value == 200.0
    assert one(ref(101.0, statistic="mean"), rows).status == "pass"
    assert one(ref(100.0, statistic="p99"), rows).status == "fail"


def test_where_selects_one_point_with_values_parsed_by_the_target_schema():
    rows = [summary_row(median=5.0, rate=5e9), summary_row(median=10.0, rate=20e9)]
    c = one(ref(10.0, where={"rate": "20Gbps"}), rows)
    assert (c.status, c.model_value) == ("pass", 10.0)
    assert one(ref(5.0, where={"rate": 5e9}), rows).model_value == 5.0


def test_a_where_value_the_schema_rejects_names_the_reference():
    with pytest.raises(SpecError, match=r"reference r1: where.rate: .*expected a rate"):
        one(ref(where={"rate": "fast"}), [summary_row(rate=5e9)])


def test_references_without_exactly_one_row_are_reported_not_skipped():
    no_experiment = compare([ref()], {}, {})[0]
    assert (no_experiment.status, no_experiment.note) == ("no result", "experiment 'exp' has no results")
    assert math.isnan(no_experiment.model_value)
    assert one(ref(), []).status == "no result"
    assert one(ref(metric="latency_p99_ns"), [summary_row()]).status == "no result"
    unknown_param = one(ref(where={"nic": "connectx5"}), [summary_row(rate=5e9)])
    assert (unknown_param.status, unknown_param.note) == ("no result", "0 matching summary rows")
    no_point = one(ref(where={"rate": "1Gbps"}), [summary_row(rate=5e9)])
    assert no_point.status == "no result"
    two = one(ref(), [summary_row(rate=5e9), summary_row(rate=20e9)])
    assert (two.status, two.note) == ("ambiguous", "2 matching summary rows")
    assert math.isnan(two.model_value)


def test_model_values_are_converted_to_the_reference_unit():
    c = one(ref(2500.0, unit="Mbps", tolerance=0.0), [summary_row(median=2.5, unit="Gbps")])
    assert (c.status, c.model_value) == ("pass", 2500.0)
    loss = one(ref(50.0, "absolute", 1.0, metric="loss", unit="%"), [summary_row("loss", "", median=0.5)])
    assert (loss.status, loss.model_value) == ("pass", 50.0)
    mismatch = one(ref(10.0, unit="Mpps"), [summary_row(median=10.0, unit="Gbps")])
    assert (mismatch.status, mismatch.note) == ("unit mismatch", "cannot convert Gbps to Mpps")
    assert math.isnan(mismatch.model_value)


def test_a_row_without_unit_reads_as_a_plain_number():
    c = one(ref(0.25, unit="", metric="x"), [summary_row("x", None, median=0.25)], target=None)
    assert (c.status, c.model_value) == ("pass", 0.25)


@pytest.mark.parametrize(
    "value, src, dst, expected",
    [
        (1.0, "Gbps", "bps", 1e9),
        (1500.0, "Mbps", "Gbps", 1.5),
        (2.0, "Tbps", "kbps", 2e9),
        (14.88, "Mpps", "kpps", 14880.0),
        (1.0, "Gpps", "pps", 1e9),
        (250.0, "ns", "us", 0.25),
        (3.0, "µs", "us", 3.0),
        (2.0, "ms", "s", 0.002),
        (1.0, "s", "ns", 1e9),
        (1.0, "MiB", "KiB", 1024.0),
        (1.0, "MB", "kB", 1000.0),
        (64.0, "B", "B", 64.0),
        (1.0, "KiB", "B", 1024.0),
        (0.5, "", "%", 50.0),
        (12.5, "%", "", 0.125),
    ],
)
def test_convert_within_a_dimension(value, src, dst, expected):
    assert convert(value, src, dst) == pytest.approx(expected)


@pytest.mark.parametrize(
    "src, dst, message",
    [
        ("Gbps", "Mpps", "cannot convert Gbps to Mpps"),
        ("", "ns", "cannot convert a number to ns"),
        ("furlongs", "B", "cannot convert furlongs to B"),
        ("us", "", "cannot convert us to a number"),
    ],
)
def test_convert_across_dimensions_is_refused(src, dst, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        convert(1.0, src, dst)


def test_unknown_units_convert_only_to_themselves():
    assert convert(3.0, "packets", "packets") == 3.0
