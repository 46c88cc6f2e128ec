"""`nicbench calibrate --scheduler`: the model evaluations of a fit as Dask tasks on a loopback
cluster. The oracle is the in-process evaluation: the same fit must end at exactly the same values
(every run is a pure function of its point and overrides), and a worker that would read another
profile file than the client's refuses instead of fitting to it."""

from __future__ import annotations

import pytest
from helpers import python_module
from test_calibrate import TRUTH, mini_study, start_profile

from nicbench.calibrate import calibrate
from nicbench.calibrate.problem import _run_point_checked

python_module("distributed", "distributed")
from nicbench.experiments.scheduler import EnvironmentMismatch, environment_fingerprint, open_scheduler  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    with open_scheduler("local:1") as sched:
        yield sched


def test_a_fit_through_dask_ends_where_the_in_process_fit_does(tmp_path, cluster):
    study = mini_study(tmp_path)
    here = calibrate(
        str(start_profile(tmp_path / "a")),
        study=str(study.dir),
        jobs=1,
        sweeps=1,
        line_evals=4,
        parameters=list(TRUTH),
        write=False,
        validate=False,
    )
    there = calibrate(
        str(start_profile(tmp_path / "b")),
        study=str(study.dir),
        sweeps=1,
        line_evals=4,
        parameters=list(TRUTH),
        write=False,
        validate=False,
        scheduler=cluster,
    )
    assert {k: v["fitted"] for k, v in there.parameters.items()} == {k: v["fitted"] for k, v in here.parameters.items()}
    assert there.runs == here.runs and there.errors == here.errors == {}


def test_a_worker_reading_another_profile_file_refuses(tmp_path):
    profile = start_profile(tmp_path / "p")
    job = (
        "connectx.forward",
        {"nic": str(profile), "rules": 1000, "size": 64, "rate": 1e10, "duration": 2_000_000, "bin": 1_000_000},
        1,
        {},
    )
    with pytest.raises(
        EnvironmentMismatch, match=r"does not have the client's file .*mycx\.toml \(different contents\)"
    ):
        _run_point_checked(job, environment_fingerprint(), {str(profile): "0" * 16})
    with pytest.raises(EnvironmentMismatch, match=r"nicbench version"):
        _run_point_checked(job, {**environment_fingerprint(), "nicbench version": "0.0.0-other"}, {})
