"""Every profile parameter's provenance is true.

- "fitted ..." only if `nicbench calibrate` really fits it: the parameter is in the `parameters` list of
  its study's `calibration.toml`.
- "fitted on <files>" (a few-shot fit) only for the parameters its `[fitted_on]` record lists.
- "inherited from <base>: <provenance>" only with the base's current value and provenance.
- "derived from reference <id>[, <id>]: ..." (a value worked out by hand from published numbers) only
  from calibration entries of the profile's study: a value derived from a number is fitted to it, and
  that number can no longer validate the model.
- Every parameter has a unit and a provenance.
- Substance: a provenance quoting a seed ("seed 002 line 123: '...'") quotes what that line says; every
  number a study reference quotes from a seed is in that seed; a fitted value on a bound of its fit
  says so.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
import unicodedata

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


# --- substance: a quoted seed line holds the quote; a number a reference quotes is in its seed; a
# fitted value on a bound of its fit says so.

SEEDS = REPO.parent / "shared" / "seeds"
# "seed 002 line 123: 'quote'", "seed 000 §2.1: 'quote'", "seed 004 Table 1: 'quote'".
SEED_QUOTE = re.compile(r"seed (\d{3})([^':]{0,80}?):\s*'([^']+)'")
SEED_LINES = re.compile(r"lines? (\d+)(?:\s*[-–]\s*(\d+))?")
NUMBER = re.compile(r"(?<![\w.])(\d[\d,. ]*\d|\d)(?!\w)")


def _seed_texts() -> dict[str, str]:
    files = sorted(SEEDS.glob("0*.txt"))
    if not files and os.environ.get("CI") != "true":
        pytest.skip(f"the seed texts are not at {SEEDS}")
    assert files, f"CI: the seed texts are missing at {SEEDS}"
    return {p.name: unicodedata.normalize("NFKC", p.read_text()) for p in files}


def _norm(text: str) -> str:
    """Ligatures, typographic quotes, × and the seeds' LaTeX ($1 \\times 16 \\text{GB}$) as plain text;
    parentheses dropped (a quote may leave a parenthesis out), whitespace collapsed, lower case."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'").replace("×", "x")
    text = re.sub(r"\\text\{([^}]*)\}", r"\1", text).replace("\\times", "x").replace("$", "")
    text = re.sub(r"[\"“”()]", "", text)
    return re.sub(r"\s+", " ", text).strip().lower()


def _quote_in(quote: str, haystack: str) -> bool:
    """Every part of `quote` between ellipses ('…', '...') and editorial brackets ('[sic: …]') is in
    `haystack`, in order."""
    pos = 0
    for part in re.split(r"…|\.\.\.|\[[^\]]*\]", quote):
        part = _norm(part).strip(" ,;.")
        if not part:
            continue
        pos = haystack.find(part, pos)
        if pos < 0:
            return False
    return True


def test_a_quoted_seed_line_holds_the_quote():
    seeds = {name[:3]: text for name, text in _seed_texts().items()}
    bad, checked = [], 0
    for name in PROFILES:
        for pname, p in profiles.load(name)["param"].items():
            for m in SEED_QUOTE.finditer(p["provenance"]):
                seed, between, quote = m.groups()
                lines = seeds[seed].splitlines()
                where = SEED_LINES.search(between)
                if where:  # the cited lines, and the one before (a sentence may start there)
                    first, last = int(where[1]), int(where[2] or where[1])
                    haystack = _norm(" ".join(lines[max(first - 2, 0) : last + 1]))
                else:
                    haystack = _norm(seeds[seed])
                checked += 1
                if not _quote_in(quote, haystack):
                    bad.append(f"{name}.{pname}: seed {seed}{between}: '{quote}'")
    assert checked >= 30, f"only {checked} seed quotes found: has the citation form changed?"
    assert not bad, "quotes not in the cited seed text:\n" + "\n".join(bad)


def test_every_number_a_reference_quotes_is_in_its_seed():
    seeds = {name: re.sub(r"\s+", " ", text) for name, text in _seed_texts().items()}
    bad, checked = [], 0
    for study in sorted(p.parent.name for p in STUDIES.glob("*/reference.toml")):
        for ref in load_study(STUDIES / study).references:
            m = re.search(r"seeds/(0\d\d_[0-9a-f]+\.txt)", ref.location or "")
            if not m:
                continue
            quote = ref.quote or ""
            while (bare := re.sub(r"\([^()]*\)", "", quote)) != quote:  # annotations in parentheses
                quote = bare
            quote = unicodedata.normalize("NFKC", re.sub(r"\[[^\]]*\]", "", quote))
            for number in (n.strip().rstrip(".,") for n in NUMBER.findall(quote)):
                checked += 1
                forms = {number, number.replace(",", ""), number.replace(",", " "), number.replace(" ", "")}
                if not any(re.search(rf"(?<!\d){re.escape(f)}(?!\d)", seeds[m[1]]) for f in forms):
                    bad.append(f"{study} {ref.id}: {number!r} in '{ref.quote}'")
    assert checked >= 300, f"only {checked} quoted numbers found"
    assert not bad, "numbers quoted from a seed that the seed does not hold:\n" + "\n".join(bad)


def test_a_fitted_value_on_a_bound_of_its_fit_says_so():
    bad = []
    for name in PROFILES:
        doc = profiles.load(name)
        study = doc.get("calibration_study") or (doc.get("fitted_on") or {}).get("study")
        if not study:
            continue
        bounds = tomllib.loads((STUDIES / study / "calibration.toml").read_text()).get("bounds", {})
        for pname, p in doc["param"].items():
            prov = p["provenance"]
            if pname not in bounds or not (prov.startswith("fitted") or "fitted" in prov.split(":")[0]):
                continue
            for bound, side in zip(bounds[pname], ("lower", "upper"), strict=True):
                if math.isclose(p["value"], bound, rel_tol=1e-6) and "bound" not in prov:
                    bad.append(f"{name}.{pname} = {p['value']} is on the {side} bound of its fit, unsaid")
    assert not bad, "\n".join(bad)
