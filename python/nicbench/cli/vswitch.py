"""`nicbench vswitch`: the virtual Open vSwitch datapath.

`nicbench vswitch megaflows --openflow RULES --pcap TRACE` prints the megaflows OVS would
install for the trace's packets (file order), in `ovs-appctl dpctl/dump-flows` syntax, and with
`--nic` where each would run (offloaded to the NIC or not, and why).
"""

from __future__ import annotations

from typing import Any

import click

from nicbench import vswitch as model
from nicbench.cli.common import (
    WholeHelpGroup,
    emit_json,
    fail,
    json_option,
    spinner,
    stderr_console,
    stdout_console,
    table_options,
)
from nicbench.options import flag_spelling
from nicbench.options import vswitch as options
from nicbench.options.vswitch import MEGAFLOW_OPTIONS, PVP_OPTIONS

__all__ = ["vswitch", "COMMANDS"]


@click.group(cls=WholeHelpGroup, invoke_without_command=True)
@table_options(list(PVP_OPTIONS))
@json_option
@click.pass_context
def vswitch(ctx: click.Context, as_json: bool, **values: Any) -> None:
    """The virtual Open vSwitch datapath in front of an OVS-TC offload NIC.

    Without a subcommand: Red Hat PVP with YOUR rules and packets. The trace arrives on --uplink and
    the VM sends every packet back on --vm-port; both passes go through the virtual OVS datapath, the
    NIC takes or refuses each megaflow, and the megaflows per mask drive the PVP model: received Mpps
    and Gb/s, loss, latency, the limiting stage, megaflows offloaded (and why not), upcalls, host cores.

    \b
    nicbench vswitch --nic agilio-cx-25g --openflow rules.of --trace t.pcap
    nicbench vswitch megaflows --openflow rules.of --pcap t.pcap   # the megaflows themselves
    nicbench vswitch megaflows --openflow vx.of --pcap vxlan.pcap --in-port p0 \\
        --port vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0   # VXLAN decap/encap
    """
    if ctx.invoked_subcommand is not None:
        return
    problem = options.check(values, flag_spelling(PVP_OPTIONS))
    if problem:
        fail(f"vswitch: {problem}" + (" (or a subcommand: megaflows)" if problem.startswith("give ") else ""))
    trace = values["trace"]
    with model.gc_paused(), spinner(f"walking {trace} through the virtual datapath", enabled=not as_json):
        out = model.pvp_through_datapath(values["openflow"], trace, **options.pvp_kwargs(values))
    if as_json:
        emit_json(out)
        return
    _print_pvp(out, values["nic"])


def _print_pvp(out: dict, nic: str) -> None:
    p = out["pvp"]
    console = stdout_console
    console.print(f"[bold]{nic}[/bold], Red Hat PVP, {out['flows']:,} flows, {out['frame_bytes']} B frames")
    console.print(
        f"received  {p['mpps']:.2f} Mpps, {p['line_gbps']:.2f} Gb/s on the wire  (loss {p['loss']:.1%}, "
        f"latency {p['latency_us']:.3g} us unloaded, as `nicbench pvp --help` defines it), "
        f"limited by: {p['bottleneck']}"
    )
    for ingress, r in out["datapath"].items():
        installed = [m for m in r["megaflows"] if m["installed"]]
        offloaded = sum(bool(m["flow"]["placement"].get("offloaded")) for m in installed)
        rate = r.get("upcalls_per_s")
        console.print(
            f"{ingress:7} megaflows {len(installed):,} ({offloaded:,} offloaded), upcalls {r['upcalls']:,}"
            + (f" ({rate:,.0f}/s)" if rate is not None else "")
        )
        for reason, n in r.get("refusals", {}).items():
            console.print(f"        not offloaded {n}x: {reason}")
    console.print(f"host cores busy {p['host_cores_busy']:.2f}")


@vswitch.command()
@table_options(list(MEGAFLOW_OPTIONS))
@json_option
def megaflows(as_json: bool, **values: Any) -> None:
    """Print the megaflows a trace installs, in dpctl/dump-flows syntax."""
    problem = options.check(values, flag_spelling(MEGAFLOW_OPTIONS))
    if problem:
        fail(f"vswitch megaflows: {problem}")
    pcap, in_port = values["trace"], values["in_port"]
    with model.gc_paused(), spinner(f"walking {pcap} through the virtual datapath", enabled=not as_json):
        result = model.megaflows(values["openflow"], pcap, **options.megaflow_kwargs(values))
    matched = result.pop("in_port_unmatched", None)
    if matched:
        # as in OVS, not an error (the packets meet only rules without an in_port match), but
        # usually a typo or the default p0 where the rules name other ports
        stderr_console.print(
            f"note: no rule matches in_port={in_port} (the rules match in_port "
            f"{', '.join(matched)}); --in-port names the packets' port",
            highlight=False,
            soft_wrap=True,
        )
    if as_json:
        emit_json(result)
        return
    for mf in result["megaflows"]:
        line = mf["text"]
        if mf.get("reason"):
            line += f"  # not offloaded: {mf['reason']}"
        click.echo(line)
    console = stdout_console
    rate = result.get("upcalls_per_s")
    console.print(
        f"[dim]{result['packets']:,} packets, {len(result['megaflows']):,} megaflows, "
        f"{result['upcalls']:,} upcalls"
        + (f" ({rate:,.1f}/s)" if rate is not None else "")
        + (f", host cores busy {result['host_cores_busy']:.3g}" if result.get("host_cores_busy") is not None else "")
        + "[/dim]"
    )
    for reason, n in result.get("refusals", {}).items():
        console.print(f"[dim]refused {n}×: {reason}[/dim]")


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "vswitch": "The virtual Open vSwitch datapath in front of an OVS-TC offload NIC.",
}
COMMANDS = [vswitch]
