"""Reports: figures from stored records only, a self-contained page that a real browser renders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import chromium_rendered_sizes

from nicbench.experiments import load_spec, run_experiment
from nicbench.report import experiment_report

REPO = Path(__file__).resolve().parents[4]
ALL_KINDS_SPEC = REPO / "experiments" / "synthetic-timeseries.toml"


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("report")
    spec = load_spec(ALL_KINDS_SPEC, repeat=3)
    run_experiment(spec, results=root / "results", jobs=1)
    page = experiment_report(root / "results" / spec.name, root / "reports" / spec.name / "index.html")
    assert page.figures == len(spec.figures) == 5  # every figure kind drew something
    return page.path


def test_page_is_self_contained_with_png_and_svg_files(report_page):
    html = report_page.read_text()
    assert html.count("data:image/png;base64,") == 5
    assert not re.search(r'<(img|script|link)[^>]+(src|href)="https?:', html)  # nothing fetched from the web
    svgs = sorted((report_page.parent / "figures").glob("*.svg"))
    assert len(svgs) == 5 and all(s.read_text().lstrip().startswith("<?xml") for s in svgs)
    for needle in ("Statistics across repetitions", "Environment of the runs", "git_commit", "[experiment]"):
        assert needle in html


def test_headless_chromium_shows_every_figure_without_console_errors(report_page):
    rendered = chromium_rendered_sizes(report_page)
    assert len(rendered) == 5, rendered
    for w, h in rendered:  # each image decoded to a real, non-empty bitmap
        assert w > 100 and h > 100
