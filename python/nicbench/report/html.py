"""Self-contained HTML reports: one page per experiment, one index page per study.

A page needs nothing but itself: figures are embedded as PNG data URIs (the SVGs are
written next to it for papers), styles are inline, and the spec and the environment
(versions, CPU, date, git commit) the results came from are printed on it. Everything
shown comes from the stored records (`results/<experiment>/`), never from a live run.
"""

from __future__ import annotations

import base64
import html
import math
import statistics
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from nicbench.experiments import feature_matrix as fm
from nicbench.experiments.environment import collect_environment
from nicbench.experiments.spec import parse_spec
from nicbench.experiments.stats import STATISTICS, summarize
from nicbench.experiments.store import ExperimentStore
from nicbench.outputs import atomic_output
from nicbench.report.compare import Comparison, compare
from nicbench.report.figures import EmptyFigure, Mark, RenderedFigure, default_title, render
from nicbench.report.figures.common import Units
from nicbench.units import format_size_bytes, is_binary_size
from nicbench.vocab.records import param_columns
from nicbench.vocab.study import SUMMARY_GROUPS, Reference, Study, summary_group

__all__ = ["experiment_report", "study_report", "ExperimentPage"]

MAX_SUMMARY_ROWS = 300
CAPTION_GROUPS = (
    "calibration (filled)",
    "validation (open)",
    "restating calibration (grey)",
    "repeating an observation or an input (grey)",
)

CSS = """
:root { --fg:#1d232b; --muted:#5b6673; --line:#dde3ea; --bg:#ffffff; --panel:#f6f8fa; --ok:#1a7f37; --bad:#cf222e; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; }
main { max-width: 1100px; margin: 0 auto; padding: 28px 32px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 34px 0 10px;
     border-bottom: 1px solid var(--line); padding-bottom: 4px; }
.sub { color: var(--muted); margin: 0 0 18px; }
.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 16px 0; }
.card { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 8px 14px;
        min-width: 120px; }
.card b { display: block; font-size: 20px; } .card span { color: var(--muted); font-size: 13px; }
.figs { display: grid; grid-template-columns: 1fr; gap: 18px; }
figure { margin: 0; background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px; }
figure img { max-width: 100%; height: auto; display: block; margin: 0 auto; background: #fff; }
figcaption { color: var(--muted); font-size: 13px; margin-top: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 8px 0; }
th, td { border-bottom: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--panel); font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: var(--ok); font-weight: 600; } .fail { color: var(--bad); font-weight: 600; }
.missing { color: var(--muted); font-style: italic; }
pre { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 12px; overflow-x: auto;
      font-size: 12.5px; }
.scroll { max-height: 480px; overflow: auto; border: 1px solid var(--line); border-radius: 8px; }
.scroll table { margin: 0; } a { color: #0969da; }
.note { background: #fff8c5; border: 1px solid #eed888; border-radius: 8px; padding: 8px 12px; }
.published { font-size: 12px; }
details.notdrawn { color: var(--muted); font-size: 13px; margin: 12px 0; }
details.notdrawn summary { cursor: pointer; } details.notdrawn ul { margin: 6px 0; padding-left: 22px; }
"""

# Marks each figure with its rendered size, so a headless browser check can see it was drawn.
SCRIPT = """
window.addEventListener('load', function () {
  document.querySelectorAll('figure img').forEach(function (img) {
    img.dataset.rendered = img.naturalWidth > 0 ? (img.naturalWidth + 'x' + img.naturalHeight) : 'broken';
  });
});
"""


class ExperimentPage:
    """What an experiment page showed (returned for `--json` and the study index)."""

    def __init__(
        self,
        name: str,
        path: Path,
        figures: int,
        comparisons: list[Comparison],
        complete: bool,
        failed_runs: int,
        description: str,
        published_drawn: int = 0,
        empty_figures: list[dict[str, str]] | None = None,
        headline: tuple[str, Path, Path] | None = None,
    ):
        self.name, self.path, self.figures, self.comparisons = name, path, figures, comparisons
        self.complete, self.failed_runs, self.description = complete, failed_runs, description
        self.published_drawn = published_drawn  # reference entries shown on at least one figure
        # The spec's figures the records held nothing for: {"figure", "title", "reason"} each.
        self.empty_figures = list(empty_figures or [])
        # The page's first drawn figure (title, PNG, SVG): a study without published values shows it on its index.
        self.headline = headline

    def as_dict(self) -> dict[str, Any]:
        return {
            "experiment": self.name,
            "report": str(self.path),
            "figures": self.figures,
            "figures_without_data": self.empty_figures,
            "published_drawn": self.published_drawn,
            "complete": self.complete,
            "failed_runs": self.failed_runs,
            "comparisons": [_comparison_dict(c) for c in self.comparisons],
        }


