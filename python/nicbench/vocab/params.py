"""Typed parameter schemas: what each target accepts, with units, checked before anything runs.

A target declares its parameters as `Param`s. A spec value (TOML scalar: `"100Gbps"`,
`1500`, `"64KiB"`, `"0.1%"`, `true`) is parsed into a *canonical* Python scalar whose type
depends only on the kind, never on how the value was written:

    kind         accepts                               canonical value (column unit)
    int/count    10, "10k", "1M"                        int
    float        0.5, "2.5"                             float
    fraction     0.001, "0.1%"                          float in [0, 1]
    rate_bps     "100Gbps", "25 Gbit/s", 1e9            float bits/s   (bps)
    rate_pps     "8Mpps", 8e6                           float packets/s (pps)
    duration_ns  "500ms", "20us", 1000 (ns)             int ns
    size_bytes   1500, "1500B", "64KiB"                 int bytes      (B)
    str / choice "udp"                                  str
    bool         true / false                           bool

Invariant: the same spec text always gives the same canonical values, so point keys (and
hence run keys and seeds) are stable across runs and machines.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from nicbench.units import Rate, UnitError, parse_count, parse_duration_ns, parse_rate, parse_size_bytes

__all__ = ["Param", "KINDS", "Scalar"]

Scalar = Any  # int | float | str | bool | None

KINDS = (
    "int",
    "count",
    "float",
    "fraction",
    "rate_bps",
    "rate_pps",
    "duration_ns",
    "size_bytes",
    "str",
    "choice",
    "bool",
)

# Kinds whose values are numbers (and can therefore be swept with ranges).
NUMERIC_KINDS = {"int", "count", "float", "fraction", "rate_bps", "rate_pps", "duration_ns", "size_bytes"}
INTEGER_KINDS = {"int", "count", "duration_ns", "size_bytes"}

_UNITS = {"rate_bps": "bps", "rate_pps": "pps", "duration_ns": "ns", "size_bytes": "B", "fraction": ""}

_EXAMPLES = {
    "int": "an integer such as 16",
    "count": "a count such as 10000, 10k or 1M",
    "float": "a number such as 0.5",
    "fraction": "a fraction such as 0.001 or 0.1%",
    "rate_bps": "a rate such as 100Gbps",
    "rate_pps": "a packet rate such as 8Mpps",
    "duration_ns": "a duration such as 500ms or 20us",
    "size_bytes": "a size such as 1500B or 64KiB",
    "str": "a string",
    "bool": "true or false",
}


@dataclass(frozen=True)
class Param:
    """One parameter of a target.

    `none_word`: a spelling that means "no value" (e.g. `"max"` for an unpaced rate);
    `default` may then be None. `minimum`/`maximum` are in canonical units. `profile_kinds`: the
    value is a device profile (name or path) whose `kind` must be one of these; it is checked when
    the spec or `--set` is parsed, so that a wrong profile is refused before anything runs;
    `profile_role` = (role, parameter) tells two roles of one kind apart (a flow host's capture card
    declares `link_gbps`, its host does not).
    """

    name: str
    kind: str
    default: Scalar = None
    doc: str = ""
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    none_word: str | None = None
    required: bool = False
    profile_kinds: tuple[str, ...] = ()
    profile_role: tuple[str, str] | None = None
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"parameter {self.name}: unknown kind {self.kind!r} (one of {', '.join(KINDS)})")

    @property
    def unit(self) -> str:
        """Unit of the canonical value ("" when dimensionless)."""
        return _UNITS.get(self.kind, "")

    @property
    def numeric(self) -> bool:
        return self.kind in NUMERIC_KINDS

    @property
    def integer(self) -> bool:
        return self.kind in INTEGER_KINDS

    def expected(self) -> str:
        if self.kind == "choice":
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            text = _EXAMPLES[self.kind]
        if self.none_word:
            text += f" or {self.none_word!r}"
        return text

    def parse(self, raw: Any) -> Scalar:
        """Canonical value of `raw`, or `UnitError("expected ..., found ...")`."""
        if self.none_word is not None and (raw is None or raw == self.none_word):
            return None
        value = self.parse_magnitude(raw)
        if self.profile_kinds:
            _check_profile(value, self.profile_kinds, self.profile_role)
        if self.numeric:
            low, high = self.minimum, self.maximum
            if (low is not None and value < low) or (high is not None and value > high):
                if low is not None and high is not None:
                    allowed = f"from {_fmt(low)}{self.unit} to {_fmt(high)}{self.unit}"
                else:
                    allowed = f"≥ {_fmt(low)}{self.unit}" if low is not None else f"≤ {_fmt(high)}{self.unit}"
                raise UnitError(f"expected {self.expected()} {allowed}, found {raw!r}")
        return value

    def parse_magnitude(self, raw: Any) -> Scalar:
        """Like `parse` without bounds (range steps like `step 64B` are magnitudes, not values)."""
        try:
            return self._parse(raw)
        except (UnitError, ValueError, TypeError, OverflowError):
            raise UnitError(f"expected {self.expected()}, found {raw!r}") from None

    def _parse(self, raw: Any) -> Scalar:
        kind = self.kind
        if isinstance(raw, bool) and kind != "bool":
            raise ValueError("bool")
        if kind == "bool":
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in ("true", "false", "yes", "no"):
                return raw.lower() in ("true", "yes")
            raise ValueError("bool")
        if kind in ("str", "choice"):
            if not isinstance(raw, (str, int, float)) or isinstance(raw, bool):
                raise ValueError("str")
            text = str(raw)
            if kind == "choice" and text not in self.choices:
                raise ValueError("choice")
            return text
        if isinstance(raw, float) and not math.isfinite(raw):
            raise ValueError("not finite")
        if kind in ("int", "count"):
            if isinstance(raw, float):
                if raw != int(raw):
                    raise ValueError("not whole")
                raw = int(raw)
            if isinstance(raw, int):
                if kind == "count" and raw < 0:
                    raise ValueError("negative")
                return raw
            if not isinstance(raw, str):
                raise ValueError("type")
            text = raw.strip()
            if kind == "int" and text.startswith("-"):
                return -parse_count(text[1:])
            return parse_count(text)
        if kind == "float":
            value = float(raw) if isinstance(raw, (int, float)) else float(str(raw).strip())
            if not math.isfinite(value):  # "nan", "inf" as text: float() takes them
                raise ValueError("not finite")
            return value
        if kind == "fraction":
            if isinstance(raw, str) and raw.strip().endswith("%"):
                value = float(raw.strip()[:-1]) / 100.0
            else:
                value = float(raw)
            if not 0.0 <= value <= 1.0:
                raise ValueError("fraction")
            return value
        if kind in ("rate_bps", "rate_pps"):
            want = "bps" if kind == "rate_bps" else "pps"
            if isinstance(raw, (int, float)):
                rate = Rate(float(raw), want)
            else:
                rate = parse_rate(str(raw))
            if rate.unit != want or rate.value <= 0:
                raise ValueError("rate")
            return float(rate.value)
        if kind == "duration_ns":
            if isinstance(raw, (int, float)):
                if raw < 0 or raw != int(raw):
                    raise ValueError("ns")
                return int(raw)
            return parse_duration_ns(str(raw), allow_zero=True)  # "0s": no wait
        if kind == "size_bytes":
            if isinstance(raw, float):
                if raw != int(raw):
                    raise ValueError("bytes")
                raw = int(raw)
            if isinstance(raw, int):
                if raw < 0:
                    raise ValueError("bytes")
                return raw
            return parse_size_bytes(str(raw))
        raise ValueError(kind)  # pragma: no cover - guarded by __post_init__


def _fmt(x: float) -> str:
    """A bound as people read it: whole numbers grouped (4,294,967,296, not 4.29497e+09)."""
    return f"{int(x):,}" if float(x).is_integer() and abs(x) < 1e18 else f"{x:g}"


def _check_profile(name_or_path: str, kinds: tuple[str, ...], role: tuple[str, str] | None) -> None:
    """`UnitError` unless `name_or_path` is a readable profile of one of `kinds` (and of `role`)."""
    from nicbench import profiles  # the native module: imported only when a profile is named

    def fits(declared: frozenset[str]) -> bool:
        return role is None or role[1] in declared

    def refuse(why: str) -> UnitError:
        # The known profiles are listed only on an error: listing them reads every profile.
        what = (f"{role[0]} " if role else "") + "profile of kind " + " or ".join(kinds)
        known = ", ".join(n for k in kinds for n in profiles.names(k) if fits(profiles.declared(n))) or "none"
        return UnitError(f"expected a {what} ({known}) or a path to one, found {name_or_path!r}{why}")

    try:
        path = profiles.resolve(name_or_path)
    except (OSError, ValueError):  # NicbenchError is a ValueError
        raise refuse(f", which is neither a profile in {profiles.profiles_dir().resolve()} nor a file") from None
    try:
        kind, declared = profiles.facts(path)
    except (OSError, ValueError) as exc:
        # An OSError's text starts "[Errno 2] ...": say the reason alone, as other file errors do.
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise refuse(f", which cannot be read: {reason}") from None
    if kind not in kinds:
        raise refuse(f", a profile of kind {kind}")
    if not fits(declared):
        raise refuse(f", which has no {role[1]} (not a {role[0]})")
