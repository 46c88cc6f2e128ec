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

    Flow set-up (each pass): misses queue to OVS's handler threads (n-handler-threads: the host
    profile's host_datapath_cores), upcall_us each in turn; a megaflow goes in when its upcall
    finishes. "upcalls handled" includes "duplicate" ones (packets of a flow whose upcall was still
    queued: executed, nothing installed, OVS's handler_duplicate_upcall); "lost" ones found their
    handler's queue full (upcall_queue upcalls, its netlink socket) and their packets were dropped.
    "busy" is the threads' utilization over the trace (above 100%: still working at its end); the
    flow limit is OVS's dynamic one after each revalidator dump (min over the run); "cores" is what
    set-up and revalidation took, on top of the forwarding's host cores.

    \b
    nicbench vswitch --nic agilio-cx-25g --openflow rules.of --trace t.pcap
    nicbench vswitch megaflows --openflow rules.of --pcap t.pcap   # the megaflows themselves
    nicbench vswitch megaflows --openflow vx.of --pcap vxlan.pcap --in-port p0 \\
        --port vx=vxlan,remote_ip=172.31.1.2,local_ip=172.31.1.1,underlay=p0   # VXLAN decap/encap
    """
    if ctx.invoked_subcommand is not None:
        return
    with spinner(f"walking {values['trace']} through the virtual datapath", enabled=not as_json):
        out = run_pvp(values)
    if as_json:
        emit_json(out)
        return
    _print_pvp(out, values["nic"])


def run_pvp(values: dict[str, Any]) -> dict:
    """What `nicbench vswitch` (PVP with the user's rules and trace) computes for its parsed options;
    `advise` runs its what-ifs through this, so each printed command reproduces them."""
    problem = options.check(values, flag_spelling(PVP_OPTIONS))
    if problem:
        fail(f"vswitch: {problem}" + (" (or a subcommand: megaflows)" if problem.startswith("give ") else ""))
    with model.gc_paused():
        return model.pvp_through_datapath(values["openflow"], values["trace"], **options.pvp_kwargs(values))


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
        console.print(f"        {setup_text(r)}", highlight=False, soft_wrap=True)
    setup_cores = sum(r["flow_setup"]["setup_cores_busy"] or 0.0 for r in out["datapath"].values())
    console.print(
        f"host cores busy {p['host_cores_busy']:.2f} forwarding, plus {setup_cores:.2f} setting up and "
        "revalidating flows (handlers, revalidators)"
    )


def setup_text(r: dict) -> str:
    """One line on a datapath pass's flow set-up: the handlers' upcalls (duplicate, lost), how busy
    the handler and revalidator threads were, the set-up rate, the flow limit."""
    s, rv = r["flow_setup"], r["revalidators"]

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{v:.0%}"

    rate = s.get("setup_per_s")
    return (
        f"flow set-up: {s['upcalls_handled']:,} upcalls handled ({s['duplicate_upcalls']:,} duplicate, "
        f"{s['lost_upcalls']:,} lost) by {s['handler_threads']} handler threads, {pct(s['handler_utilization'])} "
        f"busy; {s['flows_set_up']:,} flows set up"
        + (f" ({rate:,.0f}/s)" if rate is not None else "")
        + f"; revalidators {pct(s['revalidator_utilization'])} busy, flow limit {rv['flow_limit_final']:,} "
        f"(min {rv['flow_limit_min']:,}); cores {s['setup_cores_busy'] or 0.0:.2f}"
    )


@vswitch.command()
@table_options(list(MEGAFLOW_OPTIONS))
@json_option
def megaflows(as_json: bool, **values: Any) -> None:
    """Print the megaflows a trace installs, in dpctl/dump-flows syntax.

    The last line is the flow set-up: upcalls handled (duplicate, lost), the handler threads'
    (--handler-threads) and revalidators' utilization, the set-up rate, the flow limit (final and
    min) and the cores it took (see `nicbench vswitch --help`).
    """
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
    console.print(f"[dim]{setup_text(result)}[/dim]", highlight=False, soft_wrap=True)


# Each command's first help sentence, read by `nicbench --help` without importing this module.
SUMMARIES = {
    "vswitch": "The virtual Open vSwitch datapath in front of an OVS-TC offload NIC.",
}
COMMANDS = [vswitch]
