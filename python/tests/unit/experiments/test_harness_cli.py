"""The harness on the command line: check, run, results, reproduce; bad input → one line, exit 2."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
from pathlib import Path

import pytest
from harness_cli import assert_one_line_error, harness, harness_subprocess
from helpers import REPO, missing

SPEC = """
[experiment]
name = "cli-noop"
target = "synthetic.noop"
repeat = 3
[sweep]
x = "1-4 step 1"
"""


@pytest.fixture
def spec_file(tmp_path) -> Path:
    path = tmp_path / "noop.toml"
    path.write_text(SPEC)
    return path


def test_check_prints_points_times_repetitions(spec_file):
    proc = harness("check", str(spec_file))
    assert proc.returncode == 0, proc.stderr
    assert "4 points × 3 repetitions = 12 runs" in proc.stdout
    info = json.loads(harness("check", str(spec_file), "--json").stdout)
    assert (info["points"], info["repeat"], info["runs"]) == (4, 3, 12)


@pytest.mark.parametrize(
    "spec",
    sorted(str(p) for p in (REPO / "experiments").glob("*.toml"))
    + sorted(str(p) for p in (REPO / "studies").glob("*/experiments/*.toml")),
)
def test_shipped_specs_are_valid(spec):
    assert harness("check", spec).returncode == 0


def test_spec_error_is_one_line_with_file_and_key(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace('x = "1-4 step 1"', 'x = "lots"'))
    assert_one_line_error(harness("check", str(bad)), str(bad), "sweep.x", "expected a number")
    assert_one_line_error(harness("run", str(bad), "--results", str(tmp_path)), "sweep.x")


def test_unknown_target_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(SPEC.replace("synthetic.noop", "warp.drive"))
    assert_one_line_error(
        harness("run", str(bad), "--results", str(tmp_path)), "unknown target 'warp.drive'", "known targets"
    )


def test_missing_spec_is_one_line(tmp_path):
    # Through the installed entry point: its exit code and stderr, start-up included.
    assert_one_line_error(harness_subprocess("check", str(tmp_path / "nope.toml")), "nope.toml")


def without_root_file_powers() -> None:
    """In the child, before exec: drop the capabilities that let root ignore file permissions
    (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER) from the bounding set, so that root, too,
    cannot write into a read-only folder (prctl PR_CAPBSET_DROP; a no-op for other users)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2, 3):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), f"prctl(PR_CAPBSET_DROP, {cap})")


def test_unwritable_results_folder_is_one_line(tmp_path, spec_file):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    preexec = without_root_file_powers if os.geteuid() == 0 else None
    try:
        proc = harness_subprocess("run", str(spec_file), "--results", str(ro / "r"), preexec_fn=preexec)
    except subprocess.SubprocessError as exc:  # prctl refused: no CAP_SETPCAP in this container
        missing(f"cannot drop root's file capabilities for the read-only case ({exc})")
    assert_one_line_error(proc, str(ro))
    assert not (ro / "r").exists()


def test_results_folder_that_is_a_file_is_one_line(tmp_path, spec_file):
    blocker = tmp_path / "results"
    blocker.write_text("not a folder")
    assert_one_line_error(harness("run", str(spec_file), "--results", str(blocker)), str(blocker))


