"""The PVP model through the binding: Ethernet arithmetic, the two NICs' mechanisms (the ConnectX-5 drop
moves with its steering cache, the Agilio's flat curve with its threads and memory latency), offload
counts and host cores, and one-line errors for bad input."""

from __future__ import annotations

import pytest

from nicbench import models, pvp
from nicbench.errors import NicbenchError

CX5, AGILIO = "connectx5-25g", "agilio-cx-25g"


def test_64b_at_25g_offers_37_2_mpps_computed_from_ethernet_overheads():
    r = pvp.predict(AGILIO, 8000, 64, datapath="kernel")
    assert r["offered_mpps"] == pytest.approx(25e9 / ((64 + 20) * 8) / 1e6)
    assert r["offered_mpps"] == pytest.approx(37.2, abs=0.01)
    assert pvp.line_rate_mpps(25, 64) == pytest.approx(r["offered_mpps"])


def test_cx5_rate_falls_with_flows_through_its_steering_cache():
    rates = [pvp.predict(CX5, f, 64)["mpps"] for f in (8000, 16000, 32000, 64000, 128000)]
    assert all(a > b for a, b in zip(rates, rates[1:])), rates
    hit = [pvp.predict(CX5, f, 64)["detail"]["steering_cache_hit_rate"] for f in (8000, 64000)]
    assert hit[0] == 1.0 and hit[1] < 0.3


def test_the_flows_order_decides_the_cx5_cache_and_not_the_agilio():
    # TRex's round robin scans the working set: more misses past the cache than random flows at 16K,
    # and a shallower fall from 16K to 64K; the Agilio's threads hide where its reads go either way.
    rr = {f: pvp.predict(CX5, f, 64)["mpps"] for f in (16000, 64000)}
    rnd = {f: pvp.predict(CX5, f, 64, flow_order="random")["mpps"] for f in (16000, 64000)}
    assert rr[16000] < rnd[16000]
    assert rr[16000] / rr[64000] < rnd[16000] / rnd[64000]
    assert pvp.predict(CX5, 16000, 64)["flow_order"] == "round-robin"
    assert pvp.predict(AGILIO, 64000, 64, flow_order="random")["mpps"] == pvp.predict(AGILIO, 64000, 64)["mpps"]
    with pytest.raises(NicbenchError, match=r"unknown flow order 'zigzag' \(allowed: round-robin, random\)"):
        pvp.predict(CX5, 16000, 64, flow_order="zigzag")


def test_a_larger_steering_cache_moves_the_cx5_curve():
    base = pvp.predict(CX5, 64000, 64)["mpps"]
    cache = pvp.predict(CX5, 64000, 64, overrides={"steering_cache_entries": 200_000.0})
    assert cache["mpps"] > 1.5 * base
    assert cache["detail"]["steering_cache_hit_rate"] == 1.0


def test_agilio_is_flat_because_threads_hide_latency_and_is_not_with_one_thread_per_core():
    flat = [pvp.predict(AGILIO, f, 64)["mpps"] for f in (8000, 128000)]
    assert flat[0] == pytest.approx(flat[1], rel=1e-9)
    few = {"fpc_threads": 60.0, "dram_latency_ns": 2000.0}
    exposed = [pvp.predict(AGILIO, f, 64, overrides=few)["mpps"] for f in (8000, 128000)]
    assert exposed[1] < 0.8 * exposed[0]
    slower = pvp.predict(AGILIO, 8000, 64, overrides={"fpc_ns_per_pass": 4000.0})["mpps"]
    assert slower < flat[0]


def test_refused_megaflows_run_on_host_cores():
    mf = pvp.pvp_megaflows(10_000)
    mf["masks"][1]["offloaded"] = 5_000
    r = pvp.predict(CX5, 10_000, 64, megaflows=mf)
    assert r["megaflows_software"] == 5_000 and r["megaflows_offloaded"] == 15_000
    assert r["host_cores_busy"] > 0.5
    full = pvp.predict(CX5, 10_000, 64)
    assert full["host_cores_busy"] == 0.0 and full["megaflows_software"] == 0
    # Agilio's mask table (256 masks, nfp flower driver): the 257th mask is refused, with the reason.
    many = {
        "masks": [{"ingress": "uplink", "megaflows": 10, "offloaded": 10} for _ in range(257)]
        + [{"ingress": "vf", "megaflows": 2570, "offloaded": 2570}]
    }
    r = pvp.predict(AGILIO, 2570, 64, megaflows=many)
    assert [x["reason"] for x in r["refused"]] == ["mask table full (256 masks)"] * 2
    assert r["megaflows_software"] == 2580


