"""Synthetic traffic: the generator's configuration and pcap writing.

The generator itself is Rust (`nicbench-traffic`); this module holds the
ergonomic Python configuration and turns it into the generator's serde config.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.traffic_bounds import (
    MAX_FRAME_BYTES,
    MAX_GEN_FLOWS,
    MAX_TRACE_DURATION_NS,
    MAX_TRACE_PACKETS,
    MIN_FRAME_BYTES,
)
from nicbench.units import Rate

__all__ = [
    "GenConfig",
    "generate_pcap",
    "generate_pcap_for_rules",
    "measure_generation",
    "parse_size_spec",
    "SizeSpec",
    "line_rate_mpps",
]

# Bytes a frame takes on the wire beyond its size (preamble + SFD + inter-frame gap), and the FCS a
# pcap record lacks: the Rust crates' constants (nicbench_wire::builder).
WIRE_OVERHEAD_BYTES: int = _native.WIRE_OVERHEAD_BYTES
FCS_BYTES: int = _native.FCS_BYTES


def line_rate_mpps(gbps: float, frame_bytes: float) -> float:
    """Frames per second (M) a link of `gbps` carries: each frame takes its size plus
    `WIRE_OVERHEAD_BYTES` (preamble + SFD 8 B, inter-frame gap 12 B) of line time."""
    return gbps * 1e3 / ((frame_bytes + WIRE_OVERHEAD_BYTES) * 8)


# Bounds a generated stream must respect (issue 17: beyond them runs wrote NaN durations, one packet,
# or never ended). Pacing: a pcap timestamp is a whole nanosecond, so at most one frame starts per ns;
# below one packet per second a trace of a few packets spans days.
MAX_RATE_PPS = 1e9
MIN_RATE_PPS = 1.0
# Frame sizes of the `imix` mix [bytes, incl. FCS] (the generator's IMIX: 64, 594, 1518).
IMIX_SIZES = (64, 594, 1518)

# A frame-size spec: int (fixed), list (random pick), (lo, hi) tuple (uniform) or "imix".
SizeSpec = int | list[int] | tuple[int, int] | str


def parse_size_spec(text: str, what: str = "--size") -> SizeSpec:
    """`1500` → 1500; `64,594,1518` → list; `64-1518` → (64, 1518); `imix` → "imix". Errors start
    with `what` (the option) and say what is allowed, in the CLI's notation (`64-9018`)."""
    s = text.strip().lower()
    if s == "imix":
        return "imix"
    try:
        if "," in s:
            sizes: list[int] = [int(p) for p in s.split(",")]
        elif "-" in s:
            sizes = [int(p) for p in s.split("-", 1)]
        else:
            sizes = [int(s.removesuffix("b"))]
    except ValueError:
        raise NicbenchError(
            f"{what}: expected a frame size such as 1500, 64,594,1518, 64-1518 or imix, found {text!r}"
        ) from None
    for size in sizes:
        if not MIN_FRAME_BYTES <= size <= MAX_FRAME_BYTES:
            raise NicbenchError(
                f"{what}: frame size {size} B is outside {MIN_FRAME_BYTES}-{MAX_FRAME_BYTES} B "
                "(sizes include the 4 B FCS)"
            )
    if "," in s:
        return sizes
    if "-" in s:
        lo, hi = sizes
        if lo > hi:
            raise NicbenchError(
                f"{what}: range {text.strip()!r} goes from {lo} B down to {hi} B; write it smallest first ({hi}-{lo})"
            )
        return (lo, hi)
    return sizes[0]


