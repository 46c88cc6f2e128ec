"""A study index's figure: pass / fail / no result of its published values, one bar per experiment.

Drawn like an experiment page's figures (matplotlib's Agg backend, PNG embedded in the page, SVG
beside it), from the comparisons the experiment pages made; nothing is run again.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from nicbench.outputs import atomic_output  # noqa: E402

# Outcome -> bar colour: the page's own pass and fail colours (CSS --ok, --bad), grey for no result.
OUTCOMES = (("pass", "#1a7f37"), ("fail", "#cf222e"), ("no result", "#8c959f"))
NAME = "reference-values"


def outcome_of(status: str) -> str:
    return status if status in ("pass", "fail") else "no result"


def render_pass_fail(rows: list[tuple[str, dict[str, int]]], out_dir: Path, title: str) -> tuple[Path, Path]:
    """`rows`: (experiment, {outcome: count}) in the index's order; writes `<out_dir>/reference-values.png`
    and `.svg` and returns their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    height = 1.2 + 0.32 * len(rows)
    fig, ax = plt.subplots(figsize=(6.4, height), dpi=130, layout="constrained")
    try:
        names = [name for name, _ in rows][::-1]  # the index's first experiment at the top
        left = [0] * len(rows)
        for outcome, color in OUTCOMES:
            counts = [counts.get(outcome, 0) for _, counts in rows][::-1]
            bars = ax.barh(names, counts, left=left, color=color, label=outcome)
            ax.bar_label(
                bars, labels=[str(c) if c else "" for c in counts], label_type="center", color="white", fontsize=8
            )
            left = [a + b for a, b in zip(left, counts)]
        ax.set_xlabel("Published values")
        ax.set_title(title, fontsize=11)
        ax.legend(fontsize=8, loc="lower right")
        ax.grid(True, axis="x", alpha=0.3)
        ax.tick_params(axis="y", labelsize=8)
        png, svg = out_dir / f"{NAME}.png", out_dir / f"{NAME}.svg"
        fig.canvas.draw()
        fig.set_layout_engine("none")
        for path, kind in ((png, "png"), (svg, "svg")):
            with atomic_output(path) as tmp:
                fig.savefig(tmp, format=kind)
    finally:
        plt.close(fig)
    return png, svg
