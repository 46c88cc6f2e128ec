"""The Dask backend of the runner: `nicbench run SPEC --scheduler tcp://HOST:8786 | local:N`.

- `open_scheduler(address)` connects a `distributed.Client` to a running scheduler, or starts a
  `LocalCluster` of N single-threaded worker processes (`local:N`), waits for a first worker,
  and checks every connected worker's environment up front (`client.run`).
- Each missing run is one Dask task (`run_task`). Workers only compute: the task returns the
  run's status, metrics and record rows, and the runner (the client) writes them to the store,
  once per run key. A task Dask re-runs after losing its worker therefore cannot duplicate a
  record, and the store stays resumable exactly as with local workers.
- Inside the task the target runs in a forked child with the run's deadline: a run past its
  timeout is killed and answered as failed ("timed out after N s"); the worker lives on.
- Environment check: every task carries the client's fingerprint (nicbench version, the code
  fingerprint of its Python sources and native module, a hash of the profiles folder — the only
  files targets read; study files are read by the client); a worker whose fingerprint differs fails the task with
  `EnvironmentMismatch`, which stops the sweep with one line naming the worker and what differs.

Dask and distributed are imported only here, and only when `--scheduler` is given.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import select
import signal
import struct
import threading
import time
import uuid
from typing import Any

from nicbench.experiments.fingerprint import code_fingerprint, file_hash, input_hashes
from nicbench.experiments.keys import code_version
from nicbench.experiments.local_pool import timed_out_result

__all__ = [
    "open_scheduler",
    "DaskScheduler",
    "EnvironmentMismatch",
    "environment_fingerprint",
    "check_worker",
    "run_task",
    "parse_address",
]

WAIT_FOR_WORKERS_S = 60.0
POLL_S = 0.5  # at most this often the backend asks the scheduler for its workers


class EnvironmentMismatch(ValueError):
    """A worker's nicbench, native module or profiles differ from the client's."""


def parse_address(address: str) -> tuple[str, int | None]:
    """`("local", N)` for `local:N`, else `(address, None)` for a scheduler URL such as tcp://host:8786."""
    text = address.strip()
    if text.startswith("local:"):
        n = text[len("local:") :]
        if not n.isdigit() or not 1 <= int(n) <= 1024:
            raise ValueError(f"--scheduler {address!r}: local:N needs N workers from 1 to 1024")
        return "local", int(n)
    if "://" not in text or text.endswith("://"):
        raise ValueError(
            f"--scheduler {address!r}: expected a scheduler address such as tcp://HOST:8786, "
            f"or local:N for N local worker processes"
        )
    return text, None


# -- the environment fingerprint -------------------------------------------------------------------
_FINGERPRINT: tuple[float, dict[str, str]] | None = None
FINGERPRINT_FRESH_S = 1.0  # every task asks; looking at the files takes milliseconds


def environment_fingerprint() -> dict[str, str]:
    """What must be equal on client and workers for their runs to agree (looked at again after 1 s)."""
    global _FINGERPRINT
    now = time.monotonic()
    if _FINGERPRINT is None or now - _FINGERPRINT[0] > FINGERPRINT_FRESH_S:
        # The code: Python sources and native module (fingerprint.py, the same hash run keys hold).
        fp = {"nicbench version": code_version(), "code": code_fingerprint(), "profiles": _profiles_digest()}
        _FINGERPRINT = (now, fp)
    return dict(_FINGERPRINT[1])


def _profiles_digest() -> str:
    try:
        from nicbench.profiles import profiles_dir

        folder = profiles_dir()
    except ImportError as exc:
        return f"absent ({exc})"
    files = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    # Every task asks: file_hash reads a file again only when its size or mtime changed.
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + file_hash(path).encode() + b"\0")
    return f"{h.hexdigest()[:16]} ({len(files)} files)"


def describe_mismatch(worker: str, client: dict[str, str], mine: dict[str, str]) -> str:
    parts = [f"{k} {mine.get(k)!s} vs {v!s}" for k, v in client.items() if mine.get(k) != v]
    return (
        f"Dask worker {worker} differs from this machine: {'; '.join(parts)} (worker vs client); "
        f"install the same nicbench build and profiles on every worker"
    )


