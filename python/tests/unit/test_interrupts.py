"""Ctrl-C held over a pool's forks is raised after them, not lost (nicbench.interrupts)."""

import os
import signal

import pytest

from nicbench.interrupts import ignore_sigint_in_worker, sigint_held


def test_sigint_inside_the_block_is_raised_when_it_ends():
    reached_end_of_block = False
    with pytest.raises(KeyboardInterrupt):
        with sigint_held():
            os.kill(os.getpid(), signal.SIGINT)
            reached_end_of_block = True  # not raised here: the kernel keeps it pending
    assert reached_end_of_block
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())


def test_a_worker_ignores_sigint_and_does_not_block_it():
    previous = signal.getsignal(signal.SIGINT)
    try:
        with sigint_held():
            ignore_sigint_in_worker()
            assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, set())
            os.kill(os.getpid(), signal.SIGINT)  # ignored
    finally:
        signal.signal(signal.SIGINT, previous)
