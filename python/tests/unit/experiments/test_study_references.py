"""Loading a study's reference values: what a valid entry becomes, and every mistake named by its
file and key (a reference that loads wrongly would pass or fail for the wrong reason)."""

from __future__ import annotations

import re

import pytest

from nicbench.experiments.errors import SpecError
from nicbench.experiments.study import Reference, find_studies, load_study

STUDY = """
[study]
name = "mini"
title = "A mini study"
experiments = ["loss.toml"]
"""
LOSS = """
[experiment]
name = "mini-loss"
target = "synthetic.loss"
"""
ENTRY = """
[[reference]]
id = "half-loss"
quote = "drops half"
location = "nowhere, Figure 0"
experiment = "mini-loss"
where = { rate = "20Gbps" }
metric = "loss"
statistic = "p99"
value = 50
unit = "%"
tolerance = { absolute = 1.5 }
set = "calibration"
"""


def write_study(root, references: str | None = ENTRY, study: str = STUDY):
    folder = root / "mini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "study.toml").write_text(study)
    (folder / "loss.toml").write_text(LOSS)
    if references is not None:
        (folder / "reference.toml").write_text(references)
    return folder


def test_an_entry_loads_with_every_field(tmp_path):
    study = load_study(write_study(tmp_path))
    assert (study.name, study.title, study.experiments) == ("mini", "A mini study", [tmp_path / "mini" / "loss.toml"])
    assert study.references == [Reference(
        id="half-loss", quote="drops half", location="nowhere, Figure 0", experiment="mini-loss",
        where={"rate": "20Gbps"}, metric="loss", statistic="p99", value=50.0, unit="%", tolerance_kind="absolute",
        tolerance=1.5, set="calibration")]
    assert isinstance(study.references[0].value, float)


def test_defaults_median_and_validation(tmp_path):
    text = ENTRY.replace('statistic = "p99"\n', "").replace('set = "calibration"\n', "")
    text = text.replace("tolerance = { absolute = 1.5 }", "tolerance = { relative = 0.1 }")
    [r] = load_study(write_study(tmp_path, text)).references
    assert (r.statistic, r.set, r.tolerance_kind, r.tolerance) == ("median", "validation", "relative", 0.1)


def test_a_study_without_reference_file_has_none(tmp_path):
    assert load_study(write_study(tmp_path, references=None)).references == []
    assert find_studies(tmp_path) == [tmp_path / "mini"]


@pytest.mark.parametrize("change, key, message", [
    (('id = "half-loss"', 'id = 7'), "reference[0].id", "expected a string (required)"),
    (('unit = "%"\n', ""), "reference[0].unit", "expected a string (required)"),
    (("value = 50", 'value = "50"'), "reference[0].value", "expected a number, found '50'"),
    (("value = 50", "value = true"), "reference[0].value", "expected a number, found True"),
    (('statistic = "p99"', 'statistic = "p95"'), "reference[0].statistic",
     "expected one of mean, median, min, max, p1, p25, p50, p75, p99, found 'p95'"),
    (("{ absolute = 1.5 }", "{ factor = 2.0 }"), "reference[0].tolerance",
     "expected { relative = 0.1 } or { absolute = 5.0 }"),
    (("{ absolute = 1.5 }", "{ absolute = 1.5, relative = 0.1 }"), "reference[0].tolerance",
     "expected { relative = 0.1 } or { absolute = 5.0 }"),
    (("{ absolute = 1.5 }", "0.1"), "reference[0].tolerance", "expected { relative = 0.1 } or { absolute = 5.0 }"),
    (("{ absolute = 1.5 }", "{ relative = -0.1 }"), "reference[0].tolerance.relative",
     "expected a non-negative number, found -0.1"),
    (("{ absolute = 1.5 }", '{ absolute = "1" }'), "reference[0].tolerance.absolute",
     "expected a non-negative number, found '1'"),
    (('set = "calibration"', 'set = "training"'), "reference[0].set",
     "expected 'calibration' or 'validation', found 'training'"),
    (('where = { rate = "20Gbps" }', 'where = "20Gbps"'), "reference[0].where", "expected a table { param = value }"),
    (('metric = "loss"', 'metric = "loss"\nmetrc = "typo"'), "reference[0].metrc", "unknown key"),
])
def test_each_mistake_names_its_file_and_key(tmp_path, change, key, message):
    folder = write_study(tmp_path, ENTRY.replace(*change))
    with pytest.raises(SpecError) as info:
        load_study(folder)
    assert str(info.value).startswith(f"{folder / 'reference.toml'}: key '{key}': "), str(info.value)
    assert message in str(info.value)


def test_duplicate_ids_are_refused(tmp_path):
    folder = write_study(tmp_path, ENTRY + ENTRY)
    with pytest.raises(SpecError, match=re.escape("key 'reference[1].id': duplicate id 'half-loss'")):
        load_study(folder)


def test_invalid_toml_and_missing_spec_files(tmp_path):
    with pytest.raises(SpecError, match="reference.toml: not valid TOML"):
        load_study(write_study(tmp_path / "a", "[[reference]\n"))
    folder = write_study(tmp_path / "b", study=STUDY.replace("loss.toml", "gone.toml"))
    with pytest.raises(SpecError, match=re.escape("key 'study.experiments[0]': no such spec file")):
        load_study(folder)
    with pytest.raises(FileNotFoundError, match="no study.toml"):
        load_study(tmp_path)
