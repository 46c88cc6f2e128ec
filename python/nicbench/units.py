"""Quantities with units, as people write them on a command line or in a spec file.

Every parser returns a plain float/int in the base unit named by the function
(`parse_rate` → bits per second or packets per second, `parse_duration_ns` → ns,
`parse_size_bytes` → bytes). Errors are `UnitError` with a message that says what
was expected, so the CLI and the spec checker can print it as is.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = [
    "UnitError",
    "Rate",
    "parse_rate",
    "parse_duration_ns",
    "parse_size_bytes",
    "parse_count",
    "format_rate_bps",
    "format_size_bytes",
    "is_binary_size",
]


class UnitError(ValueError):
    """A quantity could not be parsed; the message says what was expected."""


_NUMBER = r"(?P<num>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)"
_SI = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


@dataclass(frozen=True)
class Rate:
    """An offered rate: either bits per second on the wire or packets per second."""

    value: float
    unit: str  # "bps" or "pps"

    @property
    def gbps(self) -> float | None:
        return self.value / 1e9 if self.unit == "bps" else None

    @property
    def mpps(self) -> float | None:
        return self.value / 1e6 if self.unit == "pps" else None


def parse_rate(text: str, what: str | None = None) -> Rate:
    """Parse `100Gbps`, `25 Gbit/s`, `10gbps`, `10G` (a bare prefix: bits per second, as in "10G Ethernet"),
    `8Mpps`, `500kpps`, `1.5e6pps`. Prefixes and units in any case (a rate has no milli: m is mega).
    `what` (the option) starts an error."""
    prefix = f"{what}: " if what else ""
    m = re.fullmatch(
        _NUMBER + r"\s*(?P<si>[kmgt]?)(?P<unit>bps|bit/s|bits/s|b/s|pps|p/s|)", text.strip(), re.IGNORECASE
    )
    if not m or (not m["unit"] and not m["si"]):
        raise UnitError(f"{prefix}expected a rate such as 100Gbps, 10G or 8Mpps, found {text!r}")
    if "B" in m["unit"]:
        raise UnitError(
            f"{prefix}a capital B is bytes: give the rate in bits (such as 80Gbps) or packets (8Mpps), found {text!r}"
        )
    value = float(m["num"]) * _SI[m["si"].upper() if m["si"] != "k" else "k"]
    if not (value > 0 and value < float("inf")):
        raise UnitError(f"{prefix}a rate must be a finite number > 0, found {text!r}")
    unit = "pps" if m["unit"].lower() in ("pps", "p/s") else "bps"
    return Rate(value, unit)


_TIME_NS = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9, "min": 60e9, "h": 3600e9}


# A zero duration, with or without a unit ("0", "0s", "0.0ms"): accepted where zero means "none".
_ZERO_DURATION = re.compile(r"0+(?:\.0*)?\s*(?:ns|us|µs|ms|s|min|h)?")


def parse_duration_ns(text: str, what: str | None = None, *, allow_zero: bool = False) -> int:
    """Parse `1s`, `500ms`, `20us`, `100ns`, `2min` into integer nanoseconds. `what` (the option)
    starts an error. A duration must be positive, unless `allow_zero` (then "0", "0s", "0ms" are 0)."""
    if allow_zero and _ZERO_DURATION.fullmatch(text.strip()):
        return 0
    prefix = f"{what}: " if what else ""
    m = re.fullmatch(_NUMBER + r"\s*(?P<unit>ns|us|µs|ms|s|min|h)", text.strip())
    if not m:
        raise UnitError(f"{prefix}expected a duration such as 1s, 500ms or 20us, found {text!r}")
    ns = float(m["num"]) * _TIME_NS[m["unit"]]
    if not math.isfinite(ns):
        raise UnitError(f"{prefix}a duration must be a finite number, found {text!r}")
    if ns <= 0:
        raise UnitError(f"{prefix}a duration must be positive, found {text!r}")
    return int(round(ns))


_SIZE = {"B": 1, "kB": 1000, "KB": 1000, "MB": 1000**2, "GB": 1000**3, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def parse_size_bytes(text: str | int) -> int:
    """Parse `1500B`, `64KiB`, `1MB`; a bare integer is bytes."""
    if isinstance(text, int):
        return text
    s = text.strip()
    if s.isdigit():
        return int(s)
    m = re.fullmatch(_NUMBER + r"\s*(?P<unit>B|kB|KB|MB|GB|KiB|MiB|GiB)", s)
    if not m:
        raise UnitError(f"expected a size such as 1500B or 64KiB, found {text!r}")
    value = float(m["num"]) * _SIZE[m["unit"]]
    if not math.isfinite(value) or value != int(value):
        raise UnitError(f"a size must be a whole number of bytes, found {text!r}")
    return int(value)


# Binary multipliers for counts: 16Ki = 16,384 (IEC 80000-13); k/K/M/G stay decimal (16k = 16,000).
_IEC = {"Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3}


def parse_count(text: str | int, *, at_most: int | None = None, what: str | None = None, at_least: int = 0) -> int:
    """Parse `10000`, `10k`, `1M`, `2.5M` (SI: k = 1,000) or `16Ki`, `1Mi` (binary: Ki = 1,024); exact
    integers only.

    `at_most`: the largest count the caller can honour (a Rust `u32`, a memory cap); a larger one
    is a UnitError saying the cap, instead of a failure deep in the native code. `what` (e.g. the
    option, `--flows`) starts the message. `at_least`: the smallest count that means something
    (1 packets: a trace of none is a mistake, not a request).
    """
    prefix = f"{what}: " if what else ""
    if isinstance(text, int):
        value: float = text
    else:
        m = re.fullmatch(_NUMBER + r"\s*(?P<si>Ki|Mi|Gi|[kKMG]?)", text.strip())
        if not m:
            raise UnitError(
                f"{prefix}expected a count such as 10000, 10k (= 10,000) or 16Ki (= 16,384), found {text!r}"
            )
        value = float(m["num"]) * (_IEC.get(m["si"]) or _SI[m["si"]])
    if not math.isfinite(value) or value != int(value) or value < 0:
        raise UnitError(f"{prefix}expected a non-negative whole count, found {text!r}")
    if at_most is not None and value > at_most:
        raise UnitError(f"{prefix}{text} is too large: at most {at_most:,}")
    if value < at_least:
        raise UnitError(f"{prefix}{text} is too small: at least {at_least:,}")
    return int(value)


def format_rate_bps(bps: float) -> str:
    for unit, scale in (("Tbps", 1e12), ("Gbps", 1e9), ("Mbps", 1e6), ("kbps", 1e3)):
        if bps >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.3g} bps"


# Binary units, largest first: a payload of 1,024 B is 1 KiB (IEC 80000-13), not "1.024 kB".
_BINARY_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def is_binary_size(n: float) -> bool:
    """Whether `n` bytes reads as a binary size: a whole number of KiB, or a power of two below that
    (the payloads and buffer sizes that are swept in powers of two: 64 B, 4 KiB, 16 MiB)."""
    try:
        n = float(n)  # numpy's integers too (a frame's column)
    except (TypeError, ValueError):
        return False
    if not math.isfinite(n) or n <= 0 or n != int(n):
        return False
    whole = int(n)
    return whole % 1024 == 0 or whole & (whole - 1) == 0


def format_size_bytes(n: float) -> str:
    """`64 B`, `4 KiB`, `1.5 MiB`, `1,500 B`: a size in the largest binary unit it is a whole number
    of quarters of; other sizes in bytes, grouped (never decimal kB, which a binary size is not)."""
    try:
        n = float(n)
    except (TypeError, ValueError):
        return "–"
    if not math.isfinite(n):
        return "–"
    for unit, scale in _BINARY_UNITS:
        if abs(n) >= scale and (n * 4 / scale) == int(n * 4 / scale):
            return f"{n / scale:g} {unit}"
    return f"{n:,.0f} B" if n == int(n) else f"{n:,.2f} B"
