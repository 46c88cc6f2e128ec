"""`nicbench compare --rev A --rev B --spec SPEC`: run one spec at two git revisions and compare.

Each revision is checked out as a detached git worktree under `--workdir` (default
`build/revisions/<commit>`), built there with its own `make develop` (its own `.venv` and native
module: the code of that revision, not this one), and runs the spec with that build's `nicbench`;
results go to `<workdir>/results/<commit>/`. Worktrees and builds are kept and reused by the next
comparison of the same commit (`git worktree remove` them when done). The revision `.` is the
nicbench running this command, uncommitted changes included: `--rev HEAD --rev .` shows what the
changes in the working tree do.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Revision", "resolve_revision", "run_at_revision", "CURRENT"]

CURRENT = "."
_BUILT_STAMP = ".nicbench-compare-built"


@dataclass(frozen=True)
class Revision:
    name: str  # as the user typed it
    commit: str  # full sha, or "." for the running nicbench

    @property
    def label(self) -> str:
        return "working-tree" if self.commit == CURRENT else self.commit[:12]


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
    except FileNotFoundError:
        raise ValueError("--rev needs git on PATH") from None


def resolve_revision(repo: Path, name: str) -> Revision:
    if name == CURRENT:
        return Revision(name, CURRENT)
    if not name or name.startswith("-") or len(name) > 256:
        raise ValueError(f"--rev {name!r}: expected a git revision (commit, tag, branch) or '.'")
    proc = _git(repo, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    if proc.returncode != 0:
        raise ValueError(f"--rev {name}: not a commit of the repository at {repo} (git rev-parse found none)")
    return Revision(name, proc.stdout.strip())


def _checkout(repo: Path, rev: Revision, workdir: Path, log: Callable[[str], None]) -> Path:
    # Absolute: the revision's nicbench is started with the tree as its working directory, where a
    # relative path (the default --workdir build/revisions) would point nowhere.
    tree = (workdir / rev.commit[:12]).absolute()
    if not (tree / ".git").exists():
        log(f"checking out {rev.name} ({rev.label}) into {tree}")
        tree.parent.mkdir(parents=True, exist_ok=True)
        proc = _git(repo, "worktree", "add", "--detach", str(tree), rev.commit)
        if proc.returncode != 0:
            raise ValueError(f"--rev {rev.name}: git worktree add failed: {proc.stderr.strip().splitlines()[-1:]}")
    if not (tree / _BUILT_STAMP).exists():
        log(f"building {rev.label} (make develop in {tree}; minutes the first time)")
        # The tree's own venv: an activated one (VIRTUAL_ENV) would receive the revision's build.
        env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX")}
        build = subprocess.run(["make", "-C", str(tree), "develop"], capture_output=True, text=True, env=env)
        if build.returncode != 0:
            tail = (build.stderr or build.stdout).strip().splitlines()[-1:] or ["(no output)"]
            raise ValueError(f"--rev {rev.name}: the build of {rev.label} failed: {tail[0]}")
        (tree / _BUILT_STAMP).write_text(rev.commit + "\n")
    return tree


def run_at_revision(
    repo: Path,
    rev: Revision,
    spec: Path,
    experiment: str,
    workdir: Path,
    extra_args: list[str],
    log: Callable[[str], None],
) -> Path:
    """Runs `spec` with the nicbench of `rev`; returns the experiment's results folder."""
    results = workdir / "results" / rev.label
    if rev.commit == CURRENT:
        cmd = [sys.executable, "-m", "nicbench.cli"]
        cwd = Path.cwd()
    else:
        tree = _checkout(repo, rev, workdir, log)
        cmd = [str(tree / ".venv" / "bin" / "nicbench")]
        cwd = tree
    log(f"running {spec} at {rev.label}")
    # A worktree's nicbench reads that revision's profiles, not ones this shell points at.
    env = (
        dict(os.environ)
        if rev.commit == CURRENT
        else {k: v for k, v in os.environ.items() if k not in ("NICBENCH_PROFILES", "NICBENCH_STUDIES")}
    )
    proc = subprocess.run(
        [*cmd, "run", str(spec.resolve()), "--results", str(results.resolve()), *extra_args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ValueError(f"--rev {rev.name}: the run failed at {rev.label}: {last}")
    return results / experiment
