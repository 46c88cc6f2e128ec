"""What produced a run: the code and the input files, as a fingerprint that is part of its run key.

A cached run is reused only if nothing that made it has changed, so the store cannot go stale:

- **code**: SHA-256 over nicbench's Python sources (`nicbench/**/*.py`) and the bytes of its native
  module. That is what the git commit plus the uncommitted changes would say about the code a run
  executes, and it also holds for an installed package without git. (The commit itself is recorded
  in `experiment.json` for people, beside this hash.) Any code change re-runs every run.
- **inputs**: for each string parameter that names a file the run reads — a profile name as the
  models resolve it (`nic = "connectx5"` → `profiles/connectx5.toml`) or an existing file path
  (rules, traces) — the SHA-256 of its content. Changing one profile's parameter re-runs exactly the
  runs that name that profile.

A run's records carry both (`code`, `inputs` columns) and its `identity` (target, target version,
point, repetition, seed: the run as a request, whatever code answers it), so the store can tell a
stale run (same identity, other fingerprint) from a missing one; `--reuse-stale` answers from it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Fingerprint", "code_fingerprint", "file_hash", "input_hashes", "fingerprint", "is_current"]

_DIGEST_CHARS = 16
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class Fingerprint:
    code: str
    inputs: str  # canonical JSON: {"<parameter value>": "<content hash>"}

    def digest(self) -> str:
        return hashlib.sha256(f"{self.code}|{self.inputs}".encode()).hexdigest()[:_DIGEST_CHARS]


def _package_dir() -> Path:
    spec = importlib.util.find_spec("nicbench")
    if spec is None or spec.origin is None:  # pragma: no cover (we are running from it)
        raise RuntimeError("the nicbench package cannot be located")
    return Path(spec.origin).parent


def _native_module() -> Path | None:
    # Located without importing it: the harness runs without the native module too.
    for path in sorted(_package_dir().glob("_native*")):
        if path.suffix in (".so", ".pyd") or ".so" in path.name:
            return path
    return None


@functools.cache
def code_fingerprint() -> str:
    """Hash of the package's Python sources and its native module (computed once per process)."""
    h = hashlib.sha256()
    root = _package_dir()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes())
    native = _native_module()
    h.update(b"native\0")
    if native is not None:
        h.update(file_hash(native).encode())
    return h.hexdigest()[:_DIGEST_CHARS]


def file_hash(path: Path) -> str:
    """A file's content hash (16 hex digits), computed again only when its size or mtime changed."""
    st = path.stat()
    return _file_hash(path.resolve(), st.st_size, st.st_mtime_ns)


@functools.lru_cache(maxsize=4096)
def _file_hash(path: Path, size: int, mtime_ns: int) -> str:
    """Content hash, cached by (path, size, mtime): a file rewritten in place gets a new mtime."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK_BYTES):
            h.update(chunk)
    return h.hexdigest()[:_DIGEST_CHARS]


@functools.lru_cache(maxsize=64)
def _profiles_dir(env_value: str | None) -> Path | None:
    try:
        from nicbench.profiles import profiles_dir

        return profiles_dir()
    except Exception:  # no native module: runs that name profiles cannot run either
        return None


def _input_file(value: str) -> Path | None:
    if not value or len(value) > 4096 or "\0" in value:
        return None
    path = Path(value)
    try:
        if path.is_file():
            return path
        folder = _profiles_dir(os.environ.get("NICBENCH_PROFILES"))
        if folder is not None and "/" not in value:
            candidate = folder / f"{value}.toml"
            if candidate.is_file():
                return candidate
    except OSError:
        return None
    return None


def input_hashes(params: Mapping[str, Any]) -> dict[str, str]:
    """Content hash of every file the point's string parameters name, keyed by the value."""
    out: dict[str, str] = {}
    for value in params.values():
        if isinstance(value, str):
            path = _input_file(value)
            if path is not None:
                out[value] = file_hash(path)
    return dict(sorted(out.items()))


def fingerprint(params: Mapping[str, Any]) -> Fingerprint:
    return Fingerprint(code=code_fingerprint(), inputs=json.dumps(input_hashes(params), separators=(",", ":")))


def is_current(code: str | None, inputs: str | None) -> bool:
    """Whether a stored run's fingerprint still holds: same code, every input file unchanged."""
    if not code or inputs is None or code != code_fingerprint():
        return False
    try:
        stored = json.loads(inputs)
    except ValueError:
        return False
    if not isinstance(stored, dict):
        return False
    # The stored keys are the parameter values that named files: hash what they name now.
    return input_hashes({name: name for name in stored}) == stored
