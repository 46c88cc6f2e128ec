"""Few-shot calibration (`nicbench calibrate --base B --measurements F -o OUT`): from measurements the
native ConnectX model produced with known parameter values, the fit frees what the measurements move,
recovers those values, keeps the rest inherited, and writes a profile the models load and that
`refit` repeats. Also the choice of free parameters on synthetic sensitivities."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from helpers import REPO, missing, shared_data_dir

from nicbench import profiles
from nicbench.calibrate.fewshot import fewshot, refit, select_free
from nicbench.calibrate.fit import FitParam
from nicbench.cli.calibrate import calibrate
from nicbench.cli.common import NicbenchGroup
from nicbench.cli.connectx import COMMANDS
from nicbench.errors import NicbenchError
from nicbench.experiments.targets import RunContext, get_target

SPEC = """
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

CALIBRATION = """
[calibration]
parameters = ["nf_packet_ns", "fixed_latency_ns", "root_insert_ipv4_us", "nic_buffer_bytes"]
[bounds]
nf_packet_ns = [30.0, 117.0]
fixed_latency_ns = [5000.0, 60000.0]
[fewshot]
keep = ["nic_buffer_bytes"]
"""

BASE = profiles.load("connectx5")["param"]
TRUTH = {
    "nf_packet_ns": round(BASE["nf_packet_ns"]["value"] * 0.8, 3),
    "fixed_latency_ns": round(BASE["fixed_latency_ns"]["value"] * 0.7, 1),
}
POINTS = [
    (64, 100e9, "rx_mpps"),
    (128, 100e9, "rx_mpps"),
    (256, 100e9, "rx_mpps"),
    (1500, 10e9, "latency_p50_us"),
    (256, 10e9, "latency_p50_us"),
    (64, 10e9, "latency_p50_us"),
    (128, 10e9, "latency_p50_us"),
]


def mini_study(tmp_path):
    folder = tmp_path / "mini"
    (folder / "experiments").mkdir(parents=True)
    (folder / "experiments" / "fwd.toml").write_text(SPEC)
    (folder / "study.toml").write_text('[study]\nname = "mini"\nexperiments = ["experiments/fwd.toml"]\n')
    (folder / "reference.toml").write_text("")
    (folder / "calibration.toml").write_text(CALIBRATION)
    return folder


def measurements(tmp_path, truth=TRUTH):
    """A tidy export (the columns `nicbench results export --csv` writes) of the model at `truth`."""
    t = get_target("connectx.forward")
    path = tmp_path / "mine.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["experiment", "nic", "size", "rate", "metric", "value", "unit", "t", "status"])
        for size, rate, metric in POINTS:
            params = {
                **t.defaults(),
                "rules": 1000,
                "size": size,
                "rate": rate,
                "duration": 2_000_000,
                "bin": 1_000_000,
            }
            with profiles.parameter_overrides(truth):
                value = t.fn(params, RunContext(seed=1, rep=0, target=t))[metric]
            w.writerow(["mini-fwd", "my-nic", size, rate, metric, value, "", "", "ok"])
    return path


