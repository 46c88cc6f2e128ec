"""`nicbench flows`: meter a capture (or a live interface) into bidirectional flow records.

Exit codes: 0 done; 2 bad input (one line `nicbench: error: ...` naming the capture and, for a
truncated one, the byte offset; no summary and no record file); 130 interrupted by Ctrl-C after every
active flow was flushed to the output, which is kept, complete up to its last record (one line
`nicbench: interrupted: ...` saying so).
"""

from __future__ import annotations

import os

import click
from rich.table import Table

from nicbench.cli.common import (
    Interrupted,
    IntRange,
    NonEmptyPath,
    emit_json,
    fail,
    json_option,
    one_line_text,
    progress_bar,
    stderr_console,
    stdout_console,
)
from nicbench.errors import NicbenchError
from nicbench.flows import COMPATS, FORMATS, format_for_path, meter


@click.command()
@click.argument("pcap", required=False, type=NonEmptyPath(dir_okay=False))
@click.option("--live", "iface", metavar="IFACE", default=None, help="Capture from this interface (AF_PACKET) instead.")
@click.option("--duration", default=None, help="Live: stop after this long (e.g. 10s); Ctrl-C also stops.")
@click.option(
    "-w",
    "--workers",
    type=IntRange(1, 64),
    default=1,
    show_default=True,
    help="Worker threads behind symmetric RSS (1: inline, no dispatcher).",
)
@click.option(
    "-o",
    "--out",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Record file (.csv, .jsonl or .parquet); without it records are only counted.",
)
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default=None, help="Record format (default: from -o suffix)."
)
@click.option(
    "--idle", default=None, help="One idle timeout for all protocols, e.g. 60s (default: TCP 60 s, UDP 30 s, ICMP 5 s)."
)
@click.option("--active", default=None, help="Status interval splitting long flows, e.g. 30s, or 'off' (default 60s).")
@click.option(
    "--compat",
    type=click.Choice(COMPATS),
    default="nicbench",
    show_default=True,
    help="Record semantics; 'argus' counts, keys and times out flows as Argus 3.0 does.",
)
@click.option(
    "--max-flows",
    default=None,
    help="Active flows kept at most (all workers), e.g. 1M (1 to 2,147,483,646); LRU eviction is counted.",
)
@click.option(
    "--ipfix", metavar="HOST:PORT", default=None, help="Also export the records over IPFIX/UDP to a collector."
)
@json_option
def flows(
    pcap: str | None,
    iface: str | None,
    duration: str | None,
    workers: int,
    out: str | None,
    fmt: str | None,
    idle: str | None,
    active: str | None,
    compat: str,
    max_flows: str | None,
    ipfix: str | None,
    as_json: bool,
) -> None:
    """Bidirectional flow records (Argus-style) from PCAP or --live IFACE, with per-worker balance and rate."""
    if (pcap is None) == (iface is None):
        fail("give a pcap file or --live IFACE (one of them)")
    if duration is not None and iface is None:
        fail(f"--duration {duration}: applies to --live IFACE only (a pcap is metered to its end)")
    format_for_path(out, fmt)  # an unknown suffix is an error before any work
    if ipfix is not None:
        _check_collector(ipfix)
    total = os.path.getsize(pcap) if pcap is not None else None
    label = f"metering {iface}" if iface else "metering"
    with progress_bar(label, total=total, enabled=not as_json, unit="B") as update:
        try:
            stats = meter(
                pcap,
                live=iface,
                workers=workers,
                idle=idle,
                active=active,
                max_flows=max_flows,
                compat=compat,
                out=out,
                format=fmt,
                ipfix=ipfix,
                duration=duration,
                progress=lambda done, packets, records: update(done),
            )
        except (NicbenchError, OSError) as exc:  # the exporter names "IPFIX collector X"; the user wrote --ipfix X
            if ipfix is not None and str(exc).startswith(f"IPFIX collector {ipfix}: "):
                fail(f"--ipfix {ipfix}: " + str(exc).removeprefix(f"IPFIX collector {ipfix}: "))
            raise
    if stats.get("input_error"):
        # A capture not read to its end: no summary of what was read before (not a result) and no
        # record file (meter removed it), only the error.
        if as_json:  # one JSON document: the counts of the packets before the bad one, with the error
            emit_json({**stats, "error": one_line_text(stats["input_error"]), "exit_code": 2})
            click.echo(f"nicbench: error: {one_line_text(stats['input_error'])}", err=True)
            raise click.exceptions.Exit(2)
        fail(stats["input_error"])
    if as_json:
        emit_json(stats)
    else:
        _summary(stats)  # an interrupted run too: its records are kept, and the summary counts them
    if stats.get("interrupted"):
        if not stats.get("output"):
            raise Interrupted("the counts printed are of the packets metered before it")
        raise Interrupted(
            f"{stats['records']:,} records kept in {stats['output']}, complete up to the last record "
            "(every active flow flushed)"
        )


