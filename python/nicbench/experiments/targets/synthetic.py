"""Synthetic targets: deterministic fakes for tests, the harness benchmark and examples.

- `synthetic.noop`: does (almost) nothing; returns a seeded random `value`. Measures the
  harness's own overhead and exercises failures (`fail = true`) and slow runs (`sleep`).
- `synthetic.loss`: a fake device under test with a known capacity: it forwards every
  packet offered up to `capacity` and drops the excess, so the zero-loss throughput is
  exactly `capacity` (up to the loss target). Also reports HDR-style latency percentiles and,
  with `timeseries = true`, throughput over time with a "rule batch" event marker.
"""

from __future__ import annotations

import time

from nicbench.experiments.stats import hdr_percentiles
from nicbench.experiments.targets import RunContext, target
from nicbench.traffic import WIRE_OVERHEAD_BYTES
from nicbench.traffic_bounds import MAX_FRAME_BYTES, MIN_FRAME_BYTES
from nicbench.vocab.params import Param


@target(
    "synthetic.noop",
    params=[
        Param("x", "float", 0.0, "any number; recorded, not used"),
        Param("sleep", "duration_ns", 0, "wall time to sleep per run (0: none)"),
        Param("fail", "bool", False, "raise an error instead of returning"),
    ],
    metrics={"value": "", "x": ""},
)
def noop(p: dict, ctx: RunContext) -> dict:
    """Return a seeded random value; sleep or fail on request."""
    if p["sleep"]:
        time.sleep(p["sleep"] / 1e9)
    if p["fail"]:
        raise RuntimeError(f"synthetic failure at x={p['x']}")
    return {"value": float(ctx.rng.random()), "x": p["x"]}


@target(
    "synthetic.loss",
    params=[
        Param("rate", "rate_bps", 10e9, "offered rate on the wire"),
        Param("capacity", "rate_bps", 10e9, "highest rate forwarded without loss (the known threshold)"),
        Param("size", "size_bytes", 64, "frame size incl. FCS", minimum=MIN_FRAME_BYTES, maximum=MAX_FRAME_BYTES),
        Param("duration", "duration_ns", 1_000_000, "virtual measurement time"),
        Param("sleep", "duration_ns", 0, "wall time to sleep per run (0: none)"),
        Param("timeseries", "bool", False, "also record throughput over time with an event marker"),
    ],
    metrics={
        "offered_packets": "packets",
        "received_packets": "packets",
        "loss": "",
        "throughput_gbps": "Gbps",
        "latency_p50_ns": "ns",
        "latency_p90_ns": "ns",
        "latency_p99_ns": "ns",
        "latency_p99.9_ns": "ns",
        "latency_max_ns": "ns",
    },
    rate_param="rate",
)
def loss(p: dict, ctx: RunContext) -> dict:
    """A fake DUT that forwards up to `capacity` and drops the rest."""
    if p["sleep"]:
        time.sleep(p["sleep"] / 1e9)
    bits_per_frame = (p["size"] + WIRE_OVERHEAD_BYTES) * 8
    seconds = p["duration"] / 1e9
    offered = int(p["rate"] * seconds / bits_per_frame)
    capacity_packets = int(p["capacity"] * seconds / bits_per_frame)
    received = min(offered, capacity_packets)
    load = min(p["rate"] / p["capacity"], 0.999)
    # M/M/1-like sojourn times: grow as the offered load nears the capacity.
    service_ns = bits_per_frame / p["capacity"] * 1e9
    latency = ctx.rng.exponential(service_ns / (1 - load), size=2000)
    if p["timeseries"]:
        ctx.record("event:rule batch starts", 1.0, "", t=seconds / 2)
        for i in range(20):
            t = seconds * i / 20
            dip = 0.5 if seconds / 2 <= t < seconds * 0.65 else 1.0
            ctx.record("throughput_gbps", received * bits_per_frame / seconds / 1e9 * dip, "Gbps", t=t)
    result = {
        "offered_packets": offered,
        "received_packets": received,
        "loss": (offered - received) / offered if offered else 0.0,
        "throughput_gbps": received * bits_per_frame / seconds / 1e9,
    }
    result.update(hdr_percentiles(latency, "latency", "_ns"))
    return result
