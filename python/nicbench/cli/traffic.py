"""`nicbench gen`: write a seeded synthetic traffic trace to pcap (fronts `nicbench.traffic`)."""

from __future__ import annotations

import re

import click

from nicbench.cli.common import (
    FiniteFloat,
    IntRange,
    NonEmptyPath,
    emit_json,
    json_option,
    progress_bar,
    stdout_console,
)
from nicbench.errors import NicbenchError
from nicbench.traffic import MAX_GEN_FLOWS, GenConfig, generate_pcap, parse_size_spec
from nicbench.traffic_bounds import MAX_TRACE_PACKETS
from nicbench.units import format_rate_bps, parse_count, parse_duration_ns, parse_rate


@click.command()
@click.option("--flows", default="10000", show_default=True, help="Number of distinct flows (10000, 10k, 1M).")
@click.option(
    "--size",
    default="1500",
    show_default=True,
    help="Frame size in bytes incl. FCS: 1500 | 64,594,1518 (random pick) | 64-1518 (uniform) | imix.",
)
@click.option(
    "--rate",
    default="100Gbps",
    show_default=True,
    help="Offered rate on the wire (preamble + IFG counted): 100Gbps, 8Mpps, or 'max' (no pacing).",
)
@click.option(
    "--duration", default=None, help="Trace duration in virtual time (1s, 100ms). Default 1s unless --packets."
)
@click.option("--packets", default=None, help="Stop after this many packets (10M).")
@click.option("-o", "--output", required=True, type=NonEmptyPath(dir_okay=False), help="Output pcap (nanosecond).")
@click.option("--ipv6", is_flag=True, help="IPv6 flows instead of IPv4.")
@click.option("--proto", type=click.Choice(["udp", "tcp"]), default="udp", show_default=True)
@click.option("--vlan", type=IntRange(0, 4095), default=None, help="Tag every frame with this 802.1Q VLAN id.")
@click.option("--vxlan", type=IntRange(0, 2**24 - 1), default=None, help="Encapsulate in VXLAN with this VNI.")
@click.option(
    "--zipf", type=FiniteFloat(min=1e-9), default=None, help="Zipf(s) flow popularity instead of uniform (e.g. 1.1)."
)
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed (0 to 2^64-1).")
@json_option
def gen(
    flows: str,
    size: str,
    rate: str,
    duration: str | None,
    packets: str | None,
    output: str,
    ipv6: bool,
    proto: str,
    vlan: int | None,
    vxlan: int | None,
    zipf: float | None,
    seed: int,
    as_json: bool,
) -> None:
    """Generate N flows at a rate and write them to a pcap."""
    packet_limit = (
        parse_count(packets, what="--packets", at_least=1, at_most=MAX_TRACE_PACKETS) if packets is not None else None
    )
    duration_ns = parse_duration_ns(duration, "--duration") if duration is not None else None
    if rate == "max" and packet_limit is None:  # unpaced packets have no timestamps a duration could end
        raise NicbenchError(
            "--rate max writes as fast as it can, with no timeline for --duration to end: give --packets N"
        )
    if rate == "max" and duration_ns is not None:  # silently ignored otherwise: unpaced packets all have time 0
        raise NicbenchError(
            f"--duration {duration}: --rate max writes unpaced packets (no timeline for a duration); "
            "give --packets N alone, or a rate"
        )
    if duration_ns is None and packet_limit is None:
        duration_ns = 1_000_000_000
    config = GenConfig(
        flows=parse_count(flows, at_most=MAX_GEN_FLOWS, what="--flows", at_least=1),
        size=parse_size_spec(size),
        rate=None if rate == "max" else parse_rate(rate, "--rate"),
        duration_ns=duration_ns,
        packets=packet_limit,
        ipv6=ipv6,
        proto=proto,
        vlan=vlan,
        vxlan_vni=vxlan,
        zipf_s=zipf,
        seed=seed,
    )
    expected = config.expected_packets()
    with progress_bar("generating", total=expected, enabled=not as_json, unit="packets") as update:
        try:
            summary = generate_pcap(config, output, progress=update)
        except NicbenchError as exc:
            raise _name_size(exc, size, config) from None
    if as_json:
        emit_json(summary)
        return
    # Fewer packets than flows: not every flow is in the file (each packet draws its flow).
    of_flows = (
        f"of {config.flows:,} flows"
        if summary["packets"] >= config.flows
        else f"drawn from {config.flows:,} flows (at most {summary['packets']:,} of them in the file)"
    )
    # --rate max: every packet at time 0, so no rate (the summary's rates are NaN)
    timing = (
        "unpaced (--rate max: every timestamp 0)"
        if config.rate is None
        else f"{summary['duration_ns'] / 1e9:.6g} s virtual, {format_rate_bps(summary['wire_bps'])} on the wire, "
        f"{summary['mpps']:.4g} Mpps"
    )
    stdout_console.print(
        f"wrote [bold]{summary['packets']:,}[/] packets ({summary['bytes']:,} B) {of_flows} to {output}: {timing}"
    )


def _name_size(exc: NicbenchError, size: str, config: GenConfig) -> NicbenchError:
    """A frame too small for the chosen headers is a --size mistake: say so, and the sizes that fit."""
    m = re.search(r"the smallest frame for them is (\d+) B", str(exc))
    if not m:
        return exc
    smallest = int(m[1])
    _, largest = config.frame_size_range()
    fits = f"--size {smallest}-{largest}" if largest > smallest else f"--size {smallest}"
    return NicbenchError(f"--size {size.strip()}: {exc} (e.g. {fits})")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "gen": "Generate N flows at a rate and write them to a pcap.",
}
COMMANDS = [gen]
