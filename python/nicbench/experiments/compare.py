"""`nicbench compare A B`: the same experiment's results from two versions (or profiles), point by point.

For every point (the parameter values) and scalar metric both sides have, the mean over the
repetitions and their spread (sample standard deviation) of each side, the relative difference
(B − A) / |A|, and a verdict:

- `same`: within the acceptable margin, or within the noise (|B − A| ≤ 2 × the standard error of
  the difference, when both sides have repetitions);
- `better` / `worse`: beyond both, in the metric's good or bad direction. The direction comes from
  the metric's name and unit: rates, throughput and hit rates are better higher; latency, loss,
  drops, outages and times are better lower;
- `changed`: beyond both for a metric with no known direction (a model output that moved).

A regression is a `worse` or `changed` point: the command exits 1 when there is one, so CI can gate
on it. Points or metrics on one side only are listed, not judged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from nicbench.experiments.store import load_results
from nicbench.outputs import atomic_output
from nicbench.vocab.records import PROVENANCE_COLUMNS, RESERVED_NAMES

__all__ = ["Comparison", "compare_frames", "compare_results", "direction", "plot_comparison", "settings_that_differ"]

_LOWER_BETTER = re.compile(r"latency|loss|lost|drop|outage|wall|_ns$|_us$|_ms$|_s$|miss|busy|error", re.I)
_HIGHER_BETTER = re.compile(r"gbps|mpps|kpps|pps|rate|throughput|hit|received|rx_|tx_|speed|per_s", re.I)
_NOISE_SIGMAS = 2.0


def direction(metric: str, unit: str | None = None) -> int:
    """+1: higher is better; −1: lower is better; 0: unknown."""
    if _LOWER_BETTER.search(metric):
        return -1
    if _HIGHER_BETTER.search(metric) or (unit or "").lower() in ("gbps", "mpps", "pps", "krules/s"):
        return 1
    return 0


@dataclass
class Comparison:
    a: str
    b: str
    acceptable: float
    rows: pd.DataFrame  # one row per (point, metric) both sides have
    only_a: int = 0
    only_b: int = 0
    params: list[str] = field(default_factory=list)

    @property
    def regressions(self) -> pd.DataFrame:
        return self.rows[self.rows["verdict"].isin(["worse", "changed"])]

    def as_dict(self) -> dict[str, Any]:
        counts = self.rows["verdict"].value_counts().to_dict()
        return {
            "a": self.a,
            "b": self.b,
            "acceptable": self.acceptable,
            "compared": len(self.rows),
            "only_a": self.only_a,
            "only_b": self.only_b,
            "verdicts": {k: int(counts.get(k, 0)) for k in ("same", "better", "worse", "changed")},
            "regressions": _records(self.regressions, self.params),
            "rows": _records(self.rows, self.params),
        }


def _records(df: pd.DataFrame, params: list[str]) -> list[dict[str, Any]]:
    out = []
    for r in df.to_dict("records"):
        out.append(
            {
                "point": {p: r[p] for p in params},
                **{
                    k: r[k]
                    for k in (
                        "metric",
                        "unit",
                        "a_mean",
                        "a_std",
                        "a_n",
                        "b_mean",
                        "b_std",
                        "b_n",
                        "rel_diff",
                        "verdict",
                    )
                },
            }
        )
    return out


def _scalar(df: pd.DataFrame) -> pd.DataFrame:
    if "status" in df:
        df = df[df["status"] == "ok"]
    if "t" in df:
        df = df[df["t"].isna()]
    return df[df["metric"].notna() & ~df["metric"].astype(str).str.startswith("event:")]


def _summaries(df: pd.DataFrame, params: list[str]) -> pd.DataFrame:
    keys = params + ["metric"]
    g = df.groupby(keys, dropna=False)
    out = g["value"].agg(mean="mean", std="std", n="count").reset_index()
    units = g["unit"].first().reset_index()["unit"] if "unit" in df else None
    if units is not None:
        out["unit"] = units.values
    return out


def compare_frames(
    a: pd.DataFrame,
    b: pd.DataFrame,
    *,
    acceptable: float,
    a_name: str = "A",
    b_name: str = "B",
    ignore: tuple[str, ...] = (),
    where: str | None = None,
) -> Comparison:
    """Compares two records frames (`load_results` output) of the same experiment; `ignore`:
    parameters left out of a point's identity (e.g. `nic`, to compare two profiles' runs); `where`:
    how an error starts (default `compare A B`, the command's words)."""
    if not acceptable >= 0 or math.isinf(acceptable):
        raise ValueError(f"acceptable margin must be a finite fraction ≥ 0, found {acceptable!r}")
    skip = set(RESERVED_NAMES) | set(PROVENANCE_COLUMNS)
    unknown = sorted(set(ignore) - (set(a.columns) | set(b.columns)))
    if unknown:
        raise ValueError(f"--ignore {', '.join(unknown)}: not a parameter of these results")
    params = sorted((set(a.columns) & set(b.columns)) - skip - set(ignore))
    a_s, b_s = _scalar(a).copy(), _scalar(b).copy()
    for frame in (a_s, b_s):  # parameter values as text: NaN/None and mixed types compare equal
        for p in params:
            frame[p] = frame[p].astype(str)
    sa, sb = _summaries(a_s, params), _summaries(b_s, params)
    merged = sa.merge(sb, on=params + ["metric"], how="outer", suffixes=("_a", "_b"), indicator=True)
    only_a = int((merged["_merge"] == "left_only").sum())
    only_b = int((merged["_merge"] == "right_only").sum())
    both = merged[merged["_merge"] == "both"].copy()
    if both.empty and (only_a or only_b):
        # Nothing to compare is a mistake (two experiments, or one setting differs), not "no regression".
        differ = [p for p in settings_that_differ(a_s, b_s) if p not in ignore]
        hint = f"; they differ in {', '.join(differ)} (--ignore {differ[0]} compares across it)" if differ else ""
        names = [", ".join(sorted(f["experiment"].astype(str).unique())) if "experiment" in f else "" for f in (a, b)]
        targets = [", ".join(sorted(f["target"].astype(str).unique())) if "target" in f else "" for f in (a, b)]
        if all(targets) and targets[0] != targets[1]:  # no --ignore makes two targets' runs comparable
            why = (
                f"A holds {targets[0]} runs ({names[0]}), B {targets[1]} runs ({names[1]}); give two result "
                "folders of one experiment"
            )
        else:
            named = f" (A is {names[0]}, B {names[1]})" if all(names) and names[0] != names[1] else ""
            why = f"not results of one experiment{named}{hint}"
        raise ValueError(
            f"{where or f'compare {a_name} {b_name}'}: no point and metric in common "
            f"({only_a:,} only in A, {only_b:,} only in B): {why}"
        )
    rows = pd.DataFrame(
        {
            **{p: both[p] for p in params},
            "metric": both["metric"],
            "unit": both["unit_a"] if "unit_a" in both else "",
            "a_mean": both["mean_a"],
            "a_std": both["std_a"],
            "a_n": both["n_a"],
            "b_mean": both["mean_b"],
            "b_std": both["std_b"],
            "b_n": both["n_b"],
        }
    )
    rows["rel_diff"] = [_rel(x, y) for x, y in zip(rows["a_mean"], rows["b_mean"])]
    rows["verdict"] = [_verdict(r, acceptable) for r in rows.to_dict("records")]
    rows = rows.sort_values(["metric"] + params, kind="stable").reset_index(drop=True)
    return Comparison(a_name, b_name, acceptable, rows, only_a, only_b, params)


def _rel(a: float, b: float) -> float:
    if a == b:
        return 0.0
    if not (math.isfinite(a) and math.isfinite(b)):
        return math.nan
    return (b - a) / abs(a) if a != 0 else math.copysign(math.inf, b - a)


def _verdict(r: dict[str, Any], acceptable: float) -> str:
    a, b, rel = r["a_mean"], r["b_mean"], r["rel_diff"]
    if a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)):
        return "same"
    if math.isnan(rel):  # one side finite, the other not
        return "changed"
    if abs(rel) <= acceptable:
        return "same"
    if r["a_n"] > 1 and r["b_n"] > 1:
        se = math.sqrt((r["a_std"] or 0.0) ** 2 / r["a_n"] + (r["b_std"] or 0.0) ** 2 / r["b_n"])
        if abs(b - a) <= _NOISE_SIGMAS * se:
            return "same"
    sign = direction(str(r["metric"]), r.get("unit"))
    if sign == 0:
        return "changed"
    return "better" if (b - a) * sign > 0 else "worse"


