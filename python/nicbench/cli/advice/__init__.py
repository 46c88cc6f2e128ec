"""`nicbench advise`: what a virtual NIC does with the user's rules, traffic and updates, why, and
what to change — each advice a what-if run on the changed input.

    report = advise(nics=["connectx5", "connectx6"], rules="my.flow", trace="t.pcap",
                    updates="insert 20k/s same-core", cores=4, queues=4)

For each NIC: the user's scenario as a `simulate` command, its outcome (`predicted`: throughput, loss,
latency percentiles, installer achieved vs requested), the bottleneck with its parameters and
provenance; then every what-if of `nicbench.cli.advice.whatifs` that applies, run on the changed input,
kept only when it helps, ranked by predicted gain. Each advice carries the command that reproduces its
`predicted` numbers (the same code path: `nicbench.cli.advice.simulate_runs`).

It lives in the command layer because it composes `simulate` command lines. Models covered: the
ConnectX flow-table model (profiles of kind `connectx`). A NIC of another kind is refused by name with
the command that models it (`pvp`, `vswitch`, `paths`, `flowhost`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from nicbench import models, profiles
from nicbench.cli.advice import simulate_runs
from nicbench.cli.advice.updates import parse_updates
from nicbench.cli.advice.whatifs import WHATIFS, Context
from nicbench.errors import NicbenchError

__all__ = ["advise", "nic_names", "GAIN_SHOWN"]

# The smallest improvement an advice must predict to be shown: 1% of the offered load in received
# throughput, 1 percentage point less loss, or 1% of the requested update rate more achieved.
GAIN_SHOWN = 0.01

# The command each other kind of profile runs on.
_OTHER_COMMANDS = {
    "connectx-eswitch": "nicbench pvp / nicbench vswitch",
    "agilio": "nicbench pvp / nicbench vswitch",
    "offpath": "nicbench paths",
    "flowhost": "nicbench flowhost",
}


def nic_names(requested: list[str]) -> list[str]:
    """The NICs to advise on: `all` is every profile the ConnectX model takes; another kind is refused."""
    kinds = models.profile_kinds("connectx")
    if "all" in requested:
        return profiles.names(kinds[0]) if len(kinds) == 1 else sorted(n for k in kinds for n in profiles.names(k))
    out = []
    for nic in requested:
        kind = profiles.load(nic).get("kind")
        if kind not in kinds:
            other = _OTHER_COMMANDS.get(kind, "its own command")
            raise NicbenchError(
                f"--nic {nic}: a profile of kind {kind!r}; advise covers the ConnectX flow-table model "
                f"(kinds: {', '.join(kinds)}) — model this NIC with {other}"
            )
        out.append(nic)
    return out


def _baseline_argv(nic: str, inputs: dict[str, Any]) -> list[str]:
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
    offered = before.get("offered_gbps") or 1.0
    rx = (after.get("rx_gbps") or 0.0) - (before.get("rx_gbps") or 0.0)
    loss = (before.get("loss_ratio") or 0.0) - (after.get("loss_ratio") or 0.0)
    requested = before.get("install_requested_rules_per_s") or 0.0
    updates = (
        ((after.get("install_achieved_rules_per_s") or 0.0) - (before.get("install_achieved_rules_per_s") or 0.0))
        / requested
        if requested
        else 0.0
    )
    return {"rx_gbps": rx, "rx_share_of_offered": rx / offered, "loss_points": loss * 100, "updates_share": updates}


def _helps(gain: dict[str, float]) -> bool:
    return (
        gain["rx_share_of_offered"] >= GAIN_SHOWN
        or gain["loss_points"] >= GAIN_SHOWN * 100
        or gain["updates_share"] >= GAIN_SHOWN
    )


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


def _source(template: str, outcome: dict[str, Any]) -> str:
    """A what-if's source; `{bottleneck_parameters}` becomes the baseline bottleneck's parameters with
    their values and provenance (for a mechanism the model itself is the source of)."""
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
    for nic in nic_names(nics):
        argv = _baseline_argv(nic, inputs)
        log(f"{nic}: your scenario")
        base = simulate_runs.outcome(simulate_runs.run(argv))
        ctx = Context(nic=nic, argv=argv, outcome=base, rules_path=inputs.get("rules"), out_dir=out)
        advice = []
        for w in WHATIFS:
            changed = w.change(ctx)
            if changed is None:
                continue
            new_argv, change_text = changed
            log(f"{nic}: what if {w.id}")
            after = simulate_runs.outcome(simulate_runs.run(new_argv))
            gain = _gain(base, after)
            if not _helps(gain):
                ctx.notes.append(f"{w.id} tried ({change_text}): no gain ({gain['rx_gbps']:+.3g} Gbps)")
                continue
            advice.append(
                {
                    "id": w.id,
                    "because": w.because,
                    "source": _source(w.source, base),
                    "change": change_text,
                    "command": simulate_runs.command(new_argv),
                    "argv": new_argv,
                    "predicted": after,
                    "gain": gain,
                }
            )
        advice.sort(
            key=lambda a: (
                -a["gain"]["rx_share_of_offered"],
                -a["gain"]["loss_points"],
                -a["gain"]["updates_share"],
                a["id"],
            )
        )
        report["nics"].append(
            {
                "nic": nic,
                "command": simulate_runs.command(argv),
                "argv": argv,
                "predicted": base,
                "lint": lint(nic, inputs.get("rules"), base),
                "advice": advice,
                "notes": ctx.notes,
            }
        )
    return report