# -- the task --------------------------------------------------------------------------------------
def check_worker(
    fingerprint: dict[str, str], params: dict[str, Any] | None = None, inputs: dict[str, str] | None = None
) -> None:
    """On a Dask worker, before a run: `EnvironmentMismatch` when this worker's code or profiles
    differ from the client's `fingerprint`, or when a file the run's `params` name is missing here
    or has other contents than the client's (`inputs`: `fingerprint.input_hashes` on the client)."""
    mine = environment_fingerprint()
    if mine != fingerprint:
        raise EnvironmentMismatch(describe_mismatch(_worker_address(), fingerprint, mine))
    if not inputs:
        return
    theirs = input_hashes(params or {})
    for value, digest in inputs.items():
        if theirs.get(value) != digest:
            raise EnvironmentMismatch(
                f"Dask worker {_worker_address()} does not have the client's file {value} "
                f"({'different contents' if value in theirs else 'missing'}): give workers "
                f"the same file at the same path (a few-shot fit's start profile is a "
                f"temporary file: use --scheduler local:N or a shared file system)"
            )


def run_task(job: dict[str, Any], fingerprint: dict[str, str]) -> dict[str, Any]:
    """One run on a Dask worker: check the environment (code, profiles, and the files the run's
    parameters name, against the hashes in its key), run the target in a child with a deadline."""
    inputs = (job.get("provenance") or {}).get("input_files")
    check_worker(fingerprint, job["params"], json.loads(inputs) if inputs else None)
    result = run_with_deadline(job)
    result["meta"]["worker"] = _worker_address()
    return result


def _worker_address() -> str:
    try:
        from distributed import get_worker

        return get_worker().address
    except (ImportError, ValueError):
        return f"pid {os.getpid()}"


def run_with_deadline(job: dict[str, Any]) -> dict[str, Any]:
    """`compute_run(job)` in this thread's run process; killed at `job["timeout_s"]` (answered as
    timed out, and a new run process is forked for the next run)."""
    from nicbench.experiments.targets import get_target

    get_target(job["target"])  # import the target modules here, once per worker, not in every child
    child = getattr(_THREAD, "child", None)
    if child is None or not child.alive():
        child = _THREAD.child = _RunProcess()
    answer = child.run(job, job.get("timeout_s"))
    if answer is None or isinstance(answer, str):
        child.kill()
        _THREAD.child = None
        if answer is None:
            return timed_out_result(job)
        return {
            "key": job["key"],
            "status": "error",
            "metrics": {},
            "rows": [],
            "stored": False,
            "meta": {},
            "error": answer,
        }
    return answer


_THREAD = threading.local()
_LEN = struct.Struct("<Q")


class _RunProcess:
    """A child forked once per worker thread that runs jobs one after another, so a run can be
    killed at its deadline without forking for every run (a fork of a worker costs milliseconds)."""

    def __init__(self) -> None:
        jobs_r, jobs_w = os.pipe()
        results_r, results_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: serve jobs until the pipe closes; never returns into the worker
            code = 1
            try:
                os.close(jobs_w)
                os.close(results_r)
                _die_with_parent()
                _serve(jobs_r, results_w)
                code = 0
            finally:
                os._exit(code)
        os.close(jobs_r)
        os.close(results_w)
        self.pid, self.jobs_w, self.results_r = pid, jobs_w, results_r

    def alive(self) -> bool:
        return os.waitpid(self.pid, os.WNOHANG) == (0, 0)

    def run(self, job: dict[str, Any], timeout_s: float | None) -> dict[str, Any] | str | None:
        """The result; None when the deadline passed; a message when the child died."""
        try:
            _write_frame(self.jobs_w, pickle.dumps(job))
        except OSError as exc:
            return f"the run's process is gone ({exc})"
        deadline = time.monotonic() + timeout_s if timeout_s else None
        data = _read_frame(self.results_r, deadline)
        if data is None:
            return None
        if data == b"":
            return "the run's process died before returning its records"
        return pickle.loads(data)

    def kill(self) -> None:
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        for fd in (self.jobs_w, self.results_r):
            try:
                os.close(fd)
            except OSError:
                pass


