"""`nicbench pcap info` and `nicbench rss`: look inside pcap/pcapng traces (fronts `nicbench.traces`).

`pcap info` summarizes a trace (packets, bytes, rates, flows, sizes, protocols); `rss` shows how a
NIC's RSS would spread it over N queues.
"""

from __future__ import annotations

import os

import click
from rich.table import Table

from nicbench.cli.common import (
    IntRange,
    NonEmptyPath,
    WholeHelpGroup,
    emit_json,
    json_option,
    progress_bar,
    stderr_console,
    stdout_console,
)
from nicbench.errors import NicbenchError
from nicbench.packets import parse_key
from nicbench.traces import pcap_info, rss_spread


@click.group(cls=WholeHelpGroup)
def pcap() -> None:
    """Inspect pcap/pcapng traces."""


@pcap.command("info")
@click.argument("file", type=NonEmptyPath(dir_okay=False))
@json_option
def info(file: str, as_json: bool) -> None:
    """Packets, bytes, duration, rates, flows, frame sizes and protocols of FILE."""
    size = os.path.getsize(file)
    with progress_bar("reading", total=size, enabled=not as_json, unit="B") as update:
        summary = pcap_info(file, progress=update)
    if as_json:
        emit_json(summary)
        return
    render_info(file, summary)


def render_info(file: str, s: dict) -> None:
    overview = Table(title=f"{file}", show_header=False, title_justify="left")
    overview.add_column(style="bold")
    overview.add_column(justify="right")
    overview.add_row("packets", f"{s['packets']:,}")
    # pcap's "original length" excludes the FCS: "on the wire" would contradict the wire rate below.
    overview.add_row("bytes (as captured / original, excl. FCS)", f"{s['captured_bytes']:,} / {s['bytes']:,}")
    overview.add_row("duration", f"{s['duration_ns'] / 1e9:.9g} s")
    overview.add_row("average rate (L2, excl. FCS)", f"{s['l2_gbps']:.4f} Gbps")
    overview.add_row("average rate (wire: + FCS, preamble, IFG)", f"{s['wire_gbps']:.4f} Gbps")
    overview.add_row("average packet rate", f"{s['mpps']:.4f} Mpps")
    overview.add_row("distinct flows (5-tuple, one direction)", f"{s['flows']:,}")
    overview.add_row("distinct biflows (both directions)", f"{s['biflows']:,}")
    overview.add_row("link type", str(s["linktype"]))
    if s.get("unparsed"):
        overview.add_row("frames without a flow key", f"{s['unparsed']:,}")
    stdout_console.print(overview)

    sizes = Table(title="frame size (incl. FCS)", title_justify="left")
    sizes.add_column("bytes")
    sizes.add_column("packets", justify="right")
    sizes.add_column("share", justify="right")
    for row in s["size_histogram"]:
        if row["packets"]:
            sizes.add_row(row["label"], f"{row['packets']:,}", f"{row['packets'] / max(s['packets'], 1):.1%}")
    protocols = Table(title="protocols", title_justify="left")
    protocols.add_column("stack")
    protocols.add_column("packets", justify="right")
    protocols.add_column("share", justify="right")
    for name, count in sorted(s["protocols"].items(), key=lambda kv: -kv[1]):
        protocols.add_row(name, f"{count:,}", f"{count / max(s['packets'], 1):.1%}")
    stdout_console.print(sizes)
    stdout_console.print(protocols)
    if s.get("caplen_above_wire"):
        stderr_console.print(
            f"[yellow]warning: {s['caplen_above_wire']:,} record(s) captured more bytes than their frame had on "
            "the wire (caplen > original length): no capture tool writes that; the file was damaged or edited, "
            "and sizes and rates above use the original lengths[/]",
            highlight=False,
        )


@click.command()
@click.argument("file", type=NonEmptyPath(dir_okay=False))
@click.option(
    "--queues",
    type=IntRange(1, 512),
    required=True,
    help="Number of RX queues (at most the indirection table's entries, --reta-size).",
)
@click.option(
    "--key", default="symmetric", show_default=True, help="Toeplitz key: symmetric | microsoft | HEX (40 or 52 bytes)."
)
@click.option(
    "--fields",
    type=click.Choice(["ip", "ip-ports"]),
    default="ip-ports",
    show_default=True,
    help="Hash input: IP addresses only, or addresses + L4 ports (TCP/UDP/SCTP).",
)
@click.option(
    "--reta-size",
    type=IntRange(64, 512),
    default=128,
    show_default=True,
    help="Indirection table entries (a power of two, 64-512).",
)
@click.option("--inner", is_flag=True, help="Hash the inner headers of VXLAN frames (default: outer, as NICs do).")
@json_option
def rss(file: str, queues: int, key: str, fields: str, reta_size: int, inner: bool, as_json: bool) -> None:
    """Per-queue packets and flows of FILE under Toeplitz RSS, and the imbalance (max/mean)."""
    if reta_size & (reta_size - 1):
        raise click.BadParameter(
            f"{reta_size} is not a power of two (allowed: 64, 128, 256, 512)", param_hint="--reta-size"
        )
    if queues > reta_size:  # the indirection table names at most reta_size queues: the rest would stay empty
        raise click.BadParameter(
            f"{queues} queues is more than the RETA (indirection table) size {reta_size}: "
            f"queues beyond {reta_size} would never get a packet (allowed: 1 to {reta_size}; "
            "--reta-size takes up to 512)",
            param_hint="--queues",
        )
    try:
        key_bytes = parse_key(key)
    except NicbenchError as exc:
        raise NicbenchError(f"--key: {exc}") from None
    size = os.path.getsize(file)
    with progress_bar("hashing", total=size, enabled=not as_json, unit="B") as update:
        report = rss_spread(
            file, queues=queues, key=key_bytes, fields=fields, reta_size=reta_size, inner=inner, progress=update
        )
    report["key"] = key
    if as_json:
        emit_json(report)
        return
    # The heading is a line of its own: as the table's title it would wrap to the narrow table's width.
    stdout_console.print(f"RSS of {file} over {queues} queues (key {key}, {fields}, RETA {reta_size})", highlight=False)
    table = Table()
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


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "pcap": "Inspect pcap/pcapng traces.",
    "rss": "Per-queue packets and flows of FILE under Toeplitz RSS, and the imbalance (max/mean).",
}
COMMANDS = [pcap, rss]
