"""The what-ifs `advise` tries: each names a mechanism the device has (with the seed line or profile
provenance it comes from), a concrete change to the user's input (the argument list of the command
that models the NIC: `simulate`, `vswitch`, `paths` or `flowhost`), and is shown only when running
the model on the changed input helps.

A what-if is (id, because, source, change, command): `change(ctx)` returns the changed argument list
and the change in words, or None when it does not apply to this input. `source` quotes its seed as
`seed NNN lines A-B: '...'` (the quote is checked against the seed text by the tests).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.cli.advice import runs
from nicbench.cli.advice.rules_merge import mergeable
from nicbench.cli.advice.rules_move import movable, move_to_group_1


@dataclass
class Context:
    """One NIC's baseline: the command that models it, its arguments and outcome, the user's rule file
    (rte_flow or OpenFlow), and where changed files go. `run` runs an argument list of that command
    once: a what-if that searches (the cores one) and the advisor's own run of its answer share it."""

    nic: str
    command: str
    argv: list[str]
    outcome: dict[str, Any]
    rules_path: str | None
    out_dir: Path
    notes: list[str] = field(default_factory=list)
    _runs: dict[tuple[str, ...], dict[str, Any]] = field(default_factory=dict)

    def run(self, argv: list[str]) -> dict[str, Any]:
        key = tuple(argv)
        if key not in self._runs:
            self._runs[key] = runs.run(self.command, argv)
        return self._runs[key]


@dataclass(frozen=True)
class WhatIf:
    id: str
    because: str
    source: str
    change: Callable[[Context], tuple[list[str], str] | None]
    command: str = "simulate"


def _flag(argv: list[str], name: str) -> str | None:
    return argv[argv.index(name) + 1] if name in argv else None


def _with(argv: list[str], name: str, value: str) -> list[str]:
    """`argv` with flag `name` set to `value` (replaced where given, appended otherwise)."""
    if name in argv:
        i = argv.index(name)
        return argv[: i + 1] + [value] + argv[i + 2 :]
    return [*argv, name, value]


def _rules_to_group_1(ctx: Context) -> tuple[list[str], str] | None:
    if not (ctx.outcome.get("root_table_occupancy") or 0) > 0:
        return None
    if ctx.rules_path is None:
        return None
    why_not = movable(ctx.rules_path)
    if why_not:
        ctx.notes.append(f"rules_in_non_root_table not tried: {why_not}")
        return None
    moved = move_to_group_1(ctx.rules_path, ctx.out_dir)
    return _with(ctx.argv, "--rules", str(moved)), (
        f"move the rules of Table 0 to group 1 behind one jump rule per port (written to {moved})"
    )


def _merge_chain(ctx: Context) -> tuple[list[str], str] | None:
    """A chain of non-root tables joined by catch-all jumps, merged into its first table (only where
    that keeps what every packet matches; see rules_merge)."""
    if ctx.rules_path is None or not (ctx.outcome.get("tables_traversed_mean") or 0) > 2.0:
        return None  # packets meet at most one table after the root: no chain to shorten
    found = mergeable(ctx.rules_path, ctx.out_dir)
    if isinstance(found, str):
        ctx.notes.append(f"merge_chained_tables not tried: {found}")
        return None
    merged, chain = found
    return _with(ctx.argv, "--rules", str(merged)), (
        f"merge the chain of {len(chain)} tables (groups {chain[0]}-{chain[-1]}) into group {chain[0]}: "
        f"the same rules in one lookup (written to {merged})"
    )


def _installer_on_distinct_core(ctx: Context) -> tuple[list[str], str] | None:
    if _flag(ctx.argv, "--install-core") != "same":
        return None
    return _with(ctx.argv, "--install-core", "distinct"), "install the rules from a core that forwards no traffic"


def _install_in_group_1(ctx: Context) -> tuple[list[str], str] | None:
    if _flag(ctx.argv, "--install-core") is None or (_flag(ctx.argv, "--install-group") or "0") != "0":
        return None
    return _with(ctx.argv, "--install-group", "1"), "insert the updated rules into group 1 instead of Table 0"


def _in_place_update(ctx: Context) -> tuple[list[str], str] | None:
    if _flag(ctx.argv, "--install-op") != "update":
        return None
    return _with(ctx.argv, "--install-op", "update_inplace"), (
        "modify rules with the in-place update API instead of delete + insert"
    )


def _vlan_slices(ctx: Context) -> tuple[list[str], str] | None:
    if _flag(ctx.argv, "--install-match") != "tunnel":
        return None
    return _with(ctx.argv, "--install-match", "vlan"), "slice the network by VLAN instead of VXLAN tunnels"


