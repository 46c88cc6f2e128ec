"""The traffic generator's bounds, in a module without the native extension, so that a spec's
parameters can be checked against them when it is read (nicbench.experiments.targets.gen) without
loading the generator."""

# Flows the generator keeps: ~200 B each (peak RSS of `nicbench gen --flows 1M --packets 10` minus
# that of 100k: 217 MB - 40 MB over 900k flows), ~3.3 GB at the cap.
MAX_GEN_FLOWS = 1 << 24
# Packets one generated trace may hold: 2^32 (a 100 Gbps, 1500 B stream of 8 min; ~300 GB of pcap at 64 B).
MAX_TRACE_PACKETS = 1 << 32
# The longest trace [ns]: a pcap record's timestamp has 32-bit seconds (from 0, the generator's start).
MAX_TRACE_DURATION_NS = (2**32 - 1) * 1_000_000_000
# Frame sizes the generator builds [bytes, incl. FCS]: Ethernet's minimum to a 9000 B jumbo MTU
# (nicbench_wire::builder::{MIN,MAX}_FRAME_SIZE_BYTES).
MIN_FRAME_BYTES = 64
MAX_FRAME_BYTES = 9018