@dataclass
class GenConfig:
    """What to generate. Frame sizes include the 4-byte FCS (RFC 2544 convention)."""

    flows: int = 10_000
    size: SizeSpec = 1500
    rate: Rate | None = field(default_factory=lambda: Rate(100e9, "bps"))  # None: unpaced
    duration_ns: int | None = 1_000_000_000
    packets: int | None = None
    ipv6: bool = False
    proto: str = "udp"
    vlan: int | None = None
    vxlan_vni: int | None = None
    zipf_s: float | None = None
    seed: int = 1
    # The flows take turns (packet k is flow k mod flows), as a generator incrementing the addresses
    # per packet does (TRex `op="inc"`, the PAM'21 authors' gen_flows.py); else drawn per packet.
    round_robin: bool = False

    def frame_size_range(self) -> tuple[int, int]:
        """Smallest and largest frame of the size spec [bytes, incl. FCS]."""
        size = self.size
        if size == "imix":
            return min(IMIX_SIZES), max(IMIX_SIZES)
        if isinstance(size, int):
            return size, size
        if isinstance(size, tuple):
            return size[0], size[1]
        if isinstance(size, list) and size:
            return min(size), max(size)
        raise NicbenchError(f"bad frame size spec {size!r}")

    def packet_rate_range(self) -> tuple[float, float] | None:
        """Slowest and fastest packet rate the pacing gives [packets/s] (largest and smallest
        frames at the bit rate); None when unpaced."""
        if self.rate is None:
            return None
        if self.rate.unit == "pps":
            return self.rate.value, self.rate.value
        small, large = self.frame_size_range()
        per_frame_bits = lambda size: 8.0 * (size + WIRE_OVERHEAD_BYTES)  # noqa: E731
        return self.rate.value / per_frame_bits(large), self.rate.value / per_frame_bits(small)

    def check(self, duration_ns: int | None = None, max_packets: int = MAX_TRACE_PACKETS) -> None:
        """Refuse a stream that cannot be generated faithfully (NicbenchError saying what is
        allowed): flows outside 1..MAX_GEN_FLOWS, a non-finite or non-positive Zipf exponent, a
        pace of more than one frame per nanosecond or less than one packet per second, or more
        than `max_packets` packets over `duration_ns` (default: the config's own bounds)."""
        if not 1 <= self.flows <= MAX_GEN_FLOWS:
            raise NicbenchError(f"flows: {self.flows:,} is out of range: 1 to {MAX_GEN_FLOWS:,}")
        if self.zipf_s is not None and not (math.isfinite(self.zipf_s) and self.zipf_s > 0):
            raise NicbenchError(f"zipf: expected a positive finite exponent such as 1.1, found {self.zipf_s}")
        if self.zipf_s is not None and self.round_robin:
            raise NicbenchError(
                "zipf and round-robin order: the flows either take turns or are drawn by Zipf, not both"
            )
        rates = self.packet_rate_range()
        if rates is not None:
            slowest, fastest = rates
            small, _ = self.frame_size_range()
            if fastest > MAX_RATE_PPS:
                most = (
                    f"{MAX_RATE_PPS / 1e6:,.0f} Mpps"
                    if self.rate.unit == "pps"
                    else f"{MAX_RATE_PPS * 8 * (small + WIRE_OVERHEAD_BYTES) / 1e9:,.0f} Gbps for {small} B frames"
                )
                raise NicbenchError(
                    f"rate {_rate_text(self.rate)}: more than one frame per nanosecond (timestamps are "
                    f"whole nanoseconds); at most {most}"
                )
            if slowest < MIN_RATE_PPS:
                raise NicbenchError(
                    f"rate {_rate_text(self.rate)}: less than one packet per second; at least {MIN_RATE_PPS:g} pps"
                )
        duration_ns = self.duration_ns if duration_ns is None else duration_ns
        if duration_ns is not None and duration_ns > MAX_TRACE_DURATION_NS:
            raise NicbenchError(
                f"duration {duration_ns / 1e9:g} s: too long for a capture: at most "
                f"{MAX_TRACE_DURATION_NS / 1e9:,.0f} s (a pcap record's timestamp has 32-bit seconds)"
            )
        bound = self.packets
        if rates is not None and duration_ns is not None:
            by_time = math.ceil(rates[1] * duration_ns / 1e9)
            bound = by_time if bound is None else min(bound, by_time)
        if bound is not None and bound > max_packets:
            raise NicbenchError(
                f"the stream would hold ~{bound:,.0f} packets: at most {max_packets:,} "
                "(give fewer packets, a shorter duration or a lower rate)"
            )

    def expected_packets(self) -> int | None:
        """Packets the run will produce (for progress bars); None when unbounded. The config is
        checked first (`check`): the count is asked before the run, so its errors are the run's."""
        self.check()
        return _native.expected_packets(json.dumps(self.to_native()))

    def to_native(self) -> dict:
        """The generator's serde config (crates/nicbench-traffic, `TrafficConfig`)."""
        size = self.size
        if size == "imix":
            size_native: object = "imix"
        elif isinstance(size, int):
            size_native = {"fixed": size}
        elif isinstance(size, tuple):
            size_native = {"uniform": {"min": size[0], "max": size[1]}}
        elif isinstance(size, list):
            size_native = {"list": list(size)}
        else:
            raise NicbenchError(f"bad frame size spec {size!r}")
        if self.rate is None:
            rate_native: object = "unlimited"
        elif self.rate.unit == "pps":
            rate_native = {"mpps": self.rate.value / 1e6}
        else:
            rate_native = {"gbps": self.rate.value / 1e9}
        return {
            "flows": self.flows,
            "ipv6": self.ipv6,
            "proto": self.proto,
            "vlan": self.vlan,
            "vxlan_vni": self.vxlan_vni,
            "size": size_native,
            "popularity": "round_robin"
            if self.round_robin
            else ("uniform" if self.zipf_s is None else {"zipf": {"s": self.zipf_s}}),
            "rate": rate_native,
            "duration_ns": self.duration_ns,
            "packets": self.packets,
            "seed": self.seed,
        }


