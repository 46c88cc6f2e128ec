"""The ConnectX model's options: `nicbench simulate`'s flags and the `connectx.*` targets' parameters.

`OPTIONS` is the table (see `nicbench.options`). Option names are the spec's: `connectx.forward`
takes every one of them, so a spec can set or sweep whatever the command line can (the CLI's
composite `--gen` is the spec's `size`, `rate`/`pps` and `flows`; the seed is the run's). The
install targets take the installer's options under the names they have always had (`batch`, `start`,
`group`, `core`, `op`, `match`, `actions`: `INSTALL_TARGET_NAMES`).

How option values become a scenario, and which combinations are refused, is defined here once for
both: `check` (one line naming the options as the caller spells them), `installer`, `topology` and
`rules`.
"""

from __future__ import annotations

import math
from typing import Any

from nicbench import connectx, models
from nicbench.options import Option, Options, Spell, param_spelling
from nicbench.rules import RULE_SET_KINDS
from nicbench.traffic import MAX_FRAME_BYTES, MIN_FRAME_BYTES
from nicbench.units import parse_duration_ns

__all__ = [
    "OPTIONS",
    "MAX_GROUPS",
    "MAX_ACTIONS",
    "MAX_PORT_QUEUES",
    "KINDS",
    "BASELINES",
    "INSTALL_OPTIONS",
    "INSTALL_TARGET_NAMES",
    "check",
    "installer",
    "topology",
    "rules",
    "parse_install_rate",
]

# Tables the generated rules spread over and a rule operation's target table; actions of one operated
# rule: the model's caps (`LIMITS` in nicbench-models connectx/request.rs, enforced there).
MAX_GROUPS = models.limits("connectx")["max_groups"]
MAX_ACTIONS = models.limits("connectx")["max_actions"]
# A port's rx queues (a u16 queue id in rte_flow and in the scenario).
MAX_PORT_QUEUES = 65535
# The generated rule-set kinds (the rules crate's table).
KINDS = RULE_SET_KINDS
BASELINES = ("none", "no_install", "one_table")


def parse_install_rate(text: str) -> float:
    """`100k/s`, `10000/s`, `2.5k` → rules per second (the command line's spelling; a spec writes the number)."""
    from nicbench.errors import NicbenchError

    s = text.strip().lower().removesuffix("rules/s").removesuffix("/s").strip()
    try:
        if s and s[-1] in "km":
            rate = float(s[:-1]) * (1e3 if s[-1] == "k" else 1e6)
        else:
            rate = float(s)
    except ValueError:
        raise NicbenchError(f"--install-rate: expected a rate such as 100k/s, found {text!r}") from None
    if not (math.isfinite(rate) and rate > 0):
        raise NicbenchError(f"--install-rate: expected a positive finite rate such as 100k/s, found {text!r}")
    return rate


_NS = parse_duration_ns

