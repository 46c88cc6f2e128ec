"""Writing a study's `reference.toml` (the generator scripts `studies/<study>/make_reference.py` use it).

The file is generated, never edited by hand, and tests regenerate it byte for byte: the format
here is therefore fixed (key order, float spelling). Integer-valued floats keep a `.0` so TOML
reads them back as floats; other floats are written with `repr` (optionally rounded first, to
keep values computed from seed numbers short).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["toml_value", "render_references", "REFERENCE_KEYS", "OPTIONAL_KEYS"]

# The order of keys in each `[[reference]]` table; the optional ones follow when an entry has them.
REFERENCE_KEYS = (
    "id",
    "quote",
    "location",
    "experiment",
    "where",
    "metric",
    "statistic",
    "value",
    "unit",
    "tolerance",
    "set",
)
OPTIONAL_KEYS = ("low", "high", "derived_from", "echo")


def toml_value(v: Any, round_digits: int | None = None) -> str:
    """One TOML value: bool, int, float, str, or a flat inline table or array of those."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isfinite(v) and v == int(v) and abs(v) < 1e15:
            return f"{v:.1f}"
        return repr(v if round_digits is None else round(v, round_digits))
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{k} = {toml_value(x, round_digits)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x, round_digits) for x in v) + "]"
    raise TypeError(f"no TOML spelling for {type(v).__name__}: {v!r}")


def render_references(
    header: Iterable[str], entries: Iterable[Mapping[str, Any]], round_digits: int | None = None
) -> str:
    """The whole file: `header` lines (comments, written as given), then one table per entry."""
    lines = [*header, ""]
    for e in entries:
        lines.append("[[reference]]")
        lines.extend(f"{key} = {toml_value(e[key], round_digits)}" for key in REFERENCE_KEYS)
        lines.extend(f"{key} = {toml_value(e[key], round_digits)}" for key in OPTIONAL_KEYS if e.get(key) is not None)
        lines.append("")
    return "\n".join(lines)
