"""Every profile parameter's provenance is true.

- "fitted ..." only if `nicbench calibrate` really fits it: the parameter is in the `parameters` list of
  its study's `calibration.toml`.
- "fitted on <files>" (a few-shot fit) only for the parameters its `[fitted_on]` record lists.
- "inherited from <base>: <provenance>" only with the base's current value and provenance.
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
from nicbench.vocab.study import load_study

PROFILES = sorted(p.stem for p in (REPO / "profiles").glob("*.toml"))
DERIVED = re.compile(r"^derived from references? ([^:]+):")


def _fit_list(study: str) -> set[str]:
    doc = tomllib.loads((STUDIES / study / "calibration.toml").read_text())
    return set(doc.get("calibration", {}).get("parameters", []))


def _violations(name: str) -> dict[str, str]:
    doc = profiles.load(name)
    study = doc.get("calibration_study")
    out: dict[str, str] = {}
    refs = {r.id: r for r in load_study(STUDIES / study).references} if study else {}
    fit = _fit_list(study) if study else set()
    record = doc.get("fitted_on")
    for pname, p in doc["param"].items():
        prov = p["provenance"].strip()
        if not p["unit"] or not prov:
            out[pname] = "no unit or provenance"
        elif record is not None and (prov.startswith("fitted on ") or pname in record["parameters"]):
            if pname not in record["parameters"] or not prov.startswith("fitted on "):
                out[pname] = "the [fitted_on] record and the 'fitted on' provenance disagree"
        elif prov.startswith(INHERITED):
            if why := _inherited(pname, p, prov):
                out[pname] = why
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


INHERITED = "inherited from "


def _inherited(pname: str, p: dict, prov: str) -> str:
    """Why an "inherited from <base>: <its provenance>" is untrue ("" if it is true): the base must have
    the same value with that provenance (a stale copy after the base was refit is not inherited)."""
    base, _, rest = prov[len(INHERITED) :].partition(": ")
    try:
        b = profiles.load(base)["param"].get(pname)
    except Exception as exc:  # noqa: BLE001 - a missing or broken base is the violation
        return f"inherited from {base}, which does not load ({exc})"
    if b is None:
        return f"inherited from {base}, which has no {pname}"
    base_prov = b["provenance"].strip()
    if b["value"] != p["value"] or (rest != base_prov and not base_prov.startswith(INHERITED)):
        return f"inherited from {base}, but {base} now has {b['value']!r} ({base_prov[:60]}...): refit"
    return ""


@pytest.mark.parametrize("name", PROFILES)
def test_provenance_is_true(name):
    found = _violations(name)
    assert not found, f"{name}: " + "; ".join(f"{p}: {why}" for p, why in sorted(found.items()))


def test_the_check_catches_an_untrue_fitted_mark(tmp_path, monkeypatch):
    text = (REPO / "profiles" / "argus-host.toml").read_text()
    bad = re.sub(r'(\[param\.cpu_ghz\]\nvalue = [^\n]*\nunit = [^\n]*\nprovenance = ")', r"\1fitted: by hand; ", text)
    assert bad != text
    folder = tmp_path / "profiles"
    folder.mkdir()
    (folder / "argus-host.toml").write_text(bad)
    monkeypatch.setenv("NICBENCH_PROFILES", str(folder))
    assert "cpu_ghz" in _violations("argus-host")
