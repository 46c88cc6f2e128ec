"""Draws published values (`published.Mark`) over the model's curves.

Three visual classes, the summary groups of `nicbench.vocab.study`: calibration (filled in
the series' colour), independent validation (open: white face, the series' colour as edge) and
validation that restates calibration (grey). Digitized plot points are diamonds with the
published spread as error bars; values quoted in a text are triangles labelled with their id.
On a log axis a value ≤ 0 sits on the axis' low end as a triangle pointing past it (down, left). The legend
(below the plot) has one entry per class and shape present, not one per point.

Every artist carries the gid `published:<id>` (its spread `published:<id>:spread`, its label
`published:<id>:label`), so tests and the SVG can find what was drawn for an entry.
"""

from __future__ import annotations

import matplotlib
from matplotlib.lines import Line2D
from matplotlib.transforms import blended_transform_factory, offset_copy

from nicbench.report.figures.published import Mark
from nicbench.vocab.study import SUMMARY_GROUPS

__all__ = [
    "draw",
    "marker_colors",
    "title_pad_pt",
    "GREY_FACE",
    "GREY_EDGE",
    "OPEN_FACE",
    "DIGITIZED_MARKER",
    "TEXT_MARKER",
    "AT_BOTTOM_MARKER",
    "AT_LEFT_MARKER",
]

GREY_FACE, GREY_EDGE = "#c8c8c8", "#707070"
OPEN_FACE = "white"
DIGITIZED_MARKER, TEXT_MARKER, AT_BOTTOM_MARKER, AT_LEFT_MARKER = "D", "^", "v", "<"
# Brackets (durations on a time axis): rows above the plot, the first this high over its top [pt].
BRACKET_BASE_PT, BRACKET_STEP_PT = 7.0, 9.0
LEGEND_LABELS = {
    SUMMARY_GROUPS[0]: "paper, calibration",
    SUMMARY_GROUPS[1]: "paper, validation",
    SUMMARY_GROUPS[2]: "paper, restates calibration",
    SUMMARY_GROUPS[3]: "paper, repeats a point or an input",
}
LEGEND_COLUMNS = MODEL_COLUMNS = 4  # wider rows of these labels overflow a 6.4 in figure


def marker_colors(group: str, color: str) -> tuple[str, str]:
    """(face, edge) of a published marker of summary group `group` on a series of colour `color`."""
    if group == SUMMARY_GROUPS[0]:
        return color, color
    if group == SUMMARY_GROUPS[1]:
        return OPEN_FACE, color
    return GREY_FACE, GREY_EDGE


def draw(ax, marks: list[Mark], logx: bool = False, logy: bool = False) -> None:
    if not marks:
        return
    # (mark, anchor, colour, transform of the anchor, inline: beside its mark, e.g. in the bracket strip)
    labels: list[tuple[Mark, tuple[float, float], str, object, bool]] = []
    points = [m for m in marks if m.shape == "point"]
    off_axis = [m for m in points if (logx and m.x <= 0) or (logy and m.y <= 0)]
    for m in points:
        if m not in off_axis:
            _point(ax, m, m.x, m.y, _marker(m), labels)
    if off_axis:
        # A value <= 0 on a log axis sits on the axis' low end, pointing past it ("at or below");
        # the limits the other values set stay put.
        ax.autoscale_view()
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        for m in off_axis:
            below = logy and m.y <= 0
            x, y = (x0 if logx and m.x <= 0 else m.x), (y0 if below else m.y)
            _point(ax, m, x, y, AT_BOTTOM_MARKER if below else AT_LEFT_MARKER, labels, clip=False)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y0, y1)
    for m in marks:
        if m.shape == "segment":
            _segment(ax, m, labels)
        elif m.shape == "bracket":
            _bracket(ax, m, labels)
    _place_labels(ax, labels)
    _legend(ax, marks)


def _marker(m: Mark) -> str:
    return DIGITIZED_MARKER if m.digitized else TEXT_MARKER


