"""The flow-host model's options: `nicbench flowhost`'s flags and the `flowhost.run` target's parameters.

`OPTIONS` is the table (see `nicbench.options`), in the target's parameter order. The command line
spells two of them its own way: `--smt` is `processes_per_core = 2`, `--cores-needed` is
`search_cores`. `check` (the line rate, the run's length) and `request` (option values → the model's
request) serve both.
"""

from __future__ import annotations

from typing import Any

from nicbench import flowhost, models
from nicbench.connectx import MAX_DURATION_NS
from nicbench.options import Option, Options, Spell, param_spelling
from nicbench.traffic_bounds import MAX_GEN_FLOWS
from nicbench.units import parse_duration_ns

__all__ = ["OPTIONS", "MAX_CORES", "MIN_FRAME_BYTES", "MAX_FRAME_BYTES", "check", "request"]

# The caps the flowhost model holds a request to, as it declares them (`LIMITS` in nicbench-models
# flowhost/mod.rs): cores a deployment may have, frames the capture card takes (with FCS).
_LIMITS = models.limits("flowhost")
MAX_CORES = _LIMITS["max_cores"]
MIN_FRAME_BYTES = _LIMITS["min_frame_bytes"]
MAX_FRAME_BYTES = _LIMITS["max_frame_bytes"]
# Shortest run: one short-term window's worth of bins makes no sense below a millisecond.
MIN_DURATION_NS = 1_000_000

OPTIONS = Options(
    [
        Option(
            "card",
            "str",
            flowhost.DEFAULT_NIC,
            "Capture-NIC profile (profiles/<card>.toml) or a path.",
            flag="--nic",
            profile_kinds=models.profile_kinds("flowhost"),
            profile_role=("capture card", "link_gbps"),
        ),
        Option(
            "host",
            "str",
            flowhost.DEFAULT_HOST,
            "Flow-meter host profile (argus-host, flowmeter-local, or a path).",
            flag="--host",
            profile_kinds=models.profile_kinds("flowhost"),
            profile_role=("host", "cpu_ghz"),
        ),
        Option(
            "cores",
            "int",
            8,
            "Physical cores running flow meters (one stream per process).",
            flag="--cores",
            minimum=1,
            maximum=MAX_CORES,
        ),
        Option(
            "processes_per_core",
            "int",
            1,
            "Flow-meter processes per core (2: SMT siblings; the command line's --smt).",
            minimum=1,
            maximum=8,
        ),
        Option(
            "flows",
            "count",
            16_384,
            "Distinct TCP flows (endpoint pairs, static ports; e.g. 16k, 1M).",
            flag="--flows",
            cli_default="16384",
            minimum=1,
            maximum=MAX_GEN_FLOWS,
        ),
        Option("flows_per_core", "count", None, "flows = this × cores (load grows with the host).", none_word="none"),
        Option(
            "size",
            "size_bytes",
            750,
            "Frame size in bytes, incl. FCS.",
            flag="--size",
            minimum=MIN_FRAME_BYTES,
            maximum=MAX_FRAME_BYTES,
        ),
        Option(
            "rate",
            "rate_bps",
            100e9,
            "Offered rate on the wire, at most the card's line rate (100Gbps for napatech-nt100).",
            flag="--rate",
            cli_default="100Gbps",
        ),
        Option(
            "zipf",
            "float",
            0.0,
            "Zipf exponent of flow popularity (0: equal flows).",
            flag="--zipf",
            minimum=0.0,
            maximum=5.0,
        ),
        Option("filter_keep", "fraction", 1.0, "Fraction of flows the card's filter passes."),
        Option("slice", "size_bytes", None, "Payload slicing: bytes kept per frame.", none_word="none"),
        Option(
            "duration",
            "duration_ns",
            parse_duration_ns("2s"),
            f"Virtual time simulated (at most {MAX_DURATION_NS / 1e9:g} s).",
            flag="--duration",
            cli_default="1s",
            minimum=MIN_DURATION_NS,
        ),
        Option("bin", "duration_ns", parse_duration_ns("100us"), "Time step.", minimum=1_000),
        Option(
            "window", "duration_ns", parse_duration_ns("100ms"), "Window of the short-term max rate.", minimum=1_000
        ),
        Option(
            "search_cores",
            "bool",
            False,
            "Also search the fewest cores without drops (cores_needed).",
            flag="--cores-needed",
        ),
        Option("max_cores", "int", 1024, "Upper limit of the search.", minimum=1, maximum=MAX_CORES),
    ]
)


def check(values: dict[str, Any], spell: Spell = param_spelling) -> str | None:
    """What is wrong with these option values together, naming the options by `spell`; None: it can run."""
    rate_gbps = float(values["rate"]) / 1e9
    link = flowhost.above_line_rate(values["card"], rate_gbps)
    if link is not None:  # the wire cannot carry more: refused, as `simulate` does
        return (
            f"{spell('rate')} {rate_gbps:g}Gbps: above the line rate of {values['card']} ({link:g} Gbps on the "
            f"wire); give at most {link:g}Gbps"
        )
    if values["duration"] > MAX_DURATION_NS:
        return (
            f"{spell('duration')} {values['duration'] / 1e9:g}s: too long: at most {MAX_DURATION_NS / 1e9:g} s "
            "of virtual time"
        )
    return None


def request(values: dict[str, Any], seed: int) -> dict[str, Any]:
    """The model's request from option values."""
    out = {
        "nic": values["card"],
        "host": values["host"],
        "seed": int(seed),
        "cores": values["cores"],
        "processes_per_core": values["processes_per_core"],
        "flows": values["flows"],
        "frame_bytes": float(values["size"]),
        "rate_gbps": float(values["rate"]) / 1e9,
        "zipf_exponent": float(values["zipf"]),
        "filter_keep": float(values["filter_keep"]),
        "duration_ns": values["duration"],
        "bin_ns": values["bin"],
        "window_ns": values["window"],
        "search_cores": bool(values["search_cores"]),
        "max_cores": values["max_cores"],
    }
    if values.get("flows_per_core"):
        out["flows_per_core"] = float(values["flows_per_core"])
    if values.get("slice"):
        out["slice_bytes"] = float(values["slice"])
    return out
