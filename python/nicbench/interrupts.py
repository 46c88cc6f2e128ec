"""Ctrl-C around forked worker pools.

A SIGINT whose Python handler runs while the interpreter forks is run inside an at-fork hook
(logging's `_releaseLock`, say), where CPython prints the KeyboardInterrupt as "Exception ignored"
and drops it: the command then runs on as if never interrupted. `sigint_held` defers Ctrl-C over a
pool's start: its handler only records the signal, and the block's end hands it to the handler
that was there before (KeyboardInterrupt). Python runs signal handlers in the main thread whichever
thread the kernel delivered the signal to, so this holds in a process with other threads (a
progress display, a test runner's). SIGINT is also blocked in the main thread over the block, so
threads started inside it (a pool's manager and feeder threads) keep it blocked and the kernel
hands Ctrl-C to the main thread, which then wakes from its waits.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigint_held() -> Iterator[None]:
    """Ctrl-C inside the block is not lost: it is raised (as the previous handler would) when the
    block ends. Only in the main thread, the one Python runs signal handlers in."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: caught.append(signum))
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)  # a SIGINT kept pending is recorded now
        signal.signal(signal.SIGINT, previous)
    if caught:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous == signal.SIG_DFL:
            os.kill(os.getpid(), signal.SIGINT)


def ignore_sigint_in_worker() -> None:
    """In a pool worker: Ctrl-C (sent to the terminal's whole process group) is the parent's to
    handle. Unblocked too (a worker forked inside `sigint_held` inherits the block), so programs
    the worker starts see Ctrl-C as usual."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
