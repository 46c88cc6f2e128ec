"""nicbench: virtual (Smart)NICs and fast software packet-processing parts.

Public API (everything else is internal and may change):

- Traffic: `generate_pcap`, `GenConfig`
- Traces: `pcap_info`, `rss_spread`, `read_packets`
- Packets and RSS: `parse_frame`, `toeplitz_hash`, `MICROSOFT_KEY`, `SYMMETRIC_KEY`
- Experiments: `load_results` (see `nicbench.experiments` for specs and runs)
- Errors: `NicbenchError`, `PcapError`, `RuleError`
"""

from __future__ import annotations

from nicbench._native import __version__
from nicbench.errors import NicbenchError, PcapError, RuleError
from nicbench.experiments import load_results
from nicbench.packets import MICROSOFT_KEY, SYMMETRIC_KEY, parse_frame, toeplitz_hash
from nicbench.traces import pcap_info, read_packets, rss_spread
from nicbench.traffic import GenConfig, generate_pcap

__all__ = [
    "__version__",
    "GenConfig",
    "generate_pcap",
    "pcap_info",
    "rss_spread",
    "read_packets",
    "load_results",
    "parse_frame",
    "toeplitz_hash",
    "MICROSOFT_KEY",
    "SYMMETRIC_KEY",
    "NicbenchError",
    "PcapError",
    "RuleError",
]
