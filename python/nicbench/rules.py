"""Rule files: check, convert and generate (testpmd, tc flower, ClassBench)."""

from __future__ import annotations

import json

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.inputs import naming_capture

__all__ = [
    "check_rules",
    "classify_pcap",
    "convert_rules",
    "generate_rules",
    "MAX_GENERATED_RULES",
    "RULE_SET_KINDS",
    "SYNTAXES",
]

# The generated rule-set kinds, as the rules crate names them (`RuleSetKind::ALL`).
RULE_SET_KINDS = tuple(_native.RULE_SET_KINDS)
SYNTAXES = ("testpmd", "tc", "classbench")

# The largest generated rule set (nicbench_rules::generate::MAX_RULES, 4 Mi rules): 2x the largest set
# the studies sweep (2M rules, PAM'21 Table 1); the set is built in memory before it is written, ~1.9 GB
# and about a minute at the cap (a bigger count was a Rust abort allocating terabytes, issue 17).
MAX_GENERATED_RULES: int = _native.MAX_GENERATED_RULES
# Memory a generated rule takes while the set is built [bytes]: measured, peak RSS of
# `nicbench rules gen --count 1M` minus that of `--count 100k` (463 MB - 64 MB), over 900k rules.
GENERATED_RULE_BYTES = 440


def check_rules(path: str, syntax: str | None = None, keep_going: bool = False) -> dict:
    """Parse a rule file. Returns `errors` (first only, or all with `keep_going`) and a `summary`:
    rules per group, per match type and per action."""
    return json.loads(_native.rules_check(str(path), syntax, keep_going))


def lint_rules(path: str, pmd: str = "mlx5", syntax: str | None = None) -> dict:
    """The items and actions of a rule file that PMD `pmd` does not implement at all, per rule line:
    `{"pmd", "dpdk", "source", "unsupported": [{"line", "kind", "name"}]}` (DPDK's feature matrix for
    that PMD, `nicbench_rules::capabilities`)."""
    return json.loads(_native.rules_lint(str(path), syntax, pmd))


def convert_rules(path: str, to: str, out: str, syntax: str | None = None, port: int = 0, dev: str = "eth0") -> int:
    """Rewrite a rule file in another syntax (`testpmd` or `tc`); returns the number of rules."""
    return _native.rules_convert(str(path), to, str(out), syntax, port, dev)


def generate_rules(
    kind: str, count: int, groups: int, out: str, seed: int = 1, to: str = "testpmd", port: int = 0, dev: str = "eth0"
) -> int:
    """Write a seeded synthetic rule set (ClassBench-like or the PAM'21 layout); returns the rule count.

    `groups=0`: all `count` exact 5-tuple rules in the root table (group 0). `groups=T >= 1`: rules spread
    uniformly over groups 1..T chained by jumps, a group-0 rule jumping to group 1, and a lowest-priority
    default in each group.

    At most MAX_GENERATED_RULES rules; `to="tc"` is refused (see the message): the generated rules
    steer to queues, an action tc flower has not."""
    if count > MAX_GENERATED_RULES:
        raise NicbenchError(
            f"rules gen: {count:,} rules is more than the {MAX_GENERATED_RULES:,} a rule set may "
            f"hold (the rules are built in memory, ~{GENERATED_RULE_BYTES} B each, before writing)"
        )
    if to == "tc":
        raise NicbenchError(
            "rules gen --to tc: generated rules end in 'queue index N' (steering to a receive "
            "queue), which tc flower cannot express; generate testpmd rules (--to testpmd)"
        )
    return _native.rules_generate(kind, count, groups, seed, str(out), to, port, dev)


def classify_pcap(
    rules_path: str, pcap: str, syntax: str | None = None, progress=None, *, port_queues: int = 1
) -> dict:
    """Classify every packet of `pcap` with the software classifier loaded with `rules_path`, on a port
    with `port_queues` rx queues.

    Returns packets, bytes, `queues` (queue → {packets, bytes}: what every rx queue received, with `rss`
    actions resolved per packet as the mlx5 PMD does and the packets no rule sends anywhere spread by the
    port's default RSS over `port_queues`), `queue_action_packets` (queue → packets sent by `queue`
    actions), dropped, unmatched, rss/port_id/passthru counts, `rules` (id, line, group, priority, hits,
    bytes for every rule that was hit), `rules_total` and `rules_matched` (rules with a hit),
    `rules_with_fields` and `rules_with_fields_matched` (the same, without the catch-alls: rules that
    constrain no field, such as a layout's defaults), elapsed_s and mpps."""
    with naming_capture(pcap):
        report = json.loads(_native.classify_pcap(str(rules_path), str(pcap), syntax, progress, port_queues))
    report["queue_action_packets"] = {str(q): n for q, n in report.pop("per_queue_packets").items()}
    report["queues"] = {str(q): c for q, c in report["queues"].items()}
    lines = {int(k): v for k, v in report.pop("rule_lines").items()}
    for rule in report["rules"]:
        rule["line"] = lines.get(rule["rule_id"])
    catch_all = set(report.pop("catch_all_lines"))
    report["rules_total"] = report["rules_loaded"]
    report["rules_matched"] = len(report["rules"])
    report["rules_with_fields"] = report["rules_total"] - len(catch_all)
    report["rules_with_fields_matched"] = sum(1 for r in report["rules"] if r["line"] not in catch_all)
    return report
