"""The ConnectX model from Python: build a scenario, run the native model, read its result.

The model (`nicbench_models::connectx`, run through `nicbench.models.run("connectx", ...)`) takes ONE
request (a scenario) and returns ONE result. Both are defined once, by their Rust serde types; their
JSON Schemas are `models.contract_schema("connectx", "request")` / `("connectx", "result")`, the files
`docs/contracts/connectx.request.schema.json` / `connectx.result.schema.json`:

    scenario = {"nic": "connectx5", "overrides": {...}, "seed": 1, "duration_ns": ..., "warmup_ns": 0,
                "traffic": {...} | None, "trace": None | "x.pcap",
                "rules": {"generated": {...}} | {"file": ...} | {"text": ...},
                "install": None | {"mode": "batch" | "rate", ...},
                "measure": {"timeline_bin_ns": ..., "latency": True, "queues": True,
                            "generator": "play" | "timed_replay"}}
    result = simulate(scenario)      # offered_/rx_gbps, loss_ratio, latency_us{p1..max}, timeline, ...

This module adds what Python users want around it: scenario builders with defaults
(`scenario`, `generated_rules`, `batch_install`, `rate_install`), the `--gen` option parser
(`parse_gen("flows=10000,size=1500,rate=100Gbps")`), the flattening of a result into scalar
metrics (`result_metrics`) and the analysis of a throughput timeline (`timeline_stats`:
outage, recovery).

Invariants: `simulate` never changes the caller's scenario; parameter overrides set with
`nicbench.profiles.parameter_overrides()` (the calibration's hook) apply to every `simulate`
call inside the `with` block, beneath the scenario's own `overrides`. Missing result fields
become NaN in `result_metrics`, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from nicbench import models
from nicbench.errors import NicbenchError
from nicbench.profiles import current_overrides
from nicbench.traffic import MAX_GEN_FLOWS, GenConfig, parse_size_spec
from nicbench.units import Rate, UnitError, parse_count, parse_rate

__all__ = [
    "DEFAULT_NIC",
    "MATCH_TYPES",
    "OPS",
    "CORES",
    "LATENCY_PERCENTILES",
    "MAX_RUN_RULES",
    "MAX_CORES",
    "MAX_DURATION_NS",
    "MAX_TIMELINE_BINS",
    "GENERATOR_SETUPS",
    "run_limits",
    "simulate",
    "scenario",
    "generated_rules",
    "batch_install",
    "rate_install",
    "traffic_from_gen",
    "parse_gen",
    "parse_queue_map",
    "result_metrics",
    "timeline_stats",
    "TimelineStats",
]

DEFAULT_NIC = "connectx5"
MATCH_TYPES = ("ipv4", "ipv6", "vlan", "tunnel")
OPS = ("insert", "delete", "update", "update_inplace")
CORES = ("same", "distinct")
# The measurement server's generator setups (they differ in the fixed latency only): a trace held in
# memory and sent in a loop (PAM'21 Fig. 2), or a pcap replayed at its timestamps (Figs. 3-4).
GENERATOR_SETUPS = ("play", "timed_replay")
# Percentile names of `latency_us` in the result JSON (p999 = 99.9th).
LATENCY_PERCENTILES = ("p1", "p25", "p50", "p75", "p99", "p999", "max", "mean")
DEFAULT_TIMELINE_BIN_NS = 10_000_000
# Caps on what one run may ask for, defined (and enforced) once by the model (`connectx::request::LIMITS`,
# through the registry): virtual time, timeline bins, generated packets, rules pre-installed or
# operated on (an install batch, or a rate over the run), forwarding cores.
_LIMITS = models.limits("connectx")
MAX_DURATION_NS: int = _LIMITS["max_duration_ns"]
MAX_TIMELINE_BINS: int = _LIMITS["max_timeline_bins"]
MAX_RUN_PACKETS: int = _LIMITS["max_packets"]
MAX_RUN_RULES: int = _LIMITS["max_rules"]
MAX_CORES: int = _LIMITS["max_cores"]


def simulate(scenario_: dict[str, Any], progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run one scenario on the native engine; returns the result dict.

    `progress(simulated_ns)` is called periodically from the engine (GIL taken for the call).
    Bad scenarios raise `NicbenchError` (a ValueError) with a one-line message.
    """
    full = dict(scenario_)
    overrides = {**current_overrides(), **(scenario_.get("overrides") or {})}
    if overrides:
        full["overrides"] = overrides
    return models.run("connectx", full, progress)


