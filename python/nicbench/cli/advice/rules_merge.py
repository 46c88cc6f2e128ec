"""The rule-file change of the "merge chained tables" what-if: a chain of non-root groups, each
ending in a catch-all jump to the next (the PAM'21 authors' Tables 1-X layout, and what
`nicbench rules gen --groups T` writes), merged into its first group with priorities that keep the
chain's meaning: the chain's rules match the same fields exactly (so no two meet the same packet,
and they share one priority; a repeated rule keeps its first, the one the chain met), and the last
group's catch-all ranks below them. A packet then meets the rule it met in the chain, in one lookup
(seed 000: spreading rules over 4 or more tables costs 23-88% of the throughput)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from nicbench.rules import convert_rules

_RULE = re.compile(
    r"^flow create (?P<port>\d+)(?: group (?P<group>\d+))?(?: priority (?P<priority>\d+))? ingress "
    r"pattern (?P<pattern>.*?) end actions (?P<actions>.*) end$"
)
_JUMP = re.compile(r"\bjump group (\d+)\b")
CATCH_ALL_PATTERN = "eth /"


@dataclass
class _Rule:
    port: str
    group: int
    priority: int
    pattern: str
    actions: str

    @property
    def catch_all(self) -> bool:
        return self.pattern.strip() == CATCH_ALL_PATTERN

    @property
    def jump(self) -> int | None:
        m = _JUMP.search(self.actions)
        return int(m[1]) if m else None

    def line(self, group: int, priority: int) -> str:
        where = f" group {group}" if group else ""
        return (
            f"flow create {self.port}{where} priority {priority} ingress pattern {self.pattern} end "
            f"actions {self.actions} end"
        )


def _parse(path: Path) -> list[_Rule] | str:
    rules = []
    for n, text in enumerate(path.read_text().splitlines(), 1):
        if not text.startswith("flow create "):
            continue
        m = _RULE.match(text.strip())
        if not m:
            return f"line {n} is not a rule this change can rewrite"
        rules.append(
            _Rule(m["port"], int(m["group"] or 0), int(m["priority"] or 0), m["pattern"].strip(), m["actions"])
        )
    return rules


def _chains(rules: list[_Rule]) -> dict[str, list[int]] | str:
    """Per port, the groups of its chain in order (why not, when the rules are not such a chain)."""
    chains: dict[str, list[int]] = {}
    for port in sorted({r.port for r in rules}):
        mine = [r for r in rules if r.port == port]
        root = [r for r in mine if r.group == 0]
        if len(root) != 1 or not root[0].catch_all or root[0].jump is None:
            return f"Table 0 of port {port} holds other rules than one catch-all jump"
        chain, seen = [root[0].jump], {0}
        while True:
            g = chain[-1]
            if g in seen:
                return f"group {g} is jumped to twice"
            seen.add(g)
            members = [r for r in mine if r.group == g]
            jumps = [r for r in members if r.jump is not None]
            if any(not r.catch_all for r in jumps) or len(jumps) > 1:
                return f"group {g} jumps on a match, not only on a miss"
            if jumps:
                last = jumps[0]
                if any(r.priority >= last.priority for r in members if r is not last):
                    return f"group {g}'s catch-all jump does not rank below its other rules"
                chain.append(last.jump)
                continue
            break
        if len(chain) < 2:
            return "one non-root table: nothing to merge"
        if {r.group for r in mine} != seen:
            return f"port {port} has rules in groups its chain does not reach"
        chains[port] = chain
    return chains


_VALUE = re.compile(r"\b(is|spec|mask|last|prefix) \S+")


def _one_exact_shape(rules: list[_Rule]) -> str | None:
    """Why rules of the chain might overlap (None: they cannot). Merged into one table they share
    one priority, so a packet must meet at most one of them: every rule matches the same fields
    exactly ('is'), TCP or UDP alike (two such rules meet the same packet only if equal)."""
    shapes = {_VALUE.sub(r"\1 _", r.pattern).replace("/ tcp ", "/ l4 ").replace("/ udp ", "/ l4 ") for r in rules}
    if len(shapes) != 1:
        return f"the chain's rules match {len(shapes)} different sets of fields (merged, they would need priorities)"
    if any(word in next(iter(shapes)).split() for word in ("spec", "mask", "last", "prefix")):
        return "the chain's rules match ranges or masks (merged, they would need priorities)"
    return None


def mergeable(rules_path: str, out_dir: Path, syntax: str | None = None) -> tuple[Path, list[int]] | str:
    """The merged file (`<out_dir>/<stem>.merged.flow`, testpmd syntax) and the chain it merged, or why
    the rules are not a chain of catch-all jumps this change keeps the meaning of."""
    out_dir.mkdir(parents=True, exist_ok=True)
    flat = out_dir / f".{Path(rules_path).stem}.testpmd.flow"
    convert_rules(rules_path, "testpmd", str(flat), syntax)
    try:
        rules = _parse(flat)
    finally:
        flat.unlink()
    if isinstance(rules, str):
        return rules
    chains = _chains(rules)
    if isinstance(chains, str):
        return chains
    why_not = _one_exact_shape([r for r in rules if r.group != 0 and not r.catch_all])
    if why_not:
        return why_not
    out: list[str] = []
    for port, chain in chains.items():
        first = chain[0]
        mine = [r for r in rules if r.port == port]
        out += [r.line(0, r.priority) for r in mine if r.group == 0]
        # In chain order, the first rule of a pattern wins (a later copy was never met); the rest
        # cannot overlap (one exact shape), so they share one priority, and the last group's own
        # catch-all (a fate, not a jump) ranks below them.
        seen_patterns: set[str] = set()
        catch_all = []
        for g in chain:
            for r in mine:
                if r.group != g or (r.catch_all and r.jump is not None):
                    continue
                if r.catch_all:
                    catch_all.append(r.line(first, 1))
                elif r.pattern not in seen_patterns:
                    seen_patterns.add(r.pattern)
                    out.append(r.line(first, 0))
        out += catch_all
    path = out_dir / f"{Path(rules_path).stem}.merged.flow"
    path.write_text("\n".join(out) + "\n")
    return path, next(iter(chains.values()))
