"""Profile files: read the parameters (`[param.NAME]` tables) and write fitted values back.

Profiles are read by the one loader (`nicbench.profiles.load`, in Rust), which also checks them
against their model (profiles/*.toml):

    [param.root_collision_pool_entries]
    value = 18791.0
    unit = "entries"
    provenance = "fitted: pam21 calibration set (66 values)"
    fitted = true          # optional; a provenance starting with "fitted" also marks it
    bounds = [0.0, 65536.0]   # optional: the plausible range (the fit's default bounds)

Writing back edits only the `value` and `provenance` lines of the fitted parameters' tables,
text in place, so comments, order and every other parameter stay byte-identical; the result is
loaded by the same loader before it replaces the file. A parameter written as an integer literal
stays an integer (the fit rounds it).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicbench import profiles
from nicbench.errors import NicbenchError
from nicbench.outputs import atomic_output

__all__ = ["ProfileParam", "read_params", "write_fitted", "default_bounds", "merge_provenance", "render_profile"]


@dataclass(frozen=True)
class ProfileParam:
    name: str
    value: float
    unit: str
    provenance: str
    fitted: bool
    integer: bool
    minimum: float | None = None
    maximum: float | None = None


_VALUE_LINE = re.compile(r"^\s*value\s*=\s*(?P<literal>[-+]?[0-9_]+)\s*(#.*)?$")


def _integer_literals(text: str) -> set[str]:
    """Names of the `[param.NAME]` tables whose `value` is written as an integer literal."""
    names, current = set(), None
    for line in text.splitlines():
        header = re.match(r"^\s*\[(?P<name>[^\[\]]+)\]", line)
        if header:
            current = _param_name(header["name"])
        elif current is not None and _VALUE_LINE.match(line):
            names.add(current)
    return names


def read_params(path: str | Path) -> dict[str, ProfileParam]:
    """Every `[param.NAME]` of a profile, in name order (loaded and checked by `nicbench.profiles`)."""
    path = Path(path)
    doc = profiles.load(path)
    try:
        integers = _integer_literals(path.read_text())
    except OSError as exc:
        raise NicbenchError(f"{path}: {exc}") from None
    out: dict[str, ProfileParam] = {}
    for name, t in doc["param"].items():
        provenance = str(t.get("provenance", ""))
        fitted = bool(t.get("fitted", False)) or provenance.strip().lower().startswith("fitted")
        lo, hi = t.get("bounds") or (None, None)
        out[name] = ProfileParam(
            name=name,
            value=float(t["value"]),
            unit=str(t.get("unit", "")),
            provenance=provenance,
            fitted=fitted,
            integer=name in integers,
            minimum=None if lo is None else float(lo),
            maximum=None if hi is None else float(hi),
        )
    return out


def default_bounds(p: ProfileParam) -> tuple[float, float, bool]:
    """(low, high, log_scale) for a parameter without explicit bounds in the profile.

    Fractions (unit "" or "fraction", value in (0, 1)) stay in [0.01, 0.999]; positive
    quantities range over a decade either way on a log scale; others ±|value| + 1, from 0 at the
    lowest (the models refuse a negative parameter: the fit must not try one).
    """
    v = p.value
    lo, hi = p.minimum, p.maximum
    if p.unit in ("", "fraction", "ratio") and 0.0 < v < 1.0:
        return (lo if lo is not None else 0.01), (hi if hi is not None else 0.999), False
    if v > 0:
        lo = lo if lo is not None else v / 10.0
        hi = hi if hi is not None else v * 10.0
        return lo, hi, lo > 0 and hi / lo > 20.0
    span = abs(v) + 1.0
    return (lo if lo is not None else max(0.0, v - span)), (hi if hi is not None else v + span), False


def _format(value: float, integer: bool) -> str:
    if integer:
        return str(int(round(value)))
    if not math.isfinite(value):
        raise NicbenchError(f"refusing to write a non-finite fitted value ({value})")
    text = repr(float(f"{value:.6g}"))  # a TOML float: always has '.' or 'e'
    return text if any(c in text for c in ".e") else text + ".0"


_OUR_PREFIX = re.compile(
    r"^(fitted: [^;]*? calibration set \(\d+ values\)"
    r"|derived from references? [^:]+: solved on \d+ calibration points? of [^;]*?, as many as free parameters "
    r"\(not a fit\))(;\s*)?"
)


def merge_provenance(old: str, new: str) -> str:
    """`new`, keeping what the old provenance said besides "fitted:" (the hypothesis, the source
    figures) so repeated calibrations do not pile up prefixes."""
    rest = _OUR_PREFIX.sub("", old.strip())
    if rest.lower().startswith("fitted:"):
        rest = rest[len("fitted:") :].strip()
    return f"{new}; {rest}" if rest else new


def write_fitted(path: str | Path, values: dict[str, float], provenance: str) -> None:
    """Set `value` and `provenance` of each named `[param.NAME]` table in the file (text edit)."""
    path = Path(path)
    text = path.read_text()
    params = read_params(path)
    lines = text.splitlines(keepends=True)
    header = re.compile(r"^\s*\[(?P<name>[^\[\]]+)\]\s*(#.*)?$")
    done: set[str] = set()
    i = 0
    while i < len(lines):
        m = header.match(lines[i].rstrip("\r\n"))
        name = _param_name(m["name"]) if m else None
        if name is None or name not in values:
            i += 1
            continue
        # The table body: up to the next header.
        j = i + 1
        while j < len(lines) and not header.match(lines[j].rstrip("\r\n")):
            j += 1
        body = lines[i + 1 : j]
        new_value = _format(values[name], params[name].integer if name in params else False)
        body, found_value = _set_key(body, "value", new_value)
        prov = merge_provenance(params[name].provenance if name in params else "", provenance)
        body, found_prov = _set_key(body, "provenance", json.dumps(prov, ensure_ascii=False))
        if not found_value:
            raise NicbenchError(f"{path}: [param.{name}] has no single-line `value = ...` to update")
        if not found_prov:
            body = _insert_after(body, "value", f"provenance = {json.dumps(prov, ensure_ascii=False)}\n")
        lines[i + 1 : j] = body
        done.add(name)
        i = i + 1 + len(body)
    missing = sorted(set(values) - done)
    if missing:
        raise NicbenchError(f"{path}: no [param.NAME] table for {', '.join(missing)}")
    new_text = "".join(lines)
    with atomic_output(path) as tmp:
        tmp.write_text(new_text)
        profiles.load(tmp)  # never write a file the models cannot read


def _param_name(header: str) -> str | None:
    parts = [p.strip().strip('"') for p in header.split(".")]
    if len(parts) == 2 and parts[0] == "param":
        return parts[1]
    return None


def _set_key(body: list[str], key: str, rendered: str) -> tuple[list[str], bool]:
    pattern = re.compile(rf"^(?P<indent>\s*){re.escape(key)}\s*=\s*(?P<rest>.*?)(?P<nl>\r?\n)?$")
    out, found = [], False
    for line in body:
        m = pattern.match(line)
        if m and not found:
            rest = m["rest"]
            comment = ""
            if key == "value" and "#" in rest:  # keep a trailing comment on numeric lines
                comment = "  " + rest[rest.index("#") :]
            out.append(f"{m['indent']}{key} = {rendered}{comment}{m['nl'] or ''}")
            found = True
        else:
            out.append(line)
    return out, found


def _insert_after(body: list[str], key: str, line: str) -> list[str]:
    for k, existing in enumerate(body):
        if re.match(rf"^\s*{re.escape(key)}\s*=", existing):
            return body[: k + 1] + [line] + body[k + 1 :]
    return [line] + body


def render_profile(
    header: dict[str, str],
    fitted_on: dict[str, Any] | None,
    params: list[dict[str, Any]],
    device: dict[str, Any] | None = None,
) -> str:
    """A whole profile as TOML text: `header` (name, kind, description, optional calibration_study),
    the optional `[fitted_on]` record of a few-shot fit, one `[param.NAME]` table per row (name,
    value, unit, provenance, integer, optional bounds), then the base device's `[device.SECTION]`
    tables unchanged (capability lists a fit does not touch; the model that owns a section reads it).
    Strings are JSON-escaped, which TOML basic strings accept."""
    q = lambda s: json.dumps(str(s), ensure_ascii=False)  # noqa: E731
    out = [f"# {header.get('description', header['name'])}\n"]
    if fitted_on:
        out.append(
            f"# Few-shot fit from {fitted_on['base']} (see [fitted_on]); `nicbench calibrate "
            f"{header['name']}` repeats it.\n"
        )
    out.append("\n")
    for key in ("name", "kind", "calibration_study", "description"):
        if header.get(key):
            out.append(f"{key} = {q(header[key])}\n")
    if fitted_on:
        out.append("\n[fitted_on]\n")
        out.append(f"base = {q(fitted_on['base'])}\nstudy = {q(fitted_on['study'])}\n")
        for key in ("measurements", "parameters"):
            items = "".join(f"    {q(x)},\n" for x in fitted_on[key])
            out.append(f"{key} = [\n{items}]\n" if items else f"{key} = []\n")
    for row in params:
        out.append(f"\n[param.{row['name']}]\n")
        value = row["value"]
        literal = str(int(round(value))) if row.get("integer") else repr(float(value))
        if not row.get("integer") and not any(c in literal for c in ".en"):
            literal += ".0"
        out.append(f"value = {literal}\n")
        out.append(f"unit = {q(row['unit'])}\nprovenance = {q(row['provenance'])}\n")
        if row.get("bounds"):
            lo, hi = row["bounds"]
            out.append(f"bounds = [{_format(lo, False)}, {_format(hi, False)}]\n")
    if device:
        import tomli_w

        out.append("\n" + tomli_w.dumps({"device": device}))
    return "".join(out)
