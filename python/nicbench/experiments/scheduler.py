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
- Environment check: every task carries the client's fingerprint (nicbench version, a hash of
  the native module file, a hash of the profiles folder — the only files targets read; study
  files are read by the client); a worker whose fingerprint differs fails the task with
  `EnvironmentMismatch`, which stops the sweep with one line naming the worker and what differs.

Dask and distributed are imported only here, and only when `--scheduler` is given.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import select
import signal
import time
import uuid
from pathlib import Path
from typing import Any

from nicbench.experiments.keys import code_version
from nicbench.experiments.local_pool import timed_out_result

__all__ = ["open_scheduler", "DaskScheduler", "EnvironmentMismatch", "environment_fingerprint", "run_task",
           "parse_address"]

WAIT_FOR_WORKERS_S = 60.0
POLL_S = 0.5  # how often the backend looks at the workers while waiting for runs


class EnvironmentMismatch(ValueError):
    """A worker's nicbench, native module or profiles differ from the client's."""


def parse_address(address: str) -> tuple[str, int | None]:
    """`("local", N)` for `local:N`, else `(address, None)` for a scheduler URL such as tcp://host:8786."""
    text = address.strip()
    if text.startswith("local:"):
        n = text[len("local:"):]
        if not n.isdigit() or not 1 <= int(n) <= 1024:
            raise ValueError(f"--scheduler {address!r}: local:N needs N workers from 1 to 1024")
        return "local", int(n)
    if "://" not in text or text.endswith("://"):
        raise ValueError(f"--scheduler {address!r}: expected a scheduler address such as tcp://HOST:8786, "
                         f"or local:N for N local worker processes")
    return text, None


# -- the environment fingerprint -------------------------------------------------------------------
_NATIVE_CACHE: dict[tuple[str, int, int], str] = {}


def environment_fingerprint() -> dict[str, str]:
    """What must be equal on client and workers for their runs to agree."""
    return {"nicbench version": code_version(), "native module": _native_digest(), "profiles": _profiles_digest()}


def _native_digest() -> str:
    try:
        from nicbench import _native
    except ImportError as exc:
        return f"absent ({exc})"
    path = Path(_native.__file__)
    st = path.stat()
    cache_key = (str(path), st.st_mtime_ns, st.st_size)
    if cache_key not in _NATIVE_CACHE:
        _NATIVE_CACHE[cache_key] = _file_digest(path)
    return _NATIVE_CACHE[cache_key]


def _profiles_digest() -> str:
    try:
        from nicbench.profiles import profiles_dir

        folder = profiles_dir()
    except ImportError as exc:
        return f"absent ({exc})"
    h = hashlib.sha256()
    files = sorted(folder.glob("*.toml")) if folder.is_dir() else []
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return f"{h.hexdigest()[:16]} ({len(files)} files)"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def describe_mismatch(worker: str, client: dict[str, str], mine: dict[str, str]) -> str:
    parts = [f"{k} {mine.get(k)!s} vs {v!s}" for k, v in client.items() if mine.get(k) != v]
    return (f"Dask worker {worker} differs from this machine: {'; '.join(parts)} (worker vs client); "
            f"install the same nicbench build and profiles on every worker")


