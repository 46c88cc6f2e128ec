"""The argus100g study: it loads, and every reference points at a real experiment point and metric."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from nicbench.calibrate import load_config
from nicbench.calibrate.problem import build_problem
from nicbench.calibrate.profile import read_params
from nicbench.experiments.spec import load_spec
from nicbench.experiments.study import load_study

REPO = Path(__file__).resolve().parents[4]
STUDY = REPO / "studies" / "argus100g"


def test_study_loads_with_references_in_both_sets():
    st = load_study(STUDY)
    assert st.name == "argus100g"
    assert len(st.experiments) == 5
    sets = {r.set for r in st.references}
    assert sets == {"calibration", "validation"}
    assert len(st.references) >= 30
    for r in st.references:
        assert r.quote.strip() and r.location.startswith("shared/seeds/003_"), r.id


def test_every_reference_names_an_existing_point_and_metric():
    st = load_study(STUDY)
    specs = {load_spec(p).name: load_spec(p) for p in st.experiments}
    for r in st.references:
        assert r.experiment in specs, r.id
        assert r.metric in specs[r.experiment].target.metrics, f"{r.id}: {r.metric}"
    # Every `where` matches exactly one point (build_problem raises otherwise).
    problem = build_problem(st, st.references)
    assert len(problem.points) <= sum(len(s.points()) for s in specs.values())


def test_published_numbers_are_in_the_reference_file():
    ids = {r.id: r for r in load_study(STUDY).references}
    assert ids["ht-16-pps-per-core"].value == 4.462051
    assert ids["ht-32-pps-total"].value == 70.987936
    assert ids["cores-7-drops"].value == 1.0 and ids["cores-8-no-drops"].value == 0.0
    assert ids["flows-750-65536-drops"].value == 1.0 and ids["flows-1500-131072-no-drops"].value == 0.0
    assert ids["conclusion-64-80-100-cores"].value == 90.0


def test_reference_file_is_generated_and_current(tmp_path):
    # make_reference.py is deterministic: regenerating gives the committed file.
    script = STUDY / "make_reference.py"
    copy = tmp_path / "make_reference.py"
    copy.write_text(script.read_text())
    subprocess.run([sys.executable, str(copy)], check=True, capture_output=True)
    assert (tmp_path / "reference.toml").read_text() == (STUDY / "reference.toml").read_text()


def test_calibration_config_names_fitted_host_parameters():
    cfg = load_config(STUDY / "calibration.toml")
    params = read_params(REPO / "profiles" / "argus-host.toml")
    assert cfg.parameters and set(cfg.parameters) <= set(params)
    assert all(params[name].fitted for name in cfg.parameters)
    doc = tomllib.loads((REPO / "profiles" / "argus-host.toml").read_text())
    assert doc["kind"] == "flowhost" and doc["calibration_study"] == "argus100g"
