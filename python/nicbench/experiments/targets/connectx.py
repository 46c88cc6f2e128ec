"""ConnectX model targets: the PAM'21 experiments on a virtual ConnectX (nicbench.connectx → native model).

- `connectx.forward`  (Fig. 2): pre-installed rules in Table 0 or Tables 1..T, traffic at a rate;
                     throughput, loss, latency percentiles, steering-model observables. It takes
                     every option of `nicbench simulate` (`nicbench.options.connectx`): the host's
                     `cores`, `queues`, `queue_map`, and an installer (`install_rate` or
                     `install_batch`, `install_start`, ...), whose install metrics it then reports.
- `connectx.batch_install` (Fig. 3): one batch of rule operations at `start` while forwarding;
                     the throughput timeline (time series) plus outage / recovery metrics.
- `connectx.rate_install`  (Fig. 4): rule operations at a steady rate while forwarding.
- `connectx.install_rate`  (Fig. 5/6): control-plane speed of a batch (insert / delete / update /
                     in-place update) by table, match type and number of actions; no load.

Every traffic target takes `nic` (a profile name: `--set nic=connectx6` predicts another
NIC with the same specs) and `baseline`: with `no_install` / `one_table` the target also
runs the same scenario without the rule installer / with all rules in one table, and
reports `rx_ratio` and `latency_ratio` against it (the paper's "2×", "+82%", "ten-fold").
`connectx.install_rate` has `versus_match` / `versus_op` for the same purpose (`rate_ratio`).

Invariant: a run's result depends only on its parameters, the profile and `ctx.seed`;
profile overrides (calibration) come from `nicbench.profiles.parameter_overrides`.
"""

from __future__ import annotations

import math
from typing import Any

from nicbench import connectx
from nicbench.experiments.targets import RunContext, target
from nicbench.options import connectx as options
from nicbench.options.connectx import INSTALL_TARGET_NAMES, OPTIONS
from nicbench.profiles import above_link
from nicbench.traffic import WIRE_OVERHEAD_BYTES, GenConfig, line_rate_mpps
from nicbench.units import Rate, parse_duration_ns
from nicbench.vocab.params import Param

VERSION = "1"

_RESULT_METRICS = {
    "offered_gbps": "Gbps",
    "offered_mpps": "Mpps",
    "rx_gbps": "Gbps",
    "rx_mpps": "Mpps",
    "tx_gbps": "Gbps",
    "loss_ratio": "",
    "rx_drop_gbps": "Gbps",
    "dropped_imissed": "packets",
    "dropped_nic": "packets",
    "dropped_packets": "packets",
    **{f"latency_{p}_us": "us" for p in connectx.LATENCY_PERCENTILES},
    "root_table_occupancy": "",
    "tables_traversed_mean": "",
    "steering_cache_hit_rate": "",
    "sim_packets": "packets",
    "sim_wall_s": "s",
    "sim_mpps": "Mpps",
}
_INSTALL_METRICS = {"install_rules": "rules", "install_s": "s", "install_rate_krules_s": "krules/s"}
_RATIO_METRICS = {"rx_ratio": "", "latency_ratio": "", "latency_mean_ratio": ""}
_TIMELINE_METRICS = {
    "outage_s": "s",
    "recovered": "",
    "rx_gbps_before": "Gbps",
    "rx_gbps_after": "Gbps",
    "rx_gbps_min": "Gbps",
}

# connectx.forward reports the install metrics only with an installer (`install_rate`, `install_batch`).
_FORWARD_METRICS = {**_RESULT_METRICS, **_RATIO_METRICS, **_INSTALL_METRICS}
_BATCH_METRICS = {
    **_RESULT_METRICS,
    **_RATIO_METRICS,
    **_TIMELINE_METRICS,
    **_INSTALL_METRICS,
    "lost_packets": "packets",
}
_RATE_METRICS = {**_RESULT_METRICS, **_RATIO_METRICS, **_INSTALL_METRICS}

