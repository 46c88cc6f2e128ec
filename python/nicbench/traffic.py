"""Synthetic traffic: the generator's configuration and pcap writing.

The generator itself is Rust (`nicbench-traffic`); this module holds the
ergonomic Python configuration and turns it into the generator's serde config.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable, Union

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.units import Rate

__all__ = ["GenConfig", "generate_pcap", "measure_generation", "parse_size_spec", "SizeSpec"]

# Bytes a frame takes on the wire beyond its size (preamble + SFD + inter-frame gap), and the FCS a
# pcap record lacks: the Rust crates' constants (nicbench_wire::builder).
WIRE_OVERHEAD_BYTES: int = _native.WIRE_OVERHEAD_BYTES
FCS_BYTES: int = _native.FCS_BYTES

# A frame-size spec: int (fixed), list (random pick), (lo, hi) tuple (uniform) or "imix".
SizeSpec = Union[int, list[int], tuple[int, int], str]


def parse_size_spec(text: str) -> SizeSpec:
    """`1500` → 1500; `64,594,1518` → list; `64-1518` → (64, 1518); `imix` → "imix"."""
    s = text.strip().lower()
    try:
        if s == "imix":
            return "imix"
        if "," in s:
            return [int(p) for p in s.split(",")]
        if "-" in s:
            lo, hi = (int(p) for p in s.split("-", 1))
            if lo > hi:
                raise NicbenchError(f"size range {text!r} has min > max")
            return (lo, hi)
        return int(s.removesuffix("b"))
    except ValueError:
        raise NicbenchError(
            f"expected a frame size such as 1500, 64,594,1518, 64-1518 or imix, found {text!r}"
        ) from None


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

    def expected_packets(self) -> int | None:
        """Packets the run will produce (for progress bars); None when unbounded."""
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
            "popularity": "uniform" if self.zipf_s is None else {"zipf": {"s": self.zipf_s}},
            "rate": rate_native,
            "duration_ns": self.duration_ns,
            "packets": self.packets,
            "seed": self.seed,
        }


def generate_pcap(config: GenConfig, path: str, progress: Callable[[int], None] | None = None) -> dict:
    """Write the trace to `path` (nanosecond pcap); returns a summary dict."""
    summary = json.loads(_native.generate_pcap(json.dumps(config.to_native()), str(path), progress))
    duration_s = summary["duration_ns"] / 1e9 if summary["duration_ns"] else float("nan")
    summary["mpps"] = summary["packets"] / duration_s / 1e6 if duration_s else float("nan")
    summary["wire_bps"] = summary["wire_bytes"] * 8 / duration_s if duration_s else float("nan")
    return summary


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
    return {"packets": packets, "bytes": nbytes, "elapsed_s": elapsed_s,
            "mpps": packets / elapsed_s / 1e6 if elapsed_s > 0 else float("nan"),
            "wire_gbps": wire_bits / elapsed_s / 1e9 if elapsed_s > 0 else float("nan")}
