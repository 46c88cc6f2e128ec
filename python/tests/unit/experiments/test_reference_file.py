"""The reference-file writer: what it writes reads back as the same values, in a fixed spelling."""

import tomllib

import pytest

from nicbench.experiments.reference_file import OPTIONAL_KEYS, REFERENCE_KEYS, render_references, toml_value


def _entry(**over):
    e = {
        "id": "x-1",
        "quote": 'says "42 Mpps"',
        "location": "seed 000, §3",
        "experiment": "e",
        "where": {"size": 64, "nic": "connectx5", "rate_gbps": 3.5},
        "metric": "mpps",
        "statistic": "median",
        "value": 42.0,
        "unit": "Mpps",
        "tolerance": {"relative": 0.15},
        "set": "validation",
    }
    e.update(over)
    return e


def test_rendered_file_reads_back_as_the_entries():
    entries = [_entry(), _entry(id="x-2", value=0.123456789, set="calibration")]
    doc = tomllib.loads(render_references(["# header"], entries))
    assert [{k: r[k] for k in REFERENCE_KEYS} for r in doc["reference"]] == entries


def test_float_spelling_is_fixed():
    assert toml_value(42.0) == "42.0" and isinstance(tomllib.loads(f"v = {toml_value(42.0)}")["v"], float)
    assert toml_value(1e20) == "1e+20"
    assert toml_value(0.1234567891, round_digits=6) == "0.123457"
    assert toml_value(True) == "true" and toml_value(7) == "7"


def test_optional_keys_are_written_only_when_present():
    entries = [_entry(low=40.0, high=44.5, derived_from=["a-1", "b-2"], echo="an input"), _entry(id="x-2")]
    doc = tomllib.loads(render_references([], entries))
    assert {k: doc["reference"][0][k] for k in OPTIONAL_KEYS} == {
        "low": 40.0,
        "high": 44.5,
        "derived_from": ["a-1", "b-2"],
        "echo": "an input",
    }
    assert not set(OPTIONAL_KEYS) & set(doc["reference"][1])


def test_unknown_types_are_refused():
    assert toml_value(["a", 1.5]) == '["a", 1.5]'
    with pytest.raises(TypeError, match="set"):
        toml_value({1, 2})
