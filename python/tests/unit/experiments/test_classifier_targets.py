"""The classifier targets run through the harness: every run stores what the classifier reports for
its point and seed. Rates are measured (their levels belong in benchmarks); what is checked here is
what does not depend on the machine's speed or load."""

from __future__ import annotations

import json
import math

from helpers import REPO, run_cli

from nicbench import _native, load_results


def run_spec(spec: str, results, *sets: str) -> None:
    args = [
        "run",
        str(REPO / "experiments" / spec),
        "--results",
        str(results),
        "--repeat",
        "1",
        "--jobs",
        "1",
        "--json",
    ]
    for s in sets:
        args += ["--set", s]
    proc = run_cli(*args)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["failed"] == 0


def test_lookup_target_stores_the_classifier_of_its_point_and_seed(tmp_path):
    run_spec("classifier-lookup.toml", tmp_path, "rules=1000", "duration=20ms", "algorithm=hybrid")
    lookup = load_results("classifier-lookup", results=tmp_path)
    assert (lookup.status == "ok").all()
    assert sorted(lookup.workload.unique()) == ["acl", "exact5", "fw", "ipc"]
    for workload, run in lookup.groupby("workload"):
        values = dict(zip(run.metric, run.value))
        assert dict(zip(run.metric, run.unit)) == {"mpps": "Mpps", "memory_bytes_per_rule": "B"}
        assert math.isfinite(values["mpps"]) and values["mpps"] > 0
        # The same rule set, built again from the stored seed: the same memory per rule, so the
        # harness passed the point's workload, size, algorithm and seed through.
        [seed] = run.seed.unique()
        again = json.loads(_native.classifier_load(workload, 1000, int(seed), 0.001, "hybrid"))
        assert again["rules"] == 1000
        assert values["memory_bytes_per_rule"] == again["memory_bytes_per_rule"], workload


def test_update_target_applies_updates_at_most_at_their_rate(tmp_path):
    run_spec("classifier-update.toml", tmp_path, "rules=2000", "duration=50ms", "placement=same_core")
    update = load_results("classifier-update", results=tmp_path)
    assert (update.status == "ok").all()
    achieved = update[update.metric == "updates_per_s"].set_index("update_rate").value
    assert sorted(achieved.index) == [0, 10_000, 100_000, 1_000_000]
    assert achieved.loc[0] == 0.0
    # Paced updates (classify/src/measure.rs `due`): never more than `rate × elapsed` applied,
    # whatever the load; and some were applied at every non-zero rate.
    for rate in (10_000, 100_000, 1_000_000):
        assert 0 < achieved.loc[rate] <= rate, (rate, achieved.loc[rate])