def incomplete_note(meta: dict, stored_runs: int) -> str:
    """Why the stored runs are not the spec's whole sweep: failed runs, a run that did not finish, or
    (the usual case, e.g. `reproduce --repeat 1`) a run narrowed on purpose, which is no warning."""
    failed = meta.get("failed") or 0
    sweep = meta.get("sweep_runs")
    of = f" of {sweep:,}" if isinstance(sweep, int) and meta.get("sweep_runs_exact") else ""
    if failed:
        return (
            f"{failed:,} runs of the last run failed (their errors are in the records): re-run the same command "
            "to retry them."
        )
    if "finished" not in meta:
        return "The last run did not finish (interrupted): re-run the same command to finish it."
    return (
        f"Part of the spec's sweep ({stored_runs:,}{of} runs stored): the last run was narrowed (--repeat, --set, "
        "--only, --rep or --limit-points). The same command without them runs the rest."
    )


def experiment_report(
    exp_dir: str | Path,
    out_html: str | Path,
    study: Study | None = None,
    prediction: str | None = None,
    others: Iterable[str | Path] = (),
    acceptable: float = 0.01,
    ignore: tuple[str, ...] | None = None,
) -> ExperimentPage:
    """Write the report of one experiment folder to `out_html` (+ figures/ next to it); `prediction`
    names the device when the runs are a prediction for a device the study did not measure.
    `others`: result folders of the same experiment (another version, profile or machine) drawn
    beside it as series of their own, with a point-by-point comparison (`nicbench compare`'s,
    differences beyond `acceptable` flagged; `ignore`: as `compare_frames`', None to leave out the
    parameters that are one different setting on each side)."""
    exp_dir = Path(exp_dir)
    others = [Path(o) for o in others]
    store = ExperimentStore(exp_dir.parent, exp_dir.name)
    if not store.exists():
        raise FileNotFoundError(2, "not an experiment results folder (no runs/)", str(exp_dir))
    meta = store.read_json("experiment.json")
    spec_text = (exp_dir / "spec.toml").read_text() if (exp_dir / "spec.toml").exists() else ""
    spec = parse_spec(spec_text, str(exp_dir / "spec.toml")) if spec_text else None
    records = store.load()
    out_html = Path(out_html)
    out_html.parent.mkdir(parents=True, exist_ok=True)
    fig_dir = out_html.parent / "figures"
    units = Units(params=dict(meta.get("param_units", {})), metrics=dict(meta.get("metric_units", {})))

    refs = [r for r in study.references if r.experiment == spec.name] if study is not None and spec else []
    figures_html, n_figures, rendered_figures = [], 0, []
    empty_figures: list[dict[str, str]] = []  # the spec's figures with nothing to draw, and why
    drawn, beside = _with_backend_runs(exp_dir, records)
    labels = source_labels([exp_dir, *others]) if others else []
    other_records = _load_others(others)  # read once: drawn, then compared
    if others:
        drawn = _with_other_results(drawn, other_records, labels)
    for fig in spec.figures if spec else []:
        try:
            rendered = render(fig, drawn, fig_dir, units, refs, spec.target)
        except EmptyFigure as exc:
            # In the figure's place, so that a reader counting the spec's figures finds each one.
            nodata = {"figure": fig.name, "title": fig.title or default_title(fig), "reason": str(exc)}
            empty_figures.append(nodata)
            figures_html.append(nodata_figure(nodata))
            continue
        n_figures += 1
        rendered_figures.append(rendered)
        data = base64.b64encode(rendered.png.read_bytes()).decode()
        svg_rel = rendered.svg.relative_to(out_html.parent)
        figures_html.append(
            f'<figure><img alt="{html.escape(rendered.title)}" src="data:image/png;base64,{data}">'
            f'<figcaption>{html.escape(rendered.title)} — <a href="{html.escape(str(svg_rel))}">SVG</a>'
            f"{published_caption(rendered.marks)}</figcaption></figure>"
        )

    summary = summarize(records)
    comparisons: list[Comparison] = []
    if study is not None and spec is not None:
        comparisons = compare(refs, {spec.name: summary}, {spec.name: spec.target})

    ok = records[records["status"] == "ok"] if not records.empty else records
    failed = records[records["status"] != "ok"] if not records.empty else records
    runs = ok["run"].nunique() if not ok.empty else 0
    complete = bool(meta.get("complete", False))
    name = meta.get("name", exp_dir.name)
    cards = [
        (str(meta.get("target", "?")), "target"),
        (str(meta.get("points", "?")), "points"),
        (str(meta.get("repeat", "?")), "repetitions"),
        (f"{runs:,}", "stored runs"),
        (f"{failed['run'].nunique() if not failed.empty else 0}", "failed runs"),
        ("yes" if complete else "no", "sweep complete"),
    ]
    title = f"{name} — PREDICTION for {prediction}" if prediction else name
    body = [f"<h1>{html.escape(title)}</h1>", f'<p class="sub">{html.escape(spec.description if spec else "")}</p>']
    if prediction:
        body.append(
            f'<p class="note">Prediction: these runs use profile <b>{html.escape(prediction)}</b>, a device '
            "the study did not publish this figure for. The figures and tables compare it only with that "
            "device's own measurements (its few-shot calibration, where its profile was fitted on some) and "
            "with the source's qualitative claims about it (ids <code>claim:…</code>), never with the "
            "study device's published values.</p>"
        )
    if not complete:
        body.append(f'<p class="note">{html.escape(incomplete_note(meta, runs))}</p>')
    if beside:
        body.append(
            '<p class="note">Also drawn: the runs of this spec on other backends, as series named '
            + ", ".join(f"<b>{html.escape(label)}</b> (<code>{html.escape(folder)}</code>)" for label, folder in beside)
            + ": a real system measured on the machine that ran them (e.g. <code>ovs</code>: Open vSwitch's "
            "software datapath, no hardware offload), not a model. Tables below are the model's only.</p>"
        )
    if others:
        body.append(
            f'<p class="note">Drawn as series of their own: <b>{html.escape(labels[0])}</b> '
            f"(<code>{html.escape(str(exp_dir))}</code>, this page's results: solid lines, published "
            "values placed on them) and "
            + ", ".join(
                f"<b>{html.escape(label)}</b> (<code>{html.escape(str(o))}</code>)"
                for label, o in zip(labels[1:], others)
            )
            + " (dashed, dotted). Tables below the comparison are this page's results only.</p>"
        )
    # The figures first (the paper's values over the model's), then the tables behind them.
    body += [
        "<h2>Figures</h2>",
        '<div class="figs">' + "".join(figures_html) + "</div>"
        if figures_html
        else '<p class="missing">The spec defines no [[figure]].</p>',
    ]
    if refs:
        body.append(not_drawn_list(refs, rendered_figures, defined=bool(spec and spec.figures)))
    for label, other, other_frame in zip(labels[1:], others, other_records):
        body += [
            f"<h2>{html.escape(labels[0])} vs {html.escape(label)}, point by point</h2>",
            results_comparison_section(records, other_frame, (str(exp_dir), str(other)), acceptable, ignore),
        ]
    if comparisons:
        body += ["<h2>Published vs nicbench</h2>", comparison_table(comparisons)]
    elif study is not None:
        body += [
            "<h2>Published vs nicbench</h2>",
            '<p class="missing">No published reference values for this experiment: its numbers are not compared '
            "with a paper.</p>",
        ]
    body += [
        "<h2>Runs</h2>",
        f'<p class="sub">{html.escape(str(meta.get("design", "")))} · results in '
        f"<code>{html.escape(str(exp_dir))}</code></p>",
        '<div class="cards">'
        + "".join(f"<div class=card><b>{html.escape(v)}</b><span>{k}</span></div>" for v, k in cards)
        + "</div>",
    ]
    body += ["<h2>Statistics across repetitions</h2>", summary_table(summary, units)]
    if not failed.empty:
        body += ["<h2>Failed runs</h2>", failures_table(failed)]
    body += [
        "<h2>Environment of the runs</h2>",
        kv_table(meta.get("environment", {})),
        "<h2>Spec</h2>",
        f"<pre>{html.escape(spec_text)}</pre>",
    ]
    with atomic_output(out_html) as tmp:
        tmp.write_text(page(f"nicbench · {title}", body))
    return ExperimentPage(
        name,
        out_html,
        n_figures,
        comparisons,
        complete,
        int(failed["run"].nunique()) if not failed.empty else 0,
        spec.description if spec else "",
        len({m.ref.id for f in rendered_figures for m in f.marks}),
        empty_figures,
        (rendered_figures[0].title, rendered_figures[0].png, rendered_figures[0].svg) if rendered_figures else None,
    )