# Parameters every traffic target takes, in the order they have always had.
_TRAFFIC = (
    "nic",
    "rules",
    "kind",
    "hit_fraction",
    "rules_file",
    "size",
    "rate",
    "pps",
    "flows",
    "proto",
    "order",
    "trace",
    "duration",
    "warmup",
    "bin",
    "baseline",
    "timeline",
    "generator",
)
# The host's cores and queues, which the traffic targets gained with the option table (issue 34), and
# connectx.forward's installer (`nicbench simulate --install-*`). Added after runs were stored: left out
# of run keys and seeds while at their defaults (`target(added=...)`), so those runs keep theirs.
_TOPOLOGY = ("cores", "queues", "queue_map")
# The generated traffic's protocol and flow order, added later still (the same rule).
_TRAFFIC_ADDED = ("proto", "order")
_FORWARD_INSTALL = (
    "install_rate",
    "install_batch",
    "install_start",
    "install_period",
    "install_core",
    "install_group",
    "install_op",
    "install_match",
    "install_actions",
)


def _ns(text: str) -> int:
    return parse_duration_ns(text)


def _traffic_params(*, duration: str) -> list[Param]:
    return [
        OPTIONS[name].param(default=_ns(duration)) if name == "duration" else OPTIONS[name].param() for name in _TRAFFIC
    ]


def _above_line_rate(p: dict[str, Any]) -> str | None:
    """Generated traffic faster than the NIC's port, refused before a sweep starts (the model refuses
    it too, but run by run); a replayed trace is paced by the port instead."""
    if p.get("trace"):
        return None
    if p.get("pps"):
        wire_gbps = float(p["pps"]) * (p["size"] + WIRE_OVERHEAD_BYTES) * 8 / 1e9
        asked = f"pps {float(p['pps']) / 1e6:g} Mpps"
    else:
        wire_gbps, asked = float(p["rate"]) / 1e9, f"rate {float(p['rate']) / 1e9:g} Gbps"
    link = above_link(wire_gbps, p["nic"])
    if link is None:
        return None
    return (
        f"{asked} is above the line rate of nic {p['nic']} ({link:g} Gbps on the wire, at most "
        f"{line_rate_mpps(link, p['size']):.3f} Mpps of {p['size']} B frames); give at most that"
    )


def _install_params(*, start_default: int, group_doc: str) -> list[Param]:
    """The installer's options under the install targets' names (`start`, `group`, `core`, ...)."""
    names = INSTALL_TARGET_NAMES
    return [
        OPTIONS["install_start"].param(names["install_start"], default=start_default),
        *[
            OPTIONS[o].param(names[o], help=group_doc if o == "install_group" else None)
            for o in ("install_group", "install_core", "install_op", "install_match", "install_actions")
        ],
    ]


def _values(p: dict[str, Any]) -> dict[str, Any]:
    """A point's option values by option name: the install targets' parameters under the table's names."""
    values = dict(p)
    for option, name in INSTALL_TARGET_NAMES.items():
        if name in p:
            values[option] = p[name]
    return values


def _why_not(p: dict[str, Any]) -> str | None:
    """What refuses a point before anything runs: a rate above the line rate, then the rules between
    the options (`nicbench.options.connectx.check`, worded with the spec's names)."""
    return _above_line_rate(p) or options.check(_values(p))


def _traffic(p: dict[str, Any], seed: int) -> dict[str, Any]:
    rate = Rate(p["pps"], "pps") if p.get("pps") else Rate(p["rate"], "bps")
    return connectx.traffic_from_gen(
        GenConfig(
            flows=p["flows"],
            size=p["size"],
            rate=rate,
            duration_ns=None,
            seed=seed,
            proto=p.get("proto", "udp"),
            round_robin=p.get("order", "random") == "round-robin",
        )
    )


def _scenario(p: dict[str, Any], ctx: RunContext, *, groups: int, install: dict[str, Any] | None) -> dict[str, Any]:
    trace = p.get("trace")
    return connectx.scenario(
        nic=p["nic"],
        rules=options.rules(p, groups, ctx.seed),
        duration_ns=p["duration"],
        traffic=None if trace else _traffic(p, ctx.seed),
        trace=trace,
        install=install,
        seed=ctx.seed,
        warmup_ns=p["warmup"],
        timeline_bin_ns=p["bin"],
        generator=p["generator"],
        **options.topology(p),
    )


def _ratios(metrics: dict[str, float], base: dict[str, float]) -> dict[str, float]:
    def ratio(a: float, b: float) -> float:
        return a / b if math.isfinite(a) and math.isfinite(b) and b != 0 else math.nan

    return {
        "rx_ratio": ratio(metrics["rx_gbps"], base["rx_gbps"]),
        "latency_ratio": ratio(metrics["latency_p50_us"], base["latency_p50_us"]),
        "latency_mean_ratio": ratio(metrics["latency_mean_us"], base["latency_mean_us"]),
    }


