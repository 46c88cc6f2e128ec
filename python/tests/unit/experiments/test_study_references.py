"""Loading a study's reference values: what a valid entry becomes, and every mistake named by its
file and key (a reference that loads wrongly would pass or fail for the wrong reason)."""

from __future__ import annotations

import re

import pytest

from nicbench.vocab.errors import SpecError
from nicbench.vocab.study import Reference, find_studies, load_study

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
    assert study.references == [
        Reference(
            id="half-loss",
            quote="drops half",
            location="nowhere, Figure 0",
            experiment="mini-loss",
            where={"rate": "20Gbps"},
            metric="loss",
            statistic="p99",
            value=50.0,
            unit="%",
            tolerance_kind="absolute",
            tolerance=1.5,
            set="calibration",
        )
    ]
    assert isinstance(study.references[0].value, float)


def test_defaults_median_and_validation(tmp_path):
    text = ENTRY.replace('statistic = "p99"\n', "").replace('set = "calibration"\n', "")
    text = text.replace("tolerance = { absolute = 1.5 }", "tolerance = { relative = 0.1 }")
    [r] = load_study(write_study(tmp_path, text)).references
    assert (r.statistic, r.set, r.tolerance_kind, r.tolerance) == ("median", "validation", "relative", 0.1)


def test_a_study_without_reference_file_has_none(tmp_path):
    assert load_study(write_study(tmp_path, references=None)).references == []
    assert find_studies(tmp_path) == [tmp_path / "mini"]


@pytest.mark.parametrize(
    "change, key, message",
    [
        (('id = "half-loss"', "id = 7"), "reference[0].id", "expected a string (required)"),
        (('unit = "%"\n', ""), "reference[0].unit", "expected a string (required)"),
        (("value = 50", 'value = "50"'), "reference[0].value", "expected a number, found '50'"),
        (("value = 50", "value = true"), "reference[0].value", "expected a number, found True"),
        (
            ('statistic = "p99"', 'statistic = "p95"'),
            "reference[0].statistic",
            "expected one of mean, median, min, max, p1, p25, p50, p75, p99, found 'p95'",
        ),
        (("{ absolute = 1.5 }", "{ factor = 0.5 }"), "reference[0].tolerance.factor", "expected a factor >= 1"),
        (
            ("{ absolute = 1.5 }", "{ ratio = 2.0 }"),
            "reference[0].tolerance",
            "expected { relative = 0.1 }, { absolute = 5.0 } or { factor = 2.0 }",
        ),
        (
            ("{ absolute = 1.5 }", "{ absolute = 1.5, relative = 0.1 }"),
            "reference[0].tolerance",
            "expected { relative = 0.1 }, { absolute = 5.0 } or { factor = 2.0 }",
        ),
        (
            ("{ absolute = 1.5 }", "0.1"),
            "reference[0].tolerance",
            "expected { relative = 0.1 }, { absolute = 5.0 } or { factor = 2.0 }",
        ),
        (
            ("{ absolute = 1.5 }", "{ relative = -0.1 }"),
            "reference[0].tolerance.relative",
            "expected a non-negative number, found -0.1",
        ),
        (
            ("{ absolute = 1.5 }", '{ absolute = "1" }'),
            "reference[0].tolerance.absolute",
            "expected a non-negative number, found '1'",
        ),
        (
            ('set = "calibration"', 'set = "training"'),
            "reference[0].set",
            "expected 'calibration' or 'validation', found 'training'",
        ),
        (
            ('where = { rate = "20Gbps" }', 'where = "20Gbps"'),
            "reference[0].where",
            "expected a table { param = value }",
        ),
        (('metric = "loss"', 'metric = "loss"\nmetrc = "typo"'), "reference[0].metrc", "unknown key"),
    ],
)
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


def _entry(id_: str, where: str, set_: str, extra: str = "", metric: str = "loss") -> str:
    return (
        ENTRY.replace('id = "half-loss"', f'id = "{id_}"')
        .replace('where = { rate = "20Gbps" }', f"where = {where}")
        .replace('set = "calibration"', f'set = "{set_}"{extra}')
        .replace('metric = "loss"', f'metric = "{metric}"')
    )