def _rate_text(rate: Rate) -> str:
    return f"{rate.value / 1e9:g}Gbps" if rate.unit == "bps" else f"{rate.value / 1e6:g}Mpps"


def generate_pcap(config: GenConfig, path: str, progress: Callable[[int], None] | None = None) -> dict:
    """Write the trace to `path` (nanosecond pcap); returns a summary dict. The config is checked
    first (`GenConfig.check`)."""
    config.check()
    return _rates(json.loads(_native.generate_pcap(json.dumps(config.to_native()), str(path), progress)))


def _rates(summary: dict) -> dict:
    duration_s = summary["duration_ns"] / 1e9 if summary["duration_ns"] else float("nan")
    summary["mpps"] = summary["packets"] / duration_s / 1e6 if duration_s else float("nan")
    summary["wire_bps"] = summary["wire_bytes"] * 8 / duration_s if duration_s else float("nan")
    return summary


def generate_pcap_for_rules(
    config: GenConfig,
    rules_path: str,
    path: str,
    *,
    hit_share: float = 1.0,
    syntax: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> dict:
    """Write to `path` traffic that meets `hit_share` (0 < share <= 1) of the rules of `rules_path`:
    one flow per target rule, a frame the software classifier checked meets it (and the jump rules
    on its way), the first packets visiting every flow once, then `config`'s popularity (uniform or
    Zipf over the flows in a seeded random order), sizes, rate and stop condition; `config.flows` is
    ignored, and its headers (IPv6, proto, VLAN, VXLAN) come from the rules instead.

    Returns the generator's summary (with `mpps`, `wire_bps`) under `summary`, `rules_total`,
    `rules_met` (targets and the jump rules on their way), `rules_reachable` (rules some frame meets),
    `target_lines` (flow order) and `unreachable` (line, kind, reason for each rule no frame meets)."""
    if not (0.0 < hit_share <= 1.0) or math.isnan(hit_share):
        raise NicbenchError(f"--hit-share {hit_share}: the share of the rules to meet is a number in (0, 1]")
    config.check()
    out = json.loads(
        _native.gen_for_rules(
            str(rules_path), syntax, json.dumps(config.to_native()), float(hit_share), str(path), progress
        )
    )
    out["summary"] = _rates(out["summary"])
    return out


def measure_generation(config: GenConfig, path: str | None = None) -> dict:
    """Generator throughput: in memory (`path=None`) or writing a pcap.

    Returns `packets`, `bytes` (captured, without FCS), `wire_gbps` (frame + FCS + preamble/gap),
    `elapsed_s` and `mpps`. In-memory timing is taken
    inside Rust around the generation loop; with a path, around the whole write.
    """
    import time

    if path is None:
        packets, nbytes, elapsed_ns = _native.measure_generation(json.dumps(config.to_native()))
        elapsed_s = elapsed_ns / 1e9
    else:
        start = time.perf_counter()
        summary = generate_pcap(config, path)
        elapsed_s = time.perf_counter() - start
        packets, nbytes = summary["packets"], summary["bytes"]
    wire_bits = (nbytes + packets * (FCS_BYTES + WIRE_OVERHEAD_BYTES)) * 8
    return {
        "packets": packets,
        "bytes": nbytes,
        "elapsed_s": elapsed_s,
        "mpps": packets / elapsed_s / 1e6 if elapsed_s > 0 else float("nan"),
        "wire_gbps": wire_bits / elapsed_s / 1e9 if elapsed_s > 0 else float("nan"),
    }
