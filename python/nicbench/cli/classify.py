"""`nicbench classify`: run a capture through the software classifier with a rule file."""

from __future__ import annotations

import click
from rich.table import Table

from nicbench.cli.common import emit_json, json_option, progress_bar, stdout_console
from nicbench.rules import SYNTAXES, classify_pcap


@click.command()
@click.option("--rules", "rules_path", type=click.Path(dir_okay=False), required=True, help="Rule file.")
@click.option("--pcap", type=click.Path(dir_okay=False), required=True, help="Capture to classify.")
@click.option("--syntax", type=click.Choice(SYNTAXES), default=None, help="Rule syntax (default: detected).")
@click.option("--top", type=int, default=20, show_default=True, help="Rules to list (most hits first).")
@json_option
def classify(rules_path: str, pcap: str, syntax: str | None, top: int, as_json: bool) -> None:
    """Per-rule hits, per-queue counts, dropped and unmatched packets, and the rate achieved."""
    with progress_bar("classifying", total=None, enabled=not as_json) as update:
        report = classify_pcap(rules_path, pcap, syntax, progress=update)
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
    rows = [(f"queue {q}", c) for q, c in sorted(report["queues"].items(), key=lambda kv: int(kv[0]))]
    rows += [("rss", report["rss_packets"]), ("drop", report["dropped"]), ("port_id", report["port_id_packets"]),
             ("passthru", report["passthru"]), ("no fate action", report["no_fate"]),
             ("unmatched", report["unmatched"])]
    for name, count in rows:
        if count:
            outcomes.add_row(name, f"{count:,}", f"{count / n:.1%}")
    stdout_console.print(outcomes)
    hits = Table(title=f"rules hit ({len(report['rules'])}; top {top})", title_justify="left")
    for col in ("line", "group", "priority", "hits", "bytes"):
        hits.add_column(col, justify="right")
    for rule in sorted(report["rules"], key=lambda r: -r["hits"])[:top]:
        hits.add_row(str(rule["line"]), str(rule["group"]), str(rule["priority"]), f"{rule['hits']:,}",
                     f"{rule['bytes']:,}")
    stdout_console.print(hits)
