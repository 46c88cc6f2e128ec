"""`nicbench reproduce argus100g` end to end: the calibrated model holds the study's claims, and
which references pass or fail does not change unnoticed."""

from __future__ import annotations

import json
from collections import Counter

from helpers import STUDIES, run_cli

from nicbench.vocab.study import SUMMARY_GROUPS

# The validation references the model fails today, and why: a change to this list must be deliberate.
KNOWN_FAILING = {
    # The authors' extrapolation from the 750 B run; the seed's own 16-process row (4.46 Mpps per core at
    # 64 B) needs ~34 cores for 148.8 Mpps, and so does the model (make_reference.py).
    "conclusion-64-80-100-cores": "model 34 cores",
    # 'nearly all' read as >= 88% metered; the model's sustained 2.30 Mpps per core x 6 = 85% of 16.2 Mpps.
    "cores-6-nearly-all": "model 0.85",
}

# Qualitative claims and table values that must hold (ids in studies/argus100g/reference.toml); the
# independent predictions among them: the 750 B knee, the 32-process row, the 8-core run.
MUST_PASS = [
    "cores-7-drops",
    "cores-8-no-drops",
    "cores-6-drops",
    "flows-750-32768-no-drops",
    "flows-750-65536-drops",
    "flows-1500-131072-no-drops",
    "flows-1500-262144-drops",
    "ht-drops",
    "conclusion-750-8-cores",
    "ht-16-pps-per-core",
    "ht-32-pps-per-process",
    "ht-32-pps-total",
    "ht-32-mbps-per-process",
    "cores-8-total-16mpps",
]


def test_reproduce_holds_the_claims_and_the_known_results(tmp_path):
    proc = run_cli(
        "reproduce",
        "argus100g",
        "--studies",
        str(STUDIES),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "rep"),
        "--repeat",
        "1",
        "-j",
        "2",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    [outcome] = json.loads(proc.stdout)
    assert outcome["study"] == "argus100g"
    assert all(e["failed"] == 0 for e in outcome["experiments"]), outcome["experiments"]
    comparisons = {c["id"]: c for page in outcome["pages"] for c in page["comparisons"]}
    assert len(comparisons) == outcome["references"] == 35
    failing_claims = [i for i in MUST_PASS if comparisons[i]["status"] != "pass"]
    assert not failing_claims, {i: comparisons[i] for i in failing_claims}
    assert sorted(i for i, c in comparisons.items() if c["status"] != "pass") == sorted(KNOWN_FAILING)
    group = {
        i: "calibration"
        if c["set"] == "calibration"
        else ("restates" if c["restates"] else "repeats" if c["repeats"] or c["echo"] else "independent")
        for i, c in comparisons.items()
    }
    assert Counter((group[i], c["status"]) for i, c in comparisons.items()) == {
        ("calibration", "pass"): 8,
        ("independent", "pass"): 13,
        ("independent", "fail"): 2,
        ("restates", "pass"): 7,
        ("repeats", "pass"): 5,
    }
    summary = outcome["summary"]
    assert [summary[g]["entries"] for g in SUMMARY_GROUPS] == [8, 15, 7, 5]
    assert summary["validation (independent)"]["passed"] == 13
    assert outcome["passed"] == 33
    assert (tmp_path / "rep" / "argus100g" / "index.html").is_file()
