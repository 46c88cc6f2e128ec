"""Figures from stored records only: one small module per kind (line, box, timeseries, cdf, heatmap).

`render(figure, records, out_dir, units, references, target)` draws a `[[figure]]` of a spec
with matplotlib's Agg backend (no display needed), the published values it can show over the
model's curves (`published`, `overlay`), and writes `<name>.png` and `<name>.svg`.
Each kind module exposes `draw(ax, records, figure, units) -> Drawn | None` (None: the kind
shows no published values) and raises `EmptyFigure` when the records hold nothing to draw
(the report then says so instead of an empty plot).
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from nicbench.experiments.spec import FigureSpec  # noqa: E402
from nicbench.outputs import atomic_output  # noqa: E402
from nicbench.report.figures import box, cdf, heatmap, line, overlay, timeseries  # noqa: E402
from nicbench.report.figures.common import EmptyFigure, Units, from_zero_when_flat  # noqa: E402
from nicbench.report.figures.published import Mark, Skip, place  # noqa: E402
from nicbench.vocab.study import Reference  # noqa: E402

__all__ = ["render", "draw_figure", "RenderedFigure", "EmptyFigure", "DRAWERS", "Mark", "Skip"]

TITLE_CHARS = 72  # per line of a figure's title

DRAWERS = {"line": line.draw, "box": box.draw, "timeseries": timeseries.draw, "cdf": cdf.draw, "heatmap": heatmap.draw}


@dataclass
class RenderedFigure:
    name: str
    title: str
    png: Path
    svg: Path
    marks: list[Mark] = field(default_factory=list)  # the published values drawn
    skips: list[Skip] = field(default_factory=list)  # the others, with why


def draw_figure(
    ax,
    figure: FigureSpec,
    records: pd.DataFrame,
    units: Units,
    references: Iterable[Reference] = (),
    target: Any = None,
) -> tuple[list[Mark], list[Skip]]:
    """The model's curves, then the published values over them (`references`: the experiment's)."""
    log = figure.kind != "heatmap"  # heatmap axes are category indices: never log
    # Scales first: setting one resets the axis' tick formatter, and the kinds set theirs (SI units).
    if log and figure.logx:
        ax.set_xscale("log")
    if log and figure.logy:
        ax.set_yscale("log")
    drawn = DRAWERS[figure.kind](ax, records, figure, units)
    marks, skips = place(drawn, figure, list(references), records, target, units)
    if figure.kind in ("box", "line") and not figure.logy:
        # What the axis holds: the model's artists and the published values about to go over them.
        y0, y1 = ax.dataLim.intervaly
        ys = [y0, y1] + [v for m in marks if m.shape != "bracket" for v in (m.y, m.low, m.high) if v is not None]
        from_zero_when_flat(ax, ys)
    overlay.draw(ax, marks, logx=log and figure.logx, logy=log and figure.logy)
    return marks, skips


def render(
    figure: FigureSpec,
    records: pd.DataFrame,
    out_dir: str | Path,
    units: Units,
    references: Iterable[Reference] = (),
    target: Any = None,
) -> RenderedFigure:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=130, layout="constrained")
    try:
        marks, skips = draw_figure(ax, figure, records, units, references, target)
        title = figure.title or default_title(figure)
        # Wrapped: the layout keeps the axes inside the figure, not a title wider than it (cut off).
        ax.set_title("\n".join(textwrap.wrap(title, TITLE_CHARS)), fontsize=11, pad=overlay.title_pad_pt(marks))
        ax.grid(True, alpha=0.3, which="both")
        png, svg = out / f"{figure.name}.png", out / f"{figure.name}.svg"
        # Lay out once, then keep it: each savefig would otherwise redo the constrained
        # layout (a full extra draw), which is most of a figure's cost.
        fig.canvas.draw()
        fig.set_layout_engine("none")
        for path, kind in ((png, "png"), (svg, "svg")):
            with atomic_output(path) as tmp:
                fig.savefig(tmp, format=kind)  # the format by name: the temporary name has no suffix
    finally:
        plt.close(fig)
    return RenderedFigure(figure.name, title, png, svg, marks, skips)


def default_title(figure: FigureSpec) -> str:
    if figure.kind == "heatmap":
        return f"{figure.z} by {figure.x} and {figure.y}"
    if figure.kind == "cdf":
        return f"CDF of {figure.x}"
    if figure.kind == "timeseries":
        return f"{figure.y} over time"
    return f"{figure.y} by {figure.x}"
