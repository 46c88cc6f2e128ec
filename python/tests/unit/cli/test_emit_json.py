"""`--json` output: valid JSON always (NaN/inf as null, numpy scalars as numbers), indented when
small, compact (the C encoder) when large, the same data either way."""

from __future__ import annotations

import json

import numpy as np

from nicbench.cli import common
from nicbench.cli.common import emit_json


def _emit(data, capsys) -> str:
    emit_json(data)
    return capsys.readouterr().out


def test_non_finite_values_and_numpy_scalars(capsys):
    out = _emit(
        {"a": float("nan"), "b": [np.float32("nan"), np.int64(3), 1.5, float("-inf")], "c": (np.float64("inf"), 2)},
        capsys,
    )
    assert json.loads(out) == {"a": None, "b": [None, 3, 1.5, None], "c": [None, 2]}
    assert "NaN" not in out and "Infinity" not in out
    assert out.startswith("{\n  ")  # small: indented for a reader


def test_large_output_is_compact_and_the_same_data(capsys, monkeypatch):
    monkeypatch.setattr(common, "INDENT_MAX_CHARS", 1000)
    data = {"rows": [{"i": i, "v": i / 7, "nan": float("nan") if i % 5 == 0 else i} for i in range(200)]}
    out = _emit(data, capsys)
    assert "\n " not in out  # compact
    back = json.loads(out)
    assert back["rows"][5] == {"i": 5, "v": 5 / 7, "nan": None} and back["rows"][6]["nan"] == 6
    assert len(back["rows"]) == 200