def _keep(metrics: dict[str, float], declared: dict[str, str]) -> dict[str, float]:
    return {k: v for k, v in metrics.items() if k in declared}


def _record_timeline(ctx: RunContext, result: dict[str, Any]) -> None:
    for row in result.get("timeline") or []:
        if not isinstance(row, dict) or row.get("t_s") is None:
            continue
        t = float(row["t_s"])
        for metric in ("rx_gbps", "rx_mpps"):
            if row.get(metric) is not None:
                ctx.record(metric, float(row[metric]), _RESULT_METRICS[metric], t=t)
    for event in result.get("events") or []:
        if isinstance(event, dict) and event.get("t_s") is not None:
            ctx.record(f"event:{event.get('what', 'event')}", 1.0, "", t=float(event["t_s"]))


def _run(
    p: dict[str, Any], ctx: RunContext, *, groups: int, install: dict[str, Any] | None, timeline: bool
) -> tuple[dict[str, Any], dict[str, float]]:
    """Run the scenario (and its baseline); returns the raw result and the metrics."""
    result = connectx.simulate(_scenario(p, ctx, groups=groups, install=install))
    metrics = connectx.result_metrics(result)
    baseline = p.get("baseline", "none")
    if baseline == "no_install":
        base = connectx.result_metrics(connectx.simulate(_scenario(p, ctx, groups=groups, install=None)))
        metrics.update(_ratios(metrics, base))
    elif baseline == "one_table":
        base = connectx.result_metrics(connectx.simulate(_scenario(p, ctx, groups=min(groups, 1), install=install)))
        metrics.update(_ratios(metrics, base))
    else:
        metrics.update({k: math.nan for k in _RATIO_METRICS})
    if timeline:
        _record_timeline(ctx, result)
    return result, metrics


@target(
    "connectx.forward",
    params=[
        OPTIONS["groups"].param(),
        *_traffic_params(duration="200ms"),
        *OPTIONS.params(*_TOPOLOGY, *_FORWARD_INSTALL),
    ],
    metrics=_FORWARD_METRICS,
    version=VERSION,
    why_not=_why_not,
    backends=("virtual", "dpdk"),
    added=(*_TOPOLOGY, *_FORWARD_INSTALL, *_TRAFFIC_ADDED),
)
def forward(p: dict, ctx: RunContext) -> dict:
    """PAM'21 Fig. 2: forwarding through pre-installed rules in Table 0 or Tables 1..T; with an installer
    (`install_rate` or `install_batch`, as `nicbench simulate` has it), also its rule operations."""
    install = options.installer(p)
    _, metrics = _run(p, ctx, groups=p["groups"], install=install, timeline=p["timeline"])
    # The install metrics only when there is an installer: the runs without one record what they always did.
    kept = _keep(metrics, _FORWARD_METRICS)
    return kept if install is not None else {k: v for k, v in kept.items() if k not in _INSTALL_METRICS}


@target(
    "connectx.batch_install",
    params=[
        *_traffic_params(duration="8s"),
        OPTIONS["install_batch"].param(
            INSTALL_TARGET_NAMES["install_batch"], default=1000, help="rule operations in the batch"
        ),
        *_install_params(
            start_default=_ns("2.1s"),
            group_doc="target table: 0 = root table; g ≥ 1 = table g, "
            "the pre-installed rules laid out over tables 1..g",
        ),
        *OPTIONS.params(*_TOPOLOGY),
    ],
    metrics=_BATCH_METRICS,
    version=VERSION,
    why_not=_why_not,
    added=(*_TOPOLOGY, *_TRAFFIC_ADDED),
)
def batch_install(p: dict, ctx: RunContext) -> dict:
    """PAM'21 Fig. 3: throughput over time while one batch of rules is installed."""
    install = options.installer(_values(p))
    result, metrics = _run(p, ctx, groups=p["group"], install=install, timeline=True)
    metrics.update(connectx.timeline_stats(result, event_s=p["start"] / 1e9))
    metrics["lost_packets"] = metrics["dropped_packets"]
    return _keep(metrics, _BATCH_METRICS)


