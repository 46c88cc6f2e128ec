"""nicbench's exception hierarchy.

The classes are created in the native module (mapped in exactly one Rust file,
`crates/nicbench-py/src/errors.rs`) so that errors raised in Rust and in Python
share one base: catch `nicbench.NicbenchError` for any bad-input condition.
`NicbenchError` subclasses `ValueError`.
"""

from __future__ import annotations

from nicbench._native import NicbenchError, PcapError, RuleError

__all__ = ["NicbenchError", "PcapError", "RuleError"]