OPTIONS = Options(
    [
        Option(
            "nic",
            "str",
            connectx.DEFAULT_NIC,
            "Profile name (see profiles/) or a .toml path.",
            flag="--nic",
            profile_kinds=models.profile_kinds("connectx"),
        ),
        Option(
            "rules_file",
            "str",
            None,
            "Pre-installed rules: a testpmd `flow create` or tc flower file.",
            flag="--rules",
            none_word="none",
            path=True,
            cli_metavar="FILE",
        ),
        Option(
            "rules",
            "count",
            1000,
            "Pre-installed generated exact-match rules instead (65536, 2M).",
            flag="--generated",
            cli_default=None,
            maximum=connectx.MAX_RUN_RULES,
            cli_metavar="N",
            cli_note="[default: none; a spec's: 1000]",
        ),
        Option("kind", "choice", "exact5", "Kind of the generated rules.", choices=KINDS),
        Option(
            "hit_fraction", "fraction", 0.0, "Share of the traffic that hits a generated rule (0: the default rule)."
        ),
        Option(
            "groups",
            "int",
            0,
            "With generated rules: 0 = all in Table 0; T = spread over Tables 1..T (PAM'21 layout).",
            flag="--groups",
            minimum=0,
            maximum=MAX_GROUPS,
        ),
        Option(
            "trace",
            "str",
            None,
            "Replay this pcap at its timestamps.",
            flag="--trace",
            none_word="none",
            path=True,
            cli_metavar="PCAP",
        ),
        Option(
            "size",
            "size_bytes",
            1500,
            "Generated frames' size incl. FCS.",
            minimum=MIN_FRAME_BYTES,
            maximum=MAX_FRAME_BYTES,
        ),
        Option("rate", "rate_bps", 100e9, "Generated traffic's rate on the wire (used when pps is 'none')."),
        Option(
            "pps",
            "rate_pps",
            None,
            "Generated traffic's packet rate instead of `rate` (the paper's 5Mpps latency runs).",
            none_word="none",
        ),
        Option("flows", "count", 10_000, "Generated traffic's distinct flows.", minimum=1),
        Option("proto", "choice", "udp", "Generated traffic's transport protocol.", choices=("udp", "tcp")),
        Option(
            "order",
            "choice",
            "random",
            "How generated packets pick their flow: random (independent draws) or round-robin (the flows "
            "take turns, as a generator incrementing addresses per packet does).",
            choices=("random", "round-robin"),
        ),
        Option(
            "duration",
            "duration_ns",
            _NS("200ms"),
            f"Virtual time to simulate (at most {connectx.MAX_DURATION_NS / 1e9:g} s).",
            flag="--duration",
            cli_default=None,
            minimum=1,
            cli_note="[default: the trace's own duration with --trace, else 1s]",
        ),
        Option("warmup", "duration_ns", 0, "Virtual time before measuring.", flag="--warmup", cli_default="0s"),
        Option(
            "bin",
            "duration_ns",
            connectx.DEFAULT_TIMELINE_BIN_NS,
            f"Throughput timeline bin (at most {connectx.MAX_TIMELINE_BINS:,} bins per run).",
            flag="--bin",
            cli_default=None,
            minimum=1,
            cli_note="[default: 10ms, or a 20th of a shorter run than 200ms]",
        ),
        Option(
            "install_rate",
            "float",
            None,
            "Insert rules at this rate during the run (100k/s; rules per second).",
            flag="--install-rate",
            cli_default=None,
            none_word="none",
            minimum=1e-3,
            cli_text=parse_install_rate,
            cli_metavar="RATE",
        ),
        Option(
            "install_batch",
            "count",
            None,
            "Insert one batch of this many rules (10k) at --install-start.",
            flag="--install-batch",
            cli_default=None,
            none_word="none",
            minimum=1,
            maximum=connectx.MAX_RUN_RULES,
            cli_metavar="N",
        ),
        Option(
            "install_start",
            "duration_ns",
            0,
            "When the installer starts (virtual time).",
            flag="--install-start",
            cli_default="0s",
        ),
        Option(
            "install_period",
            "duration_ns",
            0,
            "With --install-rate: the installer wakes once per period and "
            "installs the period's rate × period rules back to back (PAM'21's installer: 1ms); 0s: one rule at a "
            "time.",
            flag="--install-period",
            cli_default="0s",
        ),
        Option(
            "install_core",
            "choice",
            "same",
            "Installer on the core of queue 0 (it forwards nothing while it "
            "installs) or on a distinct core that polls no queue.",
            flag="--install-core",
            choices=connectx.CORES,
        ),
        Option(
            "install_group",
            "int",
            0,
            "Target table of the rule operations: 0 = root table; g ≥ 1 = table g.",
            flag="--install-group",
            minimum=0,
            maximum=MAX_GROUPS,
        ),
        Option("install_op", "choice", "insert", "Rule operation.", flag="--install-op", choices=connectx.OPS),
        Option(
            "install_match",
            "choice",
            "ipv4",
            "Match type of the operated rules.",
            flag="--install-match",
            choices=connectx.MATCH_TYPES,
        ),
        Option(
            "install_actions",
            "int",
            1,
            "Actions per operated rule.",
            flag="--install-actions",
            minimum=1,
            maximum=MAX_ACTIONS,
        ),
        Option(
            "cores",
            "int",
            1,
            "Forwarding cores on the host: queue q is polled by core q mod N (same-core "
            "installer: the core of queue 0).",
            flag="--cores",
            minimum=1,
            maximum=connectx.MAX_CORES,
        ),
        Option(
            "queue_map",
            "str",
            None,
            "Which core polls each queue instead of q mod N, e.g. 0:0,1:0,2:1,3:1 (every "
            "queue of --queues and of the rules mapped, cores below --cores).",
            flag="--queue-map",
            none_word="none",
            cli_metavar="Q:C,...",
        ),
        Option(
            "queues",
            "int",
            1,
            "The port's rx queues: packets no rule sends anywhere go through its default RSS over 0..N-1.",
            flag="--queues",
            minimum=1,
            maximum=MAX_PORT_QUEUES,
        ),
        Option(
            "generator",
            "choice",
            "play",
            "The measurement server's generator setup (fixed latency only): play = "
            "a trace looped from memory (PAM'21 Fig. 2), timed_replay = a pcap replayed at its timestamps "
            "(Figs. 3-4).",
            flag="--generator",
            choices=connectx.GENERATOR_SETUPS,
        ),
        Option(
            "baseline",
            "choice",
            "none",
            "Also run a baseline scenario and report ratios to it: no_install = "
            "without the installer, one_table = all rules in one table.",
            choices=BASELINES,
        ),
        Option("timeline", "bool", False, "Record the throughput timeline as time series."),
    ]
)

