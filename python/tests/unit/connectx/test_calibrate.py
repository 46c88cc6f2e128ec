"""nicbench.calibrate on the native ConnectX model: the fitter recovers parameter values that
produced a study's reference numbers, writes them back without touching the rest of the profile,
and reads profiles through the one loader."""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import replace

import pytest
from helpers import STUDIES

from nicbench import profiles
from nicbench.calibrate import calibrate, load_config
from nicbench.calibrate.profile import default_bounds, merge_provenance, read_params, write_fitted
from nicbench.errors import NicbenchError
from nicbench.experiments.targets import RunContext, get_target
from nicbench.vocab.study import load_study

MINI_SPEC = """
[experiment]
name = "mini-fwd"
target = "connectx.forward"
repeat = 1
[params]
nic = "connectx5"
rules = 1000
duration = "2ms"
bin = "1ms"
[sweep]
size = [64, 128, 256, 1500]
rate = ["10Gbps", "100Gbps"]
"""

BASE = profiles.load("connectx5")["param"]
# What produced the references: the core's per-packet cost and the fixed latency, both moved
# away from the profile so that the start values below are wrong by a known amount.
TRUTH = {
    "nf_packet_ns": round(BASE["nf_packet_ns"]["value"] * 1.25, 3),
    "fixed_latency_ns": round(BASE["fixed_latency_ns"]["value"] * 0.8, 1),
}
START = {
    "nf_packet_ns": round(BASE["nf_packet_ns"]["value"] * 0.8, 3),
    "fixed_latency_ns": round(BASE["fixed_latency_ns"]["value"] * 1.3, 1),
}
POINTS = [  # (size, rate, metric, set): 64 B at 100 Gb/s saturates the core; 10 Gb/s shows the latency
    (64, 100e9, "rx_mpps", "calibration"),
    (1500, 10e9, "latency_p50_us", "calibration"),
    (256, 10e9, "latency_p50_us", "calibration"),
    (128, 100e9, "rx_mpps", "calibration"),
    (256, 100e9, "rx_mpps", "validation"),
    (64, 10e9, "latency_p50_us", "validation"),
]


def mini_study(tmp_path):
    """A study whose references are the native model's own outputs at TRUTH."""
    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "fwd.toml").write_text(MINI_SPEC)
    (folder / "study.toml").write_text('[study]\nname = "mini"\nexperiments = ["experiments/fwd.toml"]\n')
    t = get_target("connectx.forward")
    entries = []
    for i, (size, rate, metric, set_) in enumerate(POINTS):
        params = {**t.defaults(), "rules": 1000, "size": size, "rate": rate, "duration": 2_000_000, "bin": 1_000_000}
        with profiles.parameter_overrides(TRUTH):
            value = t.fn(params, RunContext(seed=1, rep=0, target=t))[metric]
        unit = "us" if "latency" in metric else "Mpps"
        entries.append(
            f'[[reference]]\nid = "r{i}"\nquote = "q"\nlocation = "l"\nexperiment = "mini-fwd"\n'
            f'where = {{ size = {size}, rate = {rate} }}\nmetric = "{metric}"\nvalue = {value!r}\n'
            f'unit = "{unit}"\ntolerance = {{ relative = 0.02 }}\nset = "{set_}"\n'
        )
    (folder / "reference.toml").write_text("\n".join(entries))
    return load_study(folder)