@target(
    "connectx.rate_install",
    params=[
        *_traffic_params(duration="300ms"),
        OPTIONS["install_rate"].param(default=10_000.0),
        OPTIONS["install_period"].param(),
        *_install_params(
            start_default=0, group_doc="target table: 0 = root table; g ≥ 1 = table g (rules laid out over 1..g)"
        ),
        *OPTIONS.params(*_TOPOLOGY),
    ],
    metrics=_RATE_METRICS,
    version=VERSION,
    why_not=_why_not,
    added=(*_TOPOLOGY, *_TRAFFIC_ADDED),
)
def rate_install(p: dict, ctx: RunContext) -> dict:
    """PAM'21 Fig. 4: forwarding while rules are installed at a steady rate."""
    install = options.installer(_values(p))
    _, metrics = _run(p, ctx, groups=p["group"], install=install, timeline=p["timeline"])
    return _keep(metrics, _RATE_METRICS)


# Lower bounds on control-plane speed [rules/s], used only to size the simulated horizon of
# `connectx.install_rate` (a batch that has not finished by then reports install_complete = 0).
_HORIZON_FLOOR_RULES_PER_S = {0: 250.0, 1: 10_000.0}
_IDLE_TRAFFIC = GenConfig(flows=1, size=64, rate=Rate(1_000.0, "pps"), duration_ns=None)


def install_horizon_ns(rules: int, group: int, op: str) -> int:
    ops = rules * (2 if op == "update" else 1)
    floor = _HORIZON_FLOOR_RULES_PER_S[0 if group == 0 else 1]
    return int((1.0 + ops / floor) * 1e9)


def _install_once(p: dict[str, Any], ctx: RunContext, *, op: str, match: str) -> dict[str, float]:
    rules = p["rules"]
    pre = 0 if op == "insert" else rules  # delete / update operate on rules that exist
    install = connectx.batch_install(
        rules, start_ns=1_000_000, group=p["group"], core="distinct", op=op, match=match, actions=p["actions"]
    )
    sc = connectx.scenario(
        nic=p["nic"],
        rules=connectx.generated_rules(pre, p["group"], seed=ctx.seed),
        duration_ns=install_horizon_ns(rules, p["group"], op),
        traffic=_IDLE_TRAFFIC,
        install=install,
        seed=ctx.seed,
        timeline_bin_ns=1_000_000_000,
        latency=False,
        queues=False,
    )
    metrics = connectx.result_metrics(connectx.simulate(sc))
    done = metrics["install_rules"]
    metrics["install_complete"] = 1.0 if math.isfinite(done) and done >= rules else 0.0
    return metrics


@target(
    "connectx.install_rate",
    params=[
        OPTIONS["nic"].param(),
        OPTIONS["install_group"].param("group", help="target table (0 = root table)"),
        OPTIONS["install_batch"].param(
            "rules", default=1000, help="rules in the batch (delete/update: pre-installed first)"
        ),
        OPTIONS["install_op"].param("op"),
        OPTIONS["install_match"].param("match"),
        OPTIONS["install_actions"].param("actions"),
        Param(
            "versus_match",
            "choice",
            "none",
            "also run this match type and report rate_ratio",
            choices=("none", *connectx.MATCH_TYPES),
        ),
        Param(
            "versus_op",
            "choice",
            "none",
            "also run this operation and report rate_ratio",
            choices=("none", *connectx.OPS),
        ),
    ],
    metrics={**_INSTALL_METRICS, "install_complete": "", "rate_ratio": "", "sim_wall_s": "s"},
    version=VERSION,
    backends=("virtual", "dpdk"),
)
def install_rate(p: dict, ctx: RunContext) -> dict:
    """PAM'21 Fig. 5/6: rule operations per second of one batch (installer on its own core)."""
    metrics = _install_once(p, ctx, op=p["op"], match=p["match"])
    out = {k: metrics[k] for k in (*_INSTALL_METRICS, "install_complete", "sim_wall_s")}
    out["rate_ratio"] = math.nan
    if p["versus_match"] != "none" or p["versus_op"] != "none":
        other = _install_once(
            p,
            ctx,
            op=p["op"] if p["versus_op"] == "none" else p["versus_op"],
            match=p["match"] if p["versus_match"] == "none" else p["versus_match"],
        )
        a, b = out["install_rate_krules_s"], other["install_rate_krules_s"]
        out["rate_ratio"] = a / b if math.isfinite(a) and math.isfinite(b) and b > 0 else math.nan
    return out
