"""Sweep designs: which runs an experiment makes, one class per design (one module each).

A design turns the spec's points and repetition count into *tasks*. A task is a generator
that yields `RunRequest`s one at a time and receives each run's `RunOutcome` back (so a
search can choose its next rate from the last result); it may return `Derived` records
(e.g. a search's final rate). Static designs make one-run tasks. The runner executes tasks'
requests in parallel; requests already in the store are answered from it, which is what
makes adaptive designs resumable too.
"""

from __future__ import annotations

from nicbench.experiments.designs.base import Derived, Design, RunOutcome, RunRequest, Task
from nicbench.experiments.designs.full import FullFactorial
from nicbench.experiments.designs.random_subset import RandomSubset
from nicbench.experiments.designs.zero_loss import ZeroLossSearch

__all__ = [
    "Design",
    "Task",
    "RunRequest",
    "RunOutcome",
    "Derived",
    "FullFactorial",
    "RandomSubset",
    "ZeroLossSearch",
    "DESIGNS",
]

DESIGNS: dict[str, type[Design]] = {
    FullFactorial.kind: FullFactorial,
    RandomSubset.kind: RandomSubset,
    ZeroLossSearch.kind: ZeroLossSearch,
}