# --- scenario builders ---------------------------------------------------------------------------------------------


def generated_rules(
    count: int, groups: int = 0, *, kind: str = "exact5", seed: int = 1, hit_fraction: float = 0.0
) -> dict[str, Any]:
    """The PAM'21 layout: groups=0 puts all `count` rules in the root table, groups=T spreads
    them uniformly over tables 1..T chained by jumps (see nicbench_rules::generate)."""
    if count < 0 or groups < 0:
        raise NicbenchError(f"rule count and groups must be ≥ 0, found count={count}, groups={groups}")
    if count > MAX_RUN_RULES:
        raise NicbenchError(f"generated rules: {count:,} is too many: at most {MAX_RUN_RULES:,} per run")
    return {
        "generated": {
            "kind": kind,
            "count": int(count),
            "groups": int(groups),
            "seed": int(seed),
            "hit_fraction": float(hit_fraction),
        }
    }


def _install_common(group: int, core: str, op: str, match: str, actions: int) -> dict[str, Any]:
    for value, allowed, what in ((core, CORES, "core"), (op, OPS, "op"), (match, MATCH_TYPES, "match")):
        if value not in allowed:
            raise NicbenchError(f"install {what}: expected one of {', '.join(allowed)}, found {value!r}")
    if actions < 1:
        raise NicbenchError(f"install actions: expected at least 1, found {actions}")
    return {"group": int(group), "core": core, "op": op, "match": match, "actions": int(actions)}


def batch_install(
    count: int,
    *,
    start_ns: int = 0,
    group: int = 0,
    core: str = "same",
    op: str = "insert",
    match: str = "ipv4",
    actions: int = 1,
) -> dict[str, Any]:
    """One batch of `count` rule operations issued at `start_ns` (PAM'21 Fig. 3, 5, 6)."""
    if not 0 <= count <= MAX_RUN_RULES:
        raise NicbenchError(f"install batch: {count:,} rule operations is too many: at most {MAX_RUN_RULES:,} per run")
    return {
        "mode": "batch",
        "count": int(count),
        "start_ns": int(start_ns),
        **_install_common(group, core, op, match, actions),
    }


def rate_install(
    rate_per_s: float,
    *,
    count: int | None = None,
    start_ns: int = 0,
    group: int = 0,
    core: str = "same",
    op: str = "insert",
    match: str = "ipv4",
    actions: int = 1,
    period_ns: int = 0,
) -> dict[str, Any]:
    """Rule operations at a steady rate (PAM'21 Fig. 4); `count=None`: for the whole run. `period_ns`:
    the installer wakes up once per period and issues the period's `rate × period` operations back to
    back (PAM'21's nic-live.npf: 1 ms); 0, or a period shorter than one operation's share: one at a time."""
    if not rate_per_s > 0:
        raise NicbenchError(f"install rate must be positive, found {rate_per_s!r}")
    if count is not None and not 0 <= count <= MAX_RUN_RULES:
        raise NicbenchError(f"install count: {count:,} rule operations is too many: at most {MAX_RUN_RULES:,} per run")
    if period_ns < 0:
        raise NicbenchError(f"install period must not be negative, found {period_ns} ns")
    burst = install_burst(rate_per_s, period_ns)
    if burst > MAX_RUN_RULES:
        raise NicbenchError(
            f"install period: {period_ns / 1e9:g} s at {rate_per_s:g} rules/s makes bursts of "
            f"{burst:,} operations: at most {MAX_RUN_RULES:,}"
        )
    out: dict[str, Any] = {
        "mode": "rate",
        "rate_per_s": float(rate_per_s),
        "start_ns": int(start_ns),
        **_install_common(group, core, op, match, actions),
    }
    if burst > 1:
        out["burst"] = burst
    if count is not None:
        out["count"] = int(count)
    return out


