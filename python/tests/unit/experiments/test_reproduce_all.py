"""`nicbench reproduce --all` over the repository's studies, end to end (every spec run, every report
written). Its own file: the longest test of the suite (most of it drawing the reports' figures), so
that a pytest worker takes it while the other runs the rest of the harness tests (`--dist loadfile`).
"""

from __future__ import annotations

import json
from pathlib import Path

from harness_cli import harness
from helpers import REPO


def test_reproduce_all_repository_studies(tmp_path):
    proc = harness(
        "reproduce",
        "--all",
        "--studies",
        str(REPO / "studies"),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "reports"),
        "--repeat",
        "1",
        "--limit-points",
        "2",
        "--set",
        "packets=2000",
        "--jobs",
        "1",
        "--no-predictions",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    outcomes = json.loads(proc.stdout)
    assert "foundation" in [o["study"] for o in outcomes]
    assert all(o["predictions"] == [] for o in outcomes)  # --no-predictions
    for o in outcomes:
        assert all(e["failed"] == 0 for e in o["experiments"])
        assert Path(o["report"]).is_file()
