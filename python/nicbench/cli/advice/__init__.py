"""`nicbench advise`: what a virtual NIC does with the user's rules, traffic and updates, why, and
what to change — each advice a what-if run on the changed input.

    report = advise(nics=["connectx5", "connectx6"], rules="my.flow", trace="t.pcap",
                    updates="insert 20k/s same-core", cores=4, queues=4)

For each NIC: the user's scenario as a command — `simulate` for a ConnectX flow-table NIC (rte_flow
rules), `vswitch` for an OVS-TC offload NIC (OpenFlow rules and a trace, PVP through the virtual OVS
datapath), `paths` for the off-path SmartNIC (an RDMA mix), `flowhost` for a flow-metering host — its
outcome (`predicted`), the bottleneck with its parameters and provenance, and a lint of what the NIC
cannot take; then every what-if of `nicbench.cli.advice.whatifs` for that command, run on the changed
input, kept only when it helps, ranked by predicted gain. Each advice carries the command that
reproduces its `predicted` numbers (the same code path: `nicbench.cli.advice.runs`).

It lives in the command layer because it composes command lines.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from nicbench import profiles
from nicbench.cli.advice import runs
from nicbench.cli.advice.updates import parse_updates
from nicbench.cli.advice.whatifs import ACTIONS_MATCHING, WHATIFS, Context
from nicbench.errors import NicbenchError

__all__ = ["advise", "nic_names", "GAIN_SHOWN"]

# The smallest improvement an advice must predict to be shown: 1% of the offered load in received
# throughput, 1 percentage point less loss, or 1% of the requested update rate more achieved.
GAIN_SHOWN = 0.01

# The command that models each profile kind advise covers, and so takes its what-ifs.
COMMAND_OF_KIND = {
    "connectx": "simulate",
    "connectx-eswitch": "vswitch",
    "agilio": "vswitch",
    "offpath": "paths",
    "flowhost": "flowhost",
}
# The NIC advised on when none is named, per command: the seeds' devices.
DEFAULT_NIC = {"simulate": "connectx5", "vswitch": "connectx5-25g", "paths": "bluefield2", "flowhost": "napatech-nt100"}
# What each command needs of the user: the input that picks it.
_NEEDS = {
    "simulate": "--rules FILE (rte_flow rules) or none",
    "vswitch": "--openflow FILE and --trace PCAP",
    "paths": "--flow 'PATH VERB SIZE ...' (an RDMA request mix)",
    "flowhost": "--gen flows=N,size=B,rate=R and --cores (traffic to meter)",
}


def nic_names(requested: list[str], command: str = "simulate") -> list[str]:
    """The NICs to advise on with `command` (picked by the input, `command_for`): `all` is every
    profile that command models; a NIC of another kind is refused naming what it needs."""
    kinds = [k for k, c in COMMAND_OF_KIND.items() if c == command]
    if "all" in requested:
        return [n for k in kinds for n in sorted(profiles.names(k))]
    for nic in requested:
        kind = profiles.load(nic).get("kind")
        if kind not in COMMAND_OF_KIND:
            raise NicbenchError(
                f"--nic {nic}: a profile of kind {kind!r}; advise covers the kinds {', '.join(COMMAND_OF_KIND)}"
            )
        if COMMAND_OF_KIND[kind] != command:
            raise NicbenchError(
                f"--nic {nic}: a profile of kind {kind!r}, modelled by nicbench {COMMAND_OF_KIND[kind]}: give "
                f"{_NEEDS[COMMAND_OF_KIND[kind]]} for it (one kind of input per run)"
            )
    return list(requested)


def command_for(inputs: dict[str, Any], nics: list[str] | None = None) -> str:
    """The command the user's input is for: an RDMA mix → paths, OpenFlow → vswitch, a flow-meter
    capture card named first (`--nic napatech-nt100`) → flowhost, else simulate."""
    if inputs.get("flows"):
        return "paths"
    if inputs.get("openflow"):
        return "vswitch"
    named = [n for n in nics or [] if n != "all"]
    if named and COMMAND_OF_KIND.get(profiles.load(named[0]).get("kind")) == "flowhost":
        return "flowhost"
    return "simulate"


# `--gen` keys the flow-meter model takes, as its own flags.
_FLOWHOST_GEN = {"flows": "--flows", "size": "--size", "rate": "--rate", "zipf": "--zipf"}


def _flowhost_argv(nic: str, inputs: dict[str, Any]) -> list[str]:
    argv = ["--nic", nic, "--cores", str(inputs.get("cores", 1))]
    for part in (p.strip() for p in (inputs.get("gen") or "").split(",") if p.strip()):
        key, _, value = part.partition("=")
        if key.strip() not in _FLOWHOST_GEN:
            raise NicbenchError(
                f"--gen {part!r}: the flow-meter model takes {', '.join(_FLOWHOST_GEN)} (its traffic is TCP flows "
                "between endpoint pairs)"
            )
        argv += [_FLOWHOST_GEN[key.strip()], value.strip()]
    if inputs.get("duration"):
        argv += ["--duration", inputs["duration"]]
    if inputs.get("smt"):
        argv.append("--smt")
    return [*argv, "--cores-needed", "--seed", str(inputs.get("seed", 1))]


def _baseline_argv(nic: str, command: str, inputs: dict[str, Any]) -> list[str]:
    if command == "flowhost":
        return _flowhost_argv(nic, inputs)
    if command == "paths":
        return ["--nic", nic, *(part for f in inputs["flows"] for part in ("--flow", f))]
    if command == "vswitch":
        if not inputs.get("trace"):
            raise NicbenchError("--openflow: the OVS datapath needs your packets too: give --trace PCAP")
        return ["--nic", nic, "--openflow", str(inputs["openflow"]), "--trace", str(inputs["trace"])]
    argv = ["--nic", nic]
    if inputs.get("rules"):
        argv += ["--rules", str(inputs["rules"])]
    if inputs.get("trace"):
        argv += ["--trace", str(inputs["trace"])]
    elif inputs.get("gen"):
        argv += ["--gen", inputs["gen"]]
    argv += ["--cores", str(inputs.get("cores", 1)), "--queues", str(inputs.get("queues", 1))]
    if inputs.get("duration"):
        argv += ["--duration", inputs["duration"]]
    if inputs.get("updates"):
        argv += parse_updates(inputs["updates"])
    argv += ["--seed", str(inputs.get("seed", 1))]
    return argv


def _gain(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """What a what-if gains: received throughput (Gb/s and share of the offered load), loss (percentage
    points), and the rule updates achieved (share of the requested rate: an installer that falls behind
    builds a backlog even when the traffic does not suffer)."""
    # Without an offered load (an RDMA mix runs as fast as it can): gains relative to the baseline.
    offered = before.get("offered_gbps") or before.get("rx_gbps") or 1.0
    rx = (after.get("rx_gbps") or 0.0) - (before.get("rx_gbps") or 0.0)
    loss = (before.get("loss_ratio") or 0.0) - (after.get("loss_ratio") or 0.0)
    requested = before.get("install_requested_rules_per_s") or 0.0
    updates = (
        ((after.get("install_achieved_rules_per_s") or 0.0) - (before.get("install_achieved_rules_per_s") or 0.0))
        / requested
        if requested
        else 0.0
    )
    # Client traffic (an RDMA mix's flows from client machines): a what-if may trade intra-machine
    # traffic for it at the same total (seed 004's P − N bound on host<->SoC flows).
    client = (after.get("client_gbps") or 0.0) - (before.get("client_gbps") or 0.0)
    return {
        "rx_gbps": rx,
        "rx_share_of_offered": rx / offered,
        "client_share": client / offered,
        "loss_points": loss * 100,
        "updates_share": updates,
    }


def _helps(gain: dict[str, float]) -> bool:
    """A gain in one measure by the threshold, and no loss of the threshold in another (a what-if that
    speeds up the installer by starving the traffic is no advice)."""
    measures = (gain["rx_share_of_offered"], gain["client_share"], gain["loss_points"] / 100, gain["updates_share"])
    return max(measures) >= GAIN_SHOWN and min(measures) > -GAIN_SHOWN


# The PMD that drives each profile kind advise covers (ConnectX-4/5/6 and BlueField: mlx5).
PMD_OF_KIND = {"connectx": "mlx5"}

# Table 0 occupancy above which seed 000 sees the collapse (lines 103-104: "as soon as the occupancy of
# the table goes above 85%, hence the last 15% of memory is in practice unusable").
ROOT_TABLE_USABLE_SHARE = 0.85


def lint(nic: str, rules: str | None, predicted: dict[str, Any]) -> list[dict[str, Any]]:
    """What the NIC cannot take: rule items/actions its PMD does not implement (per line, from DPDK's
    feature matrix), rules refused by a full Table 0, and Table 0 beyond its usable share."""
    from nicbench.rules import lint_rules

    out: list[dict[str, Any]] = []
    if rules:
        pmd = PMD_OF_KIND[profiles.load(nic)["kind"]]
        found = lint_rules(rules, pmd)
        for u in found["unsupported"]:
            out.append(
                {
                    "line": u["line"],
                    "what": f"{u['kind']} '{u['name']}': the {found['pmd']} PMD does not implement it",
                    "source": found["source"],
                }
            )
    refused = predicted.get("rules_refused") or 0
    if refused:
        out.append({"line": None, "what": f"{refused:,} rules refused: Table 0 is full", "source": "the model"})
    occupancy = predicted.get("root_table_occupancy") or 0.0
    if occupancy > ROOT_TABLE_USABLE_SHARE:
        out.append(
            {
                "line": None,
                "what": f"Table 0 at {occupancy:.1%} occupancy: above the {ROOT_TABLE_USABLE_SHARE:.0%} seed 000 "
                "finds usable",
                "source": "seed 000 lines 103-104: 'as soon as the occupancy of the table goes above 85%, hence the "
                "last 15% of memory is in practice unusable'",
            }
        )
    return out


def bottleneck_of(predicted: dict[str, Any]) -> dict[str, Any]:
    """The binding limit of a predicted outcome: its name, what it is, its parameters (value, unit,
    provenance) and utilization, where the model gives them."""
    return {
        "name": predicted.get("bottleneck"),
        "what": predicted.get("bottleneck_what"),
        "parameters": predicted.get("bottleneck_parameters") or {},
        "utilization": predicted.get("bottleneck_utilization"),
    }


# What each command's outcome says about where the input landed on the device.
PLACEMENT_KEYS = {
    "simulate": ("root_table_occupancy", "tables_traversed_mean", "rules_refused"),
    "vswitch": ("megaflows_offloaded", "megaflows_software", "refusals", "host_cores_busy"),
    "paths": ("flows",),
    "flowhost": ("cores", "processes_per_core"),
}


def placement_of(command: str, predicted: dict[str, Any]) -> dict[str, Any]:
    """How the input lands on the device: Table 0 occupancy and chain depth (flow tables), megaflows
    offloaded and refused (OVS-TC offload), each flow's limit (RDMA paths), meters per core (host)."""
    return {key: predicted.get(key) for key in PLACEMENT_KEYS[command]}