def install_burst(rate_per_s: float, period_ns: int) -> int:
    """Operations per wake-up of an installer that wakes about once per `period_ns` at `rate_per_s`: the
    period's share, whole, at least 1. The bursts are then `burst / rate` apart, which keeps the rate when
    rate × period is not whole (PAM'21's nic-live.npf instead keeps its 1 ms period and installs
    int(RPS / 1000) rules in it: 1500 rules/s become 1 per ms there, 1 per 0.67 ms here)."""
    return max(1, int(rate_per_s * period_ns / 1e9 + 1e-9))


def traffic_from_gen(config: GenConfig) -> dict[str, Any]:
    """The generator's serde config for a scenario: the scenario's duration bounds the stream."""
    native = config.to_native()
    native["duration_ns"] = None
    native["packets"] = None
    return native


def scenario(
    *,
    nic: str = DEFAULT_NIC,
    rules: dict[str, Any],
    duration_ns: int,
    traffic: GenConfig | dict[str, Any] | None = None,
    trace: str | None = None,
    install: dict[str, Any] | None = None,
    seed: int = 1,
    warmup_ns: int = 0,
    timeline_bin_ns: int = DEFAULT_TIMELINE_BIN_NS,
    latency: bool = True,
    queues: bool = True,
    overrides: dict[str, float] | None = None,
    port_queues: int = 1,
    cores: int = 1,
    queue_map: dict[int, int] | None = None,
    generator: str = "play",
) -> dict[str, Any]:
    """A complete scenario dict (see the module doc); traffic XOR trace. `port_queues`: the port's rx
    queues, over which its default RSS spreads the packets no rule sends anywhere; `cores`: forwarding
    cores on the host (queue q on core q mod cores, or `queue_map` {queue: core}; a same-core installer
    on the core of queue 0). `generator`: the measurement server's setup, which sets the fixed latency
    (GENERATOR_SETUPS)."""
    if generator not in GENERATOR_SETUPS:
        raise NicbenchError(f"generator setup {generator!r} is not one of {', '.join(GENERATOR_SETUPS)}")
    if (traffic is None) == (trace is None):
        raise NicbenchError("a scenario needs exactly one traffic source: generated traffic or a pcap trace")
    problem = run_limits(duration_ns, timeline_bin_ns, warmup_ns)
    if problem:
        raise NicbenchError(problem)
    if isinstance(traffic, GenConfig):
        traffic.check(duration_ns=duration_ns, max_packets=MAX_RUN_PACKETS)
        traffic = traffic_from_gen(traffic)
    out: dict[str, Any] = {
        "nic": nic,
        "seed": int(seed),
        "duration_ns": int(duration_ns),
        "warmup_ns": int(warmup_ns),
        "traffic": traffic,
        "trace": None if trace is None else str(trace),
        "rules": rules,
        "install": install,
        "measure": {
            "timeline_bin_ns": int(timeline_bin_ns),
            "latency": latency,
            "queues": queues,
            "generator": generator,
        },
    }
    if overrides:
        out["overrides"] = dict(overrides)
    if cores != 1:
        out["cores"] = int(cores)
    if port_queues != 1:
        out["port_queues"] = int(port_queues)
    if queue_map is not None:
        out["queue_map"] = {str(int(q)): int(c) for q, c in sorted(queue_map.items())}
    return out