def test_run_ls_export_report(tmp_path, spec_file):
    run = harness("run", str(spec_file), "--results", str(tmp_path / "r"), "--jobs", "2", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["executed"] == 12
    ls = json.loads(harness("results", "ls", "--results", str(tmp_path / "r"), "--json").stdout)
    assert [(e["experiment"], e["runs"], e["complete"]) for e in ls] == [("cli-noop", 12, True)]
    out = tmp_path / "all.csv"
    exp = harness("results", "export", str(tmp_path / "r" / "cli-noop"), "--csv", "-o", str(out))
    assert exp.returncode == 0, exp.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 1 + 12 * 2 and lines[0].startswith("experiment,target,run,rep,seed,status")
    missing = harness("results", "export", "nope", "--results", str(tmp_path / "r"))
    assert_one_line_error(missing, "nope")


def test_complete_only_when_the_whole_sweep_is_stored(tmp_path, spec_file):
    """A run narrowed by --limit-points, --only, --rep or --repeat stores part of the sweep: `results
    ls` says complete only after a run of the whole sweep, and a narrowed re-run keeps that."""
    root = str(tmp_path / "r")

    def ls() -> tuple[int, bool]:
        [row] = json.loads(harness("results", "ls", "--results", root, "--json").stdout)
        return row["runs"], row["complete"]

    def sweep() -> tuple[int | None, bool]:
        [row] = json.loads(harness("results", "ls", "--results", root, "--json").stdout)
        return row["sweep_runs"], row["sweep_runs_exact"]

    for narrowing in (["--limit-points", "1"], ["--only", "x=2"], ["--rep", "0"], ["--repeat", "1"]):
        assert harness("run", str(spec_file), "--results", root, "--jobs", "1", *narrowing).returncode == 0
        assert ls()[1] is False, narrowing
        if narrowing[0] in ("--limit-points", "--only"):  # these narrow what runs, not the sweep: 4 × 3
            assert sweep() == (12, True), narrowing
    assert harness("run", str(spec_file), "--results", root, "--jobs", "1").returncode == 0
    assert ls() == (12, True)
    assert harness("run", str(spec_file), "--results", root, "--jobs", "1", "--only", "x=3").returncode == 0
    assert ls() == (12, True)
    assert harness("results", "ls", "--results", root).stdout.count("12 of 12") == 1
    # More repetitions than the spec's store its whole sweep and more: complete, not narrowed.
    assert harness("run", str(spec_file), "--results", root, "--jobs", "1", "--repeat", "4").returncode == 0
    assert ls() == (16, True)


def test_ls_names_the_sweep_size_before_the_sweep_is_stored(tmp_path, spec_file):
    """After a smoke run the table says how much of the sweep is stored ("3 of 12"), and piped it
    keeps a long experiment name whole (rich would cut it at 80 columns)."""
    root = str(tmp_path / "r")
    long_name = "a-rather-long-experiment-name-that-a-script-pastes-into-results-export"
    spec_file.write_text(SPEC.replace('"cli-noop"', f'"{long_name}"'))
    assert harness("run", str(spec_file), "--results", root, "--jobs", "1", "--rep", "0").returncode == 0
    [row] = json.loads(harness("results", "ls", "--results", root, "--json").stdout)
    assert (row["runs"], row["sweep_runs"], row["complete"]) == (4, 12, False)
    table = harness("results", "ls", "--results", root).stdout
    assert "4 of 12" in table and long_name in table, table


STUDY = """
[study]
name = "mini"
title = "A mini study"
experiments = ["loss.toml"]
"""
LOSS = """
[experiment]
name = "mini-loss"
target = "synthetic.loss"
repeat = 3
[params]
capacity = "10Gbps"
[sweep]
rate = ["5Gbps", "20Gbps"]
[[figure]]
kind = "box"
x = "rate"
y = "loss"
"""
REFERENCE = """
[[reference]]
id = "half-loss"
quote = "at twice its capacity the device drops half of what it is offered"
location = "nowhere, Figure 0"
experiment = "mini-loss"
where = { rate = "20Gbps" }
metric = "loss"
statistic = "median"
value = 50.0
unit = "%"
tolerance = { absolute = 1.0 }
set = "validation"

[[reference]]
id = "no-loss"
quote = "below capacity nothing is lost"
location = "nowhere, Table 0"
experiment = "mini-loss"
where = { rate = "5Gbps" }
metric = "loss"
statistic = "p99"
value = 0.1
unit = ""
tolerance = { relative = 0.05 }
set = "calibration"
"""


def test_reproduce_all_builds_study_reports_with_comparison(tmp_path):
    study = tmp_path / "studies" / "mini"
    study.mkdir(parents=True)
    (study / "study.toml").write_text(STUDY)
    (study / "loss.toml").write_text(LOSS)
    (study / "reference.toml").write_text(REFERENCE)
    proc = harness(
        "reproduce",
        "--all",
        "--studies",
        str(tmp_path / "studies"),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "reports"),
        "--repeat",
        "2",
        "--json",
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)[0]
    assert (out["references"], out["passed"]) == (2, 1)  # 0 ≠ 0.1 ± 5%: the second one fails
    statuses = {c["id"]: c["status"] for c in out["pages"][0]["comparisons"]}
    assert statuses == {"half-loss": "pass", "no-loss": "fail"}
    index = (tmp_path / "reports" / "mini" / "index.html").read_text()
    assert 'href="mini-loss/index.html"' in index and "median |relative error|" in index
    page = (tmp_path / "reports" / "mini" / "mini-loss" / "index.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "half-loss" in page
    assert "Part of the spec" in page, "--repeat 2 of a 3-repetition spec stores part of its sweep"
    more = harness(
        "reproduce",
        "--all",
        "--studies",
        str(tmp_path / "studies"),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "reports"),
        "--repeat",
        "4",
        "--json",
    )
    assert more.returncode == 0, more.stderr
    page = (tmp_path / "reports" / "mini" / "mini-loss" / "index.html").read_text()
    assert "Part of the spec" not in page, "more repetitions than the spec's are its whole sweep"


