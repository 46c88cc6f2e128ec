"""The TOML parser: the standard library's `tomllib` from Python 3.11 on, else `tomli`, the package
it was taken from (same API and errors; a dependency on Python 3.10 only, pyproject.toml), so the
installed wheel runs on every Python its tag and `requires-python` admit."""

from __future__ import annotations

import sys

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

__all__ = ["tomllib"]
