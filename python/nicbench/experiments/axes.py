"""Sweep axis values: lists and range expressions.

In `[sweep]` (and `[[zip]]`) a TOML *list* gives the values one by one; a *string* of a
numeric parameter is a range expression (ends inclusive, units allowed on every number):

    "1-16"                   1, 2, ..., 16 (integer kinds; step 1)
    "0-1 step 0.1"           0, 0.1, ..., 1 (arithmetic)
    "64B-1500B step 64B"     64, 128, ..., 1472
    "1000-65536 x2"          1000, 2000, 4000, ..., 64000 (geometric: ×2 while ≤ the end)
    "1Gbps-100Gbps x10"      1e9, 1e10, 1e11

Any other scalar (or a string that is not a range) is a one-value axis. Values come out
canonical (see `nicbench.vocab.params`), so a range and the equivalent list give identical points.
"""

from __future__ import annotations

import re
from typing import Any

from nicbench.units import UnitError
from nicbench.vocab.params import Param, Scalar

__all__ = ["axis_values", "MAX_AXIS_VALUES"]

MAX_AXIS_VALUES = 100_000

_RANGE = re.compile(
    r"^\s*(?P<lo>[0-9.][^\s-]*(?:\s*[A-Za-z/%]+)?)\s*-\s*(?P<hi>[0-9.][^\s]*?(?:\s*[A-Za-z/%]+)?)"
    r"(?:\s+(?:step\s+(?P<step>\S+(?:\s*[A-Za-z/%]+)?)|x\s*(?P<factor>[0-9.]+(?:[eE][-+]?[0-9]+)?)))?\s*$"
)

RANGE_HELP = "a list, a value, or a range such as '1-16', '0-1 step 0.1' or '1000-65536 x2'"


def axis_values(raw: Any, param: Param) -> list[Scalar]:
    """Canonical values of one axis; `UnitError` says what was expected."""
    if isinstance(raw, list):
        if not raw:
            raise UnitError(f"expected {RANGE_HELP}, found an empty list")
        return [param.parse(v) for v in raw]
    if isinstance(raw, dict):
        raise UnitError(f"expected {RANGE_HELP}, found a table")
    if isinstance(raw, str) and param.numeric:
        m = _RANGE.match(raw)
        if m:
            return _expand(raw, m, param)
    return [param.parse(raw)]


def _expand(raw: str, m: re.Match, param: Param) -> list[Scalar]:
    lo = param.parse(m["lo"].strip())
    hi = param.parse(m["hi"].strip())
    if lo is None or hi is None:
        raise UnitError(f"a range needs numbers at both ends, found {raw!r}")
    if hi < lo:
        raise UnitError(f"range {raw!r} ends below its start")
    values: list[Scalar] = []
    if m["factor"] is not None:
        factor = float(m["factor"])
        if factor <= 1.0:
            raise UnitError(f"a geometric range needs a factor > 1, found {raw!r}")
        if lo <= 0:
            raise UnitError(f"a geometric range must start above 0, found {raw!r}")
        i = 0
        while True:
            v = lo * factor**i
            if v > hi * (1 + 1e-12):
                break
            values.append(_canon(v, param))
            i += 1
            _check_len(values, raw)
    else:
        if m["step"] is not None:
            step = param.parse_magnitude(m["step"].strip())
        elif param.integer:
            step = 1
        else:
            raise UnitError(f"a range of {param.kind} values needs a step, e.g. '0-1 step 0.1'; found {raw!r}")
        if step is None or step <= 0:
            raise UnitError(f"a range step must be positive, found {raw!r}")
        n = int((hi - lo) / step + 1e-9) + 1
        if n > MAX_AXIS_VALUES:
            raise UnitError(f"range {raw!r} has {n} values (at most {MAX_AXIS_VALUES})")
        # lo + i*step, not repeated addition: no drift over long float ranges.
        values = [_canon(lo + i * step, param) for i in range(n)]
    # Bounds of the parameter apply to every value of the range.
    return [param.parse(v) if v is not None else v for v in values]


def _canon(v: float, param: Param) -> Scalar:
    if param.integer:
        return int(round(v))
    return float(f"{v:.12g}")  # 0.30000000000000004 -> 0.3: stable keys


def _check_len(values: list, raw: str) -> None:
    if len(values) > MAX_AXIS_VALUES:
        raise UnitError(f"range {raw!r} has more than {MAX_AXIS_VALUES} values")
