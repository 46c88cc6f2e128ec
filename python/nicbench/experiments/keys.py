"""Stable identities: point keys, run keys and per-run seeds.

- A *point key* is the canonical JSON of a point's parameters (sorted names).
- A run's *identity* hashes the request: target, the target's declared version, the point,
  the repetition and the run's seed.
- A *run key* hashes the identity and the run's fingerprint (the code and the input files
  that answer it, `fingerprint.py`). A run is in the store iff a file named by its key
  exists, so changing any of these re-runs exactly the runs they affect and nothing else.
- A run's *seed* derives from (spec seed, point key, repetition) only, so any single
  run can be replayed on its own (`nicbench run SPEC --only ... --rep N`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

__all__ = ["point_key", "run_key", "run_identity", "derive_seed", "code_version"]

_SEED_MASK = (1 << 63) - 1  # fits an int64 column and a u64 RNG seed


def point_key(params: Mapping[str, Any]) -> str:
    return json.dumps({k: params[k] for k in sorted(params)}, separators=(",", ":"), sort_keys=True)


def derive_seed(spec_seed: int, point: Mapping[str, Any], rep: int) -> int:
    digest = hashlib.sha256(f"{spec_seed}|{point_key(point)}|{rep}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & _SEED_MASK


def run_identity(target: str, target_version: str, params: Mapping[str, Any], rep: int, seed: int) -> str:
    text = f"{target}|{target_version}|{point_key(params)}|{rep}|{seed}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def run_key(
    target: str,
    target_version: str,
    params: Mapping[str, Any],
    rep: int,
    seed: int,
    fingerprint_digest: str | None = None,
) -> str:
    """The store's key of a run: its identity under the current code and input files."""
    if fingerprint_digest is None:
        from nicbench.experiments.fingerprint import fingerprint

        fingerprint_digest = fingerprint(params).digest()
    text = f"{run_identity(target, target_version, params, rep, seed)}|{fingerprint_digest}"
    return hashlib.sha256(text.encode()).hexdigest()[:24]


_CODE_VERSION: str | None = None


def code_version() -> str:
    """nicbench's version, without importing the native module (the harness runs without it)."""
    global _CODE_VERSION
    if _CODE_VERSION is None:
        try:
            from importlib.metadata import version

            _CODE_VERSION = version("nicbench")
        except Exception:  # not installed (source checkout): one stable label
            _CODE_VERSION = "source"
    return _CODE_VERSION
