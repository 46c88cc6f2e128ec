"""`nicbench ARGS` in a real process of its own, without an interpreter's start-up per command.

A subprocess (`python -m nicbench.cli`) spends most of a bad-input case in start-up: the interpreter,
then the CLI's imports (pandas, pyarrow, matplotlib for the harness commands): a second or more on a
loaded 2-core machine, times a few hundred cases. Here a fork server (multiprocessing's
"forkserver", started once from a clean interpreter, not from pytest's process) imports the CLI
and those libraries once; each command then runs in a process forked from it: its own stdout,
stderr and exit code (files at the descriptor level, so a Rust panic's message is caught too), the
environment and working folder it is given, and a kill at the time limit (a hang is a result, not a
stuck test run). What differs from `python -m nicbench.cli` is only the start-up, which the tests
that run the entry point itself (`helpers.run_cli`) keep covering.
"""

from __future__ import annotations

import multiprocessing
import os
import pkgutil
import signal
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import wait
from pathlib import Path

# Imported once in the fork server besides every module of the package: the libraries the commands
# load on first use (each command imports them lazily, so that a real start-up stays light), and
# pytest: multiprocessing re-runs the caller's main script in each child (as `__mp_main__`), which
# for `pytest` is its import (0.2 s a command when not already imported).
LIBRARIES = ["numpy", "pandas", "pyarrow", "rich.console", "rich.table", "distributed", "pytest"]


def _preload() -> list[str]:
    """Module names for the fork server to import (the package's, found without importing them; not
    its `__main__` modules, which would run the CLI)."""
    import nicbench

    def walk(paths: list[str], prefix: str) -> list[str]:
        names = []
        for m in pkgutil.iter_modules(paths, prefix):
            if not m.name.endswith(".__main__"):
                names.append(m.name)
            if m.ispkg:
                names += walk([os.path.join(m.module_finder.path, m.name.rpartition(".")[2])], m.name + ".")
        return names

    return ["cli_process", *LIBRARIES, "nicbench", *walk(list(nicbench.__path__), "nicbench.")]


_CONTEXT: multiprocessing.context.ForkServerContext | None = None


def _context() -> multiprocessing.context.ForkServerContext:
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(_preload())
    return _CONTEXT


def _child(args: list[str], out_path: str, err_path: str, cwd: str, env: dict[str, str]) -> None:
    """In the forked process: stdout and stderr to files, the caller's working folder and its whole
    environment (as a subprocess inherits them: the fork server's are those of when it started), then
    the CLI's `main` as the entry point calls it; the exit code as the interpreter would give it
    (SystemExit's code, 1 and the traceback on an uncaught exception)."""
    for fd, path in ((1, out_path), (2, err_path)):
        target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.argv = ["nicbench", *args]
    code = 0
    try:
        from nicbench.cli import main

        main(args, prog_name="nicbench")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 (as the interpreter does: the traceback, exit 1)
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_forked(
    args: list[str], timeout_s: float, cwd: str | Path | None = None, env: dict[str, str | None] | None = None
) -> subprocess.CompletedProcess | None:
    """`nicbench ARGS` in a forked process (see the module doc), in `cwd` (default: this process's
    working folder) with this process's environment and `env` (None removes a variable); None when
    it is still running after `timeout_s` (it is then killed)."""
    return run_forked_many([args], timeout_s, cwd=cwd, env=env, at_once=1)[0]


