"""Run the harness commands as a user does: the real `nicbench` CLI in a subprocess.

Until `nicbench.cli` registers the harness commands, fall back to the harness module's
own group (`python -m nicbench.cli.experiments`), which has the same commands and error mapping.
"""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache


@lru_cache(maxsize=1)
def _entry() -> list[str]:
    probe = subprocess.run([sys.executable, "-m", "nicbench.cli", "reproduce", "--help"], capture_output=True, text=True)
    if probe.returncode == 0:
        return [sys.executable, "-m", "nicbench.cli"]
    return [sys.executable, "-m", "nicbench.cli.experiments"]


def harness(*args: str, cwd=None, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*_entry(), *args], capture_output=True, text=True, cwd=cwd, **kw)


def harness_popen(*args: str, cwd=None) -> subprocess.Popen:
    return subprocess.Popen([*_entry(), *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd)


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    lines = [line for line in proc.stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("nicbench: error:"), proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), proc.stderr