def test_reproduce_unknown_study_is_one_line(tmp_path):
    assert_one_line_error(harness("reproduce", "nope", "--studies", str(tmp_path)), "study")


def test_reproduce_set_of_unknown_parameter_is_an_error(tmp_path):
    proc = harness(
        "reproduce",
        "foundation",
        "--studies",
        str(REPO / "studies"),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "reports"),
        "--set",
        "pakets=2000",
    )
    assert_one_line_error(proc, "pakets")


def _mini_study(tmp_path: Path, known_misses: str | None = None) -> list[str]:
    study = tmp_path / "studies" / "mini"
    study.mkdir(parents=True, exist_ok=True)
    (study / "study.toml").write_text(STUDY)
    (study / "loss.toml").write_text(LOSS)
    (study / "reference.toml").write_text(REFERENCE)
    if known_misses is not None:
        (study / "known_misses.toml").write_text(known_misses)
    return [
        "reproduce",
        "mini",
        "--studies",
        str(tmp_path / "studies"),
        "--results",
        str(tmp_path / "r"),
        "--reports",
        str(tmp_path / "reports"),
        "--repeat",
        "2",
    ]


def test_reproduce_strict_fails_on_a_failing_reference_and_names_it(tmp_path):
    args = _mini_study(tmp_path)
    assert harness(*args).returncode == 0  # without --strict a failing reference is reported only
    proc = harness(*args, "--strict")
    assert proc.returncode == 1, proc.stderr
    assert "nicbench: strict: mini: failing and not in known_misses.toml: no-loss" in proc.stderr


def test_reproduce_strict_accepts_declared_misses_and_refuses_stale_ones(tmp_path):
    miss = '[[miss]]\nid = "{id}"\nreason = "a test"\n'
    proc = harness(*_mini_study(tmp_path, miss.format(id="no-loss")), "--strict")
    assert proc.returncode == 0, proc.stderr
    assert "strict: mini: ok (1 known misses: no-loss)" in proc.stderr
    # half-loss passes: listing it as a miss is a stale list
    proc = harness(*_mini_study(tmp_path, miss.format(id="no-loss") + miss.format(id="half-loss")), "--strict")
    assert proc.returncode == 1
    assert "passing now (remove them): half-loss" in proc.stderr


def test_reproduce_strict_bad_known_misses_file_is_one_line(tmp_path):
    args = _mini_study(tmp_path, '[[miss]]\nid = "no-loss"\n')
    assert_one_line_error(harness(*args, "--strict"), "known_misses.toml", "reason")
