"""`nicbench compare`: a slowed device is flagged as a regression, identical results are not,
differences within the repetitions' noise are not, and bad arguments are one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from harness_cli import assert_one_line_error, harness

from nicbench.experiments import parse_spec, run_experiment
from nicbench.experiments.compare import compare_results, direction

SPEC = """
[experiment]
name = "dut"
target = "synthetic.loss"
repeat = 3
seed = {seed}
[params]
capacity = "{capacity}"
[sweep]
rate = ["5Gbps", "20Gbps"]
[[figure]]
name = "tput"
kind = "line"
x = "rate"
y = "throughput_gbps"
[[figure]]
name = "tput_box"
kind = "box"
x = "rate"
y = "throughput_gbps"
"""


def _run(root: Path, name: str, capacity: str = "10Gbps", seed: int = 1) -> Path:
    spec = root / f"{name}.toml"
    spec.write_text(SPEC.format(capacity=capacity, seed=seed))
    run_experiment(parse_spec(spec.read_text(), str(spec)), results=root / name, jobs=1)
    return root / name / "dut"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """The same sweep on the reference device, a slowed one, a faster one, and with another seed."""
    root = tmp_path_factory.mktemp("compare")
    return {
        "a": _run(root, "a"),
        "slow": _run(root, "slow", capacity="8Gbps"),
        "fast": _run(root, "fast", capacity="12Gbps"),
        "seed2": _run(root, "seed2", seed=2),
    }


def test_a_slowed_device_is_a_regression(tmp_path, runs):
    a, b = runs["a"], runs["slow"]
    proc = harness("compare", str(a), str(b), "--ignore", "capacity", "--json", "--plot", str(tmp_path / "c.png"))
    assert proc.returncode == 1, proc.stderr
    out = json.loads(proc.stdout)
    worse = {(r["point"]["rate"], r["metric"]) for r in out["regressions"]}
    # Above its capacity the slowed device forwards 20% less and loses more; below it, nothing changes
    # in throughput (both forward all 5 Gbps).
    assert ("20000000000.0", "throughput_gbps") in worse and ("20000000000.0", "loss") in worse
    row = next(r for r in out["rows"] if r["metric"] == "throughput_gbps" and r["point"]["rate"] == "20000000000.0")
    assert abs(row["rel_diff"] + 0.2) < 0.01 and row["verdict"] == "worse"
    same = next(r for r in out["rows"] if r["metric"] == "throughput_gbps" and r["point"]["rate"] == "5000000000.0")
    assert same["verdict"] == "same"
    assert (tmp_path / "c.png").stat().st_size > 1000


def test_the_same_results_and_a_faster_device_are_not_regressions(runs):
    a = runs["a"]
    proc = harness("compare", str(a), str(a), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["verdicts"]["same"] == json.loads(proc.stdout)["compared"] > 0
    c = compare_results(a, runs["fast"], acceptable=0.01, ignore=("capacity",))
    assert set(c.rows["verdict"]) <= {"same", "better"} and "better" in set(c.rows["verdict"])


def test_differences_within_the_noise_are_the_same(runs):
    # Another seed: the latency samples differ run to run, the means stay within 2 standard errors.
    a, b = runs["a"], runs["seed2"]
    c = compare_results(a, b, acceptable=0.0)
    lat = c.rows[c.rows["metric"] == "latency_p50_ns"]
    assert (lat["a_mean"] != lat["b_mean"]).any()  # they do differ...
    assert set(lat["verdict"]) == {"same"}  # ...by noise only


def test_the_report_draws_both_results_as_series(tmp_path, runs):
    """`compare --report` (= `report A --with B`): each figure has a series per results folder, named by
    what tells the folders apart, with that folder's values; the page lists the flagged points."""
    import matplotlib.pyplot as plt

    from nicbench.experiments.store import ExperimentStore
    from nicbench.report.figures import draw_figure
    from nicbench.report.figures.common import Units
    from nicbench.report.html import _with_other_results, source_labels

    a, b = runs["a"], runs["slow"]
    out = tmp_path / "cmp" / "index.html"
    proc = harness("compare", str(a), str(b), "--ignore", "capacity", "--report", str(out))
    assert proc.returncode == 1, proc.stderr  # still the regression verdict
    page = out.read_text()
    assert "a vs slow, point by point" in page and "worse" in page
    assert page.count("<img") == 2 and (out.parent / "figures" / "tput.svg").exists()
    # `report A --with B` finds by itself that capacity is what the two folders compare.
    out2 = tmp_path / "rep" / "index.html"
    proc = harness("report", str(a), "--with", str(b), "-o", str(out2))
    assert proc.returncode == 0, proc.stderr
    assert "differ in <code>capacity</code>" in out2.read_text() and "worse</span>" in out2.read_text()
    assert " 0 worse" not in out2.read_text()

    labels = source_labels([a, b])
    assert labels == ["a", "slow"]
    records = _with_other_results(
        ExperimentStore(a.parent, a.name).load(), [ExperimentStore(b.parent, b.name).load()], labels
    )
    spec = parse_spec((a / "spec.toml").read_text(), "spec.toml")
    fig, ax = plt.subplots()
    try:
        draw_figure(ax, spec.figures[0], records, Units())
        series = {c.get_label(): c for c in ax.containers}
        assert set(series) == {"a", "slow"}
        y = {k: dict(zip(*c.lines[0].get_data())) for k, c in series.items()}
        # At 20 Gbps offered the slowed device (8 Gbps) forwards less than the reference (10 Gbps);
        # at 5 Gbps both forward everything.
        assert y["slow"][20e9] < 0.9 * y["a"][20e9] and y["slow"][5e9] == pytest.approx(y["a"][5e9], rel=0.01)
        assert series["a"].lines[0].get_linestyle() != series["slow"].lines[0].get_linestyle()
        assert series["a"].lines[0].get_color() == series["slow"].lines[0].get_color()  # one colour per hue
    finally:
        plt.close(fig)


