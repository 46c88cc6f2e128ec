"""Shell completion (README "Shell completion"): click's own, reached through nicbench's groups.

`_NICBENCH_COMPLETE=bash_source nicbench` prints the script the README's line evaluates, and a
completion request (what that script sends on TAB) is answered from the lazily loaded command
list: NicbenchGroup and LazyGroup must neither turn it into an error line nor miss sub-commands.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The console script the README's lines run; `python -m nicbench.cli` is the same `main` under the
# same program name (hence the same variable), for an environment without the script.
SCRIPT = Path(sys.executable).with_name("nicbench")
ENTRY = [str(SCRIPT)] if SCRIPT.is_file() else [sys.executable, "-m", "nicbench.cli"]


def complete(env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        ENTRY, capture_output=True, text=True, env={**os.environ, **env}, timeout=60, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize(
    ("shell", "needle"),
    [("bash", "complete -o nosort -F"), ("zsh", "compdef"), ("fish", "complete --no-files --command nicbench")],
)
def test_source_prints_a_completion_script(shell, needle):
    proc = complete({"_NICBENCH_COMPLETE": f"{shell}_source"})
    assert proc.returncode == 0, proc.stderr
    assert "complete" in proc.stdout and needle in proc.stdout, proc.stdout
    assert "_NICBENCH_COMPLETE" in proc.stdout  # the script asks nicbench back, under the same variable
    assert "error" not in proc.stderr


def test_bash_completes_lazily_loaded_sub_commands_and_options():
    """What the bash script asks on TAB: the words so far and the word's index."""

    def words(line: str) -> list[str]:
        cword = len(line.split()) - (0 if line.endswith(" ") else 1)
        proc = complete({"_NICBENCH_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)})
        assert proc.returncode == 0, proc.stderr
        return [item.split(",", 1)[1] for item in proc.stdout.splitlines()]

    assert {"gen", "results", "reproduce"} <= set(words("nicbench "))  # top level, from the summaries
    assert words("nicbench results ") == ["export", "ls"]  # a group inside a lazily loaded module
    assert "--json" in words("nicbench results export --")  # options of a leaf command
