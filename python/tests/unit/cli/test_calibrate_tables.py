"""The few-shot fit's report as printed: parameter names whole (a user types them back in --set), a 1σ
wider than the parameter's bounds said so, and whole rows when piped."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest
from rich.console import Console

from nicbench.calibrate.identify import ParamCertainty
from nicbench.cli import calibrate as cal
from nicbench.cli import common

LONG = "root_insert_overflow_us_per_entry"


def _outcome():
    free = SimpleNamespace(
        name=LONG, free=True, reason="moves 10 runs by 46.6 tolerances over its range, 70% of it its own"
    )
    loose = SimpleNamespace(name="root_lookup_base_ns", free=True, reason="moves 5 runs by 10.9 tolerances")
    kept = SimpleNamespace(name="nic_buffer_bytes", free=False, reason="too weak: moves little")
    summary = {"entries": 42, "passed": 30, "median_abs_rel_error": 0.05}
    return SimpleNamespace(
        profile="mine.toml",
        base="connectx5",
        study="pam21",
        points=42,
        selection=[free, loose, kept],
        parameters={
            LONG: {"start": 1.0, "fitted": 1.1, "low": 0.1, "high": 10.0},
            "root_lookup_base_ns": {"start": 77.0, "fitted": 94.7, "low": 10.0, "high": 500.0},
        },
        certainty={
            LONG: ParamCertainty(1.1, 0.02, 0.018, True, "", 0.1, ""),
            "root_lookup_base_ns": ParamCertainty(
                94.7, 1.8e18, 1.9e16, False, "its 1-sigma interval spans its bounds", 0.0, ""
            ),
        },
        never_freed=[],
        zero_shot=summary,
        fitted=summary,
        errors={},
        runs=100,
        elapsed_s=3.0,
        written=True,
    )


@pytest.mark.parametrize("terminal", [True, False])
def test_fewshot_table_keeps_parameter_names_whole_at_80_columns(monkeypatch, terminal):
    buf = io.StringIO()
    console = Console(file=buf, width=80, force_terminal=terminal, no_color=True)
    monkeypatch.setattr(common.stdout_console, "_console", console)
    cal._print_fewshot(_outcome(), as_json=False)
    text = buf.getvalue()
    assert LONG in text
    assert "root_lookup_base_ns" in text
    assert "> its bounds" in text
    assert "1,800,000" not in text and "…" not in text.split("error on the measurements")[0]


def test_sigma_cell_gives_a_number_inside_the_bounds():
    p = {"low": 0.0, "high": 10.0}
    assert cal._sigma_cell(ParamCertainty(5.0, 0.5, 0.1, True, "", 0.0, ""), p) == "0.5 (10%)"
    assert cal._sigma_cell(ParamCertainty(5.0, 11.0, 2.2, False, "x", 0.0, ""), p) == "> its bounds"
    assert cal._sigma_cell(None, p) == "–"
