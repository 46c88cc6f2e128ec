"""Runner and store: resumable after SIGKILL (at fixed points of the sweep), failures recorded, changed specs
re-run only what changed."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pandas as pd
import pytest
from harness_cli import harness, harness_popen

from nicbench.experiments import load_results, parse_spec, run_experiment, summarize
from nicbench.experiments.store import ExperimentStore

NOOP = """
[experiment]
name = "noop"
target = "synthetic.noop"
repeat = {repeat}
seed = 5
[params]
sleep = "{sleep}"
[sweep]
x = "{xs}"
"""


def noop_spec(tmp_path: Path, repeat=2, sleep="1ms", xs="1-30 step 1", **kw):
    path = tmp_path / "noop.toml"
    path.write_text(NOOP.format(repeat=repeat, sleep=sleep, xs=xs))
    return path, parse_spec(path.read_text(), str(path), **kw)


def canonical(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["run", "metric"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory) -> pd.DataFrame:
    """The records of the 80-run sweep the SIGKILL tests interrupt, run without interruption."""
    root = tmp_path_factory.mktemp("uninterrupted")
    _, spec = noop_spec(root, repeat=2, sleep="15ms", xs="1-40 step 1")
    reference = canonical(load_results(Path(run_experiment(spec, results=root / "ref", jobs=2).store)))
    assert len(reference) == 80 * 2 and reference["run"].nunique() == 80
    return reference


def stored_run_files(runs_dir) -> int:
    # pathlib's glob matches dot files too: a `.tmp-*.arrow` being written is not a stored run.
    return sum(1 for p in runs_dir.glob("*.arrow") if not p.name.startswith("."))


# Fixed kill points (run files on disk when the kill is sent): the first runs, and mid-sweep. Each
# run sleeps 15 ms, so after the 20th file some 60 runs (~0.45 s with 2 workers) are still to come.
@pytest.mark.parametrize("kill_after", [1, 20])
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path, uninterrupted, kill_after):
    spec_file, _ = noop_spec(tmp_path, repeat=2, sleep="15ms", xs="1-40 step 1")
    results = tmp_path / "killed"
    proc = harness_popen("run", str(spec_file), "--results", str(results), "--jobs", "2")
    runs_dir = results / "noop" / "runs"
    # The event: the sweep has written `kill_after` run files (bounded poll of its folder).
    deadline = time.monotonic() + 120
    while not (runs_dir.is_dir() and stored_run_files(runs_dir) >= kill_after):
        assert proc.poll() is None, f"sweep ended before {kill_after} runs were stored: {proc.stderr.read()}"
        assert time.monotonic() < deadline, f"no {kill_after} run files after 120 s"
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = len(ExperimentStore(results, "noop").done_keys())
    assert kill_after <= stored < 80

    again = harness("run", str(spec_file), "--results", str(results), "--jobs", "2", "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["executed"] + summary["cached"] == 80 and summary["cached"] == stored
    resumed = canonical(load_results(results / "noop"))
    assert not resumed.duplicated(["run", "metric"]).any()
    pd.testing.assert_frame_equal(resumed, uninterrupted, check_dtype=False)


def test_rerun_of_a_finished_sweep_runs_nothing(tmp_path):
    _, spec = noop_spec(tmp_path, sleep="0ns")
    first = run_experiment(spec, results=tmp_path, jobs=1)
    second = run_experiment(spec, results=tmp_path, jobs=2)
    assert (first.executed, second.executed, second.cached) == (60, 0, 60)
    assert len(load_results("noop", results=tmp_path)) == 120


def test_changed_spec_reruns_only_changed_points_and_moves_old_runs_aside(tmp_path):
    _, spec = noop_spec(tmp_path, sleep="0ns", xs="1-10 step 1", repeat=1)
    run_experiment(spec, results=tmp_path, jobs=1)
    _, changed = noop_spec(tmp_path, sleep="0ns", xs="6-15 step 1", repeat=1)
    summary = run_experiment(changed, results=tmp_path, jobs=1)
    assert (summary.executed, summary.cached, summary.stale_moved) == (5, 5, 5)
    df = load_results(tmp_path / "noop")
    assert sorted(df["x"].unique()) == list(range(6, 16))
    assert (tmp_path / "noop" / "stale").is_dir()


def test_a_failing_point_is_recorded_and_the_sweep_goes_on_then_retried(tmp_path):
    path = tmp_path / "f.toml"
    path.write_text(
        NOOP.format(repeat=1, sleep="0ns", xs="1-4 step 1") + "[[override]]\nwhere = { x = 3 }\nset = { fail = true }\n"
    )
    spec = parse_spec(path.read_text(), str(path))
    summary = run_experiment(spec, results=tmp_path, jobs=2)
    assert (summary.executed, summary.failed) == (3, 1)
    df = load_results(tmp_path / "noop")
    err = df[df["status"] == "error"]
    assert len(err) == 1 and err["x"].iloc[0] == 3.0
    assert "RuntimeError: synthetic failure at x=3.0" in err["error"].iloc[0]
    assert "Traceback" in err["error"].iloc[0]
    again = run_experiment(spec, results=tmp_path, jobs=1)
    assert (again.executed, again.cached, again.failed) == (0, 3, 1)  # retried, fails again


def test_single_run_replay_gives_the_same_records(tmp_path):
    spec_file, spec = noop_spec(tmp_path, sleep="0ns", xs="1-5 step 1", repeat=4)
    run_experiment(spec, results=tmp_path, jobs=1)
    before = load_results(tmp_path / "noop")
    replay = harness(
        "run", str(spec_file), "--results", str(tmp_path), "--only", "x=3", "--rep", "2", "--rerun", "--json"
    )
    assert replay.returncode == 0, replay.stderr
    assert '"executed": 1' in replay.stdout
    pd.testing.assert_frame_equal(canonical(load_results(tmp_path / "noop")), canonical(before))


def test_zero_loss_search_finds_the_known_threshold_within_resolution(tmp_path):
    capacity = 37.5e9
    text = f"""
[experiment]
name = "search"
target = "synthetic.loss"
repeat = 2
[params]
capacity = {capacity}
duration = "10ms"
[sweep]
size = [64, 1518]
[design]
kind = "zero_loss"
hi = "100Gbps"
resolution = "0.1Gbps"
max_iterations = 30
"""
    spec = parse_spec(text, "search.toml")
    summary = run_experiment(spec, results=tmp_path, jobs=2)
    assert summary.failed == 0
    df = load_results(tmp_path / "search")
    stats = summarize(df)
    for name, loss in (("ndr", 1e-5), ("pdr", 1e-3)):
        rows = stats[stats["metric"] == f"{name}_rate"]
        assert len(rows) == 2 and (rows["n"] == 2).all()
        threshold = capacity / (1 - loss)  # highest rate whose loss ≤ target
        assert ((rows["min"] <= threshold) & (rows["max"] >= threshold - 0.1e9)).all(), rows
        gaps = stats[stats["metric"] == f"{name}_gap"]
        assert (gaps["max"] <= 0.1e9).all()
    # Every probe is a run in the store; a second invocation replays them, running nothing.
    probes = df[df["search"].isna()]["run"].nunique()
    assert probes == summary.executed
    assert run_experiment(spec, results=tmp_path, jobs=1).executed == 0