def test_fewshot_frees_what_the_measurements_move_and_recovers_it(tmp_path):
    study = mini_study(tmp_path)
    out = tmp_path / "profiles" / "mine.toml"
    o = fewshot("connectx5", [measurements(tmp_path)], out, study=str(study), jobs=1, sets={"link_gbps": 100.0})
    why = {s.name: s for s in o.selection}
    assert why["nf_packet_ns"].free and why["fixed_latency_ns"].free
    assert not why["root_insert_ipv4_us"].free and "moves no measured point" in why["root_insert_ipv4_us"].reason
    assert "nic_buffer_bytes" not in why  # the testbed's ([fewshot] keep) is never a candidate
    for name, value in TRUTH.items():
        assert o.parameters[name]["fitted"] == pytest.approx(value, rel=0.03), name
    assert o.fitted["median_abs_rel_error"] < 0.2 * o.zero_shot["median_abs_rel_error"]

    doc = profiles.load(out)
    assert doc["name"] == "mine" and doc["kind"] == "connectx"
    rec = doc["fitted_on"]
    assert rec["base"] == "connectx5" and rec["parameters"] == sorted(TRUTH)
    assert rec["measurements"] == ["../mine.csv"]  # relative to the profile's folder
    p = doc["param"]
    assert p["nf_packet_ns"]["provenance"].startswith("fitted on mine.csv (7 values)")
    assert p["link_gbps"]["provenance"].startswith("set by the user")
    assert p["root_insert_ipv4_us"]["provenance"].startswith("inherited from connectx5: ")
    assert p["root_insert_ipv4_us"]["value"] == BASE["root_insert_ipv4_us"]["value"]

    # The written profile runs (a path works wherever a profile name does) and the fit repeats.
    t = get_target("connectx.forward")
    res = t.fn(
        {**t.defaults(), "nic": str(out), "size": 64, "rate": 100e9, "duration": 2_000_000, "bin": 1_000_000},
        RunContext(seed=1, rep=0, target=t),
    )
    assert math.isfinite(res["rx_mpps"])
    again = refit(str(out), jobs=1, write=False)
    assert again.parameters["nf_packet_ns"]["fitted"] == o.parameters["nf_packet_ns"]["fitted"]
    # A second fit keeps the device's own values (here the --set one) without being told again.
    assert profiles.load(out)["param"]["link_gbps"]["provenance"].startswith("set by the user")


def test_fewshot_bad_input(tmp_path):
    study = mini_study(tmp_path)
    good = measurements(tmp_path)
    with pytest.raises(NicbenchError, match="ends in .toml"):
        fewshot("connectx5", [good], tmp_path / "x.txt", study=str(study))
    with pytest.raises(NicbenchError, match="not a parameter of the base profile"):
        fewshot("connectx5", [good], tmp_path / "x.toml", study=str(study), sets={"nope": 1.0})
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n")
    with pytest.raises(NicbenchError, match="neither a tidy record export"):
        fewshot("connectx5", [bad], tmp_path / "x.toml", study=str(study))
    with pytest.raises(NicbenchError, match="no \\[fitted_on\\] record"):
        refit("connectx5", write=False)


def _params(n):
    return [FitParam(f"p{j}", 1.0, 0.0, 1.0) for j in range(n)]


def test_select_free_reasons():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=12), rng.normal(size=12)
    jac = np.column_stack([10 * a, 5 * b, 9.9 * a + 0.1 * b, 0.01 * b, np.zeros(12)])
    influences = {"p0": [0], "p1": [1], "p2": [2], "p3": [3]}  # p4 moves nothing
    sel = {s.name: s for s in select_free(_params(5), jac, influences, points=12)}
    assert sel["p0"].free and sel["p1"].free
    assert not sel["p2"].free and "degenerate with p0" in sel["p2"].reason
    assert not sel["p3"].free and "too weak" in sel["p3"].reason
    assert not sel["p4"].free and "moves no measured point" in sel["p4"].reason
    # With 3 points there is a budget of one free parameter: the one with the largest effect.
    sel = {s.name: s for s in select_free(_params(5), jac, influences, points=3)}
    assert [n for n, s in sel.items() if s.free] == ["p0"]
    assert "over the budget" in sel["p1"].reason


def test_fewshot_profiles_name_their_measurements():
    """The committed few-shot profiles were fitted on files that exist beside the checkout."""
    for name in ("connectx4", "connectx6", "bluefield1"):
        doc = profiles.load(name)
        rec = doc.get("fitted_on")
        assert rec, f"{name} has no [fitted_on] record"
        for f in rec["measurements"]:
            path = (REPO / "profiles" / f).resolve()
            if not path.is_file():
                missing(f"{name}'s few-shot measurements {path}")
            assert path.is_relative_to(shared_data_dir().resolve()), f"{name}: {f} is not under ../shared/data"


