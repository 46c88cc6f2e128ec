"""nicbench: virtual (Smart)NICs and fast software packet-processing parts.

Public API (everything else is internal and may change):

- Traffic: `generate_pcap`, `generate_pcap_for_rules` (traffic that meets a rule file), `GenConfig`
- Traces: `pcap_info`, `rss_spread`, `read_packets`
- Packets and RSS: `parse_frame`, `toeplitz_hash`, `MICROSOFT_KEY`, `SYMMETRIC_KEY`
- Experiments: `load_results` (see `nicbench.experiments` for specs and runs)
- Errors: `NicbenchError`, `PcapError`, `RuleError`
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from nicbench import data_files
from nicbench._native import __version__
from nicbench.errors import NicbenchError, PcapError, RuleError
from nicbench.packets import MICROSOFT_KEY, SYMMETRIC_KEY, parse_frame, toeplitz_hash
from nicbench.traces import pcap_info, read_packets, rss_spread
from nicbench.traffic import GenConfig, generate_pcap, generate_pcap_for_rules

if TYPE_CHECKING:
    from nicbench.experiments import load_results

# Before any model call: the native loader's own fallback is the checkout it was compiled in, which
# an installed wheel's user does not have (nicbench.data_files).
data_files.register_native()

__all__ = [
    "__version__",
    "GenConfig",
    "generate_pcap",
    "generate_pcap_for_rules",
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


def __getattr__(name: str) -> Any:
    # PEP 562: `load_results` needs pandas and pyarrow (~1 s to import); loading it on first
    # use keeps `import nicbench` and the commands that never read results light.
    if name == "load_results":
        from nicbench.experiments.store import load_results

        globals()["load_results"] = load_results
        return load_results
    raise AttributeError(f"module 'nicbench' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
