"""Ctrl-C held over a pool's forks is raised after them, not lost (nicbench.interrupts)."""

import os
import signal
import threading

import pytest

from nicbench.interrupts import ignore_sigint_in_worker, sigint_held


def _held_then_raised() -> bool:
    reached_end_of_block = False
    with pytest.raises(KeyboardInterrupt):
        with sigint_held():
            os.kill(os.getpid(), signal.SIGINT)
            reached_end_of_block = True  # not raised here: recorded, or kept pending by the kernel
    return reached_end_of_block


def test_sigint_inside_the_block_is_raised_when_it_ends():
    assert _held_then_raised()
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_held_while_another_thread_takes_the_signal():
    """The kernel may hand a process-directed SIGINT to any thread that does not block it; Python
    still runs the handler in the main thread, where the block has put its own."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)  # a thread that does not block SIGINT
    other.start()
    try:
        assert all(_held_then_raised() for _ in range(20))
    finally:
        stop.set()
        other.join()


def test_a_worker_ignores_sigint_and_does_not_block_it():
    previous = signal.getsignal(signal.SIGINT)
    try:
        with sigint_held():
            ignore_sigint_in_worker()
            assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
            os.kill(os.getpid(), signal.SIGINT)  # ignored
    finally:
        signal.signal(signal.SIGINT, previous)
