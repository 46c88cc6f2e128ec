"""Rule files: check, convert and generate (testpmd, tc flower, ClassBench)."""

from __future__ import annotations

import json

from nicbench import _native

__all__ = ["check_rules", "classify_pcap", "convert_rules", "generate_rules", "RULE_SET_KINDS", "SYNTAXES"]

RULE_SET_KINDS = ("exact5", "acl", "fw", "ipc")
SYNTAXES = ("testpmd", "tc", "classbench")


def check_rules(path: str, syntax: str | None = None, keep_going: bool = False) -> dict:
    """Parse a rule file. Returns `errors` (first only, or all with `keep_going`) and a `summary`:
    rules per group, per match type and per action."""
    return json.loads(_native.rules_check(str(path), syntax, keep_going))


def convert_rules(path: str, to: str, out: str, syntax: str | None = None, port: int = 0, dev: str = "eth0") -> int:
    """Rewrite a rule file in another syntax (`testpmd` or `tc`); returns the number of rules."""
    return _native.rules_convert(str(path), to, str(out), syntax, port, dev)


def generate_rules(kind: str, count: int, groups: int, out: str, seed: int = 1, to: str = "testpmd",
                   port: int = 0, dev: str = "eth0") -> int:
    """Write a seeded synthetic rule set (ClassBench-like or the PAM'21 layout); returns the rule count.

    `groups=0`: all `count` exact 5-tuple rules in the root table (group 0). `groups=T >= 1`: rules spread
    uniformly over groups 1..T chained by jumps, a group-0 rule jumping to group 1, and a lowest-priority
    default in each group."""
    return _native.rules_generate(kind, count, groups, seed, str(out), to, port, dev)


def classify_pcap(rules_path: str, pcap: str, syntax: str | None = None, progress=None, *,
                  port_queues: int = 1) -> dict:
    """Classify every packet of `pcap` with the software classifier loaded with `rules_path`, on a port
    with `port_queues` rx queues.

    Returns packets, bytes, `queues` (queue → {packets, bytes}: what every rx queue received, with `rss`
    actions resolved per packet as the mlx5 PMD does and the packets no rule sends anywhere spread by the
    port's default RSS over `port_queues`), `queue_action_packets` (queue → packets sent by `queue`
    actions), dropped, unmatched, rss/port_id/passthru counts, `rules` (id, line, group, priority, hits,
    bytes for every rule that was hit), elapsed_s and mpps."""
    report = json.loads(_native.classify_pcap(str(rules_path), str(pcap), syntax, progress, port_queues))
    report["queue_action_packets"] = {str(q): n for q, n in report.pop("per_queue_packets").items()}
    report["queues"] = {str(q): c for q, c in report["queues"].items()}
    lines = {int(k): v for k, v in report.pop("rule_lines").items()}
    for rule in report["rules"]:
        rule["line"] = lines.get(rule["rule_id"])
    return report
