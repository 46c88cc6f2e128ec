"""A study's offload feature matrix (`studies/<study>/feature_matrix.toml`): table rows of what a
NIC offloads, each run as a real OpenFlow rule and packet through the virtual OVS datapath.

For `ovs-offload` the rows are seed 002's Appendix A (OVS-TC on Agilio CX). nicbench's Agilio
capabilities were taken from that same table, so agreement checks the datapath's translation of
rules into megaflows and the offload decision end to end, not an independent prediction.

Packets are scapy expressions (scapy is the `test` extra); without scapy the matrix is reported
as not run, with that reason.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.inputs import read_toml

__all__ = ["FILE", "SEED_NIC", "load_matrix", "run_matrix", "frame", "Row", "MatrixOutcome"]

FILE = "feature_matrix.toml"
SEED_NIC = "agilio-cx-25g"
INFO_NIC = "connectx5-25g"
KINDS = ("match", "action", "feature")
HONESTY = (
    "nicbench's Agilio CX capabilities were taken from this same table, so agreement checks the "
    "datapath's translation of each rule into a megaflow and the offload decision end to end, "
    "not an independent prediction."
)


@dataclass
class Row:
    kind: str
    row: str
    line: int
    offloaded: bool
    expressible: bool = True
    why: str = ""
    rule: str = ""
    packet: str = ""
    connectx5: bool | None = None
    note: str = ""
    # A VXLAN port for tunnel rows (`--port` syntax, `nicbench.vswitch.parse_port_spec`) and the port
    # the packet arrives on (the underlay's for a decap).
    port: str = ""
    in_port: str = "p0"
    # Filled by run_matrix.
    result: dict[str, Any] = field(default_factory=dict)  # nic -> {"offloaded", "reason", "megaflow"}

    @property
    def agrees(self) -> bool | None:
        r = self.result.get(SEED_NIC)
        return None if r is None else r["offloaded"] == self.offloaded and (r["offloaded"] or bool(r["reason"]))

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "row": self.row,
            "line": self.line,
            "seed_offloaded": self.offloaded,
            "expressible": self.expressible,
            "why": self.why,
            "rule": self.rule,
            "packet": self.packet,
            "connectx5_expected": self.connectx5,
            "note": self.note,
            "result": self.result,
            "agrees": self.agrees,
        }


@dataclass
class MatrixOutcome:
    rows: list[Row]
    not_run: str | None = None  # why nothing ran (scapy missing)

    def as_dict(self) -> dict[str, Any]:
        run = [r for r in self.rows if r.expressible]
        return {
            "rows": [r.as_dict() for r in self.rows],
            "expressible": len(run),
            "agree": sum(r.agrees is True for r in run),
            "not_run": self.not_run,
            "disagree": [r.row for r in run if r.agrees is False],
            "connectx5_disagree": [
                r.row
                for r in run
                if r.connectx5 is not None and INFO_NIC in r.result and r.result[INFO_NIC]["offloaded"] != r.connectx5
            ],
            "caveat": HONESTY,
        }


def load_matrix(path: str | Path) -> list[Row]:
    """The rows of a feature matrix file, in file order (match, action, feature)."""
    data = read_toml(path, ValueError, "feature matrix file")
    unknown = set(data) - set(KINDS)
    if unknown:
        raise ValueError(f"{path}: unknown tables {sorted(unknown)} (expected {', '.join(KINDS)})")
    rows = []
    for kind in KINDS:
        for entry in data.get(kind, []):
            try:
                row = Row(kind=kind, **entry)
            except TypeError as exc:
                raise ValueError(f"{path}: [[{kind}]] {entry.get('row', '?')}: {exc}") from None
            if row.expressible and not (row.rule and row.packet):
                raise ValueError(f"{path}: {row.row} (line {row.line}): an expressible row needs rule and packet")
            if not row.expressible and not row.why:
                raise ValueError(f"{path}: {row.row} (line {row.line}): expressible = false needs why")
            rows.append(row)
    return rows


def frame(expr: str) -> bytes:
    """The frame of a scapy expression (`Ether()/IP(dst='10.0.0.2')/UDP(dport=53)`); only scapy's
    layer names are in scope."""
    import scapy.all as scapy

    names = {k: getattr(scapy, k) for k in dir(scapy) if not k.startswith("_")}
    return bytes(eval(expr, {"__builtins__": {}}, names))  # noqa: S307 - the study's own data file


def run_row(row: Row, nic: str, workdir: Path) -> dict[str, Any]:
    """One row through the datapath with `nic`: the packet's megaflow, offloaded or not, and why."""
    import scapy.all as scapy

    from nicbench import vswitch

    n = len(list(workdir.iterdir()))
    rules_file, pcap = workdir / f"{n}.of", workdir / f"{n}.pcap"
    rules_file.write_text(row.rule + "\n")
    scapy.wrpcap(str(pcap), [scapy.Ether(frame(row.packet))])
    port = vswitch.parse_port_spec(row.port) if row.port else None
    result = vswitch.megaflows(rules_file, pcap, in_port=row.in_port, tunnels=[port] if port else None, nic=nic)
    # A decapsulated packet installs two megaflows (the underlay's tnl_pop, then the tunnel-key one,
    # which carries the attribute); the row is offloaded when all of them are.
    expected = 2 if port and row.in_port == port["underlay"] else 1
    if len(result["megaflows"]) != expected:
        raise ValueError(f"{row.row}: expected {expected} megaflow(s), got {len(result['megaflows'])}")
    mf = result["megaflows"][-1]
    refused = [m["reason"] for m in result["megaflows"] if m["reason"]]
    return {
        "offloaded": result["offloaded_flows"] == len(result["megaflows"]),
        "reason": refused[0] if refused else None,
        "megaflow": mf["text"],
    }


def run_matrix(path: str | Path, nics: tuple[str, ...] = (SEED_NIC, INFO_NIC)) -> MatrixOutcome:
    """Runs every expressible row with each of `nics` (a second of work)."""
    rows = load_matrix(path)
    try:
        import scapy.all  # noqa: F401
    except ImportError:
        return MatrixOutcome(rows, not_run="scapy is not installed (pip install 'nicbench[test]')")
    with tempfile.TemporaryDirectory(prefix="nicbench-matrix-") as tmp:
        for row in rows:
            if row.expressible:
                row.result = {nic: run_row(row, nic, Path(tmp)) for nic in nics}
    return MatrixOutcome(rows)


TITLE = "Offload feature matrix (seed 002 Appendix A)"


def summary_line(d: dict[str, Any]) -> str:
    """One line for `nicbench reproduce`: `Offload feature matrix (...): N/M rows agree (...)`."""
    if d["not_run"]:
        return f"{TITLE}: not run: {d['not_run']}"
    listed = len(d["rows"]) - d["expressible"]
    line = (
        f"{TITLE}: {d['agree']}/{d['expressible']} expressible rows agree on agilio-cx-25g, "
        f"{listed} rows listed as not expressible (capabilities taken from this table: checks the datapath "
        f"end to end, not a prediction)"
    )
    if d["disagree"]:
        line += f" (not: {', '.join(d['disagree'])})"
    return line