def start_profile(folder):
    """A copy of connectx5.toml with START values written by the profile writer."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "mycx.toml"
    shutil.copy(profiles.resolve("connectx5"), path)
    write_fitted(path, START, "fitted: test start values")
    return path


def test_fit_recovers_known_parameters_and_writes_the_profile(tmp_path):
    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    before = profile.read_text()
    outcome = calibrate(str(profile), study=str(study.dir), jobs=1, sweeps=3, line_evals=10, parameters=list(TRUTH))
    fitted = {k: v["fitted"] for k, v in outcome.parameters.items()}
    assert set(fitted) == set(TRUTH), "only the parameters asked for"
    assert fitted["nf_packet_ns"] == pytest.approx(TRUTH["nf_packet_ns"], rel=0.03)
    assert fitted["fixed_latency_ns"] == pytest.approx(TRUTH["fixed_latency_ns"], rel=0.03)
    assert outcome.fit.cost < outcome.fit.start_cost
    assert outcome.summary["calibration"]["passed"] == 4 and outcome.summary["validation (independent)"]["passed"] == 2
    doc = tomllib.loads(profile.read_text())["param"]
    assert doc["nf_packet_ns"]["value"] == pytest.approx(fitted["nf_packet_ns"], rel=1e-5)
    assert doc["nf_packet_ns"]["provenance"].startswith("fitted: mini calibration set (4 values)")
    assert (doc["nf_burst_ns"]["value"], doc["nf_burst_ns"]["provenance"]) == (
        BASE["nf_burst_ns"]["value"],
        BASE["nf_burst_ns"]["provenance"],
    ), "other parameters untouched"
    assert profile.read_text().count("\n") == before.count("\n")
    assert profiles.load(profile)["param"]["nf_packet_ns"]["value"] == doc["nf_packet_ns"]["value"]


def test_fit_reports_what_the_data_constrain(tmp_path):
    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    outcome = calibrate(
        str(profile),
        study=str(study.dir),
        jobs=1,
        write=False,
        validate=False,
        sweeps=2,
        line_evals=8,
        parameters=[*TRUTH, "root_delete_us"],
    )
    assert outcome.points == 4, "four calibration entries, four distinct scenarios"
    c = outcome.certainty
    for name in TRUTH:
        assert c[name].constrained and 0 < c[name].rel_sigma < 0.05, (name, c[name])
        # The truth lies within a few standard errors of the fitted value.
        assert abs(c[name].value - TRUTH[name]) < 4 * c[name].sigma + 0.01 * TRUTH[name], (name, c[name])
    assert not c["root_delete_us"].constrained and c["root_delete_us"].reason == "no calibration point moves it"
    assert outcome.as_dict()["certainty"]["root_delete_us"]["constrained"] is False


def test_a_saturated_fit_is_refused_unless_allowed(tmp_path):
    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    too_many = [*TRUTH, "nf_burst_ns", "link_propagation_ns"]
    with pytest.raises(NicbenchError, match="4 free parameters on 4 independent calibration points"):
        calibrate(str(profile), study=str(study.dir), jobs=1, write=False, validate=False, parameters=too_many)
    outcome = calibrate(
        str(profile),
        study=str(study.dir),
        jobs=1,
        write=False,
        validate=False,
        sweeps=1,
        line_evals=3,
        parameters=too_many,
        allow_saturated=True,
    )
    assert not any(c.constrained for c in outcome.certainty.values()), "χ² has no degrees of freedom left"


def test_fit_is_reproducible(tmp_path):
    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    runs = [
        calibrate(
            str(profile),
            study=str(study.dir),
            jobs=1,
            write=False,
            validate=False,
            sweeps=1,
            line_evals=4,
            parameters=["nf_packet_ns"],
        ).parameters
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_calibrate_errors(tmp_path):
    study = mini_study(tmp_path)
    profile = start_profile(tmp_path / "p")
    with pytest.raises(NicbenchError, match="'nosuchnic' not found"):
        calibrate("nosuchnic", study=str(study.dir))
    with pytest.raises(NicbenchError, match="no such profile parameter"):
        calibrate(str(profile), study=str(study.dir), parameters=["nope"])


def test_profile_read_bounds_and_write(tmp_path):
    path = start_profile(tmp_path)
    path.write_text(path.read_text().replace("value = 65536.0\n", "value = 65536\n", 1))
    params = read_params(path)
    assert params["nf_packet_ns"].fitted and not params["link_gbps"].fitted
    assert params["root_table_capacity"].integer and not params["nf_packet_ns"].integer, (
        "integer literals stay integers"
    )
    assert default_bounds(params["pcie_encoding_efficiency"]) == (0.01, 0.999, False), "a ratio in (0, 1)"
    v = params["nf_burst_ns"].value
    assert default_bounds(params["nf_burst_ns"]) == (v / 10, v * 10, True)
    # A zero parameter (an extra cost a profile does not have) is fitted from 0 up: the models refuse
    # a negative one.
    assert default_bounds(replace(params["root_cmd_ns_per_packet"], value=0.0)) == (0.0, 1.0, False)
    # Bounds in the profile win over the defaults.
    text = path.read_text().replace("[param.nf_burst_ns]\n", "[param.nf_burst_ns]\nbounds = [10.0, 140.0]\n")
    path.write_text(text)
    assert default_bounds(read_params(path)["nf_burst_ns"]) == (10.0, 140.0, False), "14x: not log-spaced"
    write_fitted(path, {"nf_packet_ns": 51.2345678, "root_table_capacity": 60000}, "fitted: x (1 values)")
    doc = tomllib.loads(path.read_text())["param"]
    assert doc["nf_packet_ns"]["value"] == 51.2346
    assert doc["root_table_capacity"]["value"] == 60000 and isinstance(doc["root_table_capacity"]["value"], int)
    with pytest.raises(NicbenchError, match="no \\[param.NAME\\] table for nope"):
        write_fitted(path, {"nope": 1.0}, "fitted: x")
    # A value outside the parameter's bounds is refused by the loader before the file is replaced.
    with pytest.raises(NicbenchError, match="outside its bounds"):
        write_fitted(path, {"nf_burst_ns": 500.0}, "fitted: x")
    assert tomllib.loads(path.read_text())["param"]["nf_burst_ns"]["value"] == BASE["nf_burst_ns"]["value"]
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}")] == []


def test_merge_provenance_keeps_the_hypothesis_once():
    first = merge_provenance("fitted: fig2a (hypothesis: spill)", "fitted: pam21 calibration set (64 values)")
    assert first == "fitted: pam21 calibration set (64 values); fig2a (hypothesis: spill)"
    assert (
        merge_provenance(first, "fitted: pam21 calibration set (70 values)")
        == "fitted: pam21 calibration set (70 values); fig2a (hypothesis: spill)"
    )


def test_pam21_calibration_config_loads():
    cfg = load_config(STUDIES / "pam21" / "calibration.toml")
    assert cfg.set == "calibration" and cfg.sweeps >= 1
    assert "pam21-fig3" in cfg.experiment_params


def test_a_rendered_profile_keeps_the_base_devices_sections():
    """A profile written by a fit carries the base profile's `[device.*]` tables (an OVS-TC NIC's
    offload capabilities) unchanged, and the loader reads it back with them."""
    import tempfile
    from pathlib import Path

    from nicbench import profiles
    from nicbench.calibrate.profile import read_params, render_profile

    base = profiles.load("agilio-cx-25g")
    assert base["device"], "agilio-cx-25g has [device.*] sections"
    rows = [
        {"name": p.name, "value": p.value, "unit": p.unit, "provenance": p.provenance}
        for p in read_params(profiles.resolve("agilio-cx-25g")).values()
    ]
    text = render_profile({"name": "agilio-copy", "kind": base["kind"]}, None, rows, base["device"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "agilio-copy.toml")
        path.write_text(text)
        back = profiles.load(path)
    assert back["device"] == base["device"]
    assert {n: p["value"] for n, p in back["param"].items()} == {n: p["value"] for n, p in base["param"].items()}
