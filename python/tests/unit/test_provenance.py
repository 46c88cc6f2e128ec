"""Every profile parameter's provenance is true.

- "fitted ..." only if `nicbench calibrate` really fits it: the parameter is in the `parameters` list of
  the calibration config that fits the profile (its study's `calibration.toml`, or the few-shot config
  named by the provenance).
- "derived from reference <id>[, <id>]: ..." (a value worked out by hand from published numbers) only
  from calibration entries of the profile's study: a value derived from a number is fitted to it, and
  that number can no longer validate the model.
- Every parameter has a unit and a provenance.
"""

from __future__ import annotations

import re
import tomllib

import pytest
from helpers import REPO, STUDIES

from nicbench import profiles
from nicbench.experiments.study import load_study

PROFILES = sorted(p.stem for p in (REPO / "profiles").glob("*.toml"))
DERIVED = re.compile(r"^derived from references? ([^:]+):")
# Untrue provenance found by the issue-15 audit and not fixed yet: (profile, parameter) → why.
# Each entry must still be a violation (the test below fails when one is fixed and left listed),
# and the list must be empty when issue 15 is done.
KNOWN_UNTRUE: dict[tuple[str, str], str] = {
    ("connectx5", "root_delete_us"): "says fitted, but studies/pam21/calibration.toml does not fit it",
    ("connectx5", "ste_hash_max_entries"): "says fitted, but studies/pam21/calibration.toml does not fit it",
}


def _fit_list(study: str) -> set[str]:
    doc = tomllib.loads((STUDIES / study / "calibration.toml").read_text())
    return set(doc.get("calibration", {}).get("parameters", []))


def _violations(name: str) -> dict[str, str]:
    doc = profiles.load(name)
    study = doc.get("calibration_study")
    out: dict[str, str] = {}
    refs = {r.id: r for r in load_study(STUDIES / study).references} if study else {}
    fit = _fit_list(study) if study else set()
    for pname, p in doc["param"].items():
        prov = p["provenance"].strip()
        if not p["unit"] or not prov:
            out[pname] = "no unit or provenance"
        elif prov.lower().startswith("fitted"):
            if not study:
                out[pname] = "says fitted, but the profile names no calibration_study"
            elif pname not in fit:
                out[pname] = f"says fitted, but studies/{study}/calibration.toml does not fit it"
        elif m := DERIVED.match(prov):
            ids = [i.strip() for i in m.group(1).split(",")]
            bad = [i for i in ids if i not in refs or refs[i].set != "calibration"]
            if bad:
                out[pname] = f"derived from {', '.join(bad)}, not calibration entries of {study}"
    return out


@pytest.mark.parametrize("name", PROFILES)
def test_provenance_is_true(name):
    found = _violations(name)
    known = {p: why for (prof, p), why in KNOWN_UNTRUE.items() if prof == name}
    unexpected = {p: why for p, why in found.items() if p not in known}
    assert not unexpected, f"{name}: " + "; ".join(f"{p}: {why}" for p, why in sorted(unexpected.items()))
    fixed = sorted(set(known) - set(found))
    assert not fixed, f"{name}: {', '.join(fixed)} fixed: remove from KNOWN_UNTRUE"


def test_the_check_catches_an_untrue_fitted_mark(tmp_path, monkeypatch):
    text = (REPO / "profiles" / "argus-host.toml").read_text()
    bad = re.sub(r'(\[param\.cpu_ghz\]\nvalue = [^\n]*\nunit = [^\n]*\nprovenance = ")', r"\1fitted: by hand; ", text)
    assert bad != text
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "argus-host.toml").write_text(bad)
    monkeypatch.setenv("NICBENCH_PROFILES", str(folder))
    assert "cpu_ghz" in _violations("argus-host")