def _summary(stats: dict) -> None:
    packets = stats["packets"]
    stdout_console.print(
        f"{packets:,} packets, {stats['bytes']:,} bytes → {stats['flows']:,} flows in {stats['records']:,} records "
        f"in {stats['elapsed_s']:.3f} s ([bold]{stats['mpps']:.2f} Mpps[/], {len(stats['workers'])} worker(s), "
        f"compat {stats['compat']})"
    )
    totals = Table(title="run", title_justify="left")
    totals.add_column("counter")
    totals.add_column("value", justify="right")
    rows = [
        ("packets", f"{packets:,}"),
        ("bytes", f"{stats['bytes']:,}"),
        ("non-IP packets", f"{stats['non_ip_packets']:,}"),
        ("flows", f"{stats['flows']:,}"),
        ("records", f"{stats['records']:,}"),
        ("idle expired", f"{stats['idle_expired']:,}"),
        ("active splits", f"{stats['active_splits']:,}"),
        ("flushed at end", f"{stats['flushed']:,}"),
        ("evicted (max flows)", f"{stats['evicted']:,}"),
        ("peak active flows", f"{stats['max_active_flows']:,}"),
        ("imbalance (max/mean)", f"{stats['imbalance']:.3f}"),
        ("Mpps", f"{stats['mpps']:.2f}"),
    ]
    if stats.get("output"):
        rows.append((f"output ({stats['format']})", stats["output"]))
    if stats.get("ipfix"):
        rows.append(("IPFIX collector", f"{stats['ipfix']} ({stats.get('ipfix_messages_sent', 0):,} messages)"))
    for name, value in rows:
        totals.add_row(name, value)
    stdout_console.print(totals)
    if stats.get("ipfix_messages_refused"):
        stderr_console.print(
            f"note: --ipfix {stats['ipfix']}: the host refused {stats['ipfix_messages_refused']:,} of "
            f"{stats['ipfix_messages_sent']:,} messages (ICMP port unreachable; each was sent again): "
            "is a collector listening there?"
        )
    per_worker = Table(title="workers", title_justify="left")
    for col in ("worker", "packets", "share", "flows", "records", "evicted", "peak flows"):
        per_worker.add_column(col, justify="right")
    metered = max(sum(w["packets"] for w in stats["workers"]), 1)
    for i, w in enumerate(stats["workers"]):
        per_worker.add_row(
            str(i),
            f"{w['packets']:,}",
            f"{w['packets'] / metered:.1%}",
            f"{w['flows']:,}",
            f"{w['records']:,}",
            f"{w['evicted']:,}",
            f"{w['max_active_flows']:,}",
        )
    stdout_console.print(per_worker)


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "flows": "Bidirectional flow records (Argus-style) from PCAP or --live IFACE, with per-worker balance and rate.",
}
COMMANDS = [flows]


def _check_collector(address: str) -> None:
    """--ipfix HOST:PORT (an IPv6 host in brackets), the port 1 to 65535: refused before any work."""
    host, sep, port = address.rpartition(":")
    if not sep or not host.strip("[]") or not port.isdigit() or not 1 <= int(port) <= 65535:
        fail(
            f"--ipfix {address!r}: expected HOST:PORT of an IPFIX collector (UDP), e.g. 127.0.0.1:4739 or "
            "[::1]:4739, the port 1 to 65535"
        )