def _more_cores(ctx: Context) -> tuple[list[str], str] | None:
    """The fewest cores (doubling, up to MAX_CORES_TRIED) at which the host core is no longer the
    bottleneck, or the most tried: a run of the model at each step."""
    if ctx.outcome.get("bottleneck") != "host_core":
        return None
    cores = int(_flag(ctx.argv, "--cores") or 1)
    queues = int(_flag(ctx.argv, "--queues") or 1)
    more, argv = cores, ctx.argv
    while more < MAX_CORES_TRIED:
        more = min(more * 2, MAX_CORES_TRIED)
        argv = _with(_with(ctx.argv, "--cores", str(more)), "--queues", str(max(queues, more)))
        if ctx.run(argv).get("bottleneck") != "host_core":
            break
    if more == cores:
        return None
    return argv, f"spread the traffic over {max(queues, more)} RSS queues polled by {more} cores (now {cores})"


# OpenFlow actions that put a field into the megaflow's mask (OVS un-wildcards what an action needs:
# dec_ttl must see the TTL to drop a packet whose TTL runs out), by the field a NIC refuses to match.
ACTIONS_MATCHING = {"nw_ttl": ("dec_ttl", "mod_nw_ttl")}


def _split_actions(text: str) -> list[str]:
    """An OpenFlow action list split at its top-level commas."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c == "("
        depth -= c == ")"
        if c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def without_actions(text: str, names: tuple[str, ...]) -> tuple[str, list[str]]:
    """An OpenFlow file's text with the actions `names` removed from every flow; the ones removed."""
    out: list[str] = []
    removed: list[str] = []
    for line in text.splitlines():
        at = line.find("actions=")
        if at < 0 or line.lstrip().startswith("#"):
            out.append(line)
            continue
        kept = []
        for a in _split_actions(line[at + len("actions=") :]):
            name = a.strip().split(":")[0].split("(")[0]
            if name in names:
                removed.append(name)
            else:
                kept.append(a)
        out.append(line[: at + len("actions=")] + ",".join(kept or ["drop"]))
    return "\n".join(out) + "\n", removed


def _drop_unmatchable_action(ctx: Context) -> tuple[list[str], str] | None:
    refused = {reason for per_ingress in (ctx.outcome.get("refusals") or {}).values() for reason in per_ingress}
    fields = [f for f in ACTIONS_MATCHING if any(f"cannot match {f}" in r for r in refused)]
    if not fields or ctx.rules_path is None:
        return None
    text, removed = without_actions(
        Path(ctx.rules_path).read_text(), tuple(a for f in fields for a in ACTIONS_MATCHING[f])
    )
    if not removed:
        return None
    names = sorted(set(removed))
    ctx.out_dir.mkdir(parents=True, exist_ok=True)
    out = ctx.out_dir / f"{Path(ctx.rules_path).stem}.no-{'-'.join(names)}.of"
    out.write_text(text)
    return _with(ctx.argv, "--openflow", str(out)), (
        f"drop {' and '.join(names)} from the flows ({len(removed)} action(s): the NIC cannot match "
        f"{', '.join(fields)}, which {' and '.join(names)} puts in the megaflow mask), written to {out}"
    )


def _flows_of(argv: list[str]) -> list[str]:
    """The mix's flows, one text each, from `paths` arguments (`--flow` texts split at ';')."""
    return [f.strip() for i, a in enumerate(argv) if a == "--flow" for f in argv[i + 1].split(";") if f.strip()]


def _with_flows(argv: list[str], flows: list[str]) -> list[str]:
    """`paths` arguments with the mix replaced by `flows` (one `--flow` each)."""
    rest = [a for i, a in enumerate(argv) if a != "--flow" and (i == 0 or argv[i - 1] != "--flow")]
    return [*rest, *(part for f in flows for part in ("--flow", f))]


def _set_field(flow: str, key: str, value: str) -> str:
    """A flow text with `key VALUE` set (replaced where given) — the `paths` grammar's keywords."""
    tokens = flow.split()
    for i in range(3, len(tokens) - 1):
        if tokens[i].lower() == key:
            return " ".join([*tokens[: i + 1], value, *tokens[i + 2 :]])
    return " ".join([*tokens, key, value])


def _model_change(advice_id: str) -> Callable[[Context], tuple[list[str], str] | None]:
    """The what-if of one of the off-path model's own advices that changes one flow field."""

    def change(ctx: Context) -> tuple[list[str], str] | None:
        found = next((a for a in ctx.outcome.get("model_advice") or [] if a["id"] == advice_id), None)
        if found is None or not found.get("change"):
            return None
        c = found["change"]
        flows = _flows_of(ctx.argv)
        value = f"{int(c['value'])}B" if c["field"] in ("in", "size") else str(int(c["value"]))
        if c["field"] == "size":  # the payload is the third word of a flow, not a keyword
            words = flows[c["flow"]].split()
            flows[c["flow"]] = " ".join([*words[:2], value, *words[3:]])
        else:
            flows[c["flow"]] = _set_field(flows[c["flow"]], c["field"], value)
        return _with_flows(ctx.argv, flows), f"flow {c['flow']}: {c['field']} {value} ({found['text']})"

    return change


