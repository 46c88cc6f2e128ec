"""A module's top-level literal, read from its source without importing it: what the CLI lists at
start-up (each command module's `SUMMARIES`) and which module fronts a model (`MODELS`), without
loading the modules (and their heavy imports) to learn it."""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["module_literal"]


def module_literal(text: str, name: str) -> Any:
    """The value of the top-level assignment `NAME = <literal>` in module source `text`, or None when
    the module has none. The literal may span lines; it ends at the first line that completes it."""
    start = text.find(f"\n{name} = ")
    if start < 0:
        return None
    lines = text[start + len(name) + 4 :].split("\n")
    for n in range(1, len(lines) + 1):
        try:
            return ast.literal_eval("\n".join(lines[:n]))
        except SyntaxError:  # not complete yet: one more line
            continue
        except ValueError:  # complete, but a name or a call, not a literal
            break
    raise ValueError(f"{name} = ... is not a literal")