def run_forked_many(
    commands: list[list[str]],
    timeout_s: float,
    cwd: str | Path | None = None,
    env: dict[str, str | None] | None = None,
    at_once: int = 4,
) -> list[subprocess.CompletedProcess | None]:
    """Each command of `commands` as `run_forked` runs it, `at_once` at a time; results in order.
    One thread starts and waits for them all (multiprocessing's bookkeeping of children is not
    thread-safe)."""
    results: list[subprocess.CompletedProcess | None] = [None] * len(commands)
    workdir = str(cwd) if cwd is not None else os.getcwd()
    environ = {k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None}
    with tempfile.TemporaryDirectory(prefix="nicbench-cli-") as d:

        def start(i: int) -> tuple[int, multiprocessing.process.BaseProcess, float]:
            args = [str(a) for a in commands[i]]
            proc = _context().Process(target=_child, args=(args, f"{d}/{i}.out", f"{d}/{i}.err", workdir, environ))
            proc.start()
            return i, proc, time.monotonic() + timeout_s

        def read(path: str) -> str:
            return Path(path).read_text(encoding="utf-8", errors="replace") if os.path.exists(path) else ""

        pending = list(range(len(commands)))[::-1]
        running = []
        while pending or running:
            while pending and len(running) < at_once:
                running.append(start(pending.pop()))
            now = time.monotonic()
            wait(([p.sentinel for _, p, _ in running]), timeout=max(0.0, min(t for _, _, t in running) - now))
            still = []
            for i, proc, deadline in running:
                if proc.exitcode is not None:  # exitcode polls the child
                    proc.join()
                    results[i] = subprocess.CompletedProcess(
                        ["nicbench", *commands[i]], proc.exitcode, read(f"{d}/{i}.out"), read(f"{d}/{i}.err")
                    )
                elif time.monotonic() >= deadline:
                    proc.kill()
                    proc.join()  # results[i] stays None: no answer in time
                else:
                    still.append((i, proc, deadline))
            running = still
    return results


def run_forked_interrupted(
    commands: list[list[str]], after_s: float, timeout_s: float, cwd: str | Path | None = None
) -> list[tuple[subprocess.CompletedProcess | None, float | None]]:
    """Each command of `commands` started at once as `run_forked` runs it, and sent SIGINT (Ctrl-C)
    `after_s` later; per command its result (None: still running `timeout_s` after the SIGINT, then
    killed) and the seconds from the SIGINT to its exit (None: it had ended before the SIGINT)."""
    workdir = str(cwd) if cwd is not None else os.getcwd()
    results: list[tuple[subprocess.CompletedProcess | None, float | None]] = []
    with tempfile.TemporaryDirectory(prefix="nicbench-cli-") as d:
        procs = []
        for i, command in enumerate(commands):
            args = [str(a) for a in command]
            proc = _context().Process(
                target=_child, args=(args, f"{d}/{i}.out", f"{d}/{i}.err", workdir, dict(os.environ))
            )
            proc.start()
            procs.append(proc)
        time.sleep(after_s)
        sent: list[float | None] = []
        for proc in procs:
            early = proc.exitcode is not None
            if not early:
                os.kill(proc.pid, signal.SIGINT)
            sent.append(None if early else time.monotonic())
        ended: list[float | None] = [None] * len(procs)
        deadline = time.monotonic() + timeout_s
        while any(p.exitcode is None for p in procs) and time.monotonic() < deadline:
            wait([p.sentinel for p in procs if p.exitcode is None], timeout=max(0.0, deadline - time.monotonic()))
            now = time.monotonic()
            for i, proc in enumerate(procs):
                if proc.exitcode is not None and ended[i] is None:
                    ended[i] = now
        after_wait = time.monotonic()  # an upper bound for those that ended before the wait saw them
        for i, (command, proc) in enumerate(zip(commands, procs)):
            if proc.exitcode is None:
                proc.kill()
                proc.join()
                results.append((None, None))
                continue
            proc.join()
            out = Path(f"{d}/{i}.out").read_text(encoding="utf-8", errors="replace")
            err = Path(f"{d}/{i}.err").read_text(encoding="utf-8", errors="replace")
            took = None if sent[i] is None else (after_wait if ended[i] is None else ended[i]) - sent[i]
            results.append((subprocess.CompletedProcess(["nicbench", *command], proc.exitcode, out, err), took))
    return results