def test_validation_of_a_calibration_scenario_restates_it(tmp_path):
    text = (
        _entry("cal", '{ rate = "20Gbps" }', "calibration")
        + _entry("same-point-other-metric", '{ rate = "20Gbps" }', "validation", metric="throughput_gbps")
        + _entry("other-point", '{ rate = "30Gbps" }', "validation")
        + _entry("ratio-of-calibration", '{ rate = "40Gbps" }', "validation", '\nderived_from = ["cal"]')
        + _entry(
            "ratio-with-a-new-point",
            '{ rate = "40Gbps", x = 1 }',
            "validation",
            '\nderived_from = ["cal", "other-point"]',
        )
    )
    refs = {r.id: r for r in load_study(write_study(tmp_path, text)).references}
    assert refs["same-point-other-metric"].restates == "cal" and not refs["same-point-other-metric"].independent
    assert refs["ratio-of-calibration"].restates == "cal", "a function of calibration values only"
    assert refs["other-point"].independent
    # A ratio of a calibration point and a counted validation point brings no observation of its own.
    assert refs["ratio-with-a-new-point"].repeats == "other-point" and not refs["ratio-with-a-new-point"].independent
    assert refs["cal"].restates is None and not refs["cal"].independent
    from nicbench.vocab.study import summary_group

    assert [summary_group(refs[i]) for i in ("cal", "other-point", "ratio-of-calibration")] == [
        "calibration",
        "validation (independent)",
        "validation (restates calibration)",
    ]


def test_one_observation_counts_once_and_an_input_echo_is_not_validation(tmp_path):
    digitized = '\nlocation = "shared/data/x/fig.csv"'
    text = (
        _entry("text-claim", '{ rate = "30Gbps" }', "validation")
        + _entry("digitized-point", '{ rate = "30Gbps" }', "validation", digitized).replace(
            'location = "nowhere, Figure 0"\n', ""
        )
        + _entry("text-again", '{ rate = "30Gbps" }', "validation")
        + _entry("other-statistic", '{ rate = "30Gbps" }', "validation").replace(
            'statistic = "p99"', 'statistic = "median"'
        )
        + _entry("load", '{ rate = "30Gbps" }', "validation", metric="offered_gbps")
        + _entry("by-construction", '{ rate = "40Gbps" }', "validation", '\necho = "the capacity is set from it"')
    )
    refs = {r.id: r for r in load_study(write_study(tmp_path, text)).references}
    # The digitized point is counted; the sentences on the same scenario, metric and statistic repeat it.
    assert refs["digitized-point"].independent
    assert refs["text-claim"].repeats == refs["text-again"].repeats == "digitized-point"
    assert refs["other-statistic"].independent, "another statistic is another observation"
    assert refs["load"].echo == "offered_gbps is the experiment's input" and not refs["load"].independent
    assert refs["by-construction"].echo == "the capacity is set from it"
    from nicbench.vocab.study import summary_group

    assert {summary_group(refs[i]) for i in ("text-claim", "load", "by-construction")} == {
        "validation (repeats an observation or an input)"
    }
    with pytest.raises(SpecError, match=r"echo.*non-empty"):
        load_study(write_study(tmp_path / "bad", _entry("e", "{ rate = 1 }", "validation", '\necho = ""')))


def test_derived_from_must_name_references(tmp_path):
    text = _entry("a", '{ rate = "20Gbps" }', "validation", '\nderived_from = ["nope"]')
    with pytest.raises(SpecError, match=r"reference\[0\]\.derived_from.*no reference with id 'nope'"):
        load_study(write_study(tmp_path, text))


def test_factor_tolerance_and_published_spread(tmp_path):
    text = ENTRY.replace("tolerance = { absolute = 1.5 }", "tolerance = { factor = 2.0 }\nlow = 40\nhigh = 65.5")
    [r] = load_study(write_study(tmp_path, text)).references
    assert (r.tolerance_kind, r.tolerance, r.low, r.high) == ("factor", 2.0, 40.0, 65.5)
    assert r.passes(25.0) and r.passes(100.0) and not r.passes(24.9) and not r.passes(100.1)
    assert not r.passes(-50.0) and not r.passes(0.0) and not r.passes(float("nan"))
