"""Packets and RSS from Python: parse a frame, hash a flow, name a key."""

from __future__ import annotations

import json
import re

from nicbench import _native
from nicbench.errors import NicbenchError

__all__ = ["parse_frame", "toeplitz_hash", "parse_key", "MICROSOFT_KEY", "SYMMETRIC_KEY"]

MICROSOFT_KEY: bytes = bytes(_native.MICROSOFT_KEY)
SYMMETRIC_KEY: bytes = bytes(_native.SYMMETRIC_KEY)


def parse_frame(frame: bytes) -> dict:
    """Parse an Ethernet frame into a dict of layers (`outer`, `tunnel`, `inner`, `stop`, `flow_key`)."""
    return json.loads(_native.parse_frame(bytes(frame)))


def toeplitz_hash(key: bytes, data: bytes) -> int:
    """The Toeplitz hash of `data` (already in network byte order) under `key`."""
    return _native.toeplitz_hash(bytes(key), bytes(data))


def parse_key(text: str) -> bytes:
    """`symmetric`, `microsoft` or a hex string (40 or 52 bytes, `:` and spaces allowed)."""
    name = text.strip().lower()
    if name == "symmetric":
        return SYMMETRIC_KEY
    if name in ("microsoft", "ms", "default"):
        return MICROSOFT_KEY
    hexdigits = re.sub(r"[\s:]", "", name).removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]*", hexdigits) or len(hexdigits) % 2:
        raise NicbenchError(f"expected an RSS key 'symmetric', 'microsoft' or hex bytes, found {text!r}")
    key = bytes.fromhex(hexdigits)
    if len(key) not in (40, 52):
        raise NicbenchError(f"an RSS key has 40 or 52 bytes, found {len(key)} in {text!r}")
    return key
