"""Backends: what answers an experiment's runs — a virtual NIC, nicbench's own software, or a real system.

Every target says which backends it has (`Target.backends`, the first is its default):
`virtual` (a model answers), `software` (nicbench's own part is the system measured, e.g. the
classifier) and real ones (`ovs`: a real Open vSwitch on this machine; `dpdk`: dpdk-testpmd and
dpdk-test-flow-perf; `perftest`: ib_*_bw / ib_*_lat on an RDMA device). `nicbench run SPEC
--backend NAME` runs the spec unchanged on another backend: the backend may add parameters of its
own (settings such as the sender's rate, set with `--set`), says in one line before anything
starts why it cannot run a point, and its runs go to their own results folder
(`<experiment>--<backend>`) with `backend` in every record and its environment in
`experiment.json`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from nicbench.vocab.params import Param

__all__ = ["Backend", "get_backend", "with_backend", "BACKENDS", "results_name"]


class Backend:
    """A way to answer runs. The two built-in ones call the target's own function."""

    name = ""
    doc = ""
    params: tuple[Param, ...] = ()

    def why_not(self, target_name: str, params: dict[str, Any]) -> str | None:
        """Why this point cannot run here (checked for every point before anything starts), or None."""
        return None

    def run(self, target: Any, params: dict[str, Any], ctx: Any) -> dict[str, float] | None:
        return target.fn(params, ctx)

    def environment(self) -> dict[str, str]:
        return {}


class _Virtual(Backend):
    name = "virtual"
    doc = "a calibrated model answers (no hardware)"


class _Software(Backend):
    name = "software"
    doc = "nicbench's own software part is the system measured, on this machine"


def _ovs() -> Backend:
    from nicbench.backends.ovs import OvsBackend

    return OvsBackend()


def _dpdk() -> Backend:
    from nicbench.backends.dpdk import DpdkBackend

    return DpdkBackend()


def _perftest() -> Backend:
    from nicbench.backends.perftest import PerftestBackend

    return PerftestBackend()


BACKENDS: dict[str, Callable[[], Backend]] = {
    "virtual": _Virtual,
    "software": _Software,
    "ovs": _ovs,
    "dpdk": _dpdk,
    "perftest": _perftest,
}


def get_backend(name: str) -> Backend:
    try:
        return BACKENDS[name]()
    except KeyError:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})") from None


def with_backend(target: Any, name: str | None) -> Any:
    """`target` answered by backend `name` (None: its default): the backend's parameters added,
    its function wrapped. Raises ValueError naming the target's backends when it has not this one."""
    if name is None or name == target.backends[0]:
        return target
    if name not in target.backends:
        raise ValueError(f"target {target.name} has no backend {name!r} (it has: {', '.join(target.backends)})")
    backend = get_backend(name)

    def fn(params: dict[str, Any], ctx: Any) -> dict[str, float] | None:
        return backend.run(target, params, ctx)

    return dataclasses.replace(target, fn=fn, params=target.params + backend.params, backend=name)


def results_name(experiment: str, target: Any) -> str:
    """The results folder of an experiment's runs on the target's backend."""
    chosen = getattr(target, "backend", "") or target.backends[0]
    return experiment if chosen == target.backends[0] else f"{experiment}--{chosen}"
