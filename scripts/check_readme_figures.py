#!/usr/bin/env python3
"""Checks the "Current figures" README.md gives for a study against a `nicbench reproduce --json` run.

    nicbench reproduce ovs-offload argus100g offpath --json ... > build/gate.json
    python scripts/check_readme_figures.py build/gate.json [STUDY...]

STUDY...: the studies whose paragraph must be there (default: every study of the JSON that has one;
the others are named as not checked).

For each study in the JSON, the README paragraph that names it (`reproduce STUDY` or `study \\`STUDY\\``)
and gives "Current figures" must contain, whitespace and bold marks aside,
`calibration P/N pass (median |error| X%)` and `validation, independent: P/N pass (median |error| Y%)`
as this run computed them; a paragraph that also gives the median over the entries that are not
drop/no-drop flags (`over the N that are not drop flags: Z%`) is checked too. A study with predictions
for other devices (pam21) also needs, in the README paragraph that gives their "Current figures",
`own measurements pass P/N, P/N and P/N (median |error| X%, Y%, Z%)` (devices in the run's order) and
`C of N claims hold`. Prints what it
checked; exits 1 naming each figure that drifted (the README is then out of date), 2 on bad input.
"""

from __future__ import annotations

import json
import math
import re
import statistics
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def _figures_paragraph(text: str, *marks: str) -> str | None:
    """The first paragraph that gives "Current figures" and one of `marks`, on one line without bold."""
    for para in re.split(r"\n\s*\n", text):
        flat = " ".join(para.replace("**", "").split())
        if "Current figures" in flat and any(m in flat for m in marks):
            return flat
    return None


def _paragraph(text: str, study: str) -> str | None:
    return _figures_paragraph(text, f"reproduce {study}`", f"study `{study}`")


def _pct(x: float) -> str:
    return f"{x:.1%}"


def expected_fragments(study: dict) -> list[str]:
    """The phrases the README must hold for one study of the JSON."""
    s = study["summary"]
    out = []
    if "calibration" in s:
        c = s["calibration"]
        out.append(f"calibration {c['passed']}/{c['entries']} pass (median |error| {_pct(c['median_abs_rel_error'])})")
    if "validation (independent)" in s:
        v = s["validation (independent)"]
        out.append(
            f"validation, independent: {v['passed']}/{v['entries']} pass "
            f"(median |error| {_pct(v['median_abs_rel_error'])}"
        )
    return out


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def prediction_fragments(study: dict) -> list[str]:
    """The phrases of the predictions paragraph: each device's own measurements, and the claims."""
    devices = study.get("predictions") or []
    measured = [d["measurements"] for d in devices if d.get("measurements")]
    out = []
    if measured:
        passed = _listed([f"{m['passed']}/{m['entries']}" for m in measured])
        out.append(
            f"own measurements pass {passed} "
            f"(median |error| {', '.join(_pct(m['median_abs_rel_error']) for m in measured)})"
        )
    claims = [c for d in devices for c in (d.get("claims") or {}).values()]
    if claims:
        out.append(f"{sum(c['status'] == 'pass' for c in claims)} of {len(claims)} claims hold")
    return out


def _predictions_paragraph(text: str) -> str | None:
    return _figures_paragraph(text, "own measurements pass")


def numeric_median(study: dict) -> tuple[int, float] | None:
    """Independent validation entries that are not drop/no-drop flags (metric `drops`, 0 or 1): how
    many, and their median |relative error|; None when the study has no such flags."""
    rows = [
        c for p in study["pages"] for c in p["comparisons"] if c["set"] == "validation" and c.get("restates") is None
    ]
    flags = [c for c in rows if c["metric"] == "drops" and c["published"] in (0.0, 1.0)]
    if not flags:
        return None
    errors = [
        abs(c["relative_error"])
        for c in rows
        if c not in flags and c["relative_error"] is not None and math.isfinite(c["relative_error"])
    ]
    return len(errors), statistics.median(errors)


def main(argv: list[str]) -> int:
    if not argv:
        print("nicbench: error: usage: check_readme_figures.py REPRODUCE.json [STUDY...]", file=sys.stderr)
        return 2
    required = set(argv[1:])
    try:
        studies = json.loads(Path(argv[0]).read_text())
    except (OSError, ValueError) as e:
        print(f"nicbench: error: {argv[0]}: not a `nicbench reproduce --json` output ({e})", file=sys.stderr)
        return 2
    text = README.read_text()
    drifted = []
    absent = required - {s["study"] for s in studies}
    if absent:
        print(f"nicbench: error: {argv[0]}: no run of {', '.join(sorted(absent))} in it", file=sys.stderr)
        return 2
    for study in studies:
        para = _paragraph(text, study["study"])
        if para is None:
            if study["study"] in required:
                drifted.append(f"{study['study']}: no README paragraph with its 'Current figures'")
            else:
                print(f"README {study['study']}: not checked (no paragraph with its 'Current figures')")
            continue
        wanted = expected_fragments(study)
        numeric = numeric_median(study)
        if numeric is not None:
            wanted.append(f"over the {numeric[0]} that are not drop flags: {_pct(numeric[1])}")
        checks = [(para, f) for f in wanted]
        predicted = prediction_fragments(study)
        if predicted:
            predictions_para = _predictions_paragraph(text) or ""
            checks += [(predictions_para, f) for f in predicted]
        for where, fragment in checks:
            if fragment in where:
                print(f"README {study['study']}: {fragment}")
            else:
                drifted.append(f"{study['study']}: README does not say '{fragment}' (this run's figure)")
    for line in drifted:
        print(f"README out of date: {line}", file=sys.stderr)
    return 1 if drifted else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
