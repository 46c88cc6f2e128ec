"""Run the harness commands as a user does: each `nicbench` command a process of its own.

`harness` forks it from a server that imported the CLI once (`cli_process`: its own exit code,
stdout, stderr, working folder and environment, without a second or more of start-up per command);
`harness_subprocess` and `harness_popen` run the installed entry point (`python -m nicbench.cli`),
for what needs a fresh interpreter (a `preexec_fn`, signals to a run, the entry point itself).
"""

from __future__ import annotations

import subprocess
import sys

from helpers import forked_cli

ENTRY = [sys.executable, "-m", "nicbench.cli"]

# Longest a harness command of these tests may take [s]: far above any (the longest, a reproduce of
# every repository study, takes about a minute on a loaded 2-core machine); reached, it is a hang.
HARNESS_TIMEOUT_S = 600


def harness(*args: str, cwd=None, env: dict[str, str | None] | None = None) -> subprocess.CompletedProcess:
    return forked_cli(*args, cwd=cwd, env=env, timeout_s=HARNESS_TIMEOUT_S)


def harness_subprocess(*args: str, cwd=None, **kw) -> subprocess.CompletedProcess:
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
