"""Errors of the experiment harness.

All are `ValueError` subclasses so that the CLI prints them as one line and exits
with code 2, and none needs the native module (the harness runs without it).
"""

from __future__ import annotations

__all__ = ["SpecError", "UnknownTargetError", "StoreError"]


class SpecError(ValueError):
    """A spec, study or reference file is wrong; the message names file, key and what was expected."""

    @classmethod
    def at(cls, file: object, key: str, message: str) -> SpecError:
        return cls(f"{file}: key '{key}': {message}")


class UnknownTargetError(SpecError):
    """A spec names a target that is not registered."""


class StoreError(ValueError):
    """The result store cannot be used (locked by another run, unreadable record, ...)."""
