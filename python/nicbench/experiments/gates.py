"""`reproduce --strict`: what fails a study, minus the misses it declares.

A study may list the reference values and claims its model is known to miss in
`known_misses.toml` (each with the reason; the README's "known misses" say the same):

    [[miss]]
    id = "vxlan-64k-2x"                 # a reference id, a claim id, or "feature-matrix:<row>"
    device = "bluefield1"               # only for a prediction's claim or measurement
    reason = "the Agilio's tunnel cost is not known (assumed 0)"

The gate fails on every failing entry the file does not list, and on every listed miss that now
passes (so the list cannot outlive the misses it excuses). Entries that did not run (a
`--limit-points` subset) are neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nicbench.inputs import read_toml
from nicbench.vocab.errors import SpecError

__all__ = ["KnownMiss", "GateResult", "load_known_misses", "gate"]

FILE = "known_misses.toml"


@dataclass(frozen=True)
class KnownMiss:
    id: str
    device: str | None
    reason: str


@dataclass
class GateResult:
    study: str
    unexpected: list[str] = field(default_factory=list)  # failing, not a known miss
    fixed: list[str] = field(default_factory=list)  # a known miss that passes now
    known: list[str] = field(default_factory=list)  # failing as declared

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.fixed

    def as_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "ok": self.ok,
            "unexpected": self.unexpected,
            "fixed": self.fixed,
            "known": self.known,
        }


def load_known_misses(study_dir: str | Path) -> list[KnownMiss]:
    path = Path(study_dir) / FILE
    if not path.is_file():
        return []
    data = read_toml(path, SpecError, "known-misses file")
    out = []
    for i, entry in enumerate(data.get("miss", [])):
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("id"), str)
            or not isinstance(entry.get("reason"), str)
        ):
            raise SpecError(f"{path}: miss[{i}]: expected a table with string `id` and `reason`")
        unknown = set(entry) - {"id", "device", "reason"}
        if unknown:
            raise SpecError(f"{path}: miss[{i}]: unknown key {sorted(unknown)[0]!r} (id, device, reason)")
        out.append(KnownMiss(entry["id"], entry.get("device"), entry["reason"]))
    return out


def _label(entry_id: str, device: str | None) -> str:
    return f"{device}:{entry_id}" if device else entry_id


def gate(outcome: dict[str, Any], known: list[KnownMiss]) -> GateResult:
    """Checks a `StudyOutcome.as_dict()` against the study's known misses."""
    status: dict[str, bool] = {}  # label -> passes
    for page in outcome["pages"]:
        for c in page["comparisons"]:
            if c["status"] in ("pass", "fail"):
                status[_label(c["id"], None)] = c["status"] == "pass"
    for dp in outcome["predictions"]:
        for claim_id, c in dp["claims"].items():
            if c["status"] in ("pass", "fail"):
                status[_label(claim_id, dp["device"])] = c["status"] == "pass"
        for c in dp.get("comparisons", []):
            if c["status"] in ("pass", "fail"):
                status[_label(c["id"], dp["device"])] = c["status"] == "pass"
    matrix = outcome.get("feature_matrix")
    if matrix is not None and matrix.get("not_run") is None:
        for row in matrix["rows"]:
            if row["expressible"] and row["agrees"] is not None:
                status[f"feature-matrix:{row['row']}"] = bool(row["agrees"])
    declared = {_label(k.id, k.device) for k in known}
    result = GateResult(outcome["study"])
    for label, passes in sorted(status.items()):
        if not passes:
            (result.known if label in declared else result.unexpected).append(label)
        elif label in declared:
            result.fixed.append(label)
    return result
