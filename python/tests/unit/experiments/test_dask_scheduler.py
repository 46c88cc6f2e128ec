"""Sweeps on Dask distributed, on loopback: a scheduler and workers started here (`dask scheduler`,
`dask worker`), the records compared with a local run of the same spec.

The oracle is the local runner (`--jobs 1`, in-process): the same spec must give exactly the same
records (run keys, parameters, values) whatever happens to the workers or the client — none
missing, none duplicated.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from harness_cli import ENTRY, assert_one_line_error, harness, harness_popen
from helpers import python_module

from nicbench.experiments import load_results, parse_spec, run_experiment
from nicbench.experiments.store import ExperimentStore

python_module("distributed", "distributed")
from nicbench.experiments.scheduler import (  # noqa: E402
    EnvironmentMismatch,
    environment_fingerprint,
    open_scheduler,
    parse_address,
    run_task,
)

# 40 runs of 60 ms: about 1.2 s on two workers, long enough to kill one in the middle.
SPEC = """
[experiment]
name = "spread"
target = "synthetic.noop"
repeat = 2
seed = 11
[params]
sleep = "60ms"
[sweep]
x = "1-20 step 1"
"""
RUNS = 40
DASK = [sys.executable, "-m", "dask"]


def spec_file(tmp_path: Path) -> Path:
    path = tmp_path / "spread.toml"
    path.write_text(SPEC)
    return path


def canonical(df: pd.DataFrame) -> pd.DataFrame:
    return df.sort_values(["run", "metric"]).reset_index(drop=True)


def stored(results: Path) -> int:
    runs = results / "spread" / "runs"
    return sum(1 for p in runs.glob("*.arrow") if not p.name.startswith(".")) if runs.is_dir() else 0


def wait_until(condition, what: str, timeout_s: float = 60.0, proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended before {what}: {proc.stderr.read() if proc.stderr else ''}")
        assert time.monotonic() < deadline, f"no {what} after {timeout_s} s"
        time.sleep(0.02)


class Cluster:
    """A loopback scheduler and its workers, as separate processes (as on real machines)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.scheduler_file = folder / "scheduler.json"
        self.log = open(folder / "dask.log", "w")
        self.scheduler = subprocess.Popen(
            [
                *DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(self.scheduler_file),
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        wait_until(
            lambda: self.scheduler_file.exists() and self.scheduler_file.stat().st_size > 0,
            "scheduler file",
            proc=self.scheduler,
        )
        self.address = json.loads(self.scheduler_file.read_text())["address"]
        self.workers: dict[str, subprocess.Popen] = {}

    def start_worker(self, name: str, env: dict[str, str] | None = None) -> subprocess.Popen:
        proc = subprocess.Popen(
            [
                *DASK,
                "worker",
                self.address,
                "--name",
                name,
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
                "--host",
                "127.0.0.1",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
        self.workers[name] = proc
        return proc

    def names(self) -> set[str]:
        from distributed import Client

        with Client(self.address, timeout="10s") as client:
            return {w["name"] for w in client.scheduler_info()["workers"].values()}

    def wait_for(self, names: set[str]) -> None:
        wait_until(lambda: names <= self.names(), f"workers {sorted(names)}")

    def kill(self, name: str) -> None:
        proc = self.workers.pop(name)
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def close(self) -> None:
        for proc in [*self.workers.values(), self.scheduler]:
            proc.kill()
            proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    try:
        c.start_worker("w1")
        c.start_worker("w2")
        c.wait_for({"w1", "w2"})
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def local_records(tmp_path_factory) -> pd.DataFrame:
    """The oracle: the same spec run by the local runner, in-process."""
    root = tmp_path_factory.mktemp("local")
    path = spec_file(root)
    summary = run_experiment(parse_spec(path.read_text(), str(path)), results=root / "results", jobs=1)
    assert summary.executed == RUNS and summary.failed == 0
    return canonical(load_results(root / "results" / "spread"))


def assert_same_records(results: Path, local: pd.DataFrame) -> None:
    df = canonical(load_results(results / "spread"))
    assert not df.duplicated(["run", "metric"]).any(), "a run stored twice"
    assert df["run"].nunique() == RUNS
    pd.testing.assert_frame_equal(df, local, check_dtype=False)


def test_a_sweep_with_a_worker_killed_midway_ends_with_the_local_records(tmp_path, cluster, local_records):
    results = tmp_path / "results"
    proc = subprocess.Popen(
        [*ENTRY, "run", str(spec_file(tmp_path)), "--results", str(results), "--scheduler", cluster.address, "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_until(lambda: stored(results) >= 8, "8 stored runs", proc=proc)
        cluster.kill("w1")  # kill -9 in the middle of the sweep, likely mid-run
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
        cluster.start_worker("w1")  # for the next tests
    assert proc.returncode == 0, err
    summary = json.loads(out)
    assert (summary["executed"], summary["cached"], summary["failed"]) == (RUNS, 0, 0)
    assert len(summary["workers_lost"]) == 1
    assert_same_records(results, local_records)


def test_a_killed_client_restarted_finishes_the_sweep_from_the_store(tmp_path, cluster, local_records):
    # (w1, restarted by the previous test, may still be starting: w2 is enough.)
    results = tmp_path / "results"
    spec = spec_file(tmp_path)
    proc = harness_popen("run", str(spec), "--results", str(results), "--scheduler", cluster.address)
    wait_until(lambda: stored(results) >= 10, "10 stored runs", proc=proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = len(ExperimentStore(results, "spread").done_keys())
    assert 10 <= before < RUNS

    again = harness("run", str(spec), "--results", str(results), "--scheduler", cluster.address, "--json")
    assert again.returncode == 0, again.stderr
    summary = json.loads(again.stdout)
    assert summary["cached"] == before and summary["executed"] == RUNS - before
    assert_same_records(results, local_records)


def test_a_hung_run_under_dask_is_stopped_at_its_timeout_and_the_worker_lives_on(tmp_path, cluster):
    path = tmp_path / "hang.toml"
    path.write_text(
        SPEC.replace('sleep = "60ms"', 'sleep = "1ms"').replace('"1-20 step 1"', '"1-6 step 1"')
        + '[[override]]\nwhere = { x = 2 }\nset = { sleep = "60s" }\n'
    )
    t0 = time.monotonic()
    proc = harness(
        "run", str(path), "--results", str(tmp_path / "r"), "--scheduler", cluster.address, "--timeout", "1s", "--json"
    )
    assert proc.returncode == 1, proc.stderr  # two runs timed out: recorded as failed
    assert time.monotonic() - t0 < 30
    summary = json.loads(proc.stdout)
    assert (summary["executed"], summary["failed"]) == (10, 2)
    assert all(f["error"].startswith("timed out after 1 s") for f in summary["failures"])
    assert {f["params"]["x"] for f in summary["failures"]} == {2.0}
    assert summary["workers_lost"] == []


def test_local_n_starts_a_local_cluster(tmp_path, local_records):
    results = tmp_path / "results"
    proc = harness(
        "run",
        str(spec_file(tmp_path)),
        "--results",
        str(results),
        "--scheduler",
        "local:1",
        "--limit-points",
        "4",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["executed"] == 8
    df = canonical(load_results(results / "spread"))
    expected = local_records[local_records["x"] <= 4].reset_index(drop=True)
    pd.testing.assert_frame_equal(df, expected, check_dtype=False)


def test_a_task_on_a_worker_with_other_profiles_is_refused(tmp_path):
    mine = environment_fingerprint()
    other = {**mine, "profiles": "0000 (1 files)"}
    job = {
        "key": "k",
        "target": "synthetic.noop",
        "params": {"x": 1.0, "sleep": 0, "fail": False},
        "rep": 0,
        "seed": 1,
        "keep": None,
        "timeout_s": 5.0,
    }
    with pytest.raises(EnvironmentMismatch, match=r"profiles \S+ \(\d+ files\) vs 0000"):
        run_task(job, other)
    ok = run_task(job, mine)
    assert ok["status"] == "ok" and set(ok["metrics"]) == {"value", "x"} and not ok["stored"]


def test_a_task_naming_a_file_with_other_contents_on_the_worker_is_refused(tmp_path):
    """A profile given by path (`--set nic=mine.toml`) or a rules file: the run's key holds the client's
    hash of it; a worker whose file at that path differs (or lacks it) refuses the run."""
    from nicbench.experiments.fingerprint import input_hashes

    mine = environment_fingerprint()
    mine_toml = tmp_path / "mine.toml"
    mine_toml.write_text("# the client's profile\n")
    params = {"x": 1.0, "sleep": 0, "fail": False, "nic": str(mine_toml)}
    job = {
        "key": "k",
        "target": "synthetic.noop",
        "params": params,
        "rep": 0,
        "seed": 1,
        "keep": None,
        "timeout_s": 5.0,
        "provenance": {"input_files": json.dumps(input_hashes(params))},
    }
    mine_toml.write_text("# edited on the worker\n")
    with pytest.raises(EnvironmentMismatch, match=r"mine\.toml \(different contents\)"):
        run_task(job, mine)
    mine_toml.unlink()
    with pytest.raises(EnvironmentMismatch, match=r"mine\.toml \(missing\)"):
        run_task(job, mine)


def test_a_worker_with_changed_profiles_stops_the_sweep_before_it_starts(tmp_path, cluster):
    from nicbench.profiles import profiles_dir

    changed = tmp_path / "profiles"
    changed.mkdir()
    for p in profiles_dir().glob("*.toml"):
        (changed / p.name).write_text(p.read_text())
    first = sorted(changed.glob("*.toml"))[0]
    first.write_text(first.read_text() + "\n# edited on this worker only\n")
    cluster.start_worker("odd", env={"NICBENCH_PROFILES": str(changed)})
    try:
        cluster.wait_for({"odd"})
        proc = harness(
            "run", str(spec_file(tmp_path)), "--results", str(tmp_path / "r"), "--scheduler", cluster.address
        )
        assert_one_line_error(proc, "worker", "profiles", "differs")
        assert not (tmp_path / "r" / "spread" / "runs").exists() or stored(tmp_path / "r") == 0
    finally:
        cluster.kill("odd")


@pytest.mark.parametrize(
    "address, fragment",
    [
        ("local:0", "local:N"),
        ("nowhere", "tcp://HOST:8786"),
        ("tcp://127.0.0.1:1", "no Dask scheduler"),
        ("tcp://127.0.0.1:x", "HOST:PORT"),
    ],
)
def test_bad_scheduler_addresses_are_refused(address, fragment):
    with pytest.raises(ValueError, match=re.escape(fragment)):
        open_scheduler(address)


def test_a_bad_scheduler_is_one_line_at_the_cli(tmp_path):
    proc = harness(
        "run", str(spec_file(tmp_path)), "--results", str(tmp_path / "r"), "--scheduler", "tcp://127.0.0.1:1"
    )
    assert_one_line_error(proc, "--scheduler tcp://127.0.0.1:1", "no Dask scheduler")


def test_parse_address():
    assert parse_address("local:3") == ("local", 3)
    assert parse_address("tcp://10.0.0.1:8786") == ("tcp://10.0.0.1:8786", None)
