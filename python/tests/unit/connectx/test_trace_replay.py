"""A replayed trace meets the steering tables from its first packet (issue 35): traces of the same
traffic that last 1, 5 and 20 ms give the same steady-state rate as each other and as the generator
they came from. (Before: a flow's path was priced at the first cost refresh, 1 ms in, so a trace's
first millisecond passed the root table for free — 72.8 Mpps for a 1 ms trace where the steady
state is 14.5.)"""

from __future__ import annotations

import pytest

from nicbench import connectx
from nicbench.traffic import GenConfig, Rate, generate_pcap

# 64 B at 20 Gb/s (29.8 Mpps) over 16 queues and cores through a Table 0 of 50,000 rules (which the
# traffic misses): every lookup walks a collision chain in firmware, so the NIC's steering, not the
# host, sets the received rate.
_TRAFFIC = {"flows": 1000, "size": 64, "rate": Rate(20e9, "bps"), "seed": 3}


def _run(duration_ns: int, *, trace: str | None = None) -> dict:
    source = {"trace": trace} if trace else {"traffic": GenConfig(**_TRAFFIC, duration_ns=None)}
    scenario = connectx.scenario(
        rules=connectx.generated_rules(50_000), duration_ns=duration_ns, port_queues=16, cores=16, **source
    )
    return connectx.simulate(scenario)


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    folder = tmp_path_factory.mktemp("replay")
    out = {}
    for ms in (1, 5, 20):
        path = folder / f"t{ms}.pcap"
        generate_pcap(GenConfig(**_TRAFFIC, duration_ns=ms * 1_000_000), str(path))
        out[ms] = str(path)
    return out


def test_short_and_long_traces_of_the_same_traffic_agree_with_the_generator(traces):
    generated = _run(5_000_000)
    assert generated["rx_mpps"] < 0.8 * generated["offered_mpps"], "the scenario must be NIC-limited"
    for ms, path in traces.items():
        replay = _run(ms * 1_000_000, trace=path)
        assert replay["rx_mpps"] == pytest.approx(generated["rx_mpps"], rel=0.02), (ms, replay["rx_mpps"])
        # every packet went through the root table, as the generator's do
        assert replay["model"]["tables_traversed_mean"] == pytest.approx(1.0), ms
        assert replay["model"]["bottleneck"] == "root_table", ms
