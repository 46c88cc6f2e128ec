"""The local backend of the runner: `--jobs` forked worker processes, with a per-run timeout.

- Workers run `execute_run`: they run the target and write the run's record file themselves
  (atomically, one file per run key), so the store grows one complete run at a time whatever
  happens to the parent. This is safe with one writer per key: the runner never has the same
  key in flight twice, and a run restarted after a pool restart rewrites the same file.
- Per-run timeout: each worker announces (run key, pid, start time) on a queue when it starts a
  run; `wait` kills (SIGKILL) a worker whose run is past its deadline. Killing one worker breaks
  a `ProcessPoolExecutor`, so the pool is replaced and the runs that were in flight on it are
  submitted again; the timed-out run is answered as failed ("timed out after N s"), the runner
  records it, and the sweep goes on. A pool that breaks without a kill of ours (a worker
  crashed or was killed from outside) is a `StoreError`, as before: finished runs are stored.
- Workers die with the parent (PR_SET_PDEATHSIG), so a SIGKILLed sweep leaves no orphans, and
  close any inherited descriptor of the store's lock file, so a pool started while the runner
  holds the lock (after a timeout) never keeps the lock alive after the runner exits.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import signal
import time
from typing import Any

from nicbench.interrupts import ignore_sigint_in_worker, sigint_held
from nicbench.vocab.errors import StoreError

__all__ = ["LocalPool", "timed_out_result", "timeout_message"]

_STARTS: Any = None  # in a worker: the queue its run starts are announced on


def timeout_message(timeout_s: float) -> str:
    return f"timed out after {timeout_s:g} s (the per-run timeout: --timeout, or timeout in the spec)"


def timed_out_result(job: dict[str, Any]) -> dict[str, Any]:
    """The answer for a run that was stopped at its deadline (not stored yet: the runner stores it)."""
    return {
        "key": job["key"],
        "status": "error",
        "metrics": {},
        "error": timeout_message(job["timeout_s"]),
        "rows": [],
        "stored": False,
        "meta": {},
    }


class _Handle:
    """One submitted run; survives pool restarts (its future is replaced)."""

    def __init__(self, job: dict[str, Any]):
        self.job = job
        self.future: cf.Future | None = None
        self.answer: dict[str, Any] | None = None  # set when the pool answered for the worker (timeout)


class LocalPool:
    """`jobs` forked workers running `execute_run`; see the module doc."""

    def __init__(self, jobs: int, run_fn, *, lock_path: str | None = None):
        self.jobs = jobs
        self.capacity = jobs * 4
        self.run_fn = run_fn
        self.lock_path = lock_path
        self.live: dict[str, _Handle] = {}
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("fork")
        self.starts = ctx.SimpleQueue()
        self.running: dict[str, tuple[int, float]] = {}  # run key -> (worker pid, start time)
        self.killed: set[str] = set()
        self.executor = cf.ProcessPoolExecutor(
            max_workers=self.jobs,
            mp_context=ctx,
            initializer=_worker_init,
            initargs=(os.getpid(), self.starts, self.lock_path),
        )
        # With fork, the first submit starts every worker now (Ctrl-C held over the forks).
        with sigint_held():
            started = self.executor.submit(_noop)
        started.result()

    def submit(self, job: dict[str, Any]) -> _Handle:
        handle = _Handle(job)
        handle.future = self.executor.submit(self.run_fn, job)
        self.live[job["key"]] = handle
        return handle

    def wait(self, handles: list[_Handle]) -> list[_Handle]:
        """Block until at least one of `handles` has an answer; returns those that have."""
        while True:
            answered = [h for h in handles if h.answer is not None or (h.future is not None and h.future.done())]
            if answered:
                broken = [h for h in answered if h.answer is None and _broken(h.future)]
                if broken:
                    self._restart(broken)
                    continue
                for h in answered:
                    self.live.pop(h.job["key"], None)
                    self.running.pop(h.job["key"], None)
                return answered
            futures = [h.future for h in handles if h.future is not None]
            cf.wait(futures, timeout=self._poll_s(), return_when=cf.FIRST_COMPLETED)
            self._stop_overdue()

    def result(self, handle: _Handle) -> dict[str, Any]:
        if handle.answer is not None:
            return handle.answer
        return handle.future.result()

    def status(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)

    # -- the timeout watchdog ------------------------------------------------------------------
    def _poll_s(self) -> float:
        timeouts = [h.job["timeout_s"] for h in self.live.values() if h.job.get("timeout_s")]
        return min([1.0] + [t / 4 for t in timeouts])

    def _stop_overdue(self) -> None:
        while not self.starts.empty():
            key, pid, started = self.starts.get()
            if key in self.live:
                self.running[key] = (pid, started)
        now = time.time()
        for key, (pid, started) in list(self.running.items()):
            handle = self.live.get(key)
            if handle is None or handle.answer is not None or handle.future.done():
                continue
            timeout_s = handle.job.get("timeout_s")
            if timeout_s and now - started > timeout_s:
                handle.answer = timed_out_result(handle.job)
                self.killed.add(key)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _restart(self, broken: list[_Handle]) -> None:
        """The pool broke: replace it if we broke it (a timeout), else say a worker died."""
        if not self.killed:
            raise StoreError(
                "a worker process died (crash or kill); finished runs are stored — re-run the same command to resume"
            )
        self.executor.shutdown(wait=False, cancel_futures=True)
        self.restarts += 1
        self._start()
        for handle in self.live.values():
            if handle.answer is None and (handle.future is None or not handle.future.done() or _broken(handle.future)):
                handle.future = self.executor.submit(self.run_fn, handle.job)


def _broken(future: cf.Future) -> bool:
    return future.done() and isinstance(future.exception(), cf.process.BrokenProcessPool)


def announce_start(key: str) -> None:
    """Called by a worker before it runs `key` (no-op outside a pool worker)."""
    if _STARTS is not None:
        _STARTS.put((key, os.getpid(), time.time()))


def _noop() -> None:
    return None


def _worker_init(parent_pid: int, starts: Any, lock_path: str | None) -> None:
    global _STARTS
    _STARTS = starts
    ignore_sigint_in_worker()
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: workers exit when their queue closes
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)
    if lock_path:
        _close_descriptors_of(lock_path)


def _close_descriptors_of(path: str) -> None:
    # Closing our copy leaves the parent's flock in place (same open file description).
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}") == path:
                    os.close(int(fd))
            except OSError:
                pass
    except OSError:  # no /proc: the lock is released when the workers exit
        pass