# How the scenario's fields are named in a message by default: as `nicbench simulate` spells them.
_FLAGS = {
    "duration": "--duration",
    "bin": "--bin",
    "warmup": "--warmup",
    "queue_map": "--queue-map",
    "cores": "--cores",
    "queues": "--queues",
}


def _flag(name: str) -> str:
    return _FLAGS.get(name, name)


def run_limits(
    duration_ns: int, timeline_bin_ns: int, warmup_ns: int, spell: Callable[[str], str] = _flag
) -> str | None:
    """What is wrong with a run's virtual time (its duration, timeline bins and warm-up), naming the
    options by `spell`; None when it can run."""
    if duration_ns <= 0:
        return f"{spell('duration')}: must be positive, found {duration_ns} ns"
    if duration_ns > MAX_DURATION_NS:
        return (
            f"{spell('duration')} {duration_ns / 1e9:g} s is too long: at most {MAX_DURATION_NS / 1e9:g} s "
            "of virtual time per run"
        )
    if timeline_bin_ns <= 0:
        return f"{spell('bin')}: a timeline bin must be positive, found {timeline_bin_ns} ns"
    bins = math.ceil(duration_ns / timeline_bin_ns)
    if bins > MAX_TIMELINE_BINS:
        return (
            f"{spell('bin')}: a timeline bin of {timeline_bin_ns:,} ns over {duration_ns / 1e9:g} s makes "
            f"{bins:,} bins: at most {MAX_TIMELINE_BINS:,} (a bin of at least "
            f"{math.ceil(duration_ns / MAX_TIMELINE_BINS):,} ns)"
        )
    if not 0 <= warmup_ns < duration_ns:
        return (
            f"{spell('warmup')} {warmup_ns / 1e9:g} s must be shorter than the duration "
            f"{duration_ns / 1e9:g} s ({spell('duration')})"
        )
    return None


def parse_queue_map(text: str, *, cores: int, port_queues: int, spell: Callable[[str], str] = _flag) -> dict[int, int]:
    """`0:0,1:0,2:1,3:1` (queue:core) → {queue: core}, checked: every queue of the port (0..port_queues-1)
    mapped, each once, to a core below `cores`. (Queues only a rule names, beyond the port's default
    RSS queues, are checked by the model.)
    Errors name the options by `spell` (default: the command line's flags)."""
    name = spell("queue_map")
    out: dict[int, int] = {}
    for part in (p.strip() for p in text.split(",")):
        queue_text, sep, core_text = part.partition(":")
        if not sep or not queue_text.strip().isdigit() or not core_text.strip().isdigit():
            raise NicbenchError(f"{name}: expected QUEUE:CORE pairs such as 0:0,1:0,2:1,3:1, found {part!r}")
        queue, core = int(queue_text), int(core_text)
        if queue > 65535:
            raise NicbenchError(f"{name}: queue {queue} is not a queue id (0 to 65,535)")
        if core >= cores:
            raise NicbenchError(
                f"{name}: queue {queue} on core {core}, but {spell('cores')} is {cores} (cores 0 to {cores - 1})"
            )
        if queue in out:
            raise NicbenchError(f"{name}: queue {queue} is mapped twice")
        out[queue] = core
    unmapped = [q for q in range(port_queues) if q not in out]
    if unmapped:
        given = ", ".join(str(q) for q in sorted(out)[:8]) + (", …" if len(out) > 8 else "")
        raise NicbenchError(
            f"{name}: queue {unmapped[0]} of the port's {port_queues} ({spell('queues')}) has no "
            f"core (the map gives queue{'s' if len(out) > 1 else ''} {given}): map every queue 0 to {port_queues - 1}"
        )
    return out


_GEN_KEYS = ("flows", "size", "rate", "ipv6", "proto", "zipf", "order", "vlan", "vxlan", "seed")


