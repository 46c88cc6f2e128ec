"""The pam21 study: specs load, every reference selects exactly one point, reference.toml is current
(regenerated from the digitized data), and a small study reproduces end to end on the native model."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers import STUDIES, missing, shared_data_dir

from nicbench.calibrate.problem import build_problem
from nicbench.experiments.spec import load_spec, parse_spec
from nicbench.reproduce import reproduce_study
from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import load_study

PAM21 = STUDIES / "pam21"


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


def test_reference_file_is_generated_from_the_data(tmp_path):
    data = shared_data_dir() / "pam21-cx5"
    if not data.is_dir():
        missing(f"digitized PAM'21 data not found at {data} (put the shared/ folder beside the checkout)")
    out = tmp_path / "reference.toml"
    subprocess.run(
        [sys.executable, str(PAM21 / "make_reference.py"), "--data", str(data), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    assert out.read_text() == (PAM21 / "reference.toml").read_text(), "re-run studies/pam21/make_reference.py"


def test_specs_run_unchanged_on_another_profile():
    for path in load_study(PAM21).experiments:
        spec = load_spec(path, sets={"nic": "connectx6"})
        assert all(p["nic"] == "connectx6" for p in spec.points())


def test_a_small_study_reproduces_with_report(tmp_path):
    """Two quick specs through `reproduce` (runner, store, report, comparison) on the native model."""
    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "a.toml").write_text(
        (PAM21 / "experiments" / "fig2a.toml").read_text().replace('duration = "200ms"', 'duration = "20ms"')
    )
    (folder / "experiments" / "b.toml").write_text(
        (PAM21 / "experiments" / "fig3.toml")
        .read_text()
        .replace('duration = "8s"', 'duration = "2.3s"')
        .replace('bin = "10ms"', 'bin = "50ms"')
        .replace("group = [0, 1]", "group = [0]")
        .replace("batch = [1, 1000, 10000, 100000]", "batch = [1000]")
    )
    (folder / "study.toml").write_text(
        '[study]\nname = "mini"\nexperiments = ["experiments/a.toml", "experiments/b.toml"]\n'
    )
    (folder / "reference.toml").write_text((PAM21 / "reference.toml").read_text())
    study = load_study(folder)
    outcome = reproduce_study(study, results=tmp_path / "results", reports=tmp_path / "reports", jobs=1, repeat=2)
    summary = outcome.as_dict()
    assert all(r.failed == 0 for r in outcome.runs)
    assert sum(r.executed for r in outcome.runs) == 2 * (28 + 2), "28 Fig. 2a and 2 Fig. 3 points, 2 repetitions"
    # Every reference of the two figures is compared.
    rows = [c for p in summary["pages"] for c in p["comparisons"]]
    refs = {r.id: r for r in study.references}
    fig2a = [c for c in rows if c["experiment"] == "pam21-fig2a"]
    assert len(fig2a) == sum(1 for r in study.references if r.experiment == "pam21-fig2a") > 20
    # Below the knee, Table 0 forwards 100 Gb/s of 1500 B; above it, it collapses (the model's Fig. 2a).
    rx = {
        refs[c["id"]].where["rules"]: c["model"]
        for c in fig2a
        if refs[c["id"]].where.get("size") == 1500 and c["metric"] == "rx_gbps" and c["statistic"] == "median"
    }
    assert rx[1000] == pytest.approx(100.0, rel=0.01) and rx[65536] < 1.0, rx
    assert summary["passed"] == sum(c["status"] == "pass" for c in rows) > 0
    assert (tmp_path / "reports" / "mini" / "index.html").is_file()


def test_spec_error_names_connectx_parameters():
    with pytest.raises(SpecError, match="has no parameter 'tables'"):
        parse_spec('[experiment]\nname = "x"\ntarget = "connectx.forward"\n[params]\ntables = 4\n')


def test_predictions_run_other_devices_and_check_their_own_data_and_claims(tmp_path):
    """A study with [predictions]: each device's runs are reported apart, compared only with its own
    few-shot measurements and the claims made about it (never with the study device's values)."""
    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "a.toml").write_text(
        (PAM21 / "experiments" / "fig2a.toml").read_text().replace('duration = "200ms"', 'duration = "20ms"')
    )
    (folder / "study.toml").write_text(
        '[study]\nname = "pam21"\nexperiments = ["experiments/a.toml"]\n'
        '[predictions]\ndevices = ["connectx4"]\nrepeat = 1\nclaims = "claims.toml"\n'
    )
    (folder / "reference.toml").write_text((PAM21 / "reference.toml").read_text())
    (folder / "make_reference.py").write_text((PAM21 / "make_reference.py").read_text())  # maps digitized CSVs
    claim = (
        '[[claim]]\nid = "{id}"\nquote = "q"\nlocation = "l"\nexperiment = "pam21-fig2a"\n'
        'where = {{ nic = "connectx5", size = 1500, rules = {rules} }}\nmetric = "loss_ratio"\nvalue = 1.0\n'
        'unit = ""\ntolerance = {{ absolute = 0.1 }}\n{devices}\n'
    )
    (folder / "claims.toml").write_text(
        claim.format(id="collapse", rules=60000, devices="")
        + claim.format(id="wrong", rules=1000, devices="")
        + claim.format(id="elsewhere", rules=60000, devices='devices = ["connectx6"]')
    )
    study = load_study(folder)
    assert [c.reference.id for c in study.claims] == ["collapse", "wrong", "elsewhere"]
    outcome = reproduce_study(
        study, results=tmp_path / "results", reports=tmp_path / "reports", jobs=1, repeat=1, limit_points=None
    )
    (pred,) = outcome.as_dict()["predictions"]
    assert pred["device"] == "connectx4" and pred["fitted_on"]["base"] == "connectx5"
    assert pred["claims"]["collapse"]["status"] == "pass" and pred["claims"]["wrong"]["status"] == "fail"
    assert "elsewhere" not in pred["claims"]  # not claimed for this device
    # Its own Fig. 2a measurements (the few-shot file), not ConnectX-5's published values.
    dp = outcome.predictions[0]
    measured = [c for c in dp.comparisons() if not c.reference.id.startswith("claim:")]
    if not measured:
        missing("connectx4's few-shot measurements (../shared/data/pam21-fewshot)")
    assert len(measured) == 14 and all("mlnx-cx4" in c.reference.location for c in measured)
    assert all(c.reference.where["nic"] == "connectx4" for c in measured)
    page = (tmp_path / "reports" / "pam21" / "predictions" / "connectx4" / "pam21-fig2a" / "index.html").read_text()
    assert "PREDICTION for connectx4" in page
    index = (tmp_path / "reports" / "pam21" / "index.html").read_text()
    assert "Predictions for other devices" in index and "collapse" in index
    # The main pages keep their own runs: the prediction runs live in their own results folder.
    assert (tmp_path / "results" / "predictions" / "connectx4" / "pam21-fig2a").is_dir()