def test_newcomer_path_calibrate_then_simulate_with_the_written_file(tmp_path):
    """The README's two commands: `nicbench calibrate --base connectx5 --measurements mine.csv -o mine.toml`,
    then `nicbench simulate --nic mine.toml` — through the CLI, on the file it wrote."""
    group = NicbenchGroup("nicbench")
    for command in (*COMMANDS, calibrate):
        group.add_command(command)
    study = mini_study(tmp_path)
    out = tmp_path / "mine.toml"
    r = CliRunner().invoke(
        group,
        [
            "calibrate",
            "--base",
            "connectx5",
            "--measurements",
            str(measurements(tmp_path)),
            "-o",
            str(out),
            "--study",
            str(study),
            "--jobs",
            "1",
        ],
    )
    assert r.exit_code == 0, r.output
    assert "nf_packet_ns" in r.output and out.exists()
    sim = ["--gen", "flows=100,size=64,rate=100Gbps", "--duration", "2ms", "--json"]
    r2 = CliRunner().invoke(group, ["simulate", "--nic", str(out), *sim])
    r3 = CliRunner().invoke(group, ["simulate", "--nic", "connectx5", *sim])
    assert r2.exit_code == 0 and r3.exit_code == 0, r2.output + r3.output
    # The fitted device's NF costs 0.8x the base's per packet: at 64 B it forwards ~1/0.8 as many.
    ratio = json.loads(r2.output)["rx_mpps"] / json.loads(r3.output)["rx_mpps"]
    assert ratio == pytest.approx(1 / 0.8, rel=0.05)


def test_a_result_folder_is_read_as_its_csv_export(tmp_path):
    """`--measurements results/<experiment>[--<backend>]`: the runs `nicbench run` stored are the same
    measurements as their `nicbench results export --csv` (no export step between a run and a fit)."""
    from nicbench.calibrate.measurements import load_measurements
    from nicbench.experiments import parse_spec, run_experiment
    from nicbench.vocab.study import load_study

    study = load_study(mini_study(tmp_path))
    spec = parse_spec(SPEC.replace("repeat = 1", "repeat = 2"))
    run_experiment(spec, results=tmp_path / "r", jobs=1, only={"rate": 1e10})
    folder = tmp_path / "r" / "mini-fwd"
    exported = tmp_path / "export.csv"
    from nicbench.cli import main

    done = CliRunner().invoke(main, ["results", "export", str(folder), "--csv", "-o", str(exported)])
    assert done.exit_code == 0, done.output
    from_folder = load_measurements([folder], study)
    from_csv = load_measurements([exported], study)
    key = lambda r: (r.experiment, json.dumps(r.where, sort_keys=True), r.metric)  # noqa: E731
    assert len({key(r)[1] for r in from_folder}) == 4, "the 4 sizes at 10 Gb/s"
    assert {"rx_mpps", "latency_p50_us"} <= {r.metric for r in from_folder}
    assert sorted((key(r), r.value) for r in from_folder) == sorted((key(r), r.value) for r in from_csv)
    with pytest.raises(NicbenchError, match="not a result folder"):
        load_measurements([tmp_path], study)


def test_a_fitted_value_on_a_bound_of_its_fit_says_so():
    from nicbench.calibrate.fewshot import _param_rows
    from nicbench.calibrate.profile import ProfileParam

    def param(name: str) -> ProfileParam:
        return ProfileParam(
            name, 5.0, "ns", "fitted: pam21 calibration set (66 values); fig2a (hypothesis: chains)", True, False
        )

    params = {n: param(n) for n in ("at_low", "inside", "at_high")}
    rows = {
        r["name"]: r["provenance"]
        for r in _param_rows(
            params,
            "connectx5",
            {},
            {"at_low": 1.0, "inside": 3.0, "at_high": 100.0},
            "fitted on mine.csv (7 values)",
            {"at_low": (1.0, 100.0), "inside": (1.0, 100.0), "at_high": (1.0, 100.0)},
        )
    }
    assert rows["inside"] == "fitted on mine.csv (7 values); as in connectx5: fig2a (hypothesis: chains)"
    assert rows["at_low"].endswith("(at the lower bound of its fit, 1: the measurements would take it further)")
    assert rows["at_high"].endswith("(at the upper bound of its fit, 100: the measurements would take it further)")
