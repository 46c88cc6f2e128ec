"""The argus100g study: it loads, every reference points at a real experiment point and metric, validation
is independent of calibration, and the host profile's hand-derived values follow from calibration entries."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from nicbench.calibrate import load_config
from nicbench.calibrate.identify import independent_points
from nicbench.calibrate.problem import build_problem
from nicbench.calibrate.profile import read_params
from nicbench.experiments.spec import load_spec
from nicbench.vocab.study import load_study, summary_group

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


# Validation entries that restate calibration, and why: drop flags of the calibrated 1/3/5-core runs, and the
# hyper-threading table's 16-process row (its totals and Mb/s are arithmetic on the calibrated pps per core).
RESTATING = {
    "cores-1-drops": "cores-1-adds-2.4mpps",
    "cores-3-drops": "cores-3-adds-2.4mpps",
    "cores-5-drops": "cores-5-adds-2.4mpps",
    "ht-16-mbps-per-core": "ht-16-pps-per-core",
    "ht-16-pps-total": "ht-16-pps-per-core",
    "ht-16-mbps-total": "ht-16-pps-per-core",
    "ht-drops": "ht-16-pps-per-core",
}


def test_validation_is_independent_of_calibration():
    refs = load_study(STUDY).references
    assert {r.id: r.restates for r in refs if r.restates} == RESTATING
    groups = [summary_group(r) for r in refs]
    assert (
        groups.count("calibration"),
        groups.count("validation (independent)"),
        groups.count("validation (restates calibration)"),
        groups.count("validation (repeats an observation or an input)"),
    ) == (8, 15, 7, 5)
    calibration = {r.scenario() for r in refs if r.set == "calibration"}
    independent = [r for r in refs if r.independent]
    assert not [r.id for r in independent if r.scenario() in calibration]
    # The predictions the re-plan is for: the 750 B knee, the 32-process row, the 8-core run.
    ids = {r.id for r in independent}
    assert {"flows-750-32768-no-drops", "flows-750-65536-drops", "ht-32-pps-per-process", "cores-8-no-drops"} <= ids


def test_fit_has_more_published_numbers_than_parameters():
    cfg = load_config(STUDY / "calibration.toml")
    cal = [r for r in load_study(STUDY).references if r.set == "calibration"]
    numeric = [r for r in cal if r.metric != "drops"]  # drop flags only bound a parameter
    # One sentence ("each core adds around 2.4M pps") on the 1-, 3- and 5-core runs is one published
    # number: 6 observations of 8 entries, 3 of them numbers (2.4 Mpps per core, the 7-core short-term
    # maximum, the 16-process row's per-core rate), the rest drop flags.
    assert independent_points(cal) == 6 and independent_points(numeric) == 3
    # Two fitted parameters (and two more derived by hand from calibration entries, see the profile):
    # more numbers than parameters, but not clearly more; the drop flags bound what they fit.
    assert len(cfg.parameters) == 2 and independent_points(numeric) > len(cfg.parameters)


def test_hand_derived_host_values_follow_from_their_calibration_entries():
    params = read_params(REPO / "profiles" / "argus-host.toml")
    refs = {r.id: r for r in load_study(STUDY).references}
    for name in ("llc_miss_ns", "stall_interval_us"):
        ids = re.match(r"derived from references? ([^:]+):", params[name].provenance).group(1).split(", ")
        assert ids and all(refs[i].set == "calibration" for i in ids), (name, ids)
    # stall_interval_us: 2.4 / 3.0 of the time processing, stalls of stall_mean_us between.
    share = refs["cores-3-adds-2.4mpps"].value / refs["cores-7-short-max-3mpps"].value
    assert params["stall_interval_us"].value == pytest.approx(params["stall_mean_us"].value * share / (1 - share))


def test_llc_miss_cost_is_inside_the_bracket_of_the_1500_byte_knee():
    spec = importlib.util.spec_from_file_location("bracket_miss_cost", STUDY / "bracket_miss_cost.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    low, high = module.bracket()
    value = read_params(REPO / "profiles" / "argus-host.toml")["llc_miss_ns"].value
    assert low < value < high and value == pytest.approx(0.5 * (low + high), abs=0.1), (low, value, high)
