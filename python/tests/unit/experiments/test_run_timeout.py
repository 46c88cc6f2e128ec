"""Per-run timeout: a run past it is stopped, stored as failed with the reason, and the sweep goes on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from harness_cli import assert_one_line_error, harness

from nicbench.experiments import load_results, parse_spec, run_experiment
from nicbench.experiments.spec import DEFAULT_TIMEOUT_S
from nicbench.vocab.errors import SpecError

# Point x=3 sleeps 60 s; the others 20 ms. Without a working timeout the test takes a minute.
HANGING = """
[experiment]
name = "hang"
target = "synthetic.noop"
repeat = 1
seed = 3
{timeout}
[params]
sleep = "20ms"
[sweep]
x = "1-8 step 1"
[[override]]
where = {{ x = 3 }}
set = {{ sleep = "60s" }}
"""


def hanging_spec(tmp_path: Path, timeout: str = 'timeout = "1s"'):
    path = tmp_path / "hang.toml"
    path.write_text(HANGING.format(timeout=timeout))
    return path, parse_spec(path.read_text(), str(path))


def check_only_x3_timed_out(store_dir: Path, timeout_text: str) -> None:
    df = load_results(store_dir)
    per_run = df.drop_duplicates("run").set_index("x")
    assert sorted(per_run.index) == [float(x) for x in range(1, 9)]
    assert per_run.loc[3.0, "status"] == "error"
    assert per_run.loc[3.0, "error"].startswith(f"timed out after {timeout_text} s")
    assert (per_run.drop(index=3.0)["status"] == "ok").all()
    assert set(df[df["status"] == "ok"]["metric"]) == {"value", "x"}


@pytest.mark.parametrize("jobs", [1, 2], ids=["in-process", "worker-pool"])
def test_a_hung_run_is_stopped_at_its_timeout_and_the_sweep_goes_on(tmp_path, jobs):
    _, spec = hanging_spec(tmp_path)
    assert spec.timeout_s == 1.0
    t0 = time.monotonic()
    summary = run_experiment(spec, results=tmp_path / "results", jobs=jobs)
    elapsed = time.monotonic() - t0
    assert elapsed < 15, f"the 60 s run was not stopped at its 1 s timeout ({elapsed:.1f} s)"
    assert (summary.executed, summary.failed) == (7, 1)
    assert summary.failures[0]["error"].startswith("timed out after 1 s")
    check_only_x3_timed_out(tmp_path / "results" / "hang", "1")


def test_the_pool_restarted_after_a_timeout_runs_the_interrupted_runs_again(tmp_path):
    # Two workers, eight runs: when x=3 is killed the other worker is mid-run or between runs;
    # whatever was in flight on the killed pool is submitted again: every other run is stored once.
    _, spec = hanging_spec(tmp_path)
    summary = run_experiment(spec, results=tmp_path / "results", jobs=2)
    df = load_results(tmp_path / "results" / "hang")
    assert not df.duplicated(["run", "metric"]).any()
    assert df["run"].nunique() == 8 and summary.executed + summary.failed == 8


def test_cli_timeout_overrides_the_spec_and_is_validated(tmp_path):
    path, _ = hanging_spec(tmp_path, timeout='timeout = "10min"')
    t0 = time.monotonic()
    proc = harness("run", str(path), "--results", str(tmp_path / "r"), "--jobs", "2", "--timeout", "0.5")
    assert proc.returncode == 1, proc.stderr  # the timed-out run is recorded as failed: exit status 1
    assert time.monotonic() - t0 < 20
    check_only_x3_timed_out(tmp_path / "r" / "hang", "0.5")
    bad = harness("run", str(path), "--results", str(tmp_path / "r"), "--timeout", "soon")
    assert_one_line_error(bad, "--timeout", "duration")


def test_spec_timeout_default_and_errors(tmp_path):
    _, spec = hanging_spec(tmp_path, timeout="")
    assert spec.timeout_s == DEFAULT_TIMEOUT_S == 600.0
    assert hanging_spec(tmp_path, timeout="timeout = 90")[1].timeout_s == 90.0
    assert hanging_spec(tmp_path, timeout='timeout = "2min"')[1].timeout_s == 120.0
    for bad in ("timeout = 0", 'timeout = "later"', "timeout = true", "timeout = -5"):
        with pytest.raises(SpecError, match="experiment.timeout"):
            hanging_spec(tmp_path, timeout=bad)
