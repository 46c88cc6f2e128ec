"""`nicbench gen`: write a seeded synthetic traffic trace to pcap (fronts `nicbench.traffic`)."""

from __future__ import annotations

import math
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
from nicbench.rules import SYNTAXES
from nicbench.traffic import MAX_GEN_FLOWS, GenConfig, generate_pcap, generate_pcap_for_rules, parse_size_spec
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
@click.option(
    "--for-rules",
    "for_rules",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Traffic for this rule file: one flow per target rule, whose frame the software classifier "
    "checked meets it; the flows' headers come from the rules (--flows, --ipv6, --proto, --vlan, --vxlan "
    "do not apply).",
)
@click.option(
    "--hit-share",
    type=FiniteFloat(min=1e-9, max=1.0),
    default=1.0,
    show_default=True,
    help="With --for-rules: the share of the file's rules the traffic meets (targets and the jump rules "
    "on their way), in (0, 1].",
)
@click.option(
    "--syntax", type=click.Choice(SYNTAXES), default=None, help="With --for-rules: rule syntax (default: detected)."
)
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
    for_rules: str | None,
    hit_share: float,
    syntax: str | None,
    as_json: bool,
) -> None:
    """Generate N flows at a rate and write them to a pcap.

    With --for-rules FILE the flows are the rules': a frame per target rule (a share of the file's
    rules, --hit-share, in a seeded random order), drawn inside the rule's and its jump chain's
    matches and checked by a lookup in the software classifier, then paced, sized and drawn by
    popularity (--zipf) as any trace; the first packets visit every flow once. Rules no frame meets
    are listed with the reason (a wider rule before them, a header the generator does not write,
    a group no jump reaches)."""
    _refuse_flow_options_with_rules(for_rules, hit_share, syntax)
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
    if for_rules is not None:
        _gen_for_rules(config, for_rules, output, hit_share, syntax, size, expected, as_json)
        return
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


def _refuse_flow_options_with_rules(for_rules: str | None, hit_share: float, syntax: str | None) -> None:
    """--for-rules takes the flows from the rules: an explicit flow option would be silently ignored."""
    ctx = click.get_current_context()
    given = [
        f"--{name.replace('_', '-')}"
        for name in ("flows", "ipv6", "proto", "vlan", "vxlan")
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE
    ]
    if for_rules is not None and given:
        raise NicbenchError(
            f"{', '.join(given)}: with --for-rules the flows and their headers come from the rules "
            "(one flow per target rule); drop the option, or --for-rules"
        )
    if for_rules is None:
        for name in ("hit_share", "syntax"):
            if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
                raise NicbenchError(f"--{name.replace('_', '-')} applies with --for-rules FILE only")


def _gen_for_rules(
    config: GenConfig,
    rules_path: str,
    output: str,
    hit_share: float,
    syntax: str | None,
    size: str,
    expected: int | None,
    as_json: bool,
) -> None:
    with progress_bar("generating", total=expected, enabled=not as_json, unit="packets") as update:
        try:
            out = generate_pcap_for_rules(
                config, rules_path, output, hit_share=hit_share, syntax=syntax, progress=update
            )
        except NicbenchError as exc:
            raise _name_size(exc, size, config) from None
    if as_json:
        emit_json(out)
        return
    summary, total = out["summary"], out["rules_total"]
    stdout_console.print(
        f"wrote [bold]{summary['packets']:,}[/] packets ({summary['bytes']:,} B) over {len(out['target_lines']):,} "
        f"flows to {output}: {summary['duration_ns'] / 1e9:.6g} s virtual, "
        f"{format_rate_bps(summary['wire_bps'])} on the wire, {summary['mpps']:.4g} Mpps",
        soft_wrap=True,
    )
    stdout_console.print(
        f"rules met: [bold]{out['rules_met']:,} of {total:,}[/] ({out['rules_met'] / total:.1%}; asked "
        f"{hit_share:.1%}; {out['rules_reachable']:,} reachable by any frame)",
        soft_wrap=True,
    )
    missed = out["unreachable"]
    if missed:
        stdout_console.print(f"{len(missed):,} rules no frame meets (first 5; --json lists all):", soft_wrap=True)
        for m in missed[:5]:
            stdout_console.print(f"  {rules_path}:{m['line']}: {m['reason']}", soft_wrap=True, markup=False)
    if out["rules_met"] < math.ceil(hit_share * total):
        stdout_console.print(
            f"[yellow]asked {hit_share:.1%} of the rules; only {out['rules_reachable']:,} of {total:,} can be met[/]",
            soft_wrap=True,
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