def _serve(jobs_r: int, results_w: int) -> None:
    from nicbench.experiments.runner import compute_run

    while True:
        data = _read_frame(jobs_r, None)
        if not data:
            return
        _write_frame(results_w, pickle.dumps(compute_run(pickle.loads(data))))


def _write_frame(fd: int, data: bytes) -> None:
    view = memoryview(_LEN.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _read_frame(fd: int, deadline: float | None) -> bytes | None:
    """One length-prefixed frame; b"" at end of file; None if `deadline` passes first."""
    buf = bytearray()
    need = _LEN.size
    header = True
    while True:
        while len(buf) < need:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            readable, _, _ = select.select([fd], [], [], remaining)
            if not readable:
                continue
            chunk = os.read(fd, max(need - len(buf), 1 << 16))
            if not chunk:
                return b""
            buf += chunk
        if not header:
            return bytes(buf[_LEN.size : need])
        need = _LEN.size + _LEN.unpack_from(buf)[0]
        header = False


def _die_with_parent() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# -- the client side -------------------------------------------------------------------------------
class DaskScheduler:
    """A connected client (and the LocalCluster it started, for `local:N`)."""

    def __init__(self, address: str, client: Any, cluster: Any = None):
        self.address = address
        self.client = client
        self.cluster = cluster
        self.fingerprint = environment_fingerprint()

    @property
    def dashboard(self) -> str | None:
        """The dashboard URL when the scheduler serves one (needs bokeh on the scheduler)."""
        try:
            port = self.client.scheduler_info().get("services", {}).get("dashboard")
        except Exception:  # noqa: BLE001 - informational only
            return None
        if not port:
            return None
        host = self.client.scheduler.address.split("://", 1)[-1].rsplit(":", 1)[0]
        return f"http://{host}:{port}/status"

    def workers(self) -> dict[str, Any]:
        return dict(self.client.scheduler_info().get("workers", {}))

    def check_workers(self) -> None:
        """Every connected worker must import nicbench and have this machine's fingerprint."""
        try:
            theirs = self.client.run(environment_fingerprint)
        except ImportError as exc:
            raise EnvironmentMismatch(
                f"a Dask worker of {self.address} cannot import nicbench ({exc}); install nicbench on every worker"
            ) from None
        for worker, fp in sorted(theirs.items()):
            if fp != self.fingerprint:
                raise EnvironmentMismatch(describe_mismatch(worker, self.fingerprint, fp))

    def backend(self) -> DaskBackend:
        return DaskBackend(self)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> DaskScheduler:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def open_scheduler(address: str, *, wait_for_workers_s: float = WAIT_FOR_WORKERS_S) -> DaskScheduler:
    """Connect (or start `local:N`), wait for a worker, check the workers. Errors are ValueErrors."""
    where, n_workers = parse_address(address)
    try:
        import logging

        from distributed import Client, LocalCluster
    except ImportError:
        raise ValueError("--scheduler needs the dask and distributed packages (pip install 'nicbench[dask]')") from None
    cluster = None
    if n_workers is not None:
        cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
    else:
        _check_reachable(address, where)
        try:
            client = Client(where, timeout="5s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(
                f"--scheduler {address}: no Dask scheduler answers there "
                f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
            ) from None
    sched = DaskScheduler(address, client, cluster)
    try:
        try:
            client.wait_for_workers(1, timeout=wait_for_workers_s)
        except TimeoutError:
            raise ValueError(
                f"--scheduler {address}: no Dask worker connected within {wait_for_workers_s:g} s "
                f"(start one with `dask worker {where}`)"
            ) from None
        sched.check_workers()
    except BaseException:
        sched.close()
        raise
    return sched


def _check_reachable(address: str, where: str) -> None:
    """A refused TCP connection is an error now (the Dask client would retry until its timeout)."""
    import socket

    if not where.startswith("tcp://"):
        return
    host, _, port = where[len("tcp://") :].rpartition(":")
    if not port.isdigit():
        raise ValueError(f"--scheduler {address}: expected tcp://HOST:PORT (a port number after the last ':')")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=5).close()
    except OSError as exc:
        raise ValueError(f"--scheduler {address}: no Dask scheduler answers there ({exc.strerror or exc})") from None


