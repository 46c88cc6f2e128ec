"""nicbench.calibrate: profile I/O, and the fitter recovering known parameters (on the fake engine)."""

from __future__ import annotations

import tomllib

import pytest
from conftest import fake_engine
from helpers import STUDIES

from nicbench.calibrate import calibrate, load_config
from nicbench.calibrate.profile import default_bounds, merge_provenance, read_params, write_fitted
from nicbench.errors import NicbenchError

MINI_SPEC = """
[experiment]
name = "mini-fwd"
target = "vnic.forward"
repeat = 2
[params]
nic = "connectx5"
duration = "20ms"
bin = "10ms"
[sweep]
groups = [0, 4, 8]
rules = [30000, 50000, 55000, 57000, 60000]
"""

TRUTH = {"root_table_knee_occupancy": 0.85, "chain_lookup_ns": 10.0, "base_latency_us": 30.0}


def _mini_study(tmp_path, fake_native):
    """A study whose references are the fake engine's own outputs at TRUTH."""
    from nicbench import vnic
    from nicbench.experiments.study import load_study
    from nicbench.experiments.targets import RunContext, get_target

    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "fwd.toml").write_text(MINI_SPEC)
    (folder / "study.toml").write_text('[study]\nname = "mini"\nexperiments = ["experiments/fwd.toml"]\n')
    t = get_target("vnic.forward")
    entries = []
    for i, (groups, rules, metric, set_) in enumerate([
            (0, 30000, "rx_gbps", "calibration"), (0, 55000, "rx_gbps", "calibration"),
            (0, 57000, "rx_gbps", "calibration"), (4, 50000, "rx_gbps", "calibration"),
            (8, 50000, "rx_gbps", "calibration"), (0, 30000, "latency_p50_us", "calibration"),
            (0, 50000, "rx_gbps", "validation"), (8, 30000, "rx_gbps", "validation")]):
        params = {**t.defaults(), "groups": groups, "rules": rules, "duration": 20_000_000}
        with vnic.parameter_overrides(TRUTH):
            value = t.fn(params, RunContext(seed=1, rep=0, target=t))[metric]
        entries.append(f'[[reference]]\nid = "r{i}"\nquote = "q"\nlocation = "l"\nexperiment = "mini-fwd"\n'
                       f'where = {{ groups = {groups}, rules = {rules} }}\nmetric = "{metric}"\nvalue = {value!r}\n'
                       f'unit = "{"us" if "latency" in metric else "Gbps"}"\ntolerance = {{ relative = 0.05 }}\n'
                       f'set = "{set_}"\n')
    (folder / "reference.toml").write_text("\n".join(entries))
    return load_study(folder)


def test_fit_recovers_known_parameters_and_writes_the_profile(fake_native, tmp_path):
    study = _mini_study(tmp_path, fake_native)
    profile = fake_engine.write_profile(tmp_path / "p", "fakecx", knee=0.7, chain=30.0)
    before = profile.read_text()
    outcome = calibrate(str(profile), study=str(study.dir), jobs=1, sweeps=3, line_evals=12)
    fitted = {k: v["fitted"] for k, v in outcome.parameters.items()}
    assert fitted["root_table_knee_occupancy"] == pytest.approx(0.85, abs=0.01)
    assert fitted["chain_lookup_ns"] == pytest.approx(10.0, rel=0.1)
    assert fitted["base_latency_us"] == pytest.approx(30.0, rel=0.1)
    assert fitted["root_insert_us"] == 25.0, "no calibration point depends on it: left alone"
    assert outcome.fit.influences["root_insert_us"] == []
    assert outcome.fit.cost < outcome.fit.start_cost
    assert outcome.summary["calibration"]["passed"] == 6 and outcome.summary["validation"]["passed"] == 2
    doc = tomllib.loads(profile.read_text())["param"]
    assert doc["chain_lookup_ns"]["value"] == pytest.approx(fitted["chain_lookup_ns"], rel=1e-5)
    assert doc["chain_lookup_ns"]["provenance"].startswith("fitted: mini calibration set (6 values)")
    assert doc["root_table_capacity"]["provenance"] == "seed 000, §2.1", "other parameters untouched"
    assert profile.read_text().count("\n") == before.count("\n")


def test_fit_is_reproducible(fake_native, tmp_path):
    study = _mini_study(tmp_path, fake_native)
    profile = fake_engine.write_profile(tmp_path / "p", "fakecx", knee=0.7, chain=30.0)
    runs = [calibrate(str(profile), study=str(study.dir), jobs=1, write=False, validate=False, sweeps=1,
                      line_evals=5).parameters for _ in range(2)]
    assert runs[0] == runs[1]


def test_calibrate_errors(fake_native, tmp_path):
    study = _mini_study(tmp_path, fake_native)
    profile = fake_engine.write_profile(tmp_path / "p", "fakecx")
    with pytest.raises(NicbenchError, match="no profile"):
        calibrate("nosuchnic", study=str(study.dir))
    with pytest.raises(NicbenchError, match="no such profile parameter"):
        calibrate(str(profile), study=str(study.dir), parameters=["nope"])


def test_profile_read_bounds_and_write(tmp_path):
    path = fake_engine.write_profile(tmp_path, "fakecx")
    params = read_params(path)
    assert params["root_table_knee_occupancy"].fitted and not params["root_table_capacity"].fitted
    assert params["root_table_capacity"].integer
    assert default_bounds(params["chain_lookup_ns"]) == (1.0, 100.0, True), "profile min/max win"
    assert default_bounds(params["root_table_knee_occupancy"]) == (0.01, 0.999, False)
    assert default_bounds(params["root_insert_us"]) == (2.5, 250.0, True)
    write_fitted(path, {"root_table_knee_occupancy": 0.8512345678, "root_table_capacity": 60000}, "fitted: x (1 values)")
    doc = tomllib.loads(path.read_text())["param"]
    assert doc["root_table_knee_occupancy"]["value"] == 0.851235
    assert doc["root_table_capacity"]["value"] == 60000 and isinstance(doc["root_table_capacity"]["value"], int)
    with pytest.raises(NicbenchError, match="no \\[param.NAME\\] table for nope"):
        write_fitted(path, {"nope": 1.0}, "fitted: x")


def test_merge_provenance_keeps_the_hypothesis_once():
    first = merge_provenance("fitted: fig2a (hypothesis: spill)", "fitted: pam21 calibration set (64 values)")
    assert first == "fitted: pam21 calibration set (64 values); fig2a (hypothesis: spill)"
    assert merge_provenance(first, "fitted: pam21 calibration set (70 values)") == \
        "fitted: pam21 calibration set (70 values); fig2a (hypothesis: spill)"


def test_pam21_calibration_config_loads():
    cfg = load_config(STUDIES / "pam21" / "calibration.toml")
    assert cfg.set == "calibration" and cfg.sweeps >= 1
    assert "pam21-fig3" in cfg.experiment_params
