"""Caching that cannot go stale: a run's key holds the fingerprint of the code and the files it reads.

- Editing one profile re-runs exactly the runs that name it; `results ls` counts them stale first.
- `--reuse-stale` answers from the stale runs instead, and says how many.
- A change of the package's sources changes the code fingerprint (and so every run key).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from harness_cli import harness

from nicbench.experiments import fingerprint as fp
from nicbench.experiments import parse_spec, run_experiment
from nicbench.experiments.store import ExperimentStore
from nicbench.profiles import profiles_dir

SPEC = """
[experiment]
name = "fp"
target = "offpath.single"
repeat = 2
seed = 3
[params]
path = "client->host"
verb = "READ"
[sweep]
nic = ["bluefield2", "connectx6-rnic"]
payload = [64, 256, 1024]
"""


@pytest.fixture
def own_profiles(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "profiles"
    shutil.copytree(profiles_dir(), folder)
    monkeypatch.setenv("NICBENCH_PROFILES", str(folder))
    return folder


def _spec(tmp_path: Path):
    path = tmp_path / "fp.toml"
    path.write_text(SPEC)
    return parse_spec(SPEC, str(path))


def _edit_port_speed(profile: Path) -> None:
    """Changes the profile's port speed by 1% (a real edit a user would make; not a count such as
    network_ports, which the model refuses as a fraction)."""
    text = profile.read_text()
    m = re.search(r"^\[param\.network_port_gbps\]\nvalue = ([0-9.eE+-]+)$", text, flags=re.M)
    assert m, profile
    new = float(m.group(1)) * 1.01 + 1e-9
    profile.write_text(text[: m.start(1)] + repr(new) + text[m.end(1) :])


def test_editing_one_profile_reruns_exactly_its_runs(tmp_path, own_profiles):
    spec = _spec(tmp_path)
    first = run_experiment(spec, results=tmp_path / "r", jobs=1)
    assert (first.executed, first.cached) == (12, 0)
    again = run_experiment(spec, results=tmp_path / "r", jobs=1)
    assert (again.executed, again.cached) == (0, 12)

    _edit_port_speed(own_profiles / "bluefield2.toml")
    store = ExperimentStore(tmp_path / "r", "fp")
    assert len(store.stale_keys()) == 6  # the bluefield2 runs: 3 payloads x 2 repetitions
    after = run_experiment(spec, results=tmp_path / "r", jobs=1)
    assert (after.executed, after.cached) == (6, 6)
    assert store.stale_keys() == set()  # the old bluefield2 runs moved to stale/ after the complete sweep
    runs = store.load()
    assert runs["run"].nunique() == 12 and set(runs["nic"]) == {"bluefield2", "connectx6-rnic"}
    hashes = runs.groupby("nic")["input_files"].first().map(json.loads)
    assert set(hashes["bluefield2"]) == {"bluefield2"} and set(hashes["connectx6-rnic"]) == {"connectx6-rnic"}


def test_reuse_stale_answers_from_the_stale_runs(tmp_path, own_profiles):
    spec = _spec(tmp_path)
    run_experiment(spec, results=tmp_path / "r", jobs=1)
    _edit_port_speed(own_profiles / "connectx6-rnic.toml")
    reused = run_experiment(spec, results=tmp_path / "r", jobs=1, reuse_stale=True)
    assert (reused.executed, reused.cached, reused.stale_reused) == (0, 12, 6)
    store = ExperimentStore(tmp_path / "r", "fp")
    assert len(store.stale_keys()) == 6  # kept, and still stale
    fresh = run_experiment(spec, results=tmp_path / "r", jobs=1)
    assert (fresh.executed, fresh.stale_reused) == (6, 0)


def test_results_ls_counts_stale_runs(tmp_path, own_profiles):
    spec = _spec(tmp_path)
    run_experiment(spec, results=tmp_path / "r", jobs=1)
    _edit_port_speed(own_profiles / "bluefield2.toml")
    out = harness("results", "ls", "--results", str(tmp_path / "r"), "--json")  # inherits NICBENCH_PROFILES
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert (row["runs"], row["stale"]) == (12, 6)


def test_code_fingerprint_follows_the_sources(tmp_path, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "model.py").write_text("COST_NS = 77\n")
    monkeypatch.setattr(fp, "_package_dir", lambda: pkg)
    fp.code_fingerprint.cache_clear()
    try:
        before = fp.code_fingerprint()
        (pkg / "model.py").write_text("COST_NS = 78\n")
        fp.code_fingerprint.cache_clear()
        assert fp.code_fingerprint() != before
        (pkg / "model.py").write_text("COST_NS = 77\n")
        fp.code_fingerprint.cache_clear()
        assert fp.code_fingerprint() == before
    finally:
        fp.code_fingerprint.cache_clear()


def test_a_changed_code_fingerprint_reruns_every_run(tmp_path, monkeypatch):
    spec = _spec(tmp_path)
    run_experiment(spec, results=tmp_path / "r", jobs=1)
    monkeypatch.setattr(fp, "code_fingerprint", lambda: "0" * 16)
    changed = run_experiment(spec, results=tmp_path / "r", jobs=1)
    assert (changed.executed, changed.cached) == (12, 0)
