"""The HTML pages' paper-vs-model tables, read back cell by cell: what each reference shows
(quote, selector, published and model values, error, tolerance, result) and the per-set summary."""

from __future__ import annotations

import dataclasses
import math
from html import unescape
from html.parser import HTMLParser

import pytest

from nicbench.experiments import parse_spec, run_experiment
from nicbench.report.compare import Comparison
from nicbench.report.html import ExperimentPage, comparison_table, experiment_report, set_summary_table, study_report
from nicbench.vocab.study import Reference, Study

COLUMNS = [
    "id",
    "set",
    "published (quote, location)",
    "selector",
    "published",
    "nicbench",
    "rel. error",
    "tolerance",
    "result",
]


class Tables(HTMLParser):
    """Every <table> of a page as rows of cell texts (tags dropped); `classes` keeps, per cell,
    the CSS classes of the elements inside it (the pass/fail colour)."""

    def __init__(self, text: str):
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self.classes: list[list[list[set[str]]]] = []
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
            self.classes.append([])
        elif tag == "tr":
            self.tables[-1].append([])
            self.classes[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
            self.classes[-1][-1].append(set())
        elif tag == "br" and self._cell is not None:
            self._cell.append(" | ")
        if self._cell is not None:
            self.classes[-1][-1][-1].update((dict(attrs).get("class") or "").split())

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def ref(
    id_: str,
    value: float,
    unit: str = "Gbps",
    kind: str = "relative",
    tolerance: float = 0.1,
    set_: str = "validation",
    **over,
) -> Reference:
    fields = {
        "id": id_,
        "quote": f"quote of {id_}",
        "location": "seed 000, Fig. 2",
        "experiment": "exp",
        "where": {},
        "metric": "throughput_gbps",
        "statistic": "median",
        "value": value,
        "unit": unit,
        "tolerance_kind": kind,
        "tolerance": tolerance,
        "set": set_,
    }
    fields.update(over)
    return Reference(**fields)


def rows_of(table_html: str) -> list[dict[str, str]]:
    parsed = Tables(table_html)
    [table] = parsed.tables
    header, *rows = table
    return [dict(zip(header, row)) for row in rows]


def test_comparison_table_shows_each_reference_as_published_vs_model():
    comparisons = [
        Comparison(ref("fast", 100.0, where={"size": 64, "nic": "cx5"}), 105.0, "pass"),
        Comparison(ref("slow", 40.0, unit="Mpps", kind="absolute", tolerance=2.5, statistic="p99"), 37.0, "fail"),
        Comparison(
            ref("gone", 0.5, unit="%", tolerance=0.125, set_="calibration"),
            math.nan,
            "no result",
            "0 matching summary rows",
        ),
    ]
    html = comparison_table(comparisons)
    rows = rows_of(html)
    assert list(rows[0]) == COLUMNS
    assert rows[0] == {
        "id": "fast",
        "set": "validation",
        "published (quote, location)": "quote of fast | seed 000, Fig. 2",
        "selector": "throughput_gbps (median), size=64, nic=cx5",
        "published": "100 Gbps",
        "nicbench": "105 Gbps",
        "rel. error": "+5.0%",
        "tolerance": "±10%",
        "result": "pass",
    }
    assert rows[1] == {
        "id": "slow",
        "set": "validation",
        "published (quote, location)": "quote of slow | seed 000, Fig. 2",
        "selector": "throughput_gbps (p99)",
        "published": "40 Mpps",
        "nicbench": "37 Mpps",
        "rel. error": "-7.5%",
        "tolerance": "±2.5 Mpps",
        "result": "fail",
    }
    assert rows[2] == {
        "id": "gone",
        "set": "calibration",
        "published (quote, location)": "quote of gone | seed 000, Fig. 2",
        "selector": "throughput_gbps (median)",
        "published": "0.5 %",
        "nicbench": "–",
        "rel. error": "–",
        "tolerance": "±12.5%",
        "result": "no result | 0 matching summary rows",
    }
    result_classes = [cells[-1] for cells in Tables(html).classes[0][1:]]
    assert result_classes == [{"pass"}, {"fail"}, {"missing"}]


def test_comparison_table_escapes_what_it_shows():
    c = Comparison(ref("<b>id</b>", 1.0, quote='says "<script>alert(1)</script>" & more'), 1.0, "pass")
    html = comparison_table([c])
    assert "<script>" not in html and "<b>id</b>" not in html
    assert rows_of(html)[0]["published (quote, location)"].startswith('says "<script>alert(1)</script>" & more')


def test_set_summary_counts_and_median_error_per_set():
    comparisons = [
        Comparison(ref("a", 100.0, set_="calibration"), 110.0, "pass"),  # +10%
        Comparison(ref("b", 100.0, set_="calibration"), 70.0, "fail"),  # -30%
        Comparison(ref("c", 100.0, set_="calibration"), 98.0, "pass"),  # -2%
        Comparison(ref("d", 10.0), 11.0, "pass"),  # +10%
        Comparison(ref("e", 10.0), math.nan, "no result"),
        Comparison(ref("f", 10.0), math.nan, "unit mismatch"),
        Comparison(ref("g", 0.0, kind="absolute", tolerance=1.0), 0.5, "pass"),  # no relative error of 0
        Comparison(dataclasses.replace(ref("h", 10.0), restates="a"), 15.0, "fail"),  # +50%, restating
    ]
    rows = rows_of(set_summary_table(comparisons))
    assert rows == [
        {
            "set": "calibration",
            "entries": "3",
            "pass": "2",
            "fail": "1",
            "no result": "0",
            "median |relative error|": "10.0%",
        },
        {
            "set": "validation (independent)",
            "entries": "4",
            "pass": "2",
            "fail": "0",
            "no result": "2",
            "median |relative error|": "10.0%",
        },
        {
            "set": "validation (restates calibration)",
            "entries": "1",
            "pass": "0",
            "fail": "1",
            "no result": "0",
            "median |relative error|": "50.0%",
        },
    ]
    assert "has no published reference values" in set_summary_table([])
    only_missing = rows_of(set_summary_table([Comparison(ref("e", 10.0), math.nan, "no result")]))
    assert only_missing[0]["median |relative error|"] == "–"


SPEC = """
[experiment]
name = "exp"
target = "synthetic.loss"
repeat = 2
[params]
capacity = "10Gbps"
duration = "1ms"
[sweep]
rate = ["5Gbps", "20Gbps"]

[[figure]]
kind = "line"
x = "rate"
y = "loss"
stat = "median"
title = "Loss vs offered rate"
"""


@pytest.fixture(scope="module")
def mini_study(tmp_path_factory):
    """A study of one synthetic-loss experiment (64 B frames, 1 ms, 10 Gbps capacity) and its results."""
    root = tmp_path_factory.mktemp("mini")
    spec = parse_spec(SPEC, str(root / "exp.toml"))
    run_experiment(spec, results=root / "results", jobs=1)
    # The fake device's loss at 20 Gbps, by hand: frames of (64 + 20) × 8 bits in 1 ms.
    offered, received = int(20e9 * 1e-3 / 672), int(10e9 * 1e-3 / 672)
    loss_percent = (offered - received) / offered * 100
    references = [
        ref("half", 50.0, unit="%", kind="absolute", tolerance=1.0, metric="loss", where={"rate": "20Gbps"}),
        ref("none", 0.1, unit="", metric="loss", where={"rate": "5Gbps"}, set_="calibration"),
        ref("absent", 1.0, metric="loss", where={"rate": "7Gbps"}),
    ]
    study = Study(
        dir=root,
        name="mini",
        title="Mini <study>",
        description="one experiment",
        experiments=[root / "exp.toml"],
        references=references,
    )
    return root, study, loss_percent


def test_experiment_page_compares_the_stored_results(mini_study):
    root, study, loss_percent = mini_study
    page = experiment_report(root / "results" / "exp", root / "reports" / "exp" / "index.html", study)
    statuses = {c.reference.id: (c.status, c.model_value) for c in page.comparisons}
    assert statuses["half"] == ("pass", pytest.approx(loss_percent))
    assert statuses["none"] == ("fail", 0.0)  # 0 is not within 10% of 0.1
    assert statuses["absent"][0] == "no result"
    html = page.path.read_text()
    section = html[html.index("<h2>Published vs nicbench</h2>") : html.index("<h2>Runs</h2>")]
    rows = {r["id"]: r for r in rows_of(section)}
    assert rows["half"]["nicbench"] == f"{loss_percent:.4g} %" and rows["half"]["result"] == "pass"
    assert rows["half"]["rel. error"] == f"{(loss_percent - 50) / 50:+.1%}"
    assert rows["none"]["nicbench"] == "0" and rows["none"]["rel. error"] == "-100.0%"
    assert rows["absent"]["result"] == "no result | 0 matching summary rows"
    assert page.published_drawn == 2 and page.as_dict()["published_drawn"] == 2  # "half" and "none"
    assert page.as_dict()["comparisons"][0] == {
        "id": "half",
        "set": "validation",
        "restates": None,
        "repeats": None,
        "echo": None,
        "experiment": "exp",
        "metric": "loss",
        "statistic": "median",
        "published": 50.0,
        "unit": "%",
        "model": pytest.approx(loss_percent),
        "relative_error": pytest.approx((loss_percent - 50) / 50),
        "status": "pass",
        "note": "",
    }


def test_experiment_page_shows_the_figure_with_the_paper_first_and_its_tables_after(mini_study):
    root, study, _ = mini_study
    page = experiment_report(root / "results" / "exp", root / "reports" / "exp" / "index.html", study)
    html = page.path.read_text()
    order = [
        html.index(h)
        for h in (
            "<h1>",
            "<h2>Figures</h2>",
            "<figure>",
            "</figure>",
            "Not drawn",
            "<h2>Published vs nicbench</h2>",
            "<table",
            "<h2>Statistics across repetitions</h2>",
        )
    ]
    assert order == sorted(order), order
    assert "<table" not in html[: html.index("</figure>")]  # no table before the figure
    # What the figure draws of the paper, per class, and what it does not (with why).
    assert "published values drawn: 2 (1 calibration (filled), 1 validation (open))" in html
    notdrawn = unescape(html[html.index("Not drawn") : html.index("</details>")])
    assert "Not drawn: 1 of 3 published values" in notdrawn
    assert (
        "<b>absent</b> (loss (median), rate=7Gbps): "
        "Loss vs offered rate: cannot convert Gbps to a number (the figure's y axis)"
    ) in notdrawn
    svg = (page.path.parent / "figures" / "01-line-loss.svg").read_text()
    assert 'id="published:half"' in svg and 'id="published:none"' in svg and 'id="published:absent"' not in svg


def test_study_index_links_pages_and_summarizes_each_set(mini_study, tmp_path):
    root, study, loss_percent = mini_study
    out = tmp_path / "reports" / "index.html"
    exp_page = out.parent / "exp" / "index.html"
    comparisons = [Comparison(study.references[0], loss_percent, "pass"), Comparison(study.references[1], 0.0, "fail")]
    pages = [
        ExperimentPage("exp", exp_page, 2, comparisons, True, 0, "the <fake> DUT", published_drawn=1),
        ExperimentPage("measured", out.parent / "m" / "index.html", 1, [], False, 3, ""),
    ]
    html = study_report(study, pages, out).read_text()
    assert "<h1>Mini &lt;study&gt;</h1>" in html
    tables = Tables(html).tables
    summary, experiments, all_refs = tables[0], tables[1], tables[2]
    assert summary[1:] == [
        ["calibration", "1", "0", "1", "0", "100.0%"],
        ["validation (independent)", "1", "1", "0", "0", f"{abs(loss_percent - 50) / 50:.1%}"],
    ]
    assert experiments[1:] == [
        ["exp", "the <fake> DUT", "2", "1 of 2", "1/2", "yes"],
        ["measured", "", "1", "–", "no reference values", "no (3 failed)"],
    ]
    assert 'href="exp/index.html"' in html and 'href="m/index.html"' in html
    assert [row[0] for row in all_refs[1:]] == ["half", "none"]


def test_a_narrowed_run_is_said_to_be_narrowed_not_interrupted(tmp_path):
    """`reproduce --repeat 1` (the README's quick way) stores part of the sweep on purpose: the page
    says so instead of warning of an interrupted run; a whole run has no such note."""
    spec = parse_spec(SPEC, str(tmp_path / "exp.toml"))
    results = tmp_path / "results"
    run_experiment(spec, results=results, jobs=1, reps=[0])
    page = experiment_report(results / "exp", tmp_path / "narrowed.html").path.read_text()
    assert "Part of the spec&#x27;s sweep (2 of 4 runs stored): the last run was narrowed" in page
    assert "interrupted" not in page
    run_experiment(spec, results=results, jobs=1)
    page = experiment_report(results / "exp", tmp_path / "whole.html").path.read_text()
    assert "Part of the spec" not in page and "interrupted" not in page


def test_incomplete_note_names_failed_and_unfinished_runs():
    from nicbench.report.html import incomplete_note

    assert incomplete_note({"failed": 3, "finished": "x"}, 5).startswith("3 runs of the last run failed")
    assert "did not finish (interrupted)" in incomplete_note({"started": "x"}, 5)
    assert "(5 runs stored)" in incomplete_note({"finished": "x", "sweep_runs": 9, "sweep_runs_exact": False}, 5)


def test_a_figure_without_data_is_named_on_the_page_on_stderr_and_in_json(tmp_path):
    """Three figures, one selecting a rate the sweep does not have: the page holds a note in that
    figure's place (which figure, why), `nicbench report` says so on stderr and in --json, and the
    count of drawn figures stays honest (2 drawn, 1 without data)."""
    import json as json_

    from click.testing import CliRunner

    from nicbench.cli import main

    figures = "".join(
        f'\n[[figure]]\nkind = "line"\nx = "rate"\ny = "loss"\nstat = "median"\ntitle = "{title}"\n{where}'
        for title, where in (
            ("Second loss figure", ""),
            ("Loss at 40 Gbps only", 'where = { rate = "40Gbps" }\n'),
        )
    )
    spec = parse_spec(SPEC + figures, str(tmp_path / "exp.toml"))
    run_experiment(spec, results=tmp_path / "results", jobs=1)
    out = tmp_path / "page" / "index.html"
    done = CliRunner().invoke(main, ["report", str(tmp_path / "results" / "exp"), "-o", str(out), "--json"])
    assert done.exit_code == 0, done.output
    answer = json_.loads(done.stdout)
    assert answer["figures"] == 2
    [nodata] = answer["figures_without_data"]
    assert nodata["figure"] == "03-line-loss" and nodata["title"] == "Loss at 40 Gbps only"
    # Why: the selection, and what the runs have instead (a typo or another value reads so).
    assert nodata["reason"].startswith("no rows matched its selection rate=40 G"), nodata
    assert "rate in {5 G" in nodata["reason"] and "20 G" in nodata["reason"], nodata
    assert "figure 03-line-loss (Loss at 40 Gbps only) not drawn, no data: no rows matched" in done.stderr
    page = unescape(out.read_text())
    note = page[page.index('<figure class="nodata"') :]
    note = note[: note.index("</figure>")]
    assert "Not drawn: Loss at 40 Gbps only (figure 03-line-loss) has no data: no rows matched" in note.replace(
        "<b>", ""
    ).replace("</b>", "").replace("<code>", "").replace("</code>", "")
    assert page.count("<figure>") == 2 and page.count("<figure") == 3  # every figure of the spec has its place
    # Without --json: the stdout line counts them too.
    plain = CliRunner().invoke(main, ["report", str(tmp_path / "results" / "exp"), "-o", str(out)])
    assert "(2 figures; 1 without data)" in plain.stdout


def test_study_index_names_the_figures_without_data(mini_study, tmp_path):
    root, study, _ = mini_study
    out = tmp_path / "reports" / "index.html"
    nodata = [{"figure": "03-line-loss", "title": "t", "reason": "no rows matched its selection rate=40 Gbps"}]
    pages = [ExperimentPage("exp", out.parent / "exp" / "index.html", 2, [], True, 0, "", empty_figures=nodata)]
    [experiments] = [t for t in Tables(study_report(study, pages, out).read_text()).tables if "figures" in t[0]]
    assert experiments[1][2] == "2 (not drawn, no data: 03-line-loss)"


def test_statistics_table_shows_binary_payloads_in_kib():
    """The page's statistics table: a swept payload in bytes reads 4 KiB / 256 KiB (its unit is B and the
    value binary), a parameter of another unit stays as stored."""
    import pandas as pd

    from nicbench.report.figures.common import Units
    from nicbench.report.html import summary_table

    stats = {s: 1.0 for s in ("n", "mean", "std", "p1", "p25", "p50", "p75", "p99")}
    summary = pd.DataFrame(
        [
            {"payload": p, "threads": t, "metric": "gbps", "unit": "Gbps", **stats}
            for p, t in ((4096, 1), (262_144, 2), (1500, 3))
        ]
    )
    [table] = Tables(summary_table(summary, Units(params={"payload": "B", "threads": ""}))).tables
    assert [row[:2] for row in table[1:]] == [["4 KiB", "1"], ["256 KiB", "2"], ["1500", "3"]]


def _embedded_pngs(page_html: str) -> list[bytes]:
    import base64
    import re

    return [base64.b64decode(m) for m in re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([^"]+)"', page_html)]


def test_study_index_has_a_figure_of_its_published_values(mini_study, tmp_path):
    """The index's figure: pass / fail / no result per experiment, embedded as the experiment pages'
    figures are (PNG in the page, SVG beside it), its caption counting what passed."""
    root, study, loss_percent = mini_study
    out = tmp_path / "reports" / "index.html"
    comparisons = [
        Comparison(study.references[0], loss_percent, "pass"),
        Comparison(study.references[1], 0.0, "fail"),
        Comparison(study.references[2], math.nan, "no result"),
    ]
    pages = [ExperimentPage("exp", out.parent / "exp" / "index.html", 1, comparisons, True, 0, "")]
    text = study_report(study, pages, out).read_text()
    [png] = _embedded_pngs(text)
    assert png == (out.parent / "figures" / "reference-values.png").read_bytes() and png.startswith(b"\x89PNG")
    assert (out.parent / "figures" / "reference-values.svg").is_file()
    assert 'href="figures/reference-values.svg"' in text
    assert "mini: 1 of 3 published values pass, per experiment" in text
    # Before the tables of the values: the figure is what a reader sees first.
    assert text.index("<figure>") < text.index("<h2>Experiments</h2>")


def test_study_index_without_published_values_shows_its_first_figure(mini_study, tmp_path):
    root, study, _ = mini_study
    study = dataclasses.replace(study, references=[])
    out = tmp_path / "reports" / "index.html"
    page = experiment_report(root / "results" / "exp", out.parent / "exp" / "index.html", study)
    text = study_report(study, [page], out).read_text()
    [png] = _embedded_pngs(text)
    assert png == (out.parent / "exp" / "figures" / "01-line-loss.png").read_bytes()
    assert "exp: Loss vs offered rate (the study has no published values" in text
    assert 'href="exp/figures/01-line-loss.svg"' in text and 'href="exp/index.html"' in text
