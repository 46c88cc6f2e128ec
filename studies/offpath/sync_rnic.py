#!/usr/bin/env python3
"""Copy the parameters the ConnectX-6 RNIC shares with the BlueField-2 into profiles/connectx6-rnic.toml.

The BlueField-2's NIC cores are a ConnectX-6 (seed 004 §3.1: "they share the same NIC cores"), so the
RNIC baseline of the offpath study has the BlueField-2's NIC-core, network, client and host parameters;
only the switch, PCIe1, the SoC and the per-endpoint pools differ. `nicbench calibrate bluefield2` fits
BlueField-2 scenarios only and writes profiles/bluefield2.toml; this script then copies the shared values
(value and provenance) so that every SNIC-vs-RNIC comparison runs both sides with the same cores.

    python3 studies/offpath/sync_rnic.py           # rewrite profiles/connectx6-rnic.toml
    python3 studies/offpath/sync_rnic.py --check   # exit 1 listing the shared parameters that differ

Only the `value` and `provenance` lines of the shared `[param.NAME]` tables change; every other byte of
the RNIC profile stays (its own parameters: has_soc, pcie_switch_one_way_ns, pcie1_one_way_ns, the
unused SoC ones).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tomllib
from pathlib import Path

PROFILES = Path(__file__).resolve().parents[2] / "profiles"
SOURCE, TARGET = PROFILES / "bluefield2.toml", PROFILES / "connectx6-rnic.toml"

# The RNIC's own parameters: everything the off-path SmartNIC adds to a ConnectX-6 (Fig. 2a vs 2c).
OWN = {
    "has_soc",
    "pcie_switch_one_way_ns",
    "pcie1_one_way_ns",
    "nic_core_endpoint_fraction",
    "nic_stall_shared_fraction",
    "loopback_ns",
}
# What the BlueField-2's provenance says about the copy, and what the RNIC's says instead.
SOURCE_NOTE = " (the RNIC shares it: studies/offpath/sync_rnic.py copies it to connectx6-rnic)"
TARGET_NOTE = (
    " (on bluefield2's points; the RNIC has the same ConnectX-6 NIC cores, seed §3.1: copied by "
    "studies/offpath/sync_rnic.py)"
)


def shared_names(source: dict) -> list[str]:
    """Every parameter but the RNIC's own and the SoC's (unused on the RNIC)."""
    return sorted(n for n in source["param"] if n not in OWN and not n.startswith("soc_"))


def expected(source: dict) -> dict[str, tuple[float, str]]:
    return {
        n: (float(source["param"][n]["value"]), source["param"][n]["provenance"].replace(SOURCE_NOTE, TARGET_NOTE))
        for n in shared_names(source)
    }


def differences(source: dict, target: dict) -> list[str]:
    out = []
    for name, (value, provenance) in expected(source).items():
        t = target["param"].get(name)
        if t is None:
            out.append(f"{name}: missing")
        elif float(t["value"]) != value or t["provenance"] != provenance:
            out.append(f"{name}: {t['value']!r} ({t['provenance'][:40]}...) vs bluefield2 {value!r}")
    return out


def _literal(value: float) -> str:
    text = repr(float(value))
    return text if any(c in text for c in ".e") else text + ".0"


def rewrite(text: str, values: dict[str, tuple[float, str]]) -> str:
    """Set `value` and `provenance` of each named `[param.NAME]` table (text edit, nothing else moves)."""
    parts = re.split(r"(?m)^(?=\[param\.)", text)
    done = set()
    for i, part in enumerate(parts):
        m = re.match(r"\[param\.([A-Za-z0-9_]+)\]", part)
        if not m or m.group(1) not in values:
            continue
        value, provenance = values[m.group(1)]
        # The lambdas run inside re.sub, in this iteration (B023 is about calls after the loop moved on).
        part = re.sub(r"(?m)^value = .*$", lambda _: f"value = {_literal(value)}", part, count=1)  # noqa: B023
        part = re.sub(
            r"(?m)^provenance = .*$",
            lambda _: "provenance = " + json.dumps(provenance, ensure_ascii=False),  # noqa: B023
            part,
            count=1,
        )
        parts[i] = part
        done.add(m.group(1))
    missing = sorted(set(values) - done)
    if missing:
        raise SystemExit(f"sync_rnic: {TARGET.name} has no [param.NAME] table for {', '.join(missing)}")
    return "".join(parts)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only report differences (exit 1 if any)")
    args = ap.parse_args()
    source = tomllib.loads(SOURCE.read_text())
    target = tomllib.loads(TARGET.read_text())
    diff = differences(source, target)
    if args.check:
        for d in diff:
            print(d)
        return 1 if diff else 0
    new = rewrite(TARGET.read_text(), expected(source))
    if differences(source, tomllib.loads(new)):
        raise SystemExit("sync_rnic: the rewrite did not take (a value or provenance line spans several lines?)")
    TARGET.write_text(new)
    print(f"copied {len(diff)} changed of {len(expected(source))} shared parameters into {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
