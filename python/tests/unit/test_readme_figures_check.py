"""scripts/check_readme_figures.py: the phrases it wants from a reproduce run, and that it finds them
only in the paragraph of the study they belong to."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "scripts" / "check_readme_figures.py"
spec = importlib.util.spec_from_file_location("check_readme_figures", SCRIPT)
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def _study(name, cal=(8, 8, 0.047), val=(18, 20, 0.0104), rows=()):
    return {
        "study": name,
        "pages": [{"comparisons": list(rows)}],
        "summary": {
            "calibration": {"passed": cal[0], "entries": cal[1], "median_abs_rel_error": cal[2]},
            "validation (independent)": {"passed": val[0], "entries": val[1], "median_abs_rel_error": val[2]},
        },
    }


TEXT = """Intro.

Flow host (study `argus100g`). Current figures: calibration 8/8 pass (median |error| 4.7%);
**validation, independent: 18/20 pass (median |error|
1.0%**; more.

Other (`nicbench reproduce offpath`): Current figures: calibration 1/2 pass (median |error| 9.0%).
"""


def test_fragments_found_in_their_study_paragraph_only():
    frags = check.expected_fragments(_study("argus100g"))
    para = check._paragraph(TEXT, "argus100g")
    assert all(f in para for f in frags), (frags, para)
    assert check._paragraph(TEXT, "offpath").startswith("Other")
    assert not all(f in check._paragraph(TEXT, "offpath") for f in frags)
    assert check._paragraph(TEXT, "pam21") is None


def test_a_changed_figure_is_not_found():
    frags = check.expected_fragments(_study("argus100g", val=(17, 20, 0.0104)))
    assert not all(f in check._paragraph(TEXT, "argus100g") for f in frags)


def test_numeric_median_leaves_out_drop_flags():
    rows = [
        {"set": "validation", "restates": None, "metric": "drops", "published": 1.0, "relative_error": 0.0},
        {"set": "validation", "restates": None, "metric": "mpps", "published": 2.4, "relative_error": -0.05},
        {"set": "validation", "restates": None, "metric": "mpps", "published": 16.0, "relative_error": 0.01},
        {"set": "validation", "restates": "x", "metric": "mpps", "published": 16.0, "relative_error": 0.5},
    ]
    n, median = check.numeric_median(_study("argus100g", rows=rows))
    assert n == 2 and abs(median - 0.03) < 1e-12
    assert check.numeric_median(_study("offpath", rows=rows[1:])) is None


def test_a_required_study_missing_from_the_run_is_bad_input(tmp_path, capsys):
    run = tmp_path / "run.json"
    run.write_text('[{"study": "argus100g", "pages": [], "summary": {}}]')
    assert check.main([str(run), "pam21"]) == 2
    assert "no run of pam21" in capsys.readouterr().err
    assert check.main([str(tmp_path / "none.json")]) == 2


def test_prediction_figures_are_wanted_in_the_predictions_paragraph():
    study = _study("pam21")
    study["predictions"] = [
        {
            "device": "a",
            "measurements": {"passed": 39, "entries": 40, "median_abs_rel_error": 0.0246},
            "claims": {"x": {"status": "pass"}, "y": {"status": "pass"}},
        },
        {
            "device": "b",
            "measurements": {"passed": 41, "entries": 42, "median_abs_rel_error": 0.045},
            "claims": {"x": {"status": "fail"}},
        },
    ]
    assert check.prediction_fragments(study) == [
        "own measurements pass 39/40 and 41/42 (median |error| 2.5%, 4.5%)",
        "2 of 3 claims hold",
    ]
    text = (
        TEXT + "\nPredicted. Current figures: their own measurements pass 39/40 and 41/42 (median |error|\n"
        "2.5%, 4.5%); 2 of 3 claims hold.\n"
    )
    para = check._predictions_paragraph(text)
    assert para.startswith("Predicted") and all(f in para for f in check.prediction_fragments(study))
    assert check._predictions_paragraph(TEXT) is None
    assert check.prediction_fragments(_study("argus100g")) == []
