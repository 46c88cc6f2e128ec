"""Helpers shared by the test modules (importable: pytest puts python/tests on sys.path).

Missing inputs follow one rule (the same as the Rust tests' `nicbench-testenv` crate): a test
whose shared data, peer tool, optional Python package or capability is missing FAILS when the
environment variable `CI` is "true", naming what is missing and where it was looked for;
outside CI it is skipped with that reason (pytest prints it: `addopts = "-ra"`). Never call
`pytest.skip` / `importorskip` for a missing input directly: use `missing()` or the helpers below.
"""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

# The checkout, and its study folders (tests read the committed files from there).
REPO = Path(__file__).resolve().parents[2]
STUDIES = REPO / "studies"

# Overrides where the ClassBench filter sets are (as for the Rust tests).
CLASSBENCH_ENV = "NICBENCH_CLASSBENCH"


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """Run the real `nicbench` entry point in a subprocess (exit codes and stderr as a user sees them)."""
    return subprocess.run([sys.executable, "-m", "nicbench.cli", *args], capture_output=True, text=True)


# Longest a command of `forked_cli` may run [s]: far above any of the tests' commands; reached, the
# command is killed and the test fails naming it (a hang, not a slow machine).
FORKED_CLI_TIMEOUT_S = 300


def forked_cli(
    *args: str, cwd=None, env: dict[str, str | None] | None = None, timeout_s: float = FORKED_CLI_TIMEOUT_S
) -> subprocess.CompletedProcess:
    """`nicbench ARGS` in a process of its own (exit code, stdout, stderr; this process's folder and
    environment, or `cwd` and `env` on top of it, None removing a variable), forked from a server that
    imported the CLI once (`cli_process`): what `run_cli` checks, without an interpreter's start-up
    and imports per command. Start-up itself (the entry point, what it imports) is `run_cli`'s."""
    from cli_process import run_forked

    proc = run_forked([str(a) for a in args], timeout_s, cwd=cwd, env=env)
    assert proc is not None, f"`nicbench {' '.join(map(str, args))}` still running after {timeout_s} s"
    return proc


def in_ci() -> bool:
    """True when `CI` is "true" (set by GitHub Actions, GitLab and most CI systems)."""
    return os.environ.get("CI") == "true"


def missing(what: str) -> None:
    """This test cannot run because `what` is missing: fail under CI=true, else skip with the reason.
    Never returns. In a test's body the message starts with the test's id: pytest's summary shows a
    skip's reason with the place `pytest.skip` was called (here), not the test. (Not in a fixture: a
    module-scoped fixture's outcome is reused by the next tests, whose ids would differ.)"""
    current, _, phase = os.environ.get("PYTEST_CURRENT_TEST", "").rpartition(" ")  # unset while collecting
    what = f"{current}: {what}" if phase == "(call)" else what
    if in_ci():
        pytest.fail(f"{what} (CI=true: a test whose data or peer tool is missing fails)", pytrace=False)
    pytest.skip(what, allow_module_level=True)  # also from a module's top level (imports)


def peer(name: str, package: str | None = None) -> str:
    """Path of peer tool `name` on $PATH, or `missing()` naming it and the Debian package that has it."""
    path = shutil.which(name)
    if path is None:
        missing(f"peer tool {name} not on PATH (Debian package {package or name}; `make peers` installs it)")
    return path


def shared_data_dir() -> Path:
    """The project's shared data folder beside the checkout: `<repo>/../shared/data`."""
    return REPO.parent / "shared" / "data"


def classbench_dir() -> Path:
    """Where the ClassBench filter sets are: $NICBENCH_CLASSBENCH, else `<repo>/../shared/data/classbench`."""
    env = os.environ.get(CLASSBENCH_ENV)
    return Path(env) if env else shared_data_dir() / "classbench"


def classbench_file(name: str) -> Path:
    """One ClassBench filter set (e.g. "acl1_1k"), or `missing()` saying where it was looked for."""
    path = classbench_dir() / name
    if not path.is_file():
        missing(
            f"ClassBench data not found at {path} (put the project's shared/ folder beside the checkout, "
            f"or set {CLASSBENCH_ENV})"
        )
    return path


def python_module(name: str, package: str | None = None) -> ModuleType:
    """Import optional test dependency `name` (declared in pyproject's `test` extra), or `missing()`."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        missing(f"Python package {package or name} cannot be imported ({exc}; `make test` installs it)")


def run_spec_records(folder: Path, spec_text: str, name: str, executed: int):
    """Run the spec `spec_text` (experiment `name`) with `nicbench run` into `folder`, check that it ran
    `executed` runs, and return its records as `nicbench results export --csv` writes them (a pandas
    DataFrame): a sweep through the command line and the store, as a user runs one."""
    import json

    import pandas as pd

    spec = folder / f"{name}.toml"
    spec.write_text(spec_text)
    results = folder / "results"
    run = forked_cli("run", str(spec), "--results", str(results), "--jobs", "1", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["executed"] == executed
    out = folder / f"{name}.csv"
    export = forked_cli("results", "export", str(results / name), "--csv", "-o", str(out))
    assert export.returncode == 0, export.stderr
    return pd.read_csv(out)


def paced(frames: list, gap_s: float = 1e-3) -> list:
    """Copies of scapy packets `frames`, timestamped `gap_s` apart from 0. The virtual OVS sets a flow
    up in `upcall_us` (µs) of simulated time, and a packet of the flow arriving before that misses too
    (a duplicate upcall): packets a test means to hit the flow an earlier one set up must come later,
    as they reach a real OVS (one `netdev-dummy/receive` call, milliseconds, each). scapy stamps packets
    with their creation time, microseconds apart, or repeats one stamp for a repeated packet."""
    out = []
    for i, frame in enumerate(frames):
        copy = frame.copy()
        copy.time = i * gap_s
        out.append(copy)
    return out


def chromium_rendered_sizes(page: Path) -> list[tuple[int, int]]:
    """The (width, height) of every figure a report page's script marks as decoded (`data-rendered`),
    as headless Chromium renders the page (the peer tool; `missing()` rule when it is absent)."""
    import re
    import tempfile

    chromium = shutil.which("chromium-browser") or peer("chromium")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=3000",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [tuple(int(v) for v in size.split("x")) for size in re.findall(r'data-rendered="([^"]+)"', proc.stdout)]