def refusal_lint(predicted: dict[str, Any]) -> list[dict[str, Any]]:
    """The megaflows an OVS-TC offload NIC refused, per ingress, with the driver's reason."""
    return [
        {"line": None, "what": f"{ingress}: {n:,} megaflow(s) not offloaded: {reason}", "source": "the model"}
        for ingress, reasons in (predicted.get("refusals") or {}).items()
        for reason, n in reasons.items()
    ]


def _source(template: str, outcome: dict[str, Any], nic: str) -> str:
    """A what-if's source; `{bottleneck_parameters}` becomes the baseline bottleneck's parameters with
    their values and provenance (for a mechanism the model itself is the source of);
    `{refusal_sources}` the NIC profile's offload sources on the refused field (driver code)."""
    if "{refusal_sources}" in template:
        keywords = [f.split("_")[-1] for f in ACTIONS_MATCHING]
        offload = (profiles.load(nic).get("device") or {}).get("ovs_tc_offload") or {}
        found = [
            f"{src['what']} ({src['provenance']})"
            for src in offload.get("sources", [])
            if any(k in src.get("what", "").lower() for k in keywords)
        ]
        return f"profile {nic}: " + ("; ".join(found) or "the refusal reason the model gives")
    if "{bottleneck_parameters}" not in template:
        return template
    params = "; ".join(
        f"{name} = {p.get('value')} {p.get('unit', '')} ({p.get('provenance', '')})"
        for name, p in (outcome.get("bottleneck_parameters") or {}).items()
    )
    return template.replace("{bottleneck_parameters}", params or "none named")


