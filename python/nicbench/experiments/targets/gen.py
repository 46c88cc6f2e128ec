"""Traffic-generator targets.

`gen.rate`: how fast nicbench's seeded generator produces packets (in memory, no file),
by frame size and number of flows. Calls `nicbench.traffic.measure_generation`, the only
part of the harness that needs the native module (imported when the target runs).
"""

from __future__ import annotations

from nicbench.experiments.targets import RunContext, target

# The generator's own bounds (a module without the native one): a spec or `--set packets=1e12`
# beyond them is refused when the spec is read, not hours into a run.
from nicbench.traffic_bounds import MAX_FRAME_BYTES, MAX_GEN_FLOWS, MAX_TRACE_PACKETS, MIN_FRAME_BYTES
from nicbench.vocab.params import Param


@target(
    "gen.rate",
    params=[
        Param("size", "size_bytes", 1500, "frame size incl. FCS", minimum=MIN_FRAME_BYTES, maximum=MAX_FRAME_BYTES),
        Param("imix", "bool", False, "IMIX 7:4:1 of 64/594/1518 B instead of a fixed size"),
        Param("flows", "count", 10_000, "distinct flows", minimum=1, maximum=MAX_GEN_FLOWS),
        Param("packets", "count", 1_000_000, "packets to generate per run", minimum=1, maximum=MAX_TRACE_PACKETS),
        Param("rate", "rate_bps", None, "pacing rate ('max': unpaced, as fast as possible)", none_word="max"),
        Param("proto", "choice", "udp", "L4 protocol", choices=("udp", "tcp")),
        Param("ipv6", "bool", False, "IPv6 instead of IPv4"),
        Param("zipf", "float", None, "Zipf(s) flow popularity ('uniform': none)", none_word="uniform"),
    ],
    metrics={"mpps": "Mpps", "gbps": "Gbps", "packets": "packets", "elapsed_s": "s"},
    backends=("software",),
)
def gen_rate(p: dict, ctx: RunContext) -> dict:
    """Generator throughput (Mpps, and Gbps on the wire) for one configuration."""
    from nicbench.traffic import GenConfig, measure_generation
    from nicbench.units import Rate

    config = GenConfig(
        flows=p["flows"],
        size="imix" if p["imix"] else p["size"],
        rate=None if p["rate"] is None else Rate(p["rate"], "bps"),
        duration_ns=None,
        packets=p["packets"],
        ipv6=p["ipv6"],
        proto=p["proto"],
        zipf_s=p["zipf"],
        seed=ctx.seed,
    )
    result = measure_generation(config, None)
    return {
        "mpps": float(result["mpps"]),
        "gbps": float(result["wire_gbps"]),
        "packets": float(result["packets"]),
        "elapsed_s": float(result["elapsed_s"]),
    }