# The installer's options; the install targets name them as they always have.
INSTALL_OPTIONS = (
    "install_start",
    "install_period",
    "install_core",
    "install_group",
    "install_op",
    "install_match",
    "install_actions",
)
INSTALL_TARGET_NAMES = {
    "install_batch": "batch",
    "install_start": "start",
    "install_group": "group",
    "install_core": "core",
    "install_op": "op",
    "install_match": "match",
    "install_actions": "actions",
}


def _seconds(ns: int) -> str:
    """A duration as people write it: 5ms, 2.1s, 1.5us."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:g}{unit}"
    return f"{ns}ns"


def _shown(name: str, value: Any) -> str:
    """A value as a message shows it: durations in seconds."""
    return _seconds(value) if OPTIONS[name].kind == "duration_ns" and isinstance(value, int) else str(value)


def check(values: dict[str, Any], spell: Spell = param_spelling) -> str | None:
    """What is wrong with this combination of option values (the values alone are valid), in one line
    naming the options by `spell`; None when it can run. `values` holds every option of `OPTIONS`
    that the caller has (canonical values; `duration` and `bin` as the run will have them)."""
    rate, batch = values.get("install_rate"), values.get("install_batch")
    start = values.get("install_start", 0)
    if rate is not None and batch is not None:
        return f"give either {spell('install_rate')} or {spell('install_batch')}, not both"
    if rate is None and batch is None:
        if start:
            return (
                f"{spell('install_start')} {_seconds(start)} needs an installer: add {spell('install_rate')} "
                f"RATE or {spell('install_batch')} N"
            )
        for name in INSTALL_OPTIONS:
            if name in values and values[name] != OPTIONS[name].default:
                return (
                    f"{spell(name)} {_shown(name, values[name])} applies only with an installer: "
                    f"{spell('install_rate')} RATE or {spell('install_batch')} N"
                )
    elif rate is None and values.get("install_period", 0):
        period = _seconds(values["install_period"])
        return f"{spell('install_period')} {period} applies only with {spell('install_rate')} RATE"
    duration = values["duration"]
    limits = connectx.run_limits(duration, values["bin"], values.get("warmup", 0), spell)
    if limits:
        return limits
    if (rate is not None or batch is not None) and start >= duration:  # the installer would never run
        return (
            f"{spell('install_start')} {_seconds(start)} is not before the end of the run "
            f"({spell('duration')} {_seconds(duration)}): the installer would never run; start it earlier or "
            "run longer"
        )
    if rate is not None:
        operations = rate * max(0, duration - start) / 1e9
        if operations > connectx.MAX_RUN_RULES:
            return (
                f"{spell('install_rate')}: {rate:g} rules/s for {(duration - start) / 1e9:g} s asks for "
                f"{operations:,.0f} rule operations: at most {connectx.MAX_RUN_RULES:,} per run"
            )
        burst = connectx.install_burst(rate, values.get("install_period", 0))
        if burst > connectx.MAX_RUN_RULES:
            return (
                f"{spell('install_period')}: {_seconds(values['install_period'])} at {rate:g} rules/s makes "
                f"bursts of {burst:,} operations: at most {connectx.MAX_RUN_RULES:,}"
            )
    if values.get("queue_map") is not None:
        try:
            connectx.parse_queue_map(
                values["queue_map"], cores=values.get("cores", 1), port_queues=values.get("queues", 1), spell=spell
            )
        except ValueError as exc:
            return str(exc)
    return None


def installer(values: dict[str, Any]) -> dict[str, Any] | None:
    """The scenario's `install` from the installer options (None: no installer)."""
    common = dict(
        start_ns=values.get("install_start", 0),
        group=values.get("install_group", 0),
        core=values.get("install_core", "same"),
        op=values.get("install_op", "insert"),
        match=values.get("install_match", "ipv4"),
        actions=values.get("install_actions", 1),
    )
    if values.get("install_rate") is not None:
        return connectx.rate_install(values["install_rate"], period_ns=values.get("install_period", 0), **common)
    if values.get("install_batch") is not None:
        return connectx.batch_install(values["install_batch"], **common)
    return None


def topology(values: dict[str, Any], spell: Spell = param_spelling) -> dict[str, Any]:
    """The scenario's host side: `cores`, `port_queues` and `queue_map` (keyword arguments of
    `connectx.scenario`)."""
    cores, queues = values.get("cores", 1), values.get("queues", 1)
    text = values.get("queue_map")
    return {
        "cores": cores,
        "port_queues": queues,
        "queue_map": None
        if text is None
        else connectx.parse_queue_map(text, cores=cores, port_queues=queues, spell=spell),
    }


def rules(values: dict[str, Any], groups: int, seed: int) -> dict[str, Any]:
    """The scenario's pre-installed rules: the rule file, else `rules` generated ones over `groups`."""
    if values.get("rules_file"):
        return {"file": values["rules_file"]}
    return connectx.generated_rules(
        values.get("rules") or 0,
        groups,
        kind=values.get("kind", "exact5"),
        seed=seed,
        hit_fraction=values.get("hit_fraction", 0.0),
    )