def compare_results(a: str | Path, b: str | Path, *, acceptable: float, ignore: tuple[str, ...] = ()) -> Comparison:
    """Compares two experiment result folders (or experiment names in the results root)."""
    return compare_frames(
        load_results(a), load_results(b), acceptable=acceptable, a_name=str(a), b_name=str(b), ignore=ignore
    )


def settings_that_differ(a: pd.DataFrame, b: pd.DataFrame) -> tuple[str, ...]:
    """Parameters that hold one value in each frame, a different one in each: what the two results
    compare (a profile, a capacity), not part of a point's identity (what `--ignore` names by hand)."""
    skip = set(RESERVED_NAMES) | set(PROVENANCE_COLUMNS)
    out = []
    for p in sorted((set(a.columns) & set(b.columns)) - skip):
        va, vb = a[p].astype(str).unique(), b[p].astype(str).unique()
        if len(va) == 1 and len(vb) == 1 and va[0] != vb[0]:
            out.append(p)
    return tuple(out)


def plot_comparison(c: Comparison, path: str | Path) -> None:
    """Relative difference per point, one row of markers per metric, the acceptable band shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metrics = sorted(c.rows["metric"].unique())
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.35 * len(metrics) + 1.2)))
    colors = {"same": "0.6", "better": "tab:green", "worse": "tab:red", "changed": "tab:orange"}
    for i, m in enumerate(metrics):
        rows = c.rows[c.rows["metric"] == m]
        for verdict, part in rows.groupby("verdict"):
            vals = [100 * v for v in part["rel_diff"] if math.isfinite(v)]
            ax.scatter(vals, [i] * len(vals), s=18, color=colors[str(verdict)], label=str(verdict), zorder=3)
    ax.axvspan(-100 * c.acceptable, 100 * c.acceptable, color="0.9", zorder=1, label="acceptable")
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_yticks(range(len(metrics)), metrics)
    ax.set_xlabel(f"relative difference of the means, B vs A [%]  (A: {Path(c.a).name}, B: {Path(c.b).name})")
    handles, labels = ax.get_legend_handles_labels()
    unique = dict(zip(labels, handles))
    ax.legend(unique.values(), unique.keys(), loc="best", fontsize=8)
    fig.tight_layout()
    with atomic_output(path) as tmp:
        fig.savefig(tmp, dpi=120, format=Path(path).suffix.lstrip(".") or None)
    plt.close(fig)