def _point(ax, m: Mark, x: float, y: float, marker: str, labels: list, clip: bool = True) -> None:
    face, edge = marker_colors(m.group, m.color)
    yerr = None
    if (m.low is not None or m.high is not None) and y == m.y:  # no spread for a value off the axis
        low = m.low if m.low is not None else m.y
        high = m.high if m.high is not None else m.y
        yerr = [[max(m.y - low, 0.0)], [max(high - m.y, 0.0)]]
    bars = ax.errorbar(
        [x],
        [y],
        yerr=yerr,
        fmt=marker,
        ms=6.5 if marker == DIGITIZED_MARKER else 8,
        mfc=face,
        mec=edge,
        mew=1.4,
        ecolor=edge,
        elinewidth=1.1,
        capsize=3,
        zorder=5,
    )
    bars.lines[0].set_gid(f"published:{m.ref.id}")
    bars.lines[0].set_clip_on(clip)
    for collection in bars.lines[2]:
        collection.set_gid(f"published:{m.ref.id}:spread")
    if not m.digitized:
        labels.append((m, (x, y), edge, ax.transData, False))


def _segment(ax, m: Mark, labels: list) -> None:
    """A level over [x, x_end] (e.g. the throughput after an event), in the series' colour."""
    face, edge = marker_colors(m.group, m.color)
    ax.plot(
        [m.x, m.x_end],
        [m.y, m.y],
        color=edge,
        lw=4,
        alpha=0.55,
        solid_capstyle="butt",
        zorder=4,
        gid=f"published:{m.ref.id}",
    )
    ax.plot(
        [m.x_end],
        [m.y],
        ls="none",
        marker=_marker(m),
        ms=7,
        mfc=face,
        mec=edge,
        mew=1.4,
        zorder=5,
        clip_on=False,
        gid=f"published:{m.ref.id}:end",
    )
    if m.low is not None or m.high is not None:
        ax.vlines(
            [m.x_end],
            [m.low if m.low is not None else m.y],
            [m.high if m.high is not None else m.y],
            colors=edge,
            lw=1.1,
            zorder=5,
            gid=f"published:{m.ref.id}:spread",
        )
    if not m.digitized:
        labels.append((m, (m.x, m.y), edge, ax.transData, False))


def _bracket(ax, m: Mark, labels: list) -> None:
    """A duration [x, x_end] on the time axis, |—|, in a strip above the plot (one row per hue), so
    that it is not read as a value on the y axis."""
    face, edge = marker_colors(m.group, m.color)
    above = offset_copy(
        blended_transform_factory(ax.transData, ax.transAxes),
        fig=ax.figure,
        x=0.0,
        y=bracket_row_pt(int(m.y)),
        units="points",
    )
    ax.plot(
        [m.x, m.x_end],
        [1.0, 1.0],
        color=edge,
        lw=1.6,
        marker="|",
        ms=7,
        mew=1.6,
        transform=above,
        clip_on=False,
        zorder=5,
        gid=f"published:{m.ref.id}",
    )
    ax.plot(
        [m.x_end],
        [1.0],
        ls="none",
        marker=_marker(m),
        ms=6,
        mfc=face,
        mec=edge,
        mew=1.3,
        transform=above,
        clip_on=False,
        zorder=6,
        gid=f"published:{m.ref.id}:end",
    )
    if m.low is not None or m.high is not None:
        ax.plot(
            [m.low if m.low is not None else m.x_end, m.high if m.high is not None else m.x_end],
            [1.0, 1.0],
            color=edge,
            lw=4,
            alpha=0.4,
            transform=above,
            clip_on=False,
            zorder=5,
            gid=f"published:{m.ref.id}:spread",
        )
    if not m.digitized:
        labels.append((m, (m.x_end, 1.0), edge, above, True))


def bracket_row_pt(row: int) -> float:
    """Height of bracket row `row` above the top of the axes [pt]."""
    return BRACKET_BASE_PT + BRACKET_STEP_PT * row


def title_pad_pt(marks: list[Mark]) -> float | None:
    """Room the title needs above the bracket strip [pt]; None: the default."""
    rows = [int(m.y) for m in marks if m.shape == "bracket"]
    if not rows:
        return None
    return bracket_row_pt(max(rows)) + BRACKET_STEP_PT / 2 + matplotlib.rcParams["axes.titlepad"]


LABEL_PT = 6.5  # font size of the id labels [pt]


