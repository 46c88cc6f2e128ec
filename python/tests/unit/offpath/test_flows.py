"""Flow strings (`nicbench paths --flow`, study specs) and the request the wrapper builds."""

from __future__ import annotations

import json

import jsonschema
import pytest

from nicbench import models, offpath, profiles
from nicbench.errors import NicbenchError


def test_parse_flow_with_share():
    f = offpath.parse_flow("client->soc READ 4KiB x 80%")
    assert (f.path, f.verb, f.payload_bytes, f.share) == ("client->soc", "READ", 4096, pytest.approx(0.8))
    assert f.to_request() == {"path": "client->soc", "verb": "READ", "payload_bytes": 4096, "share": 0.8}


def test_parse_flow_every_keyword():
    f = offpath.parse_flow("host -> soc write 64KiB x 0.25 @ 56Gbps batch 16 in 96KiB threads 24 machines 2")
    assert f.path == "host->soc" and f.verb == "WRITE" and f.share == pytest.approx(0.25)
    # 56 Gbps of 64 KiB payloads = 56e9 / (8 * 65536) requests/s
    assert f.offered_mpps == pytest.approx(56e9 / (8 * 65536) / 1e6)
    assert (f.doorbell_batch, f.address_range_bytes, f.threads, f.machines) == (16, 96 * 1024, 24, 2)


def test_parse_flow_aliases_and_packet_rate():
    f = offpath.parse_flow("S2H RECV 0B @ 10Mpps")
    assert (f.path, f.verb, f.payload_bytes, f.offered_mpps) == ("soc->host", "SEND", 0, pytest.approx(10.0))
    assert offpath.parse_flow("h2s SEND/RECV 64").verb == "SEND"


@pytest.mark.parametrize(
    "text, token",
    [
        ("client->sox READ 4KiB", "'client->sox'"),
        ("client->soc FETCH 4KiB", "'FETCH'"),
        ("client->soc READ four", "'four'"),
        ("client->soc READ 4KiB x 180%", "'180%'"),
        ("client->soc READ 4KiB x lots", "'lots'"),
        ("client->soc READ 4KiB batch 0", "'0'"),
        ("client->soc READ 4KiB @ fast", "'fast'"),
        ("client->soc READ 4KiB in 0B", "'0B'"),
        ("client->soc READ 4KiB please", "'please'"),
        ("client->soc READ 4KiB x", "'x'"),
        ("client->soc READ 4KiB x 10% x 20%", "'x'"),
        ("client->soc READ 2GiB", "'2GiB'"),
    ],
)
def test_parse_flow_errors_name_the_bad_token(text, token):
    with pytest.raises(NicbenchError) as err:
        offpath.parse_flow(text)
    assert token in str(err.value) and "\n" not in str(err.value)


def test_parse_flow_needs_three_tokens_and_a_payload_for_bit_rates():
    with pytest.raises(NicbenchError, match="PATH VERB SIZE"):
        offpath.parse_flow("client->soc READ")
    with pytest.raises(NicbenchError, match="payload > 0"):
        offpath.parse_flow("client->soc READ 0B @ 10Gbps")
    with pytest.raises(NicbenchError):
        offpath.parse_flow("   ")


def test_parse_flows_splits_on_semicolons():
    flows = offpath.parse_flows("client->host READ 64B; client->soc WRITE 1KiB;")
    assert [f.path for f in flows] == ["client->host", "client->soc"]
    with pytest.raises(NicbenchError):
        offpath.parse_flows(" ; ")


def test_label_round_trips():
    f = offpath.parse_flow("host->soc WRITE 64KiB x 20% batch 4 in 128KiB")
    assert offpath.parse_flow(f.label()) == f


@pytest.mark.parametrize(
    "resource, cls",
    [
        ("network_out", "network"),
        ("network_in", "network"),
        ("pcie1_up", "pcie"),
        ("pcie0_down", "pcie"),
        ("nic_cores_soc", "nic_cores"),
        ("nic_cores", "nic_cores"),
        ("soc_dram_bw", "soc_dram"),
        ("host_dram", "host_dram"),
        ("requester", "requester"),
        ("host_cpu", "host_cpu"),
        ("mystery", "mystery"),
        (None, ""),
    ],
)
def test_bottleneck_class(resource, cls):
    assert offpath.bottleneck_class(resource) == cls


def test_request_merges_calibration_overrides_known_to_the_profile():
    flows = ["client->soc READ 64B"]
    # A calibration of one model can hold names another model's profile does not declare: those stay out.
    with profiles.parameter_overrides({"nic_tlp_ns": 3.0, "root_table_capacity": 100.0}):
        bf2 = offpath.request("bluefield2", flows, overrides={"network_efficiency": 0.9})
        rnic = offpath.request("connectx6-rnic", ["client->host READ 64B"])
    assert bf2["overrides"] == {"nic_tlp_ns": 3.0, "network_efficiency": 0.9}
    assert rnic["overrides"] == {"nic_tlp_ns": 3.0}
    assert "overrides" not in offpath.request("bluefield2", flows)
    assert "profiles_dir" not in bf2, "the one profile loader decides where profiles are"
    assert json.loads(json.dumps(bf2))["flows"] == [{"path": "client->soc", "verb": "READ", "payload_bytes": 64}]
    jsonschema.validate(bf2, models.contract_schema("offpath", "request"))


def test_predict_answers_every_flow_in_order_within_the_schema():
    result = offpath.predict("bluefield2", ["client->host READ 4KiB", "client->soc READ 4KiB"])
    assert [f["path"] for f in result["flows"]] == ["client->host", "client->soc"]
    assert result["total_gbps"] == pytest.approx(sum(f["gbps"] for f in result["flows"]))
    jsonschema.validate(result, models.contract_schema("offpath", "result"))
