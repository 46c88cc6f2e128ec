"""Trace analysis: what is in a pcap, and how RSS would spread it."""

from __future__ import annotations

import json
from collections.abc import Callable

from nicbench import _native
from nicbench.inputs import naming_capture

__all__ = ["pcap_info", "rss_spread", "read_packets"]


def pcap_info(path: str, progress: Callable[[int], None] | None = None) -> dict:
    """Summary of a pcap/pcapng file, streamed (flat memory). `progress(bytes_read)` is called periodically."""
    with naming_capture(path):
        return json.loads(_native.pcap_info(str(path), progress))


def rss_spread(
    path: str,
    queues: int,
    key: bytes,
    fields: str = "ip-ports",
    reta_size: int = 128,
    inner: bool = False,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Per-queue packets and flows under Toeplitz RSS with a round-robin RETA."""
    with naming_capture(path):
        return json.loads(
            _native.rss_spread(
                str(path), int(queues), bytes(key), fields == "ip-ports", int(reta_size), bool(inner), progress
            )
        )


def read_packets(path: str, skip: int = 0, limit: int | None = None) -> list[tuple[int, bytes]]:
    """Records `skip`..`skip+limit` of a pcap/pcapng as (timestamp [ns], frame bytes)."""
    with naming_capture(path):
        return _native.read_packets(str(path), skip, limit)
