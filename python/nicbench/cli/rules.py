"""`nicbench rules ...` and `nicbench classify`: rule files and the software classifier (fronts `nicbench.rules`).

`rules check | convert | gen` validate, rewrite and generate rule files; `classify` runs a capture
through the software classifier with a rule file.
"""

from __future__ import annotations

import click
from rich.table import Table

from nicbench.cli.common import (
    InterfaceName,
    IntRange,
    NonEmptyPath,
    WholeHelpGroup,
    emit_json,
    first_set_off_default,
    json_option,
    one_line_text,
    progress_bar,
    spinner,
    stdout_console,
)
from nicbench.ovsflows import load_openflow, openflow_summary
from nicbench.rules import (
    MAX_GENERATED_RULES,
    RULE_SET_KINDS,
    SYNTAXES,
    check_rules,
    classify_pcap,
    convert_rules,
    generate_rules,
)
from nicbench.units import parse_count

syntax_option = click.option(
    "--syntax",
    type=click.Choice(SYNTAXES),
    default=None,
    help="Rule syntax (default: from the extension or the first line).",
)


@click.group(cls=WholeHelpGroup)
def rules() -> None:
    """Check, convert and generate rule files (testpmd, tc flower, ClassBench); summarise OpenFlow files."""


@rules.command("check")
@click.argument("file", type=NonEmptyPath(dir_okay=False))
@syntax_option
@click.option("--keep-going", is_flag=True, help="Report every error, not just the first.")
@json_option
def check(file: str, syntax: str | None, keep_going: bool, as_json: bool) -> None:
    """Validate FILE and count its rules by group, match type and action."""
    with spinner(f"reading {file}", enabled=not as_json):
        report = check_rules(file, syntax, keep_going)
    if as_json:
        # An error under --json carries "error" and "exit_code" as every command's does (README), here
        # beside the report and its list of errors.
        first = {"error": one_line_text(report["errors"][0]), "exit_code": 2} if report["errors"] else {}
        emit_json({**report, **first})
    elif not report["errors"]:
        render_summary(report)
    if report["errors"]:
        # Under --json too: the report (with its errors) is on stdout, the error lines on stderr.
        for error in report["errors"]:
            click.echo(f"nicbench: error: {one_line_text(error)}", err=True)
        raise SystemExit(2)


def render_summary(report: dict) -> None:
    s = report["summary"]
    stdout_console.print(
        f"{report['file']}: [bold]{s['rules']:,}[/] rules ({report['syntax']}), "
        f"{len(s['groups'])} group(s), {s['priorities']} "
        f"priorit{'y' if s['priorities'] == 1 else 'ies'}"
    )
    if report.get("widened"):
        stdout_console.print(
            f"[yellow]{report['widened']:,} ClassBench lines have port limits on a wildcard "
            "protocol, which rte_flow cannot express: those rules match more[/]"
        )
    for title, key in (("group", "groups"), ("match type", "match_types"), ("action", "actions")):
        table = Table(title_justify="left")
        table.add_column(title)
        table.add_column("rules", justify="right")
        for name, count in sorted(s[key].items(), key=lambda kv: (-kv[1], str(kv[0]))):
            table.add_row(str(name), f"{count:,}")
        stdout_console.print(table)


@rules.command("openflow")
@click.argument("file", type=NonEmptyPath(dir_okay=False))
@json_option
def openflow(file: str, as_json: bool) -> None:
    """Read an Open vSwitch OpenFlow file (ovs-ofctl add-flows or dump-flows) and count its rules
    per table; they run on the virtual OVS datapath (nicbench vswitch --openflow FILE)."""
    with spinner(f"reading {file}", enabled=not as_json):
        summary = {"file": file, **openflow_summary(load_openflow(file))}
    if as_json:
        emit_json(summary)
        return
    stdout_console.print(
        f"{file}: [bold]{summary['rules']:,}[/] OpenFlow rules in {len(summary['tables'])} table(s), "
        f"{summary['priorities']} priorit{'y' if summary['priorities'] == 1 else 'ies'}; "
        f"run them with 'nicbench vswitch --openflow {file}'"
    )
    for title, key in (("table", "tables"), ("action", "actions")):
        table = Table(title_justify="left")
        table.add_column(title)
        table.add_column("rules", justify="right")
        for name, count in summary[key].items():
            table.add_row(str(name), f"{count:,}")
        stdout_console.print(table)


