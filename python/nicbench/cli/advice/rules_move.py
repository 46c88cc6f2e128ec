"""The rule-file change of the "rules in a non-root table" what-if: the user's root-table (group 0)
rules moved to group 1, behind one group-0 rule per port that jumps there — what the PAM'21
authors' Tables 1-X setup installs (seed 000: a jump from Table 0, then the rules in Table 1)."""

from __future__ import annotations

import re
from pathlib import Path

from nicbench.rules import check_rules, convert_rules

_CREATE = re.compile(r"^flow create (\d+) ")


def movable(rules_path: str, syntax: str | None = None) -> str | None:
    """Why the file's rules cannot be moved as a whole (None: they can): only a flat root table is
    (every rule in group 0, no jump), so that moving it keeps what each packet matches."""
    summary = check_rules(rules_path, syntax)["summary"]
    groups = {int(g) for g in summary["groups"]}
    if groups != {0}:
        return f"the rules already use groups {', '.join(str(g) for g in sorted(groups))}"
    if "jump" in summary["actions"]:
        return "the rules jump between groups"
    return None


def move_to_group_1(rules_path: str, out_dir: Path, syntax: str | None = None) -> Path:
    """Write `<out_dir>/<stem>.group1.flow`: the rules (testpmd syntax) in group 1, behind a catch-all
    group-0 jump per port. Returns its path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    flat = out_dir / f".{Path(rules_path).stem}.testpmd.flow"
    convert_rules(rules_path, "testpmd", str(flat), syntax)
    moved: list[str] = []
    ports: list[str] = []
    for line in flat.read_text().splitlines():
        m = _CREATE.match(line)
        if not m:
            continue
        if m[1] not in ports:
            ports.append(m[1])
        moved.append(_CREATE.sub(f"flow create {m[1]} group 1 ", line, count=1))
    flat.unlink()
    jumps = [f"flow create {p} group 0 ingress pattern eth / end actions jump group 1 / end" for p in ports]
    out = out_dir / f"{Path(rules_path).stem}.group1.flow"
    out.write_text("\n".join(jumps + moved) + "\n")
    return out