def _with_backend_runs(exp_dir: Path, records: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """`records` plus the runs of the same spec on other backends (sibling folders
    `<experiment>--<backend>`), their `nic` relabelled so a figure draws them as their own series."""
    if "--" in exp_dir.name or records.empty:
        return records, []
    frames, beside = [records], []
    for sibling in sorted(exp_dir.parent.glob(f"{exp_dir.name}--*")):
        other = ExperimentStore(sibling.parent, sibling.name)
        if not other.exists():
            continue
        extra = other.load()
        if extra.empty:
            continue
        backend = sibling.name.split("--", 1)[1]
        label = f"{backend} (this machine)"
        if "nic" in extra:
            extra = extra.assign(nic=label)
        frames.append(extra)
        beside.append((label, sibling.name))
    return (pd.concat(frames, ignore_index=True) if len(frames) > 1 else records), beside


def source_labels(folders: list[Path]) -> list[str]:
    """Short distinct names for result folders: the path components that tell them apart
    (`a/dut`, `b/dut` → `a`, `b`; `revisions/abc123/results/dut`, `revisions/def456/...` → the
    revisions), the whole path when nothing shorter is distinct."""
    parts = [Path(f).resolve().parts for f in folders]
    if len(set(parts)) < len(parts):
        return [f"{Path(f)} ({i + 1})" for i, f in enumerate(folders)]
    head = 0
    while all(len(p) > head + 1 for p in parts) and len({p[head] for p in parts}) == 1:
        head += 1
    tail = 0
    while all(len(p) > head + tail + 1 for p in parts) and len({p[-1 - tail] for p in parts}) == 1:
        tail += 1
    middles = [p[head : len(p) - tail] for p in parts]
    # The first differing component is usually enough (a revision, a profile's folder).
    firsts = [m[0] for m in middles]
    if len(set(firsts)) == len(firsts):
        return firsts
    return ["/".join(m) for m in middles]


def _load_others(others: list[Path]) -> list[pd.DataFrame]:
    """The records of each other results folder."""
    frames = []
    for other in others:
        store = ExperimentStore(other.parent, other.name)
        if not store.exists():
            raise FileNotFoundError(2, "not an experiment results folder (no runs/)", str(other))
        frames.append(store.load())
    return frames


def _with_other_results(records: pd.DataFrame, others: list[pd.DataFrame], labels: list[str]) -> pd.DataFrame:
    """This page's records then each other folder's (`others`), each tagged with its folder's label
    (the figures' series dimension, `figures.common.SOURCE`)."""
    from nicbench.report.figures.common import SOURCE

    frames = [records.assign(**{SOURCE: labels[0]})]
    frames += [frame.assign(**{SOURCE: label}) for label, frame in zip(labels[1:], others)]
    return pd.concat(frames, ignore_index=True)


def results_comparison_section(
    fa: pd.DataFrame, fb: pd.DataFrame, names: tuple[str, str], acceptable: float, ignore: tuple[str, ...] | None = None
) -> str:
    """`nicbench compare`'s verdict counts and the points beyond the margin, for the records of two
    folders (`names`: theirs); `ignore` None: the parameters that are one setting on each side and
    differ (what the two results compare)."""
    from nicbench.experiments.compare import compare_frames, settings_that_differ

    if ignore is None:
        ignore = settings_that_differ(fa, fb)
    c = compare_frames(
        fa,
        fb,
        acceptable=acceptable,
        a_name=names[0],
        b_name=names[1],
        ignore=ignore,
        where=f"--with {names[1]} (B) vs {names[0]} (A)",
    )
    d = c.as_dict()
    v = d["verdicts"]
    compared = (
        ""
        if not ignore
        else " Points are matched although the results differ in "
        + ", ".join(f"<code>{html.escape(p)}</code>" for p in ignore)
        + " (what they compare)."
    )
    head = (
        f'<p class="sub">{d["compared"]:,} point×metric pairs compared (acceptable ±{acceptable:.2%}, and beyond '
        f"2 standard errors of the repetitions): {v['same']:,} same, {v['better']:,} better, "
        f"<span class=fail>{v['worse']:,} worse</span>, {v['changed']:,} changed"
        + (f"; only in one: {d['only_a']:,} / {d['only_b']:,}" if d["only_a"] or d["only_b"] else "")
        + "."
        + compared
        + "</p>"
    )
    flagged = c.rows[c.rows["verdict"] != "same"]
    if flagged.empty:
        return head
    varying = [p for p in c.params if c.rows[p].nunique() > 1]
    rows = [
        [
            *(str(r[p]) for p in varying),
            str(r["metric"]),
            _cell(r["a_mean"]),
            _cell(r["b_mean"]),
            f"{r['rel_diff']:+.2%}" if r["rel_diff"] == r["rel_diff"] else "–",
            str(r["verdict"]),
        ]
        for r in flagged.head(MAX_SUMMARY_ROWS).to_dict("records")
    ]
    return (
        head
        + '<div class="scroll">'
        + table(
            [*varying, "metric", "A mean", "B mean", "diff", "verdict"],
            rows,
            numeric={len(varying) + 1, len(varying) + 2, len(varying) + 3},
        )
        + "</div>"
    )


def study_report(
    study: Study,
    pages: list[ExperimentPage],
    out_html: str | Path,
    predictions: list[Any] | None = None,
    feature_matrix: Any = None,
) -> Path:
    """The study index: links to its experiment pages, pass/fail and median |error| per set, and the
    predictions for other devices (`nicbench.reproduce.predictions.DevicePredictions`) and the
    offload feature matrix (`nicbench.experiments.feature_matrix.MatrixOutcome`), if any."""
    out_html = Path(out_html)
    comparisons = [c for p in pages for c in p.comparisons]
    body = [
        f"<h1>{html.escape(study.title)}</h1>",
        f'<p class="sub">{html.escape(study.description)}</p>',
        "<h2>Summary per reference set</h2>",
        set_summary_table(comparisons),
        *study_figure(study, pages, out_html),
    ]
    rows = []
    for p in pages:
        rel = p.path.relative_to(out_html.parent)
        passed = sum(c.status == "pass" for c in p.comparisons)
        rows.append(
            [
                f'<a href="{html.escape(str(rel))}">{html.escape(p.name)}</a>',
                html.escape(p.description),
                str(p.figures) + _without_data(p),
                f"{p.published_drawn} of {len(p.comparisons)}" if p.comparisons else "–",
                f"{passed}/{len(p.comparisons)}" if p.comparisons else "no reference values",
                "yes" if p.complete else f'<span class="fail">no ({p.failed_runs} failed)</span>',
            ]
        )
    body += [
        "<h2>Experiments</h2>",
        table(
            ["experiment", "description", "figures", "references on a figure", "references passed", "complete"],
            rows,
            raw=True,
        ),
    ]
    if predictions:
        body += predictions_section(predictions, out_html.parent)
    if feature_matrix is not None:
        body += feature_matrix_section(feature_matrix.as_dict())
    if comparisons:
        body += ["<h2>All reference values</h2>", comparison_table(comparisons)]
    body += ["<h2>Environment of this report</h2>", kv_table(collect_environment(study.dir))]
    out_html.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(out_html) as tmp:
        tmp.write_text(page(f"nicbench · study {study.name}", body))
    return out_html


def study_figure(study: Study, pages: list[ExperimentPage], out_html: Path) -> list[str]:
    """The index's figure, embedded as an experiment page's are: pass / fail / no result of the published
    values per experiment; for a study without published values, its first experiment's first figure."""
    from nicbench.report.figures.summary import outcome_of, render_pass_fail

    rows = []
    for p in pages:
        if p.comparisons:
            counts: dict[str, int] = {}
            for c in p.comparisons:
                counts[outcome_of(c.status)] = counts.get(outcome_of(c.status), 0) + 1
            rows.append((p.name, counts))
    if rows:
        total = sum(sum(c.values()) for _, c in rows)
        passed = sum(c.get("pass", 0) for _, c in rows)
        title = f"{study.name}: {passed} of {total} published values pass"
        png, svg = render_pass_fail(rows, out_html.parent / "figures", title)
        caption = (
            f"{html.escape(title)}, per experiment (the table below lists each value; a known miss of "
            "known_misses.toml counts as a fail)"
        )
    else:
        first = next((p for p in pages if p.headline is not None), None)
        if first is None:
            return []
        name, png, svg = first.headline
        title = f"{first.name}: {name}"
        link = html.escape(_rel(first.path, out_html))
        caption = f'{html.escape(title)} (the study has no published values; <a href="{link}">its page</a>)'
    data = base64.b64encode(png.read_bytes()).decode()
    return [
        f'<div class="figs"><figure><img alt="{html.escape(title)}" src="data:image/png;base64,{data}">'
        f'<figcaption>{caption} — <a href="{html.escape(_rel(svg, out_html))}">SVG</a></figcaption></figure></div>'
    ]


def _rel(path: Path, out_html: Path) -> str:
    """`path` as a link from the page `out_html` (relative when it is under the page's folder)."""
    try:
        return str(Path(path).resolve().relative_to(out_html.parent.resolve()))
    except ValueError:
        return Path(path).resolve().as_uri()


def _without_data(p: ExperimentPage) -> str:
    """The study index's note on an experiment's figures that had no data (named on its page too)."""
    if not p.empty_figures:
        return ""
    names = ", ".join(e["figure"] for e in p.empty_figures)
    return f' <span class="missing">(not drawn, no data: {html.escape(names)})</span>'


def predictions_section(predictions: list[Any], base: Path) -> list[str]:
    """Per predicted device: its profile, the error on its own measurements, its claims, its pages;
    then the claims device by device."""
    rows, claim_ids = [], []
    for d in predictions:
        info = d.as_dict()
        m = info["measurements"]
        fit = d.fitted_on
        fitted = (
            f"few-shot from {html.escape(fit['base'])} on {len(fit['measurements'])} file(s), "
            f"{len(fit['parameters'])} parameters"
            if fit
            else "not fitted on measurements"
        )
        err = m["median_abs_rel_error"]
        claims = info["claims"]
        claim_ids += [c for c in claims if c not in claim_ids]
        held = sum(c["status"] == "pass" for c in claims.values())
        links = " ".join(
            f'<a href="{html.escape(str(Path(p).relative_to(base)))}">{html.escape(Path(p).parent.name)}</a>'
            for p in info["pages"]
        )
        rows.append(
            [
                f"<b>{html.escape(d.device)}</b><br><small>{html.escape(d.description)}</small>",
                fitted,
                f"{m['passed']}/{m['entries']}, median |error| {err:.1%}" if m["entries"] and err == err else "–",
                f"{held}/{len(claims)}" if claims else "–",
                links,
            ]
        )
    out = [
        "<h2>Predictions for other devices</h2>",
        "<p class=\"sub\">The study's specs run with other devices' profiles. Nothing here is compared with the "
        "study device's published values: each device is checked against its own measurements (what its "
        "profile was fitted on, i.e. its calibration) and the source's qualitative claims about it.</p>",
        table(["device", "profile", "its measurements (calibration)", "claims that hold", "pages"], rows, raw=True),
    ]
    if claim_ids:
        head = ["claim"] + [d.device for d in predictions]
        grid = []
        for cid in claim_ids:
            row = [html.escape(cid)]
            for d in predictions:
                c = d.as_dict()["claims"].get(cid)
                if c is None:
                    row.append("not claimed")
                else:
                    ok = c["status"] == "pass"
                    row.append(
                        f'<span class="{"pass" if ok else "fail"}">{"holds" if ok else c["status"]}</span> '
                        f"({_cell(c['model'])})"
                    )
            grid.append(row)
        out += ["<h3>Qualitative claims on each device</h3>", table(head, grid, raw=True)]
    return out


def feature_matrix_section(d: dict[str, Any]) -> list[str]:
    """The study page's offload feature matrix (`MatrixOutcome.as_dict()`): the rows, the seed's value,
    nicbench's, the refusal reasons."""
    e = html.escape
    out = [
        f"<h2>{e(fm.TITLE)}</h2>",
        f'<p class="sub">{e(fm.summary_line(d))}. {e(fm.HONESTY)} '
        "Each expressible row is a real OpenFlow rule and a packet run through the virtual OVS datapath; "
        "ConnectX-5 is informational (offload.rs's mlx5 capabilities; the seed gives no value).</p>",
    ]
    if d["not_run"]:
        return out

    def yn(v: bool | None) -> str:
        return "–" if v is None else ("yes" if v else "no")

    rows = []
    for r in d["rows"]:
        agi, cx5 = r["result"].get(fm.SEED_NIC), r["result"].get(fm.INFO_NIC)
        if r["expressible"]:
            mark = "" if r["agrees"] else ' <span class="fail">disagrees</span>'
            nb = f"{yn(agi['offloaded'])}{mark}" + (f"<br><small>{e(agi['reason'])}</small>" if agi["reason"] else "")
            cx = yn(cx5["offloaded"]) + (f"<br><small>{e(cx5['reason'])}</small>" if cx5["reason"] else "")
            what = f"<code>{e(r['rule'])}</code><br><small>{e(r['packet'])}</small>"
        else:
            nb, cx, what = "not expressible", "–", f"<small>{e(r['why'])}</small>"
        rows.append([e(r["row"]), str(r["line"]), yn(r["seed_offloaded"]), nb, cx, what])
    out.append(
        table(
            [
                "row",
                "seed line",
                "seed: OVS-TC offloads",
                "nicbench agilio-cx-25g",
                "nicbench connectx5-25g",
                "rule / packet (or why not run)",
            ],
            rows,
            raw=True,
        )
    )
    return out


def nodata_figure(nodata: dict[str, str]) -> str:
    """A figure's place on the page when its records hold nothing to draw: which figure and why."""
    return (
        f'<figure class="nodata" data-figure="{html.escape(nodata["figure"])}"><p class="missing">Not drawn: '
        f"<b>{html.escape(nodata['title'])}</b> (figure <code>{html.escape(nodata['figure'])}</code>) has no data: "
        f"{html.escape(nodata['reason'])}.</p></figure>"
    )


def published_caption(marks: list[Mark]) -> str:
    """How many published values the figure shows, per summary group."""
    if not marks:
        return ""
    counts = [(sum(m.group == g for m in marks), label) for g, label in zip(SUMMARY_GROUPS, CAPTION_GROUPS)]
    parts = ", ".join(f"{n} {label}" for n, label in counts if n)
    return f'<br><span class="published">published values drawn: {len(marks)} ({parts})</span>'


def not_drawn_list(refs: list[Reference], figures: list[RenderedFigure], defined: bool = True) -> str:
    """The experiment's published values that no figure shows, each with why (they stay in the table)."""
    drawn = {m.ref.id for f in figures for m in f.marks}
    missing = [r for r in refs if r.id not in drawn]
    if not missing:
        return f'<p class="sub">All {len(refs)} published values of this experiment are drawn on its figures.</p>'
    items = "".join(
        f"<li><b>{html.escape(r.id)}</b> ({html.escape(_selector(r))}): "
        f"{html.escape(_why_not_drawn(r, figures, defined))}</li>"
        for r in missing
    )
    opened = " open" if len(missing) <= 10 else ""
    return (
        f'<details class="notdrawn"{opened}><summary>Not drawn: {len(missing)} of {len(refs)} published values '
        f"fit no figure (they are in the table below)</summary><ul>{items}</ul></details>"
    )


def _why_not_drawn(ref: Reference, figures: list[RenderedFigure], defined: bool) -> str:
    if not figures:
        return "no figure was drawn" if defined else "the spec defines no [[figure]]"
    skips = [(f, s) for f in figures for s in f.skips if s.ref.id == ref.id]
    close = [(f, s) for f, s in skips if s.close]
    if close:
        f, s = close[0]
        return f"{f.title}: {s.reason}"
    return f"no figure shows {ref.metric}"


def _selector(r: Reference) -> str:
    return f"{r.metric} ({r.statistic})" + "".join(f", {k}={v}" for k, v in r.where.items())


def set_summary_table(comparisons: list[Comparison]) -> str:
    if not comparisons:
        return (
            '<p class="missing">This study has no published reference values: its experiments\' numbers are not '
            "compared with a paper.</p>"
        )
    rows = []
    for set_name in SUMMARY_GROUPS:
        group = [c for c in comparisons if summary_group(c.reference) == set_name]
        if not group:
            continue
        errors = [abs(c.relative_error) for c in group if math.isfinite(c.relative_error)]
        median = f"{statistics.median(errors):.1%}" if errors else "–"
        rows.append(
            [
                set_name,
                str(len(group)),
                str(sum(c.status == "pass" for c in group)),
                str(sum(c.status == "fail" for c in group)),
                str(sum(c.status not in ("pass", "fail") for c in group)),
                median,
            ]
        )
    return table(["set", "entries", "pass", "fail", "no result", "median |relative error|"], rows)


def comparison_table(comparisons: list[Comparison]) -> str:
    rows = []
    for c in comparisons:
        r = c.reference
        tol = {"relative": f"±{r.tolerance * 100:.3g}%", "factor": f"×/÷ {r.tolerance:g}"}.get(
            r.tolerance_kind, f"±{r.tolerance:g} {r.unit}"
        )
        status_cls = {"pass": "pass", "fail": "fail"}.get(c.status, "missing")
        note = (
            f"restates {r.restates}"
            if r.restates
            else f"repeats {r.repeats}"
            if r.repeats
            else f"echoes an input: {r.echo}"
            if r.echo
            else ""
        )
        set_cell = html.escape(r.set) + (f"<br><small>{html.escape(note)}</small>" if note else "")
        rows.append(
            [
                html.escape(r.id),
                set_cell,
                f"<q>{html.escape(r.quote)}</q><br><small>{html.escape(r.location)}</small>",
                html.escape(_selector(r)),
                f"{r.value:.4g} {html.escape(r.unit)}",
                f"{c.model_value:.4g} {html.escape(r.unit)}" if math.isfinite(c.model_value) else "–",
                f"{c.relative_error:+.1%}" if math.isfinite(c.relative_error) else "–",
                tol,
                f'<span class="{status_cls}">{html.escape(c.status)}</span>'
                + (f"<br><small>{html.escape(c.note)}</small>" if c.note else ""),
            ]
        )
    return table(
        [
            "id",
            "set",
            "published (quote, location)",
            "selector",
            "published",
            "nicbench",
            "rel. error",
            "tolerance",
            "result",
        ],
        rows,
        raw=True,
    )


def summary_table(summary: pd.DataFrame, units: Units | None = None) -> str:
    """Statistics per point and metric; a binary size in bytes (a payload of 262,144) reads 256 KiB."""
    if summary.empty:
        return '<p class="missing">No successful runs yet.</p>'
    params = [c for c in param_columns(summary) if c not in ("metric", "unit", *STATISTICS)]
    varying = [c for c in params if summary[c].nunique(dropna=False) > 1]
    cols = varying + ["metric", "unit", "n", "mean", "std", "p1", "p25", "p50", "p75", "p99"]
    shown = summary[cols].head(MAX_SUMMARY_ROWS)
    sizes = {i for i, c in enumerate(cols) if c in varying and units is not None and units.unit(c) == "B"}
    rows = [
        [format_size_bytes(v) if i in sizes and is_binary_size(v) else _cell(v) for i, v in enumerate(rec)]
        for rec in shown.itertuples(index=False)
    ]
    note = (
        f'<p class="sub">First {MAX_SUMMARY_ROWS} of {len(summary)} rows; all of them: '
        "<code>nicbench results export</code>.</p>"
        if len(summary) > MAX_SUMMARY_ROWS
        else ""
    )
    stats_from = len(varying) + 2  # after metric and unit
    return note + '<div class="scroll">' + table(cols, rows, numeric=set(range(stats_from, len(cols)))) + "</div>"


def failures_table(failed: pd.DataFrame) -> str:
    params = param_columns(failed)
    rows = []
    for _, r in failed.drop_duplicates("run").iterrows():
        point = ", ".join(f"{k}={_cell(r[k])}" for k in params if r[k] is not None and not _isnan(r[k]))
        rows.append([r["run"][:12], str(r["rep"]), point, str(r["error"] or "").splitlines()[0]])
    return table(["run", "rep", "point", "error"], rows)


def kv_table(data: dict[str, Any]) -> str:
    return table(["", ""], [[str(k), str(v)] for k, v in data.items()])


def table(headers: Iterable[str], rows: list[list[str]], raw: bool = False, numeric: set[int] | None = None) -> str:
    numeric = numeric or set()
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = []
    for row in rows:
        cells = []
        for i, v in enumerate(row):
            text = v if raw else html.escape(v)
            cells.append(f'<td class="num">{text}</td>' if i in numeric else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def page(title: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, '
        f'initial-scale=1"><title>{html.escape(title)}</title>'
        f"<style>{CSS}</style></head><body><main>\n"
        + "\n".join(body)
        + f'\n<p class="sub">Generated by nicbench.</p></main><script>{SCRIPT}</script></body></html>\n'
    )


def _cell(v: Any) -> str:
    if v is None or _isnan(v):
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _isnan(v: Any) -> bool:
    return isinstance(v, float) and math.isnan(v)


def _comparison_dict(c: Comparison) -> dict[str, Any]:
    r = c.reference
    return {
        "id": r.id,
        "set": r.set,
        "restates": r.restates,
        "repeats": r.repeats,
        "echo": r.echo,
        "experiment": r.experiment,
        "metric": r.metric,
        "statistic": r.statistic,
        "published": r.value,
        "unit": r.unit,
        "model": c.model_value,
        "relative_error": c.relative_error,
        "status": c.status,
        "note": c.note,
    }
