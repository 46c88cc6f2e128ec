#!/usr/bin/env python3
"""Brings a profile's inherited parameters up to date with their base profile after the base was refit.

    python scripts/sync_inherited.py PROFILE [PROFILE...]

A parameter whose provenance reads "inherited from <base>: <provenance>" takes the base's current value
and provenance (the test `test_provenance.py` fails while a copy is stale). Only those parameters'
`value` and `provenance` lines change; the rest of the file, comments included, is kept as it is. A
few-shot profile (one with `[fitted_on]`) is refit with `nicbench calibrate PROFILE` instead, which also
refits its own parameters against the new base. Profiles are read from `$NICBENCH_PROFILES` if set, else
the checkout's `profiles/`. Prints each parameter it changed; exits 2 on bad input.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from pathlib import Path

PROFILES = Path(os.environ.get("NICBENCH_PROFILES") or Path(__file__).resolve().parent.parent / "profiles")
INHERITED = "inherited from "


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def sync(name: str) -> list[str]:
    path = PROFILES / f"{name}.toml"
    text = path.read_text()
    doc = tomllib.loads(text)
    if "fitted_on" in doc:
        raise ValueError(f"{path}: a few-shot profile; refit it with `nicbench calibrate {name}`")
    changed = []
    for pname, p in doc.get("param", {}).items():
        prov = p.get("provenance", "")
        if not prov.startswith(INHERITED):
            continue
        base = prov[len(INHERITED) :].partition(": ")[0]
        b = tomllib.loads((PROFILES / f"{base}.toml").read_text())["param"].get(pname)
        if b is None:
            raise ValueError(f"{path}: {pname} is inherited from {base}, which has no {pname}")
        new_prov = b["provenance"] if b["provenance"].startswith(INHERITED) else f"{INHERITED}{base}: {b['provenance']}"
        if b["value"] == p["value"] and new_prov == prov:
            continue
        block = re.compile(
            rf"(^\[param\.{re.escape(pname)}\]\n(?:(?!\[).*\n)*?)value = [^\n]*\n((?:(?!\[).*\n)*?)"
            rf"provenance = [^\n]*\n",
            re.M,
        )
        # The lambda runs inside subn, in this iteration (B023 is about calls after the loop moved on).
        text, n = block.subn(
            lambda m: f"{m[1]}value = {b['value']!r}\n{m[2]}provenance = {_toml_string(new_prov)}\n",  # noqa: B023
            text,
            count=1,
        )
        if n != 1:
            raise ValueError(f"{path}: cannot find the value and provenance lines of [param.{pname}]")
        changed.append(f"{name}.{pname}: {p['value']!r} -> {b['value']!r}")
    if changed:
        path.write_text(text)
    return changed


def main(argv: list[str]) -> int:
    if not argv:
        print("nicbench: error: usage: sync_inherited.py PROFILE [PROFILE...]", file=sys.stderr)
        return 2
    try:
        for name in argv:
            for line in sync(name) or [f"{name}: up to date"]:
                print(line)
    except (OSError, ValueError, tomllib.TOMLDecodeError) as e:
        print(f"nicbench: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