@rules.command("convert")
@click.argument("file", type=NonEmptyPath(dir_okay=False))
@click.option("--to", "to", type=click.Choice(["testpmd", "tc"]), required=True)
@click.option(
    "-o",
    "--output",
    type=NonEmptyPath(dir_okay=False),
    default="-",
    show_default=True,
    help="Output file ('-' for stdout).",
)
@syntax_option
@click.option(
    "--port",
    type=IntRange(0, 65535),
    default=0,
    show_default=True,
    help="testpmd port id to write (0-65535; with --to testpmd).",
)
@click.option(
    "--dev",
    type=InterfaceName(),
    default="eth0",
    show_default=True,
    help="tc device to attach filters to (with --to tc).",
)
@json_option
def convert(file: str, to: str, output: str, syntax: str | None, port: int, dev: str, as_json: bool) -> None:
    """Rewrite FILE in another syntax."""
    _refuse_unused_target_option(to)
    if output == "-":
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            with spinner(f"converting {file}", enabled=not as_json):
                count = convert_rules(file, to, str(out), syntax, port, dev)
            text = out.read_text()
        if as_json:
            emit_json({"rules": count, "to": to, "text": text})
        else:
            click.echo(text, nl=bool(text) and not text.endswith("\n"))
        return
    with spinner(f"converting {file}", enabled=not as_json):
        count = convert_rules(file, to, output, syntax, port, dev)
    if as_json:
        emit_json({"rules": count, "to": to, "output": output})
    else:
        stdout_console.print(f"wrote {count:,} rules to {output} ({to})")


def _refuse_unused_target_option(to: str) -> None:
    """--port names a testpmd port and --dev a tc device: given for the other syntax, it would be
    silently ignored."""
    unused, used = ("dev", "--to tc") if to == "testpmd" else ("port", "--to testpmd")
    given = first_set_off_default((unused,))
    if given is not None:
        raise click.UsageError(f"{given[0]} applies to {used} only, not --to {to}", click.get_current_context())


@rules.command("gen")
@click.option(
    "--kind",
    type=click.Choice(RULE_SET_KINDS),
    default="exact5",
    show_default=True,
    help="exact5: exact 5-tuples (TCP or UDP); exact5_tcp: TCP only (one mask per table, as the PAM'21 "
    "authors' rules); acl/fw/ipc: ClassBench-like prefixes and port ranges.",
)
@click.option("--count", default="1000", show_default=True, help="Number of rules (1000, 10k, 1M; at most 4,194,304).")
@click.option(
    "--groups",
    type=IntRange(0, 4096),
    default=0,
    show_default=True,
    help="0: everything in group 0 (root table); T: spread over groups 1..T chained by jumps.",
)
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@click.option(
    "--to",
    "to",
    type=click.Choice(["testpmd", "tc"]),
    default="testpmd",
    show_default=True,
    help="Output syntax; tc is refused: the rules end in 'queue index N', which tc flower cannot express.",
)
@click.option("-o", "--output", type=NonEmptyPath(dir_okay=False), required=True)
@json_option
def gen(kind: str, count: str, groups: int, seed: int, to: str, output: str, as_json: bool) -> None:
    """Generate a seeded synthetic rule set (ClassBench-like, or the PAM'21 table layout)."""
    n = parse_count(count, at_most=MAX_GENERATED_RULES, what="--count", at_least=1)
    with spinner(f"generating {n:,} {kind} rules", enabled=not as_json):
        written = generate_rules(kind, n, groups, output, seed=seed, to=to)
    # With --groups T the layout adds its own rules (a group-0 jump into group 1, the groups'
    # defaults): say so, so that the file's rule count is not mistaken for --count.
    layout = written - n
    if as_json:
        emit_json(
            {"rules": written, "kind": kind, "count": n, "layout_rules": layout, "groups": groups, "output": output}
        )
    elif layout:
        stdout_console.print(
            f"wrote {written:,} rules to {output}: {n:,} {kind} rules over groups 1..{groups}, "
            f"plus {layout:,} jump and default rules of the layout",
            soft_wrap=True,
        )
    else:
        stdout_console.print(
            f"wrote {written:,} {kind} rules over {max(groups, 1)} group(s) to {output}", soft_wrap=True
        )