def test_report_with_a_missing_folder_is_one_line(tmp_path, runs):
    assert_one_line_error(
        harness("report", str(runs["a"]), "--with", str(tmp_path / "nope"), "-o", str(tmp_path / "r.html")),
        "--with",
        "nope",
    )


def test_metric_directions():
    assert direction("rx_gbps") == 1 and direction("throughput_gbps") == 1 and direction("hit_rate") == 1
    assert direction("latency_p99_us") == -1 and direction("loss") == -1 and direction("outage_s") == -1
    assert direction("rx_drop_gbps") == -1 and direction("value") == 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--acceptable", "lots"), "--acceptable"),
        (("--acceptable", "-1%"), "--acceptable"),
        (("--ignore", "nope"), "nope"),
    ],
)
def test_bad_arguments_are_one_line(runs, args, needle):
    assert_one_line_error(harness("compare", str(runs["a"]), str(runs["a"]), *args), needle)


def test_missing_results_folder_is_one_line(tmp_path, runs):
    assert_one_line_error(harness("compare", str(runs["a"]), str(tmp_path / "missing")), "no results")


REPO = Path(__file__).resolve().parents[4]


def test_rev_dot_runs_the_spec_with_this_nicbench_and_compares(tmp_path):
    spec = REPO / "experiments" / "synthetic-loss.toml"
    proc = harness(
        "compare", "--rev", ".", "--rev", ".", "--spec", str(spec), "--workdir", str(tmp_path), "--json", cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["compared"] > 0 and out["verdicts"]["same"] == out["compared"]
    assert (tmp_path / "results" / "working-tree").is_dir()


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--rev", "no-such-revision-xyz", "--rev", "."), "no-such-revision-xyz"),
        (("--rev", "."), "exactly two revisions"),
        (("--rev", ".", "--rev", ".", "a", "b"), "not both"),
    ],
)
def test_rev_misuse_is_one_line(tmp_path, args, needle):
    spec = REPO / "experiments" / "synthetic-loss.toml"
    proc = harness("compare", *args, "--spec", str(spec), "--workdir", str(tmp_path), cwd=REPO)
    assert_one_line_error(proc, needle)


def test_a_built_revision_runs_from_a_relative_workdir(tmp_path, monkeypatch):
    """The default --workdir is relative (build/revisions) and a revision's nicbench runs with its
    tree as working directory: the command must be an absolute path (it was 'No such file')."""
    from nicbench.experiments.revisions import _BUILT_STAMP, Revision, run_at_revision

    commit = "ab" * 20
    tree = tmp_path / "build" / "revisions" / commit[:12]
    (tree / ".venv" / "bin").mkdir(parents=True)
    (tree / ".git").write_text("gitdir: elsewhere\n")  # checked out already
    (tree / _BUILT_STAMP).write_text(commit + "\n")  # and built
    fake = tree / ".venv" / "bin" / "nicbench"  # a stand-in for that revision's nicbench: makes its results folder
    fake.write_text('#!/bin/sh\nwhile [ "$1" != "--results" ]; do shift; done\nmkdir -p "$2/exp"\n')
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    got = run_at_revision(
        tmp_path,
        Revision("HEAD~1", commit),
        tmp_path / "spec.toml",
        "exp",
        Path("build") / "revisions",
        [],
        lambda _: None,
    )
    assert got.resolve().is_dir() and got.name == "exp"