class DaskBackend:
    """The runner's view of a DaskScheduler: submit runs, wait for some, read their results.

    Results are fetched as tasks finish, in the background (`as_completed(with_results=True)`):
    fetching each one on request would cost a round trip to its worker per run."""

    def __init__(self, sched: DaskScheduler):
        from distributed import as_completed

        self.sched = sched
        self.client = sched.client
        self.jobs: dict[str, dict[str, Any]] = {}  # Dask key -> job
        self.arrived: dict[str, Any] = {}  # Dask key -> result (or error) fetched
        self.futures: dict[str, Any] = {}  # Dask key -> future, until its result is read
        self.finished = as_completed(with_results=True, raise_errors=False)
        self.seen: set[str] = set(sched.workers())
        self.alive = len(self.seen)
        self.lost: list[str] = []
        self.retried: set[str] = set()
        self._threads = max(1, sum(w.get("nthreads", 1) for w in sched.workers().values()))
        self._last_poll = 0.0

    @property
    def capacity(self) -> int:
        # Enough queued on the scheduler to keep every worker thread busy between our turns.
        return max(16, 4 * self._threads)

    def submit(self, job: dict[str, Any]) -> Any:
        from nicbench.experiments.scheduler import run_task as task  # pickled by reference

        key = f"nicbench-run-{job['key']}-{uuid.uuid4().hex[:8]}"
        self.jobs[key] = job
        future = self.client.submit(task, job, self.sched.fingerprint, key=key, pure=False)
        self.finished.add(future)
        self.futures[key] = future
        return future

    def wait(self, handles: list[Any]) -> list[Any]:
        batch = self.finished.next_batch(block=True)
        for future, result in batch:
            self.arrived[future.key] = result
        self._poll_workers()
        return [future for future, _ in batch]

    def result(self, handle: Any) -> dict[str, Any]:
        job = self.jobs.pop(handle.key)
        self.futures.pop(handle.key, None)
        result = self.arrived.pop(handle.key, None)
        if handle.status == "finished":
            return result
        exc = result if isinstance(result, BaseException) else None
        if exc is None and handle.status == "error":
            exc = handle.exception()
        if isinstance(exc, EnvironmentMismatch):
            raise EnvironmentMismatch(str(exc)) from None
        what = f"{type(exc).__name__}: {exc}" if exc is not None else f"Dask task {handle.status}"
        # e.g. KilledWorker: the run took down every worker it was given (Dask's allowed-failures).
        return {
            "key": job["key"],
            "status": "error",
            "metrics": {},
            "error": what,
            "rows": [],
            "stored": False,
            "meta": {},
        }

    def status(self) -> dict[str, Any]:
        return {"workers": self.alive, "lost": list(self.lost), "retried": len(self.retried)}

    def close(self) -> None:
        pending = list(self.futures.values())
        if pending:
            try:
                self.client.cancel(pending)
            except Exception:  # noqa: BLE001 - the client may already be gone (Ctrl-C)
                pass
        self.jobs.clear()
        self.futures.clear()

    def _poll_workers(self) -> None:
        now = time.monotonic()
        if now - self._last_poll < POLL_S:
            return
        self._last_poll = now
        workers = self.sched.workers()
        current = set(workers)
        gone = sorted(self.seen - current)
        self.lost.extend(w for w in gone if w not in self.lost)
        self.seen |= current
        self.alive = len(current)
        self._threads = max(1, sum(w.get("nthreads", 1) for w in workers.values()))
        if self.lost and self.jobs:
            self.retried.update(self._suspicious(list(self.jobs)))

    def _suspicious(self, keys: list[str]) -> list[str]:
        """Our tasks the scheduler saw on a worker that died (it re-runs them elsewhere). Counted
        among the tasks this client still holds when it notices the loss (it looks every POLL_S)."""

        # Defined inside so that cloudpickle ships it by value: the scheduler needs no nicbench.
        def on_scheduler(dask_scheduler: Any, keys: list[str]) -> list[str]:
            return [k for k in keys if k in dask_scheduler.tasks and dask_scheduler.tasks[k].suspicious > 0]

        try:
            return self.client.run_on_scheduler(on_scheduler, keys=keys)
        except Exception:  # noqa: BLE001 - informational only
            return []