# -- the task --------------------------------------------------------------------------------------
def run_task(job: dict[str, Any], fingerprint: dict[str, str]) -> dict[str, Any]:
    """One run on a Dask worker: check the environment, run the target in a child with a deadline."""
    mine = environment_fingerprint()
    if mine != fingerprint:
        raise EnvironmentMismatch(describe_mismatch(_worker_address(), fingerprint, mine))
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
    """`compute_run(job)` in a forked child; killed at `job["timeout_s"]` (answered as timed out)."""
    from nicbench.experiments.runner import compute_run
    from nicbench.experiments.targets import get_target

    get_target(job["target"])  # import the target modules here, once per worker, not in every child
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, send the pickled result, exit without running the worker's cleanup
        code = 1
        try:
            os.close(read_fd)
            _die_with_parent()
            data = pickle.dumps(compute_run(job))
            with os.fdopen(write_fd, "wb") as pipe:
                pipe.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write_fd)
    timeout_s = job.get("timeout_s")
    deadline = time.monotonic() + timeout_s if timeout_s else None
    chunks: list[bytes] = []
    try:
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return timed_out_result(job)
            readable, _, _ = select.select([read_fd], [], [], remaining)
            if readable:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
    finally:
        os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        return {"key": job["key"], "status": "error", "metrics": {}, "rows": [], "stored": False, "meta": {},
                "error": f"the run's process died (wait status {status}) before returning its records"}
    return pickle.loads(b"".join(chunks))


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
            raise EnvironmentMismatch(f"a Dask worker of {self.address} cannot import nicbench ({exc}); "
                                      f"install nicbench on every worker") from None
        for worker, fp in sorted(theirs.items()):
            if fp != self.fingerprint:
                raise EnvironmentMismatch(describe_mismatch(worker, self.fingerprint, fp))

    def backend(self) -> "DaskBackend":
        return DaskBackend(self)

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> "DaskScheduler":
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
        raise ValueError("--scheduler needs the dask and distributed packages "
                         "(pip install 'nicbench[dask]')") from None
    cluster = None
    if n_workers is not None:
        cluster = LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                               dashboard_address=":0", silence_logs=logging.ERROR)
        client = Client(cluster)
    else:
        try:
            client = Client(where, timeout="5s")
        except (OSError, TimeoutError) as exc:
            raise ValueError(f"--scheduler {address}: no Dask scheduler answers there "
                             f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    sched = DaskScheduler(address, client, cluster)
    try:
        try:
            client.wait_for_workers(1, timeout=wait_for_workers_s)
        except TimeoutError:
            raise ValueError(f"--scheduler {address}: no Dask worker connected within {wait_for_workers_s:g} s "
                             f"(start one with `dask worker {where}`)") from None
        sched.check_workers()
    except BaseException:
        sched.close()
        raise
    return sched


class DaskBackend:
    """The runner's view of a DaskScheduler: submit runs, wait for some, read their results."""

    writes_runs = False

    def __init__(self, sched: DaskScheduler):
        self.sched = sched
        self.client = sched.client
        self.jobs: dict[str, dict[str, Any]] = {}  # Dask key -> job
        self.seen: set[str] = set(sched.workers())
        self.alive = len(self.seen)
        self.lost: list[str] = []
        self.retried: set[str] = set()
        self._threads = max(1, sum(w.get("nthreads", 1) for w in sched.workers().values()))
        self._last_poll = 0.0

    @property
    def capacity(self) -> int:
        # Enough queued on the scheduler to keep every worker thread busy between our polls.
        return max(8, 4 * self._threads)

    def submit(self, job: dict[str, Any]) -> Any:
        from nicbench.experiments.scheduler import run_task as task  # pickled by reference

        key = f"nicbench-run-{job['key']}-{uuid.uuid4().hex[:8]}"
        self.jobs[key] = job
        return self.client.submit(task, job, self.sched.fingerprint, key=key, pure=False)

    def wait(self, handles: list[Any]) -> list[Any]:
        from distributed import wait

        while True:
            try:
                wait(handles, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                pass
            self._poll_workers()
            done = [h for h in handles if h.done()]
            if done:
                return done

    def result(self, handle: Any) -> dict[str, Any]:
        job = self.jobs.pop(handle.key)
        if handle.status == "finished":
            return handle.result()
        exc = handle.exception() if handle.status == "error" else None
        if isinstance(exc, EnvironmentMismatch):
            raise EnvironmentMismatch(str(exc)) from None
        what = f"{type(exc).__name__}: {exc}" if exc is not None else f"Dask task {handle.status}"
        # e.g. KilledWorker: the run took down every worker it was given (Dask's allowed-failures).
        return {"key": job["key"], "status": "error", "metrics": {}, "error": what, "rows": [], "stored": False,
                "meta": {}}

    def status(self) -> dict[str, Any]:
        return {"workers": self.alive, "lost": list(self.lost), "retried": len(self.retried)}

    def close(self) -> None:
        pending = [k for k in self.jobs]
        if pending:
            try:
                self.client.cancel(pending)
            except Exception:  # noqa: BLE001 - the client may already be gone (Ctrl-C)
                pass
        self.jobs.clear()

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
        """Our tasks the scheduler saw on a worker that died (it re-runs them elsewhere)."""

        # Defined inside so that cloudpickle ships it by value: the scheduler needs no nicbench.
        def on_scheduler(dask_scheduler: Any, keys: list[str]) -> list[str]:
            return [k for k in keys if k in dask_scheduler.tasks and dask_scheduler.tasks[k].suspicious > 0]

        try:
            return self.client.run_on_scheduler(on_scheduler, keys=keys)
        except Exception:  # noqa: BLE001 - informational only
            return []
