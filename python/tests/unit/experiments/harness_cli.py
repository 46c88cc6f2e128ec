"""Run the harness commands as a user does: the real `nicbench` CLI in a subprocess."""

from __future__ import annotations

import subprocess
import sys

ENTRY = [sys.executable, "-m", "nicbench.cli"]


def harness(*args: str, cwd=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*ENTRY, *args], capture_output=True, text=True, cwd=cwd, **kw)


def harness_popen(*args: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([*ENTRY, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("nicbench: error:"), proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), proc.stderr
