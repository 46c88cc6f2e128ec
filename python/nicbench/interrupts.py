"""Ctrl-C around forked worker pools.

A SIGINT that lands while the interpreter forks is run by an at-fork hook (logging's
`_releaseLock`, say), where CPython prints the KeyboardInterrupt as "Exception ignored" and drops
it: the command then runs on as if never interrupted. `sigint_held` blocks SIGINT while a pool
starts its workers; the kernel keeps it pending and hands it over when the block ends, so it is
raised after the fork instead of inside it. Threads started inside the block (a pool's manager
and feeder threads) keep SIGINT blocked, so the kernel hands Ctrl-C to the main thread, the only
one Python runs signal handlers in.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def sigint_held() -> Iterator[None]:
    """SIGINT blocked (kept pending, not lost) inside the block; only the main thread handles it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def ignore_sigint_in_worker() -> None:
    """In a pool worker: Ctrl-C (sent to the terminal's whole process group) is the parent's to
    handle. Unblocked too (a worker forked inside `sigint_held` inherits the block), so programs
    the worker starts see Ctrl-C as usual."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