@click.command()
@click.option("--rules", "rules_path", type=NonEmptyPath(dir_okay=False), required=True, help="Rule file.")
@click.option("--pcap", type=NonEmptyPath(dir_okay=False), required=True, help="Capture to classify.")
@click.option("--syntax", type=click.Choice(SYNTAXES), default=None, help="Rule syntax (default: detected).")
@click.option(
    "--top",
    type=IntRange(0, 1_000_000),
    default=20,
    show_default=True,
    help="Rules to list (most hits first; 0 to 1,000,000).",
)
@click.option(
    "--queues",
    "port_queues",
    type=IntRange(1, 65535),
    default=1,
    show_default=True,
    help="The port's rx queues: packets no rule sends anywhere go through its default RSS over 0..N-1.",
)
@json_option
def classify(rules_path: str, pcap: str, syntax: str | None, top: int, port_queues: int, as_json: bool) -> None:
    """Per-rule hits, per-queue packets and bytes (RSS resolved as the mlx5 PMD does), dropped and
    unmatched packets, and the rate achieved."""
    with progress_bar("classifying", total=None, enabled=not as_json, unit="packets") as update:
        report = classify_pcap(rules_path, pcap, syntax, progress=update, port_queues=port_queues)
    if as_json:
        emit_json(report)
        return
    n = max(report["packets"], 1)
    stdout_console.print(
        f"{report['packets']:,} packets through {report['rules_loaded']:,} rules in {report['elapsed_s']:.3f} s "
        f"([bold]{report['mpps']:.2f} Mpps[/], one core, parsing included)"
    )
    outcomes = Table(title="outcome", title_justify="left")
    outcomes.add_column("fate")
    outcomes.add_column("packets", justify="right")
    outcomes.add_column("share", justify="right")
    rows = [
        ("queue action", sum(report["queue_action_packets"].values())),
        ("rss", report["rss_packets"]),
        ("drop", report["dropped"]),
        ("port_id", report["port_id_packets"]),
        ("passthru", report["passthru"]),
        ("no fate action", report["no_fate"]),
        ("unmatched", report["unmatched"]),
    ]
    for name, count in rows:
        if count:
            outcomes.add_row(name, f"{count:,}", f"{count / n:.1%}")
    stdout_console.print(outcomes)
    # Queue and rss actions choose the queue; the port's RSS spreads only what no rule sends anywhere.
    queues = Table(
        title=f"rx queues (by the rules' actions; the rest by the port's default RSS over {report['port_queues']:,})",
        title_justify="left",
    )
    for col in ("queue", "packets", "bytes", "share"):
        queues.add_column(col, justify="right")
    for q, c in sorted(report["queues"].items(), key=lambda kv: int(kv[0])):
        queues.add_row(q, f"{c['packets']:,}", f"{c['bytes']:,}", f"{c['packets'] / n:.1%}")
    stdout_console.print(queues)
    hits = Table(title=f"rules hit ({len(report['rules'])}; top {top})", title_justify="left")
    for col in ("line", "group", "priority", "hits", "bytes"):
        hits.add_column(col, justify="right")
    for rule in sorted(report["rules"], key=lambda r: -r["hits"])[:top]:
        hits.add_row(
            str(rule["line"]), str(rule["group"]), str(rule["priority"]), f"{rule['hits']:,}", f"{rule['bytes']:,}"
        )
    stdout_console.print(hits)
    print_rules_met(report, rules_path)


def print_rules_met(report: dict, rules_path: str) -> None:
    """How many of the user's rules the traffic met; a warning when only catch-alls did."""
    total, met = report["rules_total"], report["rules_matched"]
    with_fields, with_fields_met = report["rules_with_fields"], report["rules_with_fields_matched"]
    stdout_console.print(
        f"rules matched: [bold]{met:,} of {total:,}[/] ({met / max(total, 1):.1%}); with a match field: "
        f"{with_fields_met:,} of {with_fields:,}",
        soft_wrap=True,
    )
    if with_fields and not with_fields_met:
        stdout_console.print(
            f"[yellow]none of the {with_fields:,} rules with a match field met this traffic"
            f"{' (only catch-alls did)' if met else ''}: `nicbench gen --for-rules {rules_path}` writes traffic "
            "that meets them[/]",
            soft_wrap=True,
        )


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "rules": "Check, convert and generate rule files (testpmd, tc flower, ClassBench); summarise OpenFlow files.",
    "classify": (
        "Per-rule hits, per-queue packets and bytes (RSS resolved as the mlx5 PMD does), dropped and "
        "unmatched packets, and the rate achieved."
    ),
}
COMMANDS = [rules, classify]