def _place_labels(ax, labels: list) -> None:
    """Each text value's id next to its marker; a label that would cover an earlier one moves up a
    line (estimated in points from the current limits: close markers, e.g. several values at 100%
    loss, otherwise print their ids over each other)."""
    if not labels:
        return
    ax.autoscale_view()
    to_points = 72.0 / ax.figure.dpi
    height = LABEL_PT * 1.25
    box = ax.get_window_extent()
    upper = (box.y0 + 0.75 * box.height) * to_points  # labels above this stack downwards, inside the plot
    placed: list[tuple[float, float, float, float]] = []
    anchored = []
    for m, xy, color, transform, inline in labels:
        px, py = (float(v) * to_points for v in transform.transform(xy))
        anchored.append((px, py, m, xy, color, transform, inline))
    for px, py, m, xy, color, transform, inline in sorted(anchored, key=lambda a: (a[0], a[1])):
        width = 0.6 * LABEL_PT * len(m.ref.id)
        step = -height if py > upper and not inline else height
        dy = -height / 2 if inline else 3.0 if step > 0 else -3.0 - height
        while any(
            px + 5 < x1 and x0 < px + 5 + width and py + dy < y1 and y0 < py + dy + height for x0, y0, x1, y1 in placed
        ):
            dy += step
        placed.append((px + 5, py + dy, px + 5 + width, py + dy + height))
        ax.annotate(
            m.ref.id,
            xy,
            xycoords=transform,
            xytext=(5, dy),
            textcoords="offset points",
            fontsize=LABEL_PT,
            color=color,
            annotation_clip=False,
            gid=f"published:{m.ref.id}:label",
            bbox={"boxstyle": "square,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.75},
        )


def _legend(ax, marks: list[Mark]) -> None:
    """One entry per class (and per shape) present, below the plot. A model legend inside the axes
    moves there too (its series first, then the paper's classes): with the paper's points drawn, the
    plot has no free corner left to cover."""
    shape = DIGITIZED_MARKER if any(m.digitized for m in marks) else TEXT_MARKER
    handles = []
    for group in SUMMARY_GROUPS:
        if any(m.group == group for m in marks):
            face, edge = marker_colors(group, "black")
            handles.append(
                Line2D([], [], ls="none", marker=shape, ms=6.5, mfc=face, mec=edge, mew=1.4, label=LEGEND_LABELS[group])
            )
    if shape == DIGITIZED_MARKER and any(not m.digitized for m in marks):
        handles.append(
            Line2D(
                [],
                [],
                ls="none",
                marker=TEXT_MARKER,
                ms=7,
                mfc=OPEN_FACE,
                mec="black",
                mew=1.4,
                label="paper, text value (id)",
            )
        )
    if any(m.shape == "segment" for m in marks):
        handles.append(Line2D([], [], color="black", lw=4, alpha=0.55, label="paper, level in the last second"))
    if any(m.shape == "bracket" for m in marks):
        handles.append(Line2D([], [], color="black", lw=1.6, marker="|", ms=7, label="paper, outage from the start"))
    model = ax.get_legend()
    model_handles: list = []
    # An axes legend anchored to the axes' own box is inside it (the time series' sits outside, right).
    if model is not None and model.get_bbox_to_anchor() is ax.bbox:
        model_handles = [_relabelled(h, t.get_text()) for h, t in zip(model.legend_handles, model.get_texts())]
        model.remove()
    columns = max(min(MODEL_COLUMNS, len(model_handles)), min(LEGEND_COLUMNS, len(handles)))
    if model_handles:  # the model's entries fill their rows; the paper's start on a row of their own
        blank = Line2D([], [], ls="none", label=" ")
        handles = model_handles + [blank] * (-len(model_handles) % columns) + handles
    rows = -(-len(handles) // columns)
    # matplotlib fills a legend column by column: reorder so that it reads row by row.
    ordered = [handles[i * columns + j] for j in range(columns) for i in range(rows) if i * columns + j < len(handles)]
    fig = ax.figure
    legend = fig.legend(handles=ordered, loc="outside lower center", ncols=columns, fontsize=7.5, frameon=False)
    legend.set_gid("published-legend")
    # Rows of text below the plot: grow the figure so that the plot keeps its height.
    width_in, height_in = fig.get_size_inches()
    fig.set_size_inches(width_in, height_in + 0.2 * rows)


def _relabelled(handle, label: str):
    handle.set_label(label)
    return handle
