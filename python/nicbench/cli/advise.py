"""`nicbench advise`: the user's rules, traffic and update pattern through one or more virtual NICs,
with the outcome, the bottleneck and ranked what-ifs (fronts `nicbench.cli.advice`).

    nicbench advise --nic connectx5 --rules my.flow --trace my.pcap
    nicbench advise --nic connectx5 --nic connectx6 --nic bluefield1 --updates "insert 20k/s same-core"

Each advice names its mechanism and seed line, the change, the `nicbench simulate` command that runs
the changed input, and the outcome that command gives.
"""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from nicbench.cli.common import (
    IntRange,
    NonEmptyPath,
    emit_json,
    fmt_number,
    json_option,
    spinner,
    stderr_console,
    stdout_console,
)

__all__ = ["advise_command", "COMMANDS"]


def _pct(x: Any) -> str:
    return "–" if not isinstance(x, (int, float)) else f"{x * 100:.3g} %"


def _side_by_side(report: dict[str, Any]) -> Table:
    table = Table(title="predicted, your scenario", title_justify="left")
    table.add_column("")
    for n in report["nics"]:
        table.add_column(n["nic"], justify="right")
    rows = (
        ("received Gb/s", "rx_gbps", fmt_number),
        ("received Mpps", "rx_mpps", fmt_number),
        ("from clients Gb/s", "client_gbps", fmt_number),
        ("lost", "loss_ratio", _pct),
        ("latency p50 µs", "latency_p50_us", fmt_number),
        ("latency p99 µs", "latency_p99_us", fmt_number),
        ("bottleneck", "bottleneck", str),
        ("latency unloaded µs", "latency_unloaded_us", fmt_number),
        ("Table 0 occupancy", "root_table_occupancy", _pct),
        ("megaflows offloaded", "megaflows_offloaded", fmt_number),
        ("megaflows in software", "megaflows_software", fmt_number),
        ("cores needed (no drops)", "cores_needed", fmt_number),
        ("updates requested /s", "install_requested_rules_per_s", fmt_number),
        ("updates achieved /s", "install_achieved_rules_per_s", fmt_number),
    )
    for label, key, fmt in rows:
        values = [n["predicted"].get(key) for n in report["nics"]]
        if all(v is None for v in values):
            continue
        table.add_row(label, *("–" if v is None else fmt(v) for v in values))
    return table


def _outcome_text(p: dict[str, Any], gain: dict[str, float], before: dict[str, Any]) -> str:
    """An advice's predicted outcome `p` in one line: what the model gives, with the gain in Gb/s over
    the scenario's outcome `before`."""
    parts = [f"{fmt_number(p['rx_gbps'])} Gb/s received ({gain['rx_gbps']:+.4g} Gb/s)"]
    if p.get("client_gbps") is not None and gain.get("client_share"):
        parts.append(f"client traffic {fmt_number(before['client_gbps'])} → {fmt_number(p['client_gbps'])} Gb/s")
    if p.get("loss_ratio") is not None:
        parts.append(f"{_pct(p['loss_ratio'])} lost")
    if p.get("latency_p99_us") is not None:
        parts.append(f"p99 {fmt_number(p['latency_p99_us'])} µs")
    if p.get("install_achieved_rules_per_s") is not None:
        parts.append(f"updates {fmt_number(p['install_achieved_rules_per_s'])}/s achieved")
    return ", ".join(parts)


def _render(report: dict[str, Any]) -> None:
    stdout_console.print(_side_by_side(report))
    for n in report["nics"]:
        stdout_console.print(f"\n[bold]{escape(n['nic'])}[/]: {escape(n['command'])}", highlight=False, soft_wrap=True)
        for item in n["lint"]:
            where = f"line {item['line']}: " if item["line"] else ""
            stdout_console.print(
                f"  [yellow]cannot take: {escape(where + item['what'])}[/] ({escape(item['source'])})",
                highlight=False,
                soft_wrap=True,
            )
        if not n["advice"]:
            stdout_console.print("  no what-if tried helps this scenario", highlight=False)
        for rank, a in enumerate(n["advice"], 1):
            stdout_console.print(
                f"  {rank}. [bold]{a['id']}[/]: {escape(a['change'])}\n"
                f"     predicted: {_outcome_text(a['predicted'], a['gain'], n['predicted'])}\n"
                f"     because {a['because']} ({escape(a['source'])})\n"
                f"     run: {escape(a['command'])}",
                highlight=False,
                soft_wrap=True,
            )
        for note in n["notes"]:
            stdout_console.print(f"  [dim]{escape(note)}[/]", highlight=False, soft_wrap=True)


