"""The pam21 specs run one repetition per point (`repeat = 1`) because the ConnectX model's result
does not depend on the run's seed there: this test runs points of every pam21 spec, shortened, under
the seeds of repetitions 0 and 1 (as the runner derives them) and requires every metric and time-series
sample to agree bit for bit, the simulator's own speed (`sim_wall_s`, `sim_mpps`) aside.

The seed draws the flows' addresses and the generated rules' values; the steering model's costs
depend on how many there are (expected collisions, working sets), not on which values they take.
Should a model change make a point seed-dependent, this test fails and the specs need `repeat = 5`
(the paper's five runs) again."""

from __future__ import annotations

import math

import pytest
from helpers import STUDIES

from nicbench.experiments.keys import derive_seed
from nicbench.experiments.spec import load_spec
from nicbench.experiments.targets import RunContext
from nicbench.vocab.study import load_study

PAM21 = STUDIES / "pam21"
WALL_CLOCK_METRICS = {"sim_wall_s", "sim_mpps"}
POINTS_PER_SPEC = 4


def _shortened(target: str, p: dict) -> dict:
    """The point with less virtual time and smaller batches (the seed enters the same way)."""
    p = dict(p)
    if target == "connectx.forward":
        p["duration"] = min(p["duration"], 3_000_000)
    elif target == "connectx.rate_install":
        p["duration"] = min(p["duration"], 20_000_000)
    elif target == "connectx.batch_install":
        p.update(start=50_000_000, duration=250_000_000, bin=10_000_000, batch=min(p["batch"], 300))
    elif target == "connectx.install_rate":
        p["rules"] = min(p["rules"], 3000)
    else:
        raise AssertionError(f"a pam21 spec uses target {target}: shorten its points here")
    return p


def _spread(points: list[dict], n: int) -> list[dict]:
    """n points spread over the sweep (its first and last among them)."""
    if len(points) <= n:
        return points
    return [points[round(i * (len(points) - 1) / (n - 1))] for i in range(n)]


def _rows(spec, point: dict, rep: int) -> dict:
    seed = derive_seed(spec.seed, point, rep)
    rows = spec.target.run(point, RunContext(seed=seed, rep=rep, target=spec.target))
    return {(metric, t): value for metric, value, _unit, t in rows if metric not in WALL_CLOCK_METRICS}


@pytest.mark.parametrize("path", load_study(PAM21).experiments, ids=lambda p: p.stem)
def test_pam21_points_do_not_depend_on_the_seed(path):
    spec = load_spec(path)
    assert spec.repeat == 1, "the pam21 specs run one repetition: the model gives the same result for every seed"
    for point in _spread(spec.points(), POINTS_PER_SPEC):
        p = _shortened(spec.target.name, point)
        a, b = _rows(spec, p, 0), _rows(spec, p, 1)
        assert derive_seed(spec.seed, p, 0) != derive_seed(spec.seed, p, 1)
        assert a.keys() == b.keys(), f"{path.stem} {p}: other metrics under another seed"
        differ = {k: (a[k], b[k]) for k in a if not (a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])))}
        assert not differ, f"{path.stem} {p}: the seed changes {sorted(differ)[:5]}"
        assert any(math.isfinite(v) and v != 0 for v in a.values()), f"{path.stem} {p}: nothing measured"
