"""Statistics over stored records.

- `summarize(df)`: per point and metric, across repetitions: n, mean, std, min, the
  1st/25th/50th/75th/99th percentiles (the PAM'21 boxplots) and max. Only scalar records
  of successful runs count (time-series rows, `t` not null, are left out).
- `hdr_percentiles(samples)`: per-run latency percentiles p50/p90/p99/p99.9/max in the
  HdrHistogram style (values rounded to 3 significant digits, as a 3-digit HDR histogram
  reports them), for targets to return as metrics.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from nicbench.vocab.records import param_columns

__all__ = ["summarize", "hdr_percentiles", "STATISTICS", "statistic"]

PERCENTILES = {"p1": 1, "p25": 25, "p50": 50, "p75": 75, "p99": 99}
STATISTICS = ("n", "mean", "std", "min", *PERCENTILES, "max", "median")

HDR_PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))


def hdr_percentiles(samples: Iterable[float], prefix: str, suffix: str = "") -> dict[str, float]:
    """`{prefix}_p50{suffix}: ...`, p90, p99, p99.9 and max of `samples`, 3 significant digits."""
    values = np.asarray(list(samples) if not isinstance(samples, np.ndarray) else samples, dtype=float)
    if values.size == 0:
        return {f"{prefix}_{name}{suffix}": math.nan for name, _ in (*HDR_PERCENTILES, ("max", 0))}
    out = {
        f"{prefix}_{name}{suffix}": _sig3(float(np.percentile(values, q, method="higher")))
        for name, q in HDR_PERCENTILES
    }
    out[f"{prefix}_max{suffix}"] = _sig3(float(values.max()))
    return out


def _sig3(x: float) -> float:
    return float(f"{x:.3g}") if math.isfinite(x) else x


def scalar_records(df: pd.DataFrame) -> pd.DataFrame:
    """Successful scalar records (no time series, no failed runs)."""
    if df.empty:
        return df
    mask = (df["status"] == "ok") & df["t"].isna() & df["metric"].notna()
    return df[mask]


def summarize(df: pd.DataFrame, by: list[str] | None = None) -> pd.DataFrame:
    """One row per (point, metric): the statistics across repetitions."""
    data = scalar_records(df)
    keys = (by if by is not None else param_columns(df)) + ["metric", "unit"]
    if "search" in data.columns and "search" not in keys and data["search"].notna().any():
        keys.append("search")
    columns = keys + list(STATISTICS)
    if data.empty:
        return pd.DataFrame(columns=columns)
    grouped = data.groupby(keys, dropna=False, sort=True)["value"]
    out = grouped.agg(n="count", mean="mean", std="std", min="min", max="max")
    for name, q in PERCENTILES.items():
        out[name] = grouped.quantile(q / 100.0)
    out["median"] = out["p50"]
    return out.reset_index()[columns]


def statistic(summary: pd.DataFrame, name: str) -> pd.Series:
    if name not in STATISTICS:
        raise ValueError(f"unknown statistic {name!r} (one of {', '.join(STATISTICS)})")
    return summary[name]