def test_software_datapaths_cost_host_cores():
    tc = pvp.predict(AGILIO, 64000, 64)
    kernel = pvp.predict(AGILIO, 64000, 64, datapath="kernel")
    dpdk = pvp.predict(AGILIO, 64000, 64, datapath="dpdk")
    assert tc["host_cores_busy"] == 0.0
    assert kernel["host_cores_busy"] > 1 and kernel["bottleneck"] == "host_datapath"
    assert dpdk["host_cores_busy"] == 8.0


def test_latency_is_the_sum_of_its_parts_and_a_kernel_pass_adds_a_pcie_crossing():
    rtt_ns = 500.0
    tc = pvp.predict(CX5, 1000, 64, overrides={"pcie_dma_read_ns": rtt_ns})
    parts = tc["latency_parts_us"]
    assert set(parts) == {"wire", "nic", "pcie", "vm", "software"}
    assert sum(parts.values()) == pytest.approx(tc["latency_us"])
    # Offloaded: one crossing to the VM and back, three DMA round trips (writes and doorbell land
    # in half a round trip each, the descriptor and packet reads take one each).
    assert parts["pcie"] == pytest.approx(3 * rtt_ns / 1e3)
    # 64 B + 20 B on the wire at 25 Gb/s, both ports.
    assert parts["wire"] == pytest.approx(2 * 84 * 8 / 25 / 1e3)
    # The kernel datapath: each pass adds a crossing each way (NIC -> representor -> NIC).
    kernel = pvp.predict(CX5, 1000, 64, datapath="kernel", overrides={"pcie_dma_read_ns": rtt_ns})
    assert kernel["latency_parts_us"]["pcie"] > parts["pcie"]
    assert kernel["latency_parts_us"]["software"] > 0 and parts["software"] == 0
    # The round trip moves the latency and nothing else.
    slow = pvp.predict(CX5, 1000, 64, overrides={"pcie_dma_read_ns": 2 * rtt_ns})
    assert slow["latency_parts_us"]["pcie"] == pytest.approx(2 * parts["pcie"])
    assert slow["mpps"] == tc["mpps"]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(nic=CX5, flows=0, frame_bytes=64), "flows: got 0, allowed 1 to 268435456"),
        (dict(nic=CX5, flows=10, frame_bytes=40), "frame_bytes: got 40, allowed 64-9018"),
        (
            dict(nic=CX5, flows=10, frame_bytes=64, offered_gbps=40.0),
            "offered_gbps: got 40, allowed > 0 and <= the port's 25 Gb/s",
        ),
        (dict(nic="connectx5", flows=10, frame_bytes=64), "is of kind 'connectx', which has no OVS offload"),
        (dict(nic=CX5, flows=10, frame_bytes=64, datapath="ovs"), "unknown datapath 'ovs'"),
        (dict(nic=CX5, flows=10, frame_bytes=64, overrides={"nope": 1.0}), "nope"),
        (
            dict(
                nic=CX5,
                flows=10,
                frame_bytes=64,
                megaflows={
                    "masks": [
                        {"ingress": "uplink", "megaflows": 1, "offloaded": 2},
                        {"ingress": "vf", "megaflows": 1, "offloaded": 1},
                    ]
                },
            ),
            "megaflows.masks[0]: offloaded = 2 exceeds megaflows = 1",
        ),
        (
            dict(
                nic=CX5,
                flows=10,
                frame_bytes=64,
                megaflows={"masks": [{"ingress": "lan", "megaflows": 1, "offloaded": 1}]},
            ),
            "unknown variant `lan`",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_field(kwargs, message):
    with pytest.raises(NicbenchError) as exc:
        pvp.predict(**kwargs)
    text = str(exc.value)
    assert message in text and "\n" not in text, text


def test_contract_schemas_are_exposed():
    req = models.contract_schema("pvp", "request")
    assert set(req["required"]) == {"nic", "flows", "frame_bytes"}
    assert req["additionalProperties"] is False
    assert "host_cores_busy" in models.contract_schema("pvp", "result")["properties"]