def _cores_needed(ctx: Context) -> tuple[list[str], str] | None:
    needed = ctx.outcome.get("cores_needed")
    cores = int(_flag(ctx.argv, "--cores") or 1)
    if not ctx.outcome.get("loss_ratio") or not needed or needed <= cores:
        return None
    return _with(ctx.argv, "--cores", str(needed)), f"meter on {needed} cores (now {cores}), the fewest without drops"


def _cores_not_threads(ctx: Context) -> tuple[list[str], str] | None:
    if "--smt" not in ctx.argv or not ctx.outcome.get("loss_ratio"):
        return None
    cores = int(_flag(ctx.argv, "--cores") or 1)
    argv = _with([a for a in ctx.argv if a != "--smt"], "--cores", str(2 * cores))
    return argv, f"run the {2 * cores} processes on {2 * cores} physical cores instead of {cores} cores' SMT siblings"


def _bound_intra_machine(ctx: Context) -> tuple[list[str], str] | None:
    """seed 004's P − N: every host<->SoC flow offered its part of the bound the model's advice gives
    (the change names one flow's part; the others are bounded in the same proportion)."""
    found = next((a for a in ctx.outcome.get("model_advice") or [] if a["id"] == "bound_h2s_to_p_minus_n"), None)
    if found is None or not found.get("change"):
        return None
    c = found["change"]
    rates = [f["gbps"] for f in ctx.outcome["flows"]]
    if not rates[c["flow"]] > 0:
        return None
    scale = c["value"] / rates[c["flow"]]
    flows = _flows_of(ctx.argv)
    bounded, total = [], 0.0
    for i, flow in enumerate(flows):
        if flow.split()[0].lower().startswith(("host", "soc")) and rates[i] > 0:
            flows[i] = _set_field(flow, "@", f"{rates[i] * scale:.6g}Gbps")
            bounded.append(f"flow {i} @ {rates[i] * scale:.4g}Gbps")
            total += rates[i] * scale
    return _with_flows(ctx.argv, flows), f"bound the host<->SoC flows to {total:.4g} Gb/s ({', '.join(bounded)})"


def _both_endpoints(ctx: Context) -> tuple[list[str], str] | None:
    """seed 004's ①+②: one client flow to one endpoint, split half to each (the model's advice)."""
    if not any(a["id"] == "use_paths_1_and_2_concurrently" for a in ctx.outcome.get("model_advice") or []):
        return None
    flows = _flows_of(ctx.argv)
    client = [f for f in flows if f.split()[0].lower().startswith("client")]
    if len(flows) != 1 or len(client) != 1 or " x " in f" {flows[0].lower()} ":
        ctx.notes.append(
            "use_paths_1_and_2_concurrently not tried: the split is run for one client flow without a share"
        )
        return None
    words = flows[0].split()
    other = "client->host" if words[0].lower().endswith("soc") else "client->soc"
    split = [" ".join([*words, "x", "50%"]), " ".join([other, *words[1:], "x", "50%"])]
    return _with_flows(ctx.argv, split), (
        f"send half of the requests to the other endpoint ({other}): paths 1 and 2 concurrently"
    )


# The most forwarding cores the spread what-if tries: a 2-socket server's worth.
MAX_CORES_TRIED = 64