def parse_gen(text: str, *, seed: int = 1) -> GenConfig:
    """`flows=10000,size=1500,rate=100Gbps` (also `rate=8Mpps`, `size=imix`, `ipv6=true`,
    `proto=tcp`, `zipf=1.1`, `order=round-robin` (the flows take turns; `random`: drawn per packet, the
    default), `vlan=10`, `vxlan=42`, `seed=3`) → a GenConfig.

    Sizes with commas (a pick list) use `;` or `/` inside the value: `size=64;594;1518`.
    """
    config = GenConfig(flows=10_000, size=1500, rate=Rate(100e9, "bps"), duration_ns=None, seed=seed)
    given: set[str] = set()
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            # `size=64,594,1518` splits at its commas: say how a pick list is written here.
            hint = "; a size list takes ';' between sizes: size=64;594;1518" if part.isdigit() else ""
            raise NicbenchError(f"--gen: expected KEY=VALUE (keys: {', '.join(_GEN_KEYS)}), found {part!r}{hint}")
        key, value = (s.strip() for s in part.split("=", 1))
        if key in given:  # `flows=10,flows=20`: which one was meant is not ours to guess
            raise NicbenchError(f"--gen {key}: given twice; give each key once")
        given.add(key)
        try:
            if key == "flows":
                config.flows = parse_count(value, at_most=MAX_GEN_FLOWS)
                if config.flows < 1:
                    raise NicbenchError("--gen flows: need at least 1 flow")
            elif key == "size":
                config.size = parse_size_spec(value.replace(";", ",").replace("/", ","), what="--gen size")
            elif key == "rate":
                config.rate = parse_rate(value)
            elif key == "ipv6":
                config.ipv6 = _bool(value)
            elif key == "proto":
                if value not in ("udp", "tcp"):
                    raise NicbenchError(f"--gen proto: expected udp or tcp, found {value!r}")
                config.proto = value
            elif key == "zipf":
                config.zipf_s = _float(value)
                if not (math.isfinite(config.zipf_s) and config.zipf_s > 0):
                    raise NicbenchError(f"--gen zipf: expected a positive finite exponent such as 1.1, found {value!r}")
            elif key == "order":
                if value not in ("random", "round-robin"):
                    raise NicbenchError(f"--gen order: expected random or round-robin, found {value!r}")
                config.round_robin = value == "round-robin"
            elif key == "vlan":
                config.vlan = _whole(value, 4095, "an 802.1Q VLAN id")
            elif key == "vxlan":
                config.vxlan_vni = _whole(value, 2**24 - 1, "a VXLAN VNI")
            elif key == "seed":
                config.seed = _whole(value, 2**64 - 1, "a seed")
            else:
                raise NicbenchError(f"--gen: unknown key {key!r} (keys: {', '.join(_GEN_KEYS)})")
        except (UnitError, ValueError) as exc:
            if isinstance(exc, NicbenchError):
                raise
            raise NicbenchError(f"--gen {key}: {exc}") from None
    if config.round_robin and config.zipf_s is not None:
        raise NicbenchError("--gen order=round-robin and zipf: the flows either take turns or are drawn by Zipf")
    return config


def _whole(value: str, at_most: int, what: str) -> int:
    """A whole number from 0 to `at_most` (the native scenario would name a JSON column, not --gen)."""
    if not (value.isascii() and value.isdigit()) or int(value) > at_most:
        raise ValueError(f"expected {what}, a whole number from 0 to {at_most:,}, found {value!r}")
    return int(value)


def _float(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"expected a number such as 1.1, found {value!r}") from None


def _bool(value: str) -> bool:
    v = value.lower()
    if v in ("1", "true", "yes", "on"):
        return True
    if v in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"expected true or false, found {value!r}")


# --- results -------------------------------------------------------------------------------------------------------


