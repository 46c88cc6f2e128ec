"""Spec parsing: values checked by the target's schema, ranges, zips, overrides, precise errors."""

from __future__ import annotations

import re

import pytest

from nicbench.experiments import parse_spec
from nicbench.experiments.axes import axis_values
from nicbench.experiments.designs import RandomSubset, ZeroLossSearch
from nicbench.units import UnitError
from nicbench.vocab.errors import SpecError, UnknownTargetError
from nicbench.vocab.params import Param

HEAD = """
[experiment]
name = "t"
target = "synthetic.loss"
repeat = 2
"""


def spec(body: str, **kw):
    return parse_spec(HEAD + body, "t.toml", **kw)


def test_ranges_expand_to_canonical_values():
    assert axis_values("1-4", Param("n", "count")) == [1, 2, 3, 4]
    assert axis_values("0-1 step 0.25", Param("f", "float")) == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert axis_values("0-1 step 0.1", Param("f", "float"))[3] == 0.3  # no 0.30000000000000004
    assert axis_values("1000-65536 x2", Param("n", "int")) == [1000, 2000, 4000, 8000, 16000, 32000, 64000]
    assert axis_values("64B-256B step 64B", Param("s", "size_bytes")) == [64, 128, 192, 256]
    assert axis_values("1Gbps-100Gbps x10", Param("r", "rate_bps")) == [1e9, 1e10, 1e11]
    assert axis_values(["1KiB", 64], Param("s", "size_bytes")) == [1024, 64]
    assert axis_values("64-1518", Param("s", "str")) == ["64-1518"]  # strings are never ranges


@pytest.mark.parametrize(
    "raw, needle",
    [
        ("10-1", "below"),
        ("1-10 x1", "factor > 1"),
        ("0-10 x2", "above 0"),
        ("0-1", "needs a step"),
    ],
)
def test_bad_ranges_say_why(raw, needle):
    kind = "float" if raw == "0-1" else "int"
    with pytest.raises(UnitError, match=needle):
        axis_values(raw, Param("n", kind))


def test_units_are_parsed_and_points_crossed_zipped_overridden():
    s = spec("""
[params]
capacity = "40Gbps"
[sweep]
size = [64, "1500B"]
[[zip]]
rate = ["1Gbps", "10Gbps", "20Gbps"]
duration = ["1ms", "2ms", "500us"]
[[override]]
where = { size = 64 }
set = { sleep = "1us" }
""")
    points = s.points()
    assert len(points) == 6
    assert {p["capacity"] for p in points} == {40e9}
    assert {(p["rate"], p["duration"]) for p in points} == {(1e9, 1_000_000), (1e10, 2_000_000), (2e10, 500_000)}
    assert all(p["sleep"] == (1000 if p["size"] == 64 else 0) for p in points)
    assert s.estimated_runs() == 12


def test_spec_error_names_file_key_and_expectation():
    with pytest.raises(SpecError) as err:
        spec('[sweep]\nrate = ["10Gbps", "fast"]\n')
    assert str(err.value) == "t.toml: key 'sweep.rate': expected a rate such as 100Gbps, found 'fast'"


@pytest.mark.parametrize(
    "body, key",
    [
        ("[params]\nbogus = 1\n", "params.bogus"),
        ('[params]\nsize = "huge"\n', "params.size"),
        ("[params]\nsize = 20\n", "params.size"),  # below the schema's minimum
        ('[sweep]\nduration = "5 parsecs"\n', "sweep.duration"),
        ('[[zip]]\nrate = ["1Gbps"]\nsize = [64, 128]\n', "zip[0]"),
        ('[design]\nkind = "magic"\n', "design.kind"),
        ('[design]\nkind = "zero_loss"\n', "design.hi"),
        ('[design]\nkind = "zero_loss"\nhi = "10Gbps"\n[sweep]\nrate = ["1Gbps"]\n', "sweep.rate"),
        ('[[figure]]\nkind = "line"\nx = "size"\ny = "nope"\n', "figure[0].y"),
        ('[[override]]\nwhere = { size = "x" }\nset = {}\n', "override[0].where.size"),
        ("[unknown]\n", "unknown"),
    ],
)
def test_each_mistake_names_its_key(body, key):
    with pytest.raises(SpecError, match=re.escape(f"t.toml: key '{key}'")):
        spec(body)


def test_unknown_target_lists_known_ones():
    with pytest.raises(UnknownTargetError, match="unknown target 'nope.x'.*synthetic.loss"):
        parse_spec('[experiment]\nname = "t"\ntarget = "nope.x"\n', "t.toml")


def test_invalid_toml_is_a_spec_error():
    with pytest.raises(SpecError, match="t.toml: not valid TOML"):
        parse_spec("[experiment\n", "t.toml")


def test_random_design_picks_a_stable_subset():
    body = '[sweep]\nsize = "64-1064 step 100"\n[design]\nkind = "random"\npoints = 4\nseed = 9\n'
    a, b = spec(body), spec(body)
    assert isinstance(a.design, RandomSubset)
    assert len(a.run_points()) == 4
    assert a.run_points() == b.run_points()
    assert a.estimated_runs() == 8


def test_zero_loss_design_options():
    s = spec('[design]\nkind = "zero_loss"\nhi = "100Gbps"\nresolution = "0.5Gbps"\nloss = { ndr = "0%" }\n')
    assert isinstance(s.design, ZeroLossSearch)
    assert s.design.resolution_abs == 0.5e9 and s.design.loss == {"ndr": 0.0}


def test_set_overrides_unsweep_a_parameter():
    s = spec("[sweep]\nsize = [64, 128]\n", sets={"size": "256B"}, repeat=1)
    assert [p["size"] for p in s.points()] == [256]
    assert s.repeat == 1
