"""Stable identities: point keys, run keys and per-run seeds.

- A *point key* is the canonical JSON of a point's parameters (sorted names).
- A *run key* hashes what makes a run's result: target, the target's code version,
  nicbench's version, the point, the repetition and the run's seed. A run is in the
  store iff a file named by its key exists, so changing any of these re-runs exactly
  the runs they affect and nothing else.
- A run's *seed* derives from (spec seed, point key, repetition) only, so any single
  run can be replayed on its own (`nicbench run SPEC --only ... --rep N`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

__all__ = ["point_key", "run_key", "derive_seed", "code_version"]

_SEED_MASK = (1 << 63) - 1  # fits an int64 column and a u64 RNG seed


def point_key(params: Mapping[str, Any]) -> str:
    return json.dumps({k: params[k] for k in sorted(params)}, separators=(",", ":"), sort_keys=True)


def derive_seed(spec_seed: int, point: Mapping[str, Any], rep: int) -> int:
    digest = hashlib.sha256(f"{spec_seed}|{point_key(point)}|{rep}".encode()).digest()
    return int.from_bytes(digest[:8], "little") & _SEED_MASK


def run_key(target: str, target_version: str, params: Mapping[str, Any], rep: int, seed: int) -> str:
    text = f"{target}|{target_version}|{code_version()}|{point_key(params)}|{rep}|{seed}"
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
