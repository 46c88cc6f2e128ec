"""`nicbench reproduce argus100g` end to end: fast, and the calibrated model holds the study's claims."""

from __future__ import annotations

import json
import time

from helpers import run_cli

from pathlib import Path

REPO = Path(__file__).resolve().parents[4]

# Qualitative claims that must hold (ids in studies/argus100g/reference.toml).
MUST_PASS = ["cores-7-drops", "cores-8-no-drops", "cores-6-drops", "flows-750-32768-no-drops",
             "flows-750-65536-drops", "flows-1500-131072-no-drops", "ht-drops", "conclusion-750-8-cores",
             "ht-16-pps-per-core", "ht-32-pps-per-process", "cores-8-total-16mpps"]


def _rows(doc):
    out = {}

    def walk(x):
        if isinstance(x, dict):
            if "id" in x and "model" in x:
                out[x["id"]] = x
                return
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return out


def test_reproduce_runs_fast_and_claims_hold(tmp_path):
    started = time.monotonic()
    proc = run_cli("reproduce", "argus100g", "--studies", str(REPO / "studies"), "--results", str(tmp_path / "r"),
                   "--reports", str(tmp_path / "rep"), "--repeat", "1", "-j", "2", "--json")
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert elapsed < 60, f"reproduce took {elapsed:.0f} s"
    rows = _rows(json.loads(proc.stdout))
    assert len(rows) >= 30
    failing = [i for i in MUST_PASS if str(rows[i].get("status", rows[i].get("passes"))) not in ("pass", "True")]
    assert not failing, {i: rows[i] for i in failing}
    assert (tmp_path / "rep" / "argus100g" / "index.html").is_file()
