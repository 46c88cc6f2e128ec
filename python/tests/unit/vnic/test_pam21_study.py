"""The pam21 study: specs load, every reference selects exactly one point, reference.toml is current,
and the targets run end to end through the harness (on the fake engine)."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
from helpers import REPO, STUDIES

from nicbench.calibrate.problem import build_problem
from nicbench.experiments.reproduce import reproduce_study
from nicbench.experiments.spec import load_spec, parse_spec
from nicbench.experiments.study import load_study
from nicbench.experiments.targets import RunContext, get_target

PAM21 = STUDIES / "pam21"

DATA = REPO.parent / "shared" / "data" / "pam21-cx5"


def test_study_loads_with_references_in_both_sets():
    study = load_study(PAM21)
    assert len(study.experiments) == 12
    sets = {r.set for r in study.references}
    assert sets == {"calibration", "validation"}
    assert sum(r.id.startswith("text-") for r in study.references) >= 30, "every published number of the seeds"
    assert all(r.where.get("nic") == "connectx5" for r in study.references)


def test_every_reference_selects_exactly_one_point():
    study = load_study(PAM21)
    problem = build_problem(study, study.references)  # raises on 0 or several matching points
    assert len(problem.ref_point) == len(study.references)
    names = {load_spec(p).name for p in study.experiments}
    assert {r.experiment for r in study.references} <= names


@pytest.mark.skipif(not DATA.is_dir(), reason="digitized data folder not present")
def test_reference_file_is_generated_from_the_data(tmp_path):
    out = tmp_path / "reference.toml"
    subprocess.run([sys.executable, str(PAM21 / "make_reference.py"), "--data", str(DATA), "--out", str(out)],
                   check=True, capture_output=True)
    assert out.read_text() == (PAM21 / "reference.toml").read_text(), "re-run studies/pam21/make_reference.py"


def test_specs_run_unchanged_on_another_profile():
    for path in load_study(PAM21).experiments:
        spec = load_spec(path, sets={"nic": "connectx6"})
        assert all(p["nic"] == "connectx6" for p in spec.points())


def _ctx(name: str) -> RunContext:
    return RunContext(seed=7, rep=0, target=get_target(name))


def test_forward_target_reports_contract_metrics(fake_native):
    t = get_target("vnic.forward")
    params = {**t.defaults(), "rules": 60000, "duration": 50_000_000}
    rows = t.run(params, _ctx("vnic.forward"))
    metrics = {m: v for m, v, _, ts in rows if ts is None}
    assert metrics["offered_gbps"] == pytest.approx(100.0)
    assert metrics["loss_ratio"] > 0.99, "fake root table collapses above the knee"
    assert metrics["root_table_occupancy"] == pytest.approx(60000 / 65536)
    assert math.isnan(metrics["latency_ratio"])


def test_forward_baseline_one_table_gives_ratios(fake_native):
    t = get_target("vnic.forward")
    params = {**t.defaults(), "groups": 16, "rules": 100000, "duration": 50_000_000, "baseline": "one_table"}
    metrics = {m: v for m, v, _, ts in t.run(params, _ctx("vnic.forward")) if ts is None}
    assert metrics["latency_ratio"] == pytest.approx(1 + 0.6 * 15)
    assert metrics["rx_ratio"] < 0.5


def test_batch_install_records_timeline_events_and_outage(fake_native):
    t = get_target("vnic.batch_install")
    params = {**t.defaults(), "batch": 10000, "duration": 4_000_000_000, "bin": 100_000_000}
    rows = t.run(params, _ctx("vnic.batch_install"))
    series = [(ts, v) for m, v, _, ts in rows if m == "rx_gbps" and ts is not None]
    events = [m for m, _, _, ts in rows if m.startswith("event:")]
    metrics = {m: v for m, v, _, ts in rows if ts is None}
    assert len(series) == 40 and events
    assert metrics["outage_s"] == pytest.approx(0.25, abs=0.1)  # 10k × 25 µs
    assert metrics["recovered"] == 1.0 and metrics["lost_packets"] > 1e6


def test_rate_install_same_core_costs_throughput(fake_native):
    t = get_target("vnic.rate_install")
    base = {**t.defaults(), "duration": 50_000_000, "install_rate": 10000.0}
    same = {m: v for m, v, _, ts in t.run({**base, "core": "same", "baseline": "no_install"},
                                          _ctx("vnic.rate_install")) if ts is None}
    distinct = {m: v for m, v, _, ts in t.run({**base, "core": "distinct"}, _ctx("vnic.rate_install")) if ts is None}
    assert same["rx_drop_gbps"] > 50 > distinct["rx_drop_gbps"]
    assert same["latency_mean_ratio"] > 1.5


def test_install_rate_target_and_ratio(fake_native):
    t = get_target("vnic.install_rate")
    params = {**t.defaults(), "group": 0, "rules": 1000, "match": "ipv6", "versus_match": "ipv4"}
    metrics = {m: v for m, v, _, ts in t.run(params, _ctx("vnic.install_rate")) if ts is None}
    assert metrics["install_rate_krules_s"] == pytest.approx(1 / 0.0225, rel=1e-6)
    assert metrics["rate_ratio"] == pytest.approx(1 / 0.9)
    assert metrics["install_complete"] == 1.0


def test_a_small_study_reproduces_with_report(fake_native, tmp_path):
    """Two quick specs through `reproduce` (runner, store, report, comparison) on the fake engine."""
    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "a.toml").write_text((PAM21 / "experiments" / "fig2a.toml").read_text()
                                                   .replace('duration = "200ms"', 'duration = "20ms"'))
    (folder / "experiments" / "b.toml").write_text((PAM21 / "experiments" / "fig3.toml").read_text()
                                                   .replace('duration = "8s"', 'duration = "3s"')
                                                   .replace('bin = "10ms"', 'bin = "100ms"'))
    (folder / "study.toml").write_text('[study]\nname = "mini"\nexperiments = ["experiments/a.toml", '
                                       '"experiments/b.toml"]\n')
    (folder / "reference.toml").write_text((PAM21 / "reference.toml").read_text())
    study = load_study(folder)
    outcome = reproduce_study(study, results=tmp_path / "results", reports=tmp_path / "reports", jobs=1, repeat=2)
    summary = outcome.as_dict()
    assert summary["references"] > 20 and summary["passed"] > 0
    assert (tmp_path / "reports" / "mini" / "index.html").is_file()
    assert all(r.failed == 0 for r in outcome.runs)


def test_spec_error_names_vnic_parameters():
    with pytest.raises(Exception, match="has no parameter 'tables'"):
        parse_spec('[experiment]\nname = "x"\ntarget = "vnic.forward"\n[params]\ntables = 4\n')