def advise(
    nics: list[str],
    out_dir: str | Path = "advise-whatifs",
    log: Callable[[str], None] = lambda s: None,
    **inputs: Any,
) -> dict[str, Any]:
    """The advice report (see the module doc). `inputs`: rules, trace or gen, updates, cores, queues,
    duration, seed — as `simulate` takes them. Changed input files go to `out_dir`."""
    out = Path(out_dir)
    report: dict[str, Any] = {"nics": []}
    command = command_for(inputs, list(nics))
    for nic in nic_names(list(nics) or [DEFAULT_NIC[command]], command):
        argv = _baseline_argv(nic, command, inputs)
        log(f"{nic}: your scenario")
        base = runs.run(command, argv)
        rules_path = inputs.get("openflow") if command == "vswitch" else inputs.get("rules")
        ctx = Context(nic=nic, command=command, argv=argv, outcome=base, rules_path=rules_path, out_dir=out)
        advice = []
        for w in WHATIFS:
            if w.command != command:
                continue
            changed = w.change(ctx)
            if changed is None:
                continue
            new_argv, change_text = changed
            log(f"{nic}: what if {w.id}")
            after = ctx.run(new_argv)
            gain = _gain(base, after)
            if not _helps(gain):
                ctx.notes.append(f"{w.id} tried ({change_text}): no gain ({gain['rx_gbps']:+.3g} Gbps)")
                continue
            advice.append(
                {
                    "id": w.id,
                    "because": w.because,
                    "source": _source(w.source, base, nic),
                    "change": change_text,
                    "command": runs.command_line(command, new_argv),
                    "argv": new_argv,
                    "predicted": after,
                    "gain": gain,
                }
            )
        advice.sort(
            key=lambda a: (
                -a["gain"]["rx_share_of_offered"],
                -a["gain"]["client_share"],
                -a["gain"]["loss_points"],
                -a["gain"]["updates_share"],
                a["id"],
            )
        )
        report["nics"].append(
            {
                "nic": nic,
                "command": runs.command_line(command, argv),
                "argv": argv,
                "predicted": base,
                "bottleneck": bottleneck_of(base),
                "placement": placement_of(command, base),
                "lint": lint(nic, inputs.get("rules"), base) if command == "simulate" else refusal_lint(base),
                "model_advice": base.get("model_advice", []),
                "advice": advice,
                "notes": ctx.notes,
            }
        )
    return report
