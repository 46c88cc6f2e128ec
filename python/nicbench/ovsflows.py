"""Open vSwitch flows: OpenFlow rule files (`ovs-ofctl add-flows` / `dump-flows`) and datapath
flows (`ovs-appctl dpctl/dump-flows`), read and written by the Rust parsers in
`nicbench_rules::openflow`.

Flows are plain dicts (the serde form of `OfRule` / `DpFlow`): match fields are
`{"field": "nw_src", "value": int, "mask": int}` with values right-aligned in the field's
width. Bad syntax raises `nicbench.RuleError` naming `file:line:col`.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.inputs import refuse_special_file

__all__ = ["format_dpflows", "load_openflow", "openflow_summary", "parse_dpflows"]


def load_openflow(path: str | Path) -> list[dict]:
    """Every rule of an OpenFlow file, in file order: `{"line": N, "rule": {...}}`. A file without
    rules (empty, or blank lines and comments only) is refused, as for every rule file."""
    refuse_special_file(path, "rule file")
    try:
        rules = json.loads(_native.openflow_load(str(path)))
    except NicbenchError:
        other = _rte_flow_syntax(path)
        if other:  # the OpenFlow parser would only say "missing 'actions='" at its first line
            raise NicbenchError(
                f"{path}: {other} rules, not OpenFlow (ovs-ofctl syntax): 'nicbench rules check "
                f"{path}' reads them, and classify/simulate --rules run them"
            ) from None
        raise
    if not rules:
        raise NicbenchError(
            f"{path}: no rules in the file (it is empty or holds only blank lines and comments); "
            "a rule file needs at least one rule"
        )
    return rules


# The first words of a rule in the rte_flow syntaxes nicbench reads (nicbench_rules::detect).
_RTE_FLOW_STARTS = (("flow create", "testpmd 'flow create'"), ("tc filter", "tc flower"), ("@", "ClassBench"))


def _rte_flow_syntax(path: str | Path) -> str | None:
    """The rte_flow syntax of a file's first rule line, if it is one of them (for a better error)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                text = line.strip().lstrip("\ufeff")
                if text and not text.startswith("#"):
                    return next((name for start, name in _RTE_FLOW_STARTS if text.startswith(start)), None)
    except OSError:
        return None
    return None


def parse_dpflows(text: str, source: str = "<text>") -> list[dict]:
    """The flows of `dpctl/dump-flows` output (ports as numbers: dump with `--no-names`)."""
    return json.loads(_native.dpflows_parse(text, source))


def format_dpflows(flows: list[dict]) -> str:
    """Flows (as `parse_dpflows` returns them) in `dpctl/dump-flows` syntax, one a line."""
    return _native.dpflows_format(json.dumps(flows))


def openflow_summary(rules: list[dict]) -> dict:
    """Rules per table, distinct priorities, and rules per action kind (a rule counts once per kind)."""
    tables = Counter(r["rule"]["table"] for r in rules)
    actions: Counter[str] = Counter()
    for r in rules:
        actions.update({a["action"] for a in r["rule"]["actions"]})
    return {
        "rules": len(rules),
        "tables": dict(sorted(tables.items())),
        "priorities": len({r["rule"]["priority"] for r in rules}),
        "actions": dict(sorted(actions.items(), key=lambda kv: (-kv[1], kv[0]))),
    }
