"""The ovs-offload study: specs load, every reference names an experiment/metric and one point and quotes
the seed with its line, ONE calibration point and ONE fitted parameter per NIC (the fit reproduces the
profiles' values), validation is independent of calibration, and `reproduce` runs end to end."""

from __future__ import annotations

import re

import pytest
from helpers import REPO, STUDIES, missing

from nicbench import profiles
from nicbench.calibrate import calibrate, load_config
from nicbench.calibrate.identify import independent_points
from nicbench.calibrate.problem import build_problem
from nicbench.errors import NicbenchError
from nicbench.experiments.spec import load_spec
from nicbench.reproduce import reproduce_study
from nicbench.vocab.study import load_study

STUDY = STUDIES / "ovs-offload"
SEED = REPO.parent / "shared" / "seeds" / "002_6c8323bd0077909c.txt"


def test_specs_and_references_resolve_to_one_point_each():
    study = load_study(STUDY)
    specs = {s.name: s for s in (load_spec(p) for p in study.experiments)}
    assert {"ovs-offload-fig7", "ovs-offload-fig8", "ovs-offload-fig9", "ovs-offload-datapaths"} <= set(specs)
    for r in study.references:
        assert r.metric in specs[r.experiment].target.metrics, r.id
        assert re.search(r"lines? \d+", r.location) and r.location.startswith("shared/seeds/002_"), r.id
    problem = build_problem(study, study.references)
    assert len(problem.ref_point) == len(study.references)


def test_quotes_are_in_the_seed_at_their_lines():
    if not SEED.is_file():
        missing(f"seed text {SEED.name} not in ../shared/seeds")
    lines = SEED.read_text().splitlines()
    for r in load_study(STUDY).references:
        numbers = [int(n) for n in re.findall(r"\d+", r.location.split(",", 1)[1].split("(")[0])]
        text = " ".join(lines[n - 1] for n in numbers)
        # The quote's first words (before any bracketed or parenthesized reading) are the seed's.
        if r.quote.startswith("("):
            # Only the seed's table, read at its lines.
            assert "High Performance" in text and "KERNEL-OVS" in text, r.id
            continue
        head = re.split(r" \(|\[|\.\.\.", r.quote)[0].split(": ")[-1][:40]
        assert head in text, f"{r.id}: {head!r} not at {numbers}"


SOLVED = {"connectx5-25g": "steering_outstanding_misses", "agilio-cx-25g": "fpc_ns_per_pass"}


def _solved(doc: dict) -> list[str]:
    """The parameters `nicbench calibrate --allow-saturated` solved from the NIC's one point."""
    return [n for n, p in doc["param"].items() if "as many as free parameters (not a fit)" in p["provenance"]]


def test_one_calibration_point_per_nic_solves_one_parameter_and_fits_none():
    study = load_study(STUDY)
    cal = [r for r in study.references if r.set == "calibration"]
    assert sorted(r.where["nic"] for r in cal) == ["agilio-cx-25g", "connectx5-25g"]
    cfg = load_config(STUDY / "calibration.toml")
    for nic, param in SOLVED.items():
        doc = profiles.load(nic)
        # Saturation is per device: the other NIC's point runs with its own profile and pins nothing.
        assert independent_points(cal, nic) == 1
        assert not [n for n, p in doc["param"].items() if p["provenance"].startswith("fitted")]
        assert _solved(doc) == [param] and param in cfg.parameters
        with pytest.raises(NicbenchError, match="saturated fit shows nothing"):
            calibrate(nic, write=False, validate=False, jobs=1)
        inherited = [n for n, p in doc["param"].items() if p["provenance"].startswith("inherited from connectx5:")]
        if nic == "connectx5-25g":
            assert {"steering_cache_entries", "steering_miss_latency_ns", "steering_lookup_ns"} <= set(inherited)


def test_validation_is_independent_of_calibration():
    study = load_study(STUDY)
    validation = [r for r in study.references if r.set == "validation"]
    assert len(validation) >= 12
    # The seed's 1.9x (16K vs 64K) and 2.4x (Agilio vs ConnectX-5 at 64K) are ratios on the 5.7 Mpps
    # point and the calibration points: that one observation counts once.
    repeats = {r.id: r.repeats for r in validation if r.repeats}
    assert repeats == {"cx5-drop-1-9x": "cx5-64k-5-7mpps", "agilio-vs-cx5-2-4x": "cx5-64k-5-7mpps"}
    assert all(r.independent for r in validation if r.id not in repeats)


@pytest.mark.parametrize("nic", ["connectx5-25g", "agilio-cx-25g"])
def test_calibration_recovers_the_profile_value_from_a_wrong_start(nic, tmp_path):
    # A copy of the profile with its one fitted parameter 1.6x off: the repo's fit brings it back to the
    # committed value (which `nicbench calibrate <nic>` wrote) and its calibration point within 1%.
    source = profiles.resolve(nic)
    doc = profiles.load(nic)
    (name,) = _solved(doc)
    current = doc["param"][name]["value"]
    text = source.read_text()
    table = text.index(f"[param.{name}]")
    start = text.index("value = ", table)
    end = text.index("\n", start)
    copy = tmp_path / source.name
    copy.write_text(text[:start] + f"value = {current * 1.6!r}" + text[end:])
    outcome = calibrate(str(copy), write=False, validate=False, jobs=1, allow_saturated=True)
    assert list(outcome.parameters) == [name]
    assert outcome.parameters[name]["fitted"] == pytest.approx(current, rel=0.03)
    own = [row for row in outcome.rows if row["where"]["nic"] == nic]
    assert len(own) == 1 and abs(own[0]["rel_error"]) < 0.01


def test_reproduce_reports_every_reference_with_a_model_value(tmp_path, monkeypatch):
    from nicbench.report import html
    from nicbench.report.figures import EmptyFigure

    def no_figure(*args, **kwargs):
        raise EmptyFigure("figures skipped in tests")

    monkeypatch.setattr(html, "render", no_figure)
    outcome = reproduce_study(load_study(STUDY), results=tmp_path / "results", reports=tmp_path / "reports", jobs=1)
    comparisons = [c for p in outcome.pages for c in p.comparisons]
    assert len(comparisons) == len(load_study(STUDY).references)
    missing = [c.reference.id for c in comparisons if c.status in ("no result", "ambiguous", "unit mismatch")]
    assert not missing
    status = {c.reference.id: c.status for c in comparisons}
    # Calibration and the mechanisms' qualitative claims hold; which numeric predictions pass is a
    # result (README, ovs-offload): a change must be deliberate.
    for must in (
        "cx5-16k-11-8mpps",
        "agilio-64k-13mpps",
        "agilio-flat-with-flows",
        "cx5-line-rate-large-frames",
        "vxlan-16k-more-than-50pct",
        "tc-offload-cpu-efficiency",
    ):
        assert status[must] == "pass", (must, status)
    # The known miss (README, ovs-offload: VXLAN at 64K, Agilio 3.3x ahead where the seed says 2x): a
    # change that moves it, or fails another entry, must update the README's account.
    failing = {rid for rid, st in status.items() if st != "pass"}
    assert failing == {"vxlan-64k-2x"}, failing