def _num(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def result_metrics(result: dict[str, Any]) -> dict[str, float]:
    """The scalar metrics of one result (NaN where the engine reported nothing).

    Names: offered_gbps, offered_mpps, rx_gbps, rx_mpps, tx_gbps, loss_ratio, rx_drop_gbps
    (offered − received), dropped_imissed, dropped_nic, dropped_packets, latency_<p>_us for p in
    LATENCY_PERCENTILES, install_rules, install_s, install_rate_krules_s, root_table_occupancy,
    tables_traversed_mean, steering_cache_hit_rate, sim_packets, sim_wall_s, sim_mpps.
    """
    out = {
        k: _num(result.get(k)) for k in ("offered_gbps", "offered_mpps", "rx_gbps", "rx_mpps", "tx_gbps", "loss_ratio")
    }
    out["rx_drop_gbps"] = out["offered_gbps"] - out["rx_gbps"]
    dropped = result.get("dropped") or {}
    imissed, nic = _num(dropped.get("imissed", 0)), _num(dropped.get("nic", 0))
    out["dropped_imissed"], out["dropped_nic"] = imissed, nic
    out["dropped_packets"] = sum(_num(v) for v in dropped.values()) if dropped else math.nan
    latency = result.get("latency_us") or {}
    for name in LATENCY_PERCENTILES:
        out[f"latency_{name}_us"] = _num(latency.get(name))
    install = result.get("install") or {}
    out["install_rules"] = _num(install.get("rules"))
    out["install_s"] = _num(install.get("duration_s"))
    out["install_rate_krules_s"] = _num(install.get("rate_rules_per_s")) / 1e3
    model = result.get("model") or {}
    for k in ("root_table_occupancy", "tables_traversed_mean", "steering_cache_hit_rate"):
        out[k] = _num(model.get(k))
    sim = result.get("sim") or {}
    out["sim_packets"] = _num(sim.get("packets"))
    out["sim_wall_s"] = _num(sim.get("wall_s"))
    out["sim_mpps"] = _num(sim.get("sim_packets_per_s")) / 1e6
    return out


class TimelineStats(dict):
    """outage_s, recovered (1/0), rx_gbps_before, rx_gbps_after, rx_gbps_min — see `timeline_stats`."""


def timeline_stats(
    result: dict[str, Any], *, event_s: float, tail_s: float = 1.0, down_fraction: float = 0.5
) -> TimelineStats:
    """Outage analysis of a throughput timeline around an event at `event_s` (e.g. a rule batch).

    A timeline bin is *down* when its received rate is below `down_fraction` of the offered
    rate. `outage_s`: total time of down bins ending after the event. `recovered`: whether the
    last bin is up. `rx_gbps_before`: mean over bins ending at or before the event;
    `rx_gbps_after`: mean over the last `tail_s`. Bins are identified by their end time `t_s`.
    """
    offered = _num(result.get("offered_gbps"))
    rows = [
        (float(r["t_s"]), _num(r.get("rx_gbps")))
        for r in result.get("timeline") or []
        if isinstance(r, dict) and r.get("t_s") is not None
    ]
    rows.sort()
    nan = math.nan
    if not rows or not math.isfinite(offered):
        return TimelineStats(outage_s=nan, recovered=nan, rx_gbps_before=nan, rx_gbps_after=nan, rx_gbps_min=nan)
    threshold = down_fraction * offered
    outage = 0.0
    prev_t = 0.0
    before: list[float] = []
    for t, rx in rows:
        width = t - prev_t
        if t <= event_s + 1e-12:
            before.append(rx)
        elif not (rx >= threshold):  # NaN counts as down
            outage += width
        prev_t = t
    end = rows[-1][0]
    after = [rx for t, rx in rows if t > end - tail_s + 1e-12]
    mean = lambda xs: sum(xs) / len(xs) if xs else nan  # noqa: E731
    return TimelineStats(
        outage_s=outage,
        recovered=1.0 if rows[-1][1] >= threshold else 0.0,
        rx_gbps_before=mean(before),
        rx_gbps_after=mean(after),
        rx_gbps_min=min(rx for _, rx in rows),
    )
