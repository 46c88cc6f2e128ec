"""`nicbench rss`: how a NIC's RSS would spread a trace over N queues."""

from __future__ import annotations

import os

import click
from rich.table import Table

from nicbench.cli.common import emit_json, json_option, progress_bar, stdout_console
from nicbench.packets import parse_key
from nicbench.traces import rss_spread


@click.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--queues", type=click.IntRange(1, 4096), required=True, help="Number of RX queues.")
@click.option("--key", default="symmetric", show_default=True,
              help="Toeplitz key: symmetric | microsoft | HEX (40 or 52 bytes).")
@click.option("--fields", type=click.Choice(["ip", "ip-ports"]), default="ip-ports", show_default=True,
              help="Hash input: IP addresses only, or addresses + L4 ports (TCP/UDP/SCTP).")
@click.option("--reta-size", type=int, default=128, show_default=True, help="Indirection table entries.")
@click.option("--inner", is_flag=True, help="Hash the inner headers of VXLAN frames (default: outer, as NICs do).")
@json_option
def rss(file: str, queues: int, key: str, fields: str, reta_size: int, inner: bool, as_json: bool) -> None:
    """Per-queue packets and flows of FILE under Toeplitz RSS, and the imbalance (max/mean)."""
    key_bytes = parse_key(key)
    size = os.path.getsize(file)
    with progress_bar("hashing", total=size, enabled=not as_json) as update:
        report = rss_spread(file, queues=queues, key=key_bytes, fields=fields, reta_size=reta_size,
                            inner=inner, progress=update)
    report["key"] = key
    if as_json:
        emit_json(report)
        return
    table = Table(title=f"RSS of {file} over {queues} queues (key {key}, {fields})", title_justify="left")
    table.add_column("queue", justify="right")
    table.add_column("packets", justify="right")
    table.add_column("flows", justify="right")
    total = max(report["packets"], 1)
    for q in report["queues"]:
        table.add_row(str(q["queue"]), f"{q['packets']:,}", f"{q['flows']:,}")
    stdout_console.print(table)
    stdout_console.print(
        f"imbalance (max/mean): packets [bold]{report['packet_imbalance']:.3f}[/], "
        f"flows [bold]{report['flow_imbalance']:.3f}[/]; "
        f"{report['packets']:,} packets, {report['flows']:,} flows, {report['unhashed']:,} without IP header"
        f" ({report['unhashed'] / total:.1%})"
    )
