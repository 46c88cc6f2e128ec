"""The offload feature matrix of seed 002's Appendix A (`studies/ovs-offload/feature_matrix.toml`).

Each expressible row runs its real OpenFlow rule and a scapy-built packet through the virtual OVS
datapath with nic=agilio-cx-25g and must be offloaded (or refused, with a reason) as the seed's
OVS-TC column says. The Agilio capabilities come from that same table: this checks the rule →
megaflow translation and the offload decision end to end, not an independent prediction.
ConnectX-5 values are informational (offload.rs's mlx5 capabilities, no seed value).
"""

from __future__ import annotations

import pytest
from helpers import REPO, STUDIES, missing, python_module

from nicbench.experiments import feature_matrix as fm
from nicbench.report.html import feature_matrix_section

SEED = REPO.parent / "shared" / "seeds" / "002_6c8323bd0077909c.txt"
MATRIX = STUDIES / "ovs-offload" / fm.FILE
ROWS = fm.load_matrix(MATRIX)
RUN = [r for r in ROWS if r.expressible]
python_module("scapy.all", "scapy")  # the packets are scapy expressions (missing: CI fails, else skips)


def test_rows_cover_the_appendix_and_name_their_seed_lines():
    if not SEED.is_file():
        missing(f"seed text {SEED.name} not in {SEED.parent}")
    lines = SEED.read_text().splitlines()
    for r in ROWS:
        assert r.row in lines[r.line - 1], f"{r.row}: seed line {r.line} is {lines[r.line - 1]!r}"
    # Every OVS_KEY_ATTR_* / OVS_ACTION_ATTR_* line of Appendix A has a row.
    start = next(i for i, t in enumerate(lines) if t.strip() == "APPENDIX A")
    attrs = {i + 1 for i, t in enumerate(lines) if i > start and t.startswith(("OVS_KEY_ATTR_", "OVS_ACTION_ATTR_"))}
    assert attrs == {r.line for r in ROWS if r.kind != "feature"}


def test_the_file_says_what_agreement_means():
    head = MATRIX.read_text().split("[[", 1)[0]
    assert "TAKEN FROM THIS SAME TABLE" in head and "not an independent prediction" in head
    assert len(RUN) >= 25, "rows the datapath can express are run, not listed"


@pytest.fixture(scope="module")
def outcome():
    return fm.run_matrix(MATRIX)


@pytest.mark.parametrize("row", RUN, ids=[r.row for r in RUN])
def test_agilio_offloads_as_the_seed_says(outcome, row):
    r = next(x for x in outcome.rows if x.row == row.row).result
    got = r[fm.SEED_NIC]
    assert got["offloaded"] == row.offloaded, f"{row.rule}: {got}"
    if not row.offloaded:
        assert got["reason"], f"{row.rule}: refused without a reason: {got}"
    else:
        assert got["reason"] is None


@pytest.mark.parametrize(
    "row", [r for r in RUN if r.connectx5 is not None], ids=[r.row for r in RUN if r.connectx5 is not None]
)
def test_connectx5_as_offload_rs_capabilities_say(outcome, row):
    got = next(x for x in outcome.rows if x.row == row.row).result[fm.INFO_NIC]
    assert got["offloaded"] == row.connectx5, f"{row.rule}: {got}"
    assert got["offloaded"] or got["reason"]


def test_rows_exercise_their_attribute(outcome):
    """The megaflow really carries the attribute (so agreement is not by accident)."""
    by = {r.row: r.result[fm.SEED_NIC]["megaflow"] for r in outcome.rows if r.expressible}
    assert "tcp_flags(" in by["OVS_KEY_ATTR_TCP_FLAGS"]
    assert "icmp(type=8" in by["OVS_KEY_ATTR_ICMP"]
    assert "sctp(" in by["OVS_KEY_ATTR_SCTP"]
    # IPv6 addresses (u128) reach the model exactly, in matches and in set_field.
    assert "ipv6(dst=2001:db8::2," in by["OVS_KEY_ATTR_IPV6"]
    assert "set(ipv6(dst=2001:db8::9))" in by["OVS_ACTION_ATTR_SET_IPV6"]
    assert "ct_state(" in by["OVS_KEY_ATTR_CT_STATE"]
    assert "push_vlan(" in by["OVS_ACTION_ATTR_PUSH_VLAN"] and "pop_vlan" in by["OVS_ACTION_ATTR_POP_VLAN"]
    assert "ct(" in by["OVS_ACTION_ATTR_CT"] and "set(ipv4(" in by["OVS_ACTION_ATTR_SET_MASKED"]
    assert by["OVS_KEY_ATTR_TUNNEL"].startswith("tunnel(tun_id=0x5,src=172.31.1.2,dst=172.31.1.1,")
    assert "tnl_push(" in by["OVS_ACTION_ATTR_SET_TUNNEL_ INFO"] and "vni=0x5" in by["OVS_ACTION_ATTR_SET_TUNNEL_ INFO"]


def test_reproduce_reports_the_matrix_and_its_disagreements(outcome):
    d = outcome.as_dict()
    n = len(RUN)
    assert d["agree"] == n and d["disagree"] == [] and d["connectx5_disagree"] == []
    line = fm.summary_line(d)
    assert line.startswith(f"Offload feature matrix (seed 002 Appendix A): {n}/{n} expressible rows agree")
    assert "not a prediction" in line
    page = "".join(feature_matrix_section(d))
    assert "taken from this same table" in page and "OVS_KEY_ATTR_ARP" in page and "not expressible" in page
    # A row whose expectation the datapath does not meet is named.
    flipped = next(r for r in outcome.rows if r.row == "OVS_ACTION_ATTR_CT")
    flipped.offloaded = True
    try:
        d = outcome.as_dict()
        assert d["disagree"] == ["OVS_ACTION_ATTR_CT"] and "(not: OVS_ACTION_ATTR_CT)" in fm.summary_line(d)
        assert "disagrees" in "".join(feature_matrix_section(d))
    finally:
        flipped.offloaded = False
