"""The targets on the REAL native engine (skipped when this build has no nicbench._native.vnic_simulate)."""

from __future__ import annotations

import pytest

import nicbench._native as native
from nicbench import vnic
from nicbench.experiments.targets import RunContext, get_target

pytestmark = pytest.mark.skipif(not hasattr(native, "vnic_simulate"), reason="native engine not built")


def _metrics(name: str, **params) -> dict:
    t = get_target(name)
    rows = t.run({**t.defaults(), **params}, RunContext(seed=3, rep=0, target=t))
    return {m: v for m, v, _, ts in rows if ts is None}


def test_forward_table0_below_and_above_the_knee():
    low = _metrics("vnic.forward", rules=1000, duration=20_000_000)
    high = _metrics("vnic.forward", rules=65536, duration=20_000_000)
    assert low["offered_gbps"] == pytest.approx(100.0, rel=0.01) and low["loss_ratio"] < 0.01
    assert high["loss_ratio"] > 0.9 and high["root_table_occupancy"] == pytest.approx(1.0)


def test_install_rate_completes_its_batch():
    m = _metrics("vnic.install_rate", group=1, rules=2000, op="insert")
    assert m["install_complete"] == 1.0 and m["install_rate_krules_s"] > 1.0


def test_same_seed_same_result():
    sc = vnic.scenario(rules=vnic.generated_rules(100), duration_ns=5_000_000, traffic=vnic.parse_gen(""), seed=9)
    a, b = vnic.simulate(sc), vnic.simulate(sc)
    a.pop("sim"), b.pop("sim")
    assert a == b
