"""Every command of the README runs as written (issue 17: "README examples that run as written").

The README's fenced blocks are read in order, as a newcomer would follow them, in one temporary
directory (with the checkout's `experiments/` and `studies/` linked in, since the README's paths
are relative to the checkout):

- ```sh / ```bash: every `nicbench ...` line (`\\` continuations joined, `# comments` dropped,
  `a && b` run in turn) must exit 0. Any other command in such a block fails the test: a block
  that is not meant to run says so.
- ```console: `$ nicbench ...` lines are run the same way; `$ cat FILE` followed by its content
  writes FILE (what the reader is shown to create); other lines are sample output.
- A block preceded by `<!-- not run: REASON -->` (a reason the reader can read in the source) is
  skipped: installation, live capture on an interface, work of minutes (calibrations, whole
  studies) and what depends on it.
- ```python and ```text blocks are not run; every fenced block must carry one of these labels.

To stay fast (the whole file well under a minute) the test scales ONE documented option down:
virtual or generated time. A `--duration` above `MAX_DURATION` is cut to it, and a `simulate`
with generated traffic and no `--duration` (default 1 s) gets `--duration MAX_DURATION`. Nothing
else is changed; exit codes are asserted for every command.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field

from cli_process import run_forked
from helpers import REPO

from nicbench.units import parse_duration_ns

README = REPO / "README.md"
# The longest virtual (simulate) or generated (gen) time a README command runs for in this test.
MAX_DURATION = "2ms"
RUN_LABELS = ("sh", "bash", "console")
QUIET_LABELS = ("python", "text")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*(\S.*?)\s*-->$")
FENCE = re.compile(r"^```(\S*)\s*$")
# Checkout folders the README names by relative path (specs, studies).
LINKED = ("experiments", "studies")
COMMAND_TIMEOUT_S = 30


@dataclass
class Block:
    label: str
    line: int  # 1-based line of the opening fence
    lines: list[str]
    not_run: str | None = None


@dataclass
class Step:
    """One thing the reader does: run `argv`, or create `path` with `content`."""

    where: str
    argv: list[str] = field(default_factory=list)
    path: str | None = None
    content: str = ""


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and lines[j].rstrip() != "```":
            j += 1
        previous = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), "")
        reason = NOT_RUN.match(previous)
        blocks.append(Block(m.group(1), start + 1, lines[start + 1 : j], reason.group(1) if reason else None))
        i = j + 1
    return blocks


def _joined(lines: list[str]) -> list[tuple[int, str]]:
    """Lines with `\\` continuations joined, each with its offset in the block."""
    out: list[tuple[int, str]] = []
    pending, first = "", 0
    for k, line in enumerate(lines):
        if not pending:
            first = k
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((first, pending + line))
        pending = ""
    if pending:
        out.append((first, pending))
    return out


def _commands(where: str, text: str) -> list[Step]:
    words = shlex.split(text, comments=True)
    steps, current = [], []
    for w in words + ["&&"]:
        if w == "&&":
            if current:
                steps.append(Step(where, argv=current))
            current = []
        else:
            current.append(w)
    return steps


def block_steps(block: Block) -> list[Step]:
    steps: list[Step] = []
    if block.label in ("sh", "bash"):
        for k, line in _joined(block.lines):
            steps += _commands(f"README.md:{block.line + 1 + k}", line)
        return steps
    # console: `$ command` lines; `$ cat FILE` and the lines after it (up to the next `$`) are FILE.
    k = 0
    while k < len(block.lines):
        line = block.lines[k]
        if not line.startswith("$ "):
            k += 1
            continue
        where = f"README.md:{block.line + 1 + k}"
        command = line[2:]
        while command.rstrip().endswith("\\") and k + 1 < len(block.lines):
            k += 1
            command = command.rstrip()[:-1] + " " + block.lines[k]
        k += 1
        output = []
        while k < len(block.lines) and not block.lines[k].startswith("$ "):
            output.append(block.lines[k])
            k += 1
        for step in _commands(where, command):
            if step.argv[0] == "cat" and len(step.argv) == 2:
                steps.append(Step(where, path=step.argv[1], content="".join(f"{o}\n" for o in output)))
            else:
                steps.append(step)
    return steps


def scaled(argv: list[str]) -> list[str]:
    """`argv` with its duration cut to MAX_DURATION (see the module doc); nothing else changes."""
    out = list(argv)
    cap = parse_duration_ns(MAX_DURATION)
    for i, word in enumerate(out[:-1]):
        if word == "--duration" and parse_duration_ns(out[i + 1]) > cap:
            out[i + 1] = MAX_DURATION
    if out[1:2] == ["simulate"] and "--duration" not in out and "--trace" not in out:
        out += ["--duration", MAX_DURATION]
    return out


def readme_steps() -> list[Step]:
    steps: list[Step] = []
    for block in readme_blocks(README.read_text(encoding="utf-8")):
        if block.not_run is None and block.label in RUN_LABELS:
            steps += block_steps(block)
    return steps


def test_every_block_is_labelled_and_every_skip_has_a_reason():
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) > 10
    for block in blocks:
        assert block.label in RUN_LABELS + QUIET_LABELS, (
            f"README.md:{block.line}: a fenced block needs a label ({', '.join(RUN_LABELS + QUIET_LABELS)})"
        )


def test_runnable_blocks_hold_only_nicbench_commands_and_files():
    steps = readme_steps()
    assert sum(1 for s in steps if s.argv) > 25
    for step in steps:
        assert step.path is not None or step.argv[0] == "nicbench", (
            f"{step.where}: `{' '.join(step.argv)}` in a block that runs: mark the block "
            "`<!-- not run: REASON -->` or move the line out"
        )


def test_scaling_touches_only_the_duration():
    assert scaled(["nicbench", "gen", "--duration", "1s", "-o", "t.pcap"]) == [
        "nicbench",
        "gen",
        "--duration",
        MAX_DURATION,
        "-o",
        "t.pcap",
    ]
    assert scaled(["nicbench", "gen", "--duration", "1ms"]) == ["nicbench", "gen", "--duration", "1ms"]
    assert scaled(["nicbench", "simulate", "--gen", "rate=1Gbps"])[-2:] == ["--duration", MAX_DURATION]
    assert scaled(["nicbench", "simulate", "--trace", "t.pcap"]) == ["nicbench", "simulate", "--trace", "t.pcap"]


def test_console_cat_writes_the_file_shown():
    block = Block("console", 1, ["$ cat a.of", "table=0,actions=drop", "$ nicbench rules openflow a.of", "out"])
    steps = block_steps(block)
    assert [(s.path, s.content, s.argv) for s in steps] == [
        ("a.of", "table=0,actions=drop\n", []),
        (None, "", ["nicbench", "rules", "openflow", "a.of"]),
    ]


def test_readme_commands_run_as_written(tmp_path):
    for name in LINKED:
        (tmp_path / name).symlink_to(REPO / name, target_is_directory=True)
    # As a reader's shell: results go to ./results (the README's paths), not to a $NICBENCH_RESULTS.
    env = {"NICBENCH_RESULTS": None, "COLUMNS": "200"}
    failures = []
    for step in readme_steps():
        if step.path is not None:
            (tmp_path / step.path).write_text(step.content, encoding="utf-8")
            continue
        argv = scaled(step.argv)
        # A process of its own per command (cli_process: forked from a server that imported the CLI
        # once), in the reader's folder; the entry point's own start-up is tested elsewhere (run_cli).
        proc = run_forked(argv[1:], COMMAND_TIMEOUT_S, cwd=tmp_path, env=env)
        if proc is None:
            failures.append(f"{step.where}: `{shlex.join(argv)}` took more than {COMMAND_TIMEOUT_S} s")
            continue
        if proc.returncode != 0:
            failures.append(f"{step.where}: `{shlex.join(argv)}` exit {proc.returncode}: {proc.stderr.strip()[-500:]}")
    assert not failures, "\n".join(failures)


def test_python_api_block_runs_as_written(tmp_path):
    """The README's "Python API" block, pasted into a fresh interpreter in an empty folder, runs."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Python API") :]
    block = next(b for b in readme_blocks(section) if b.label == "python")
    env = {k: v for k, v in os.environ.items() if k != "NICBENCH_RESULTS"}
    proc = subprocess.run(
        [sys.executable, "-c", "\n".join(block.lines)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (tmp_path / "flows.parquet").stat().st_size > 0