@click.command("advise")
@click.option(
    "--nic",
    "nics",
    multiple=True,
    help="Profile name or path; repeat to compare NICs side by side; 'all': every profile the input fits "
    "(default: connectx5; with --openflow connectx5-25g; with --flow bluefield2).",
)
@click.option(
    "--rules", type=NonEmptyPath(dir_okay=False), default=None, help="Your rule file (testpmd, tc, ClassBench)."
)
@click.option(
    "--openflow",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Your OpenFlow rules (ovs-ofctl syntax), for the OVS-TC offload NICs (with --trace).",
)
@click.option("--trace", type=NonEmptyPath(dir_okay=False), default=None, help="Your traffic as a pcap.")
@click.option(
    "--flow",
    "flows",
    multiple=True,
    help="An RDMA request mix for an off-path SmartNIC (bluefield2), as `nicbench paths --flow` takes it.",
)
@click.option("--gen", "gen_spec", default=None, help="Generated traffic instead: flows=10000,size=1500,rate=100Gbps.")
@click.option(
    "--updates",
    default=None,
    help="Your rule updates, e.g. 'insert 20k/s same-core', 'batch 100k distinct-core', 'modify 10k/s group 1'.",
)
@click.option("--cores", type=IntRange(1, 4096), default=1, show_default=True, help="Forwarding cores on the host.")
@click.option("--queues", type=IntRange(1, 65535), default=1, show_default=True, help="The port's RSS queues.")
@click.option("--smt", is_flag=True, help="Flow meters (napatech-nt100): two processes per core (hyper-threading).")
@click.option("--duration", default=None, help="Virtual time per run (default: simulate's).")
@click.option(
    "--whatif-dir",
    type=NonEmptyPath(file_okay=False),
    default="advise-whatifs",
    show_default=True,
    help="Where changed inputs (e.g. a rule file moved to group 1) are written, for the advice's commands.",
)
@click.option(
    "--report",
    "report_path",
    type=NonEmptyPath(dir_okay=False),
    default=None,
    help="Also write an HTML page: per NIC a figure of your scenario beside each what-if, the advice, the lint.",
)
@click.option("--seed", type=IntRange(0, 2**64 - 1), default=1, show_default=True, help="RNG seed.")
@json_option
def advise_command(
    nics: tuple[str, ...],
    whatif_dir: str,
    as_json: bool,
    gen_spec: str | None,
    report_path: str | None,
    **inputs: Any,
) -> None:
    """What a NIC does with your rules, traffic and updates, why, and what to change (simulated what-ifs).

    Each advice names its mechanism and the seed line it comes from, the change to your input, and the
    `nicbench simulate` command that runs the changed input and reproduces the predicted numbers."""
    from nicbench.cli.advice import advise

    if inputs["trace"] and gen_spec:
        raise click.UsageError("give either --trace PCAP or --gen SPEC, not both")
    if inputs["openflow"] and inputs["rules"]:
        raise click.UsageError("give either --rules FILE (rte_flow) or --openflow FILE (OVS), not both")
    if report_path and not report_path.endswith(".html"):
        raise click.BadParameter(
            f"{report_path}: the report is an HTML page; give a name ending in .html", param_hint="--report"
        )
    with spinner("advising: your scenario and its what-ifs", enabled=not as_json):
        report = advise(list(nics), out_dir=whatif_dir, gen=gen_spec, **inputs)
    if report_path:
        from nicbench.report.advice import advice_report

        advice_report(report, report_path)
        stderr_console.print(f"wrote {report_path}", highlight=False, soft_wrap=True)
    if as_json:
        emit_json(report)
        return
    _render(report)


SUMMARIES = {
    "advise": "What a NIC does with your rules, traffic and updates, why, and what to change (simulated what-ifs).",
}
COMMANDS = [advise_command]
