"""The columns of the harness's tidy records: what is fixed, what is a parameter.

Records (one row per run × metric, plus time-series rows that have a `t` [s]) are
`experiment, target, run, rep, seed, status, error, search, backend, run_identity, code_fingerprint,
input_files, <one column per parameter>, metric, value, unit, t`. The store writes them
(`nicbench.experiments.store`); specs refuse a parameter with a fixed column's name; statistics,
comparisons, reports and the calibration's measurement files tell parameters from fixed columns
with these names. Plain names only (no pandas, no pyarrow): a spec check needs no table library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["HEAD_COLUMNS", "PROVENANCE_COLUMNS", "TAIL_COLUMNS", "RECORD_COLUMNS", "RESERVED_NAMES", "param_columns"]

# Fixed columns, in order; parameter columns go between `input_files` and `metric`.
HEAD_COLUMNS = (
    "experiment",
    "target",
    "run",
    "rep",
    "seed",
    "status",
    "error",
    "search",
    "backend",
    "run_identity",
    "code_fingerprint",
    "input_files",
)
# What answered a run and from which code and input files (`nicbench.experiments.fingerprint`).
PROVENANCE_COLUMNS = ("backend", "run_identity", "code_fingerprint", "input_files")
TAIL_COLUMNS = ("metric", "value", "unit", "t")
RECORD_COLUMNS = HEAD_COLUMNS + TAIL_COLUMNS
RESERVED_NAMES = frozenset(RECORD_COLUMNS)


def param_columns(df: pd.DataFrame) -> list[str]:
    """The parameter columns of a records frame (everything that is not a fixed column)."""
    return [c for c in df.columns if c not in RESERVED_NAMES]