WHATIFS: tuple[WhatIf, ...] = (
    WhatIf(
        "meter_on_more_cores",
        "a flow-meter process sorts every packet into its flow table on one core; the load balancer spreads the "
        "flows over processes, so the cores needed grow with the packet rate and the flow count",
        "seed 003 line 124: 'with 8 cores we are able to process a 100 Gbit stream. Dropping to the smallest "
        "possible packet size would need more than a magnitude more compute power'",
        _cores_needed,
        command="flowhost",
    ),
    WhatIf(
        "cores_not_smt_threads",
        "one flow-meter process already loads its core fully; a second on the SMT sibling shares the same "
        "execution units",
        "seed 003 line 86: 'doubling the number of Threads in this scenario did not provide any performance gain'",
        _cores_not_threads,
        command="flowhost",
    ),
    WhatIf(
        "avoid_skewed_soc_writes",
        "the SoC has no DDIO: WRITEs into a small address range land on few DRAM banks, which serialize",
        "seed 004 line 153: 'The SoC cores on our testbed (ARM Cortex-A72 in Bluefield-2) do not support DDIO. It "
        "makes one-sided RDMA requests more vulnerable to skewed memory accesses'",
        _model_change("avoid_skewed_soc_writes"),
        command="paths",
    ),
    WhatIf(
        "segment_large_reads",
        "a READ larger than the NIC's completion buffer blocks the NIC core until its completions drain "
        "(head-of-line blocking); smaller requests fit",
        "seed 004 line 170: 'sending large READ requests to SoC can cause head-of-line blocking and collapses the "
        "performance, so the request should be proactively segmented into smaller ones'",
        _model_change("segment_large_reads"),
        command="paths",
    ),
    WhatIf(
        "bound_h2s_to_p_minus_n",
        "host<->SoC traffic crosses PCIe1 twice; beyond P - N (the PCIe link less the network ports) it takes "
        "the PCIe that client traffic needs",
        "seed 004 line 217: 'if the inter-machine communication saturates the NIC, the bandwidth used by SNIC 3 "
        "should no larger than P - N, where P and N are the limit of the PCIe and the network, respectively'",
        _bound_intra_machine,
        command="paths",
    ),
    WhatIf(
        "use_paths_1_and_2_concurrently",
        "each endpoint of the SmartNIC may use only part of the NIC's cores; client requests to both endpoints "
        "use them all",
        "seed 004 line 217: 'Sending requests from clients to the host and the SoC concurrently (SNIC ①+②) can best "
        "utilize NIC cores to handle small RDMA requests'",
        _both_endpoints,
        command="paths",
    ),
    WhatIf(
        "doorbell_batching_soc_only",
        "posting a request costs an MMIO; doorbell batching posts N with one, which pays off on the SoC and not "
        "on the host (the NIC reads host memory slower)",
        "seed 004 line 196: 'enabling doorbell batching is critical for SNIC ③ at the SoC side, but is negative "
        "at the host side for small batch sizes'",
        _model_change("doorbell_batching_soc_only"),
        command="paths",
    ),
    WhatIf(
        "offload_without_unmatchable_action",
        "OVS puts every field an action needs into the megaflow's mask (dec_ttl needs the TTL); a NIC whose "
        "driver cannot match that field refuses the megaflow, which then runs on the host's datapath",
        "{refusal_sources}",
        _drop_unmatchable_action,
        command="vswitch",
    ),
    WhatIf(
        "rules_in_non_root_table",
        "Table 0 (the root table) is a firmware-managed hash table: lookups walk collision chains that grow "
        "with occupancy, and above ~85% occupancy throughput collapses; non-root tables keep line rate",
        "seed 000 lines 112-113: 'using a non-root table the NIC achieves line-rate throughput and low "
        "predictable latency even with 2M entries in Table 1'",
        _rules_to_group_1,
    ),
    WhatIf(
        "merge_chained_tables",
        "each table a packet jumps through is one more dependent lookup in the NIC's steering pipeline; "
        "rules that match the same fields exactly can share one table",
        "seed 000 lines 68-70: 'spreading an increasing number of rules across four or more tables in these NICs "
        "results in substantial throughput degradation (23–88% when using 4–16 tables)'",
        _merge_chain,
    ),
    WhatIf(
        "install_from_distinct_core",
        "a same-core installer stops forwarding while the vendor's update API runs; a distinct core keeps "
        "the forwarding core's time for packets",
        "seed 000 lines 182-184: 'when the insertions are generated from the same core running the forwarding "
        "NF, we observe a significant performance drop'",
        _installer_on_distinct_core,
    ),
    WhatIf(
        "install_in_non_root_table",
        "rule insertion into Table 0 runs one to two orders of magnitude slower than into Table 1",
        "seed 000 lines 172-173: 'The insertion rate ranges between 1 K to 10 K rules per second for Table 0 "
        "and 10 K to 500 K rules'",
        _install_in_group_1,
    ),
    WhatIf(
        "vlan_not_tunnel_slices",
        "a rule matching a tunnel (VXLAN) takes the NIC longer to insert than one matching a VLAN tag",
        "seed 001 line 61: 'VLAN-based rules being up to 50% faster than tunnel-based rules (Fig. 5c)'",
        _vlan_slices,
    ),
    WhatIf(
        "in_place_update",
        "a rule update through the standard API is a deletion then an insertion; the in-place update API "
        "changes the actions in one operation",
        "seed 001 line 61: 'Our dedicated update API performs up to 80% faster (Fig. 6).'",
        _in_place_update,
    ),
    WhatIf(
        "spread_over_cores",
        "the host core's per-packet work bounds what one core forwards; RSS spreads the flows over queues "
        "each polled by its own core",
        "the profile's host-core parameters: {bottleneck_parameters}",
        _more_cores,
    ),
)
