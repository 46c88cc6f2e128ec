"""The result store: tidy long-format records, one small file per finished run, compacted to Parquet.

Layout of an experiment folder `results/<experiment>/`:

    runs/<run key>.arrow       records of a successful run (or a search's derived result), Arrow IPC:
                               the journal, cheap to write (about 1 ms) so the harness keeps up
                               with trivial targets
    parts/part-<hash>.parquet  compacted runs (many per file); written at the end of every
                               `run_experiment`, after which the journal files it holds are deleted
    failed/<run key>.arrow     the one error record of a failed run (retried by the next run)
    stale/                     runs of an older version of the spec, moved aside, never deleted
    spec.toml                  the spec as last run
    experiment.json            name, target, spec path, study, environment, progress counts
    .lock                      held (flock) while a run is writing here

Records (one row per run × metric, plus time-series rows that have a `t` [s]): the columns of
`nicbench.vocab.records` (`backend`: what answered the run). The three provenance columns
(`run_identity`, `code_fingerprint`, `input_files`: `fingerprint.py`) tell a stale run (same
identity, other code or input files) from a current one.

Invariants:
- **A run is in the store iff its records are in a file of runs/ or parts/.** Files are
  written to a dot-prefixed temp name in the same folder and `os.replace`d into place, so a
  reader (or a run killed at any moment, even by SIGKILL) sees either the whole run or
  nothing; a re-run does only the missing runs, and nothing is lost.
- Compaction writes the new part before deleting what it replaces, so a kill in between
  leaves a run in two files; readers keep one copy per run key (no duplicates).
- Temp files (`.tmp-*`) are leftovers of killed runs; they are never read, and are removed
  when the next run takes the lock.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.ipc  # noqa: F401  (pa.ipc)
import pyarrow.parquet as pq

from nicbench.vocab.errors import StoreError
from nicbench.vocab.records import HEAD_COLUMNS, PROVENANCE_COLUMNS, RECORD_COLUMNS, RESERVED_NAMES, TAIL_COLUMNS

__all__ = ["ExperimentStore", "results_root", "load_results", "build_table", "list_experiments"]

ENV_RESULTS = "NICBENCH_RESULTS"


# The largest `experiment.json` a store may hold [bytes]: the runner writes a few KB (name, spec path,
# environment, progress counts); anything near this is not its file.
MAX_META_BYTES = 4 * 1024 * 1024


def results_root(explicit: str | os.PathLike | None = None) -> Path:
    """`--results DIR`, else `$NICBENCH_RESULTS`, else `./results`."""
    if explicit is not None:
        return Path(explicit)
    return Path(os.environ.get(ENV_RESULTS) or "results")


def build_table(
    *,
    experiment: str,
    target: str,
    run: str,
    rep: int,
    seed: int,
    status: str,
    error: str | None,
    search: str | None,
    params: Mapping[str, Any],
    rows: list[tuple[str, float, str, float | None]],
    provenance: Mapping[str, str | None] | None = None,
) -> pa.Table:
    """The records of one run as an Arrow table (one row per record; one error row if none)."""
    if not rows:
        rows = [(None, None, None, None)]  # type: ignore[list-item]
    n = len(rows)
    columns: dict[str, pa.Array] = {
        "experiment": pa.array([experiment] * n, pa.string()),
        "target": pa.array([target] * n, pa.string()),
        "run": pa.array([run] * n, pa.string()),
        "rep": pa.array([rep] * n, pa.int64()),
        "seed": pa.array([seed] * n, pa.int64()),
        "status": pa.array([status] * n, pa.string()),
        "error": pa.array([error] * n, pa.string()),
        "search": pa.array([search] * n, pa.string()),
    }
    for name in PROVENANCE_COLUMNS:
        columns[name] = pa.array([(provenance or {}).get(name)] * n, pa.string())
    for name, value in params.items():
        columns[name] = pa.array([value] * n, _arrow_type(value))
    columns["metric"] = pa.array([r[0] for r in rows], pa.string())
    columns["value"] = pa.array([r[1] for r in rows], pa.float64())
    columns["unit"] = pa.array([r[2] for r in rows], pa.string())
    columns["t"] = pa.array([r[3] for r in rows], pa.float64())
    return pa.table(columns)


def _arrow_type(value: Any) -> pa.DataType:
    # Canonical parameter values have one Python type per kind (see nicbench.vocab.params).
    if isinstance(value, bool):
        return pa.bool_()
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    if value is None:
        return pa.null()
    return pa.string()


class ExperimentStore:
    """One experiment's folder in the results root."""

    def __init__(self, root: str | os.PathLike, experiment: str):
        self.experiment = experiment
        self.dir = Path(root) / experiment
        self.runs_dir = self.dir / "runs"
        self.failed_dir = self.dir / "failed"
        self.stale_dir = self.dir / "stale"
        self.parts_dir = self.dir / "parts"

    # -- writing ---------------------------------------------------------------------------
    def prepare(self) -> None:
        """Create the folders; a clear OSError if the results folder is not writable."""
        try:
            for d in (self.runs_dir, self.failed_dir):
                d.mkdir(parents=True, exist_ok=True)
            if not os.access(self.dir, os.W_OK):
                raise PermissionError(13, "Permission denied", str(self.dir))
        except OSError as exc:
            where = exc.filename or self.dir
            raise StoreError(
                f"cannot use results folder {where}: {exc.strerror or exc} "
                f"(choose another with --results DIR or ${ENV_RESULTS})"
            ) from None

    @contextmanager
    def lock(self) -> Iterator[None]:
        """Exclusive use of the folder for one run process; released even on SIGKILL (flock)."""
        self.prepare()
        fd = os.open(self.dir / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise StoreError(
                    f"{self.dir} is in use by another nicbench run; wait for it or use another --results folder"
                ) from None
            for d in (self.runs_dir, self.failed_dir, self.parts_dir, self.stale_dir):
                for leftover in d.glob(".tmp-*"):
                    leftover.unlink(missing_ok=True)
            yield
        finally:
            os.close(fd)

    def write_run(
        self, key: str, table: pa.Table, *, failed: bool = False, metadata: Mapping[str, Any] | None = None
    ) -> Path:
        """Atomically add one run's records (replacing an earlier failure of the same run)."""
        folder = self.failed_dir if failed else self.runs_dir
        final = folder / f"{key}{JOURNAL_SUFFIX}"
        tmp = folder / f".tmp-{key}-{os.getpid()}{JOURNAL_SUFFIX}"
        if metadata:
            meta = dict(table.schema.metadata or {})
            meta[b"nicbench"] = json.dumps(metadata).encode()
            table = table.replace_schema_metadata(meta)
        with pa.OSFile(str(tmp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, final)
        if not failed:
            (self.failed_dir / f"{key}{JOURNAL_SUFFIX}").unlink(missing_ok=True)
        return final

    def compact(self, keep: set[str] | None = None) -> int:
        """Merge journal files and parts into one Parquet part; runs not in `keep` go to stale/.

        Returns the number of runs moved to stale/. Crash-safe: new files are in place
        before the files they replace are deleted (readers drop duplicate run keys).
        """
        journal = list(_run_files(self.runs_dir))
        parts = list(_run_files(self.parts_dir))
        stale_moved = 0
        if keep is not None:
            for path in _run_files(self.failed_dir):
                if path.stem not in keep:
                    self.stale_dir.mkdir(parents=True, exist_ok=True)
                    os.replace(path, self.stale_dir / f"failed-{path.name}")
        if not journal and len(parts) <= 1 and keep is None:
            return 0
        tables = [_read_file(p) for p in parts + journal]
        if not tables:
            return 0
        table = _dedupe(tables)
        runs = table.column("run")
        if keep is not None:
            mask = pc.is_in(runs, value_set=pa.array(sorted(keep), pa.string()))
            stale = table.filter(pc.invert(mask))
            if stale.num_rows:
                stale_moved = len(set(stale.column("run").to_pylist()))
                self.stale_dir.mkdir(parents=True, exist_ok=True)
                _write_parquet(stale, self.stale_dir / f"part-{_digest(stale)}.parquet")
            table = table.filter(mask)
        self.parts_dir.mkdir(parents=True, exist_ok=True)
        new_part = self.parts_dir / f"part-{_digest(table)}.parquet"
        if table.num_rows:
            _write_parquet(table, new_part)
        for path in parts + journal:
            if path != new_part:
                path.unlink(missing_ok=True)
        return stale_moved

    def clear(self) -> None:
        """`--fresh`: forget every run of this experiment."""
        for d in (self.runs_dir, self.failed_dir, self.stale_dir, self.parts_dir):
            shutil.rmtree(d, ignore_errors=True)

    def write_json(self, name: str, data: Mapping[str, Any]) -> None:
        tmp = self.dir / f".tmp-{name}"
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n")
        os.replace(tmp, self.dir / name)

    def write_text(self, name: str, text: str) -> None:
        tmp = self.dir / f".tmp-{name}"
        tmp.write_text(text)
        os.replace(tmp, self.dir / name)

    # -- reading ---------------------------------------------------------------------------
    def done_keys(self) -> set[str]:
        keys = {p.stem for p in _run_files(self.runs_dir)}
        for part in _run_files(self.parts_dir):
            keys.update(pq.read_table(part, columns=["run"]).column("run").unique().to_pylist())
        return keys

    def provenance(self) -> dict[str, tuple[str | None, str | None, str | None]]:
        """Per stored run key: (run_identity, code_fingerprint, input_files); None where a run was
        stored before the store kept them."""
        cols = ("run", "run_identity", "code_fingerprint", "input_files")
        out: dict[str, tuple[str | None, str | None, str | None]] = {}
        paths = list(_run_files(self.parts_dir)) + list(_run_files(self.runs_dir))
        for path in paths:
            table = (
                _read_file(path)
                if path.suffix == JOURNAL_SUFFIX
                else pq.read_table(path, columns=[c for c in cols if c in pq.read_schema(path).names])
            )
            names = table.column_names
            columns = [table.column(c).to_pylist() if c in names else [None] * table.num_rows for c in cols]
            for run, identity, code, inputs in zip(*columns):
                out.setdefault(run, (identity, code, inputs))
        return out

    def stale_keys(self) -> set[str]:
        """Stored runs made by other code or other input files than the current ones."""
        from nicbench.experiments.fingerprint import is_current

        return {run for run, (_, code, inputs) in self.provenance().items() if not is_current(code, inputs)}

    def failed_keys(self) -> set[str]:
        return {p.stem for p in _run_files(self.failed_dir)}

    def read_run(self, key: str) -> pa.Table:
        journal = self.runs_dir / f"{key}{JOURNAL_SUFFIX}"
        if journal.exists():
            return _read_file(journal)
        for part in _run_files(self.parts_dir):
            table = pq.read_table(part, filters=[("run", "=", key)])
            if table.num_rows:
                return table
        raise StoreError(f"{self.dir}: run {key} is not in the store")

    def read_json(self, name: str) -> dict:
        """The JSON object in the store's file `name` (`{}` when absent). A file that is not one
        (cut short, edited by hand, not JSON) is refused by name: the store is not used with it."""
        path = self.dir / name
        if not path.exists():
            return {}
        again = "`nicbench run --fresh SPEC` starts the experiment over (or delete the folder)"
        if not path.is_file() or path.stat().st_size > MAX_META_BYTES:
            raise StoreError(
                f"{path}: not a results metadata file (a regular file of at most {MAX_META_BYTES // 1024} KiB "
                f"that `nicbench run` writes); {again}"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise StoreError(
                f"{path}: corrupt results metadata at line {exc.lineno} column {exc.colno} ({exc.msg}); {again}"
            ) from None
        except UnicodeDecodeError:
            raise StoreError(f"{path}: corrupt results metadata (not UTF-8 text); {again}") from None
        if not isinstance(data, dict):
            raise StoreError(
                f"{path}: corrupt results metadata (a JSON {type(data).__name__}, not the object `nicbench run` "
                f"writes); {again}"
            )
        return data

    def exists(self) -> bool:
        return self.runs_dir.is_dir() or self.failed_dir.is_dir() or self.parts_dir.is_dir()

    def load(self) -> pd.DataFrame:
        """All records (successful runs, then failures of runs that never succeeded). A store whose
        metadata is corrupt is refused by name first (`read_json`), as a corrupt record file is."""
        self.read_json("experiment.json")
        tables = [_read_file(p) for p in list(_run_files(self.parts_dir)) + list(_run_files(self.runs_dir))]
        done: set[str] = set()
        for t in tables:
            done.update(t.column("run").unique().to_pylist())
        tables += [_read_file(p) for p in _run_files(self.failed_dir) if p.stem not in done]
        return _to_frame(tables)


JOURNAL_SUFFIX = ".arrow"


def _run_files(folder: Path) -> Iterable[Path]:
    if not folder.is_dir():
        return []
    return sorted(
        p for p in folder.iterdir() if p.suffix in (JOURNAL_SUFFIX, ".parquet") and not p.name.startswith(".")
    )


def _read_file(path: Path) -> pa.Table:
    try:
        if path.suffix == ".parquet":
            return pq.read_table(path)
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).read_all()
    except (OSError, pa.ArrowException) as exc:
        raise StoreError(f"{path}: unreadable record file ({exc}); delete it to re-run that run") from None


def _write_parquet(table: pa.Table, path: Path) -> None:
    tmp = path.with_name(f".tmp-{path.name}")
    pq.write_table(table.replace_schema_metadata(None), tmp, compression="zstd")
    os.replace(tmp, path)


def _dedupe(tables: list[pa.Table]) -> pa.Table:
    """Concatenate, keeping one copy of each run: the first table that has it wins
    (a kill during compaction can leave a run in two files)."""
    seen: set[str] = set()
    kept = []
    for t in tables:
        t = t.replace_schema_metadata(None)
        runs = t.column("run")
        if seen:
            t = t.filter(pc.invert(pc.is_in(runs, value_set=pa.array(sorted(seen), pa.string()))))
        seen.update(runs.unique().to_pylist())
        kept.append(t)
    return pa.concat_tables(kept, promote_options="permissive")


def _digest(table: pa.Table) -> str:
    keys = sorted(set(table.column("run").to_pylist()))
    return hashlib.sha256("|".join(keys).encode()).hexdigest()[:16]


def _to_frame(tables: list[pa.Table]) -> pd.DataFrame:
    if not tables:
        return pd.DataFrame(columns=list(RECORD_COLUMNS))
    try:
        df = _dedupe(tables).to_pandas()
    except (pa.ArrowException, TypeError):
        # Parameter columns whose type changed between spec versions: let pandas mix them.
        df = pd.concat([t.to_pandas() for t in tables], ignore_index=True).drop_duplicates(
            subset=["run", "metric", "t"], keep="first"
        )
    head = [c for c in HEAD_COLUMNS if c in df.columns]
    tail = [c for c in TAIL_COLUMNS if c in df.columns]
    params = [c for c in df.columns if c not in RESERVED_NAMES]
    df = df[head + params + tail]
    return df.sort_values(["run", "metric", "t"], na_position="first", kind="stable").reset_index(drop=True)


def list_experiments(root: str | os.PathLike | None = None) -> list[ExperimentStore]:
    base = results_root(root)
    if not base.is_dir():
        return []
    return [
        ExperimentStore(base, d.name)
        for d in sorted(base.iterdir())
        if d.is_dir() and any((d / s).is_dir() for s in ("runs", "parts", "failed"))
    ]


def load_results(experiment_or_dir: str | os.PathLike, results: str | os.PathLike | None = None) -> pd.DataFrame:
    """Records of an experiment as a tidy pandas DataFrame.

    `experiment_or_dir` is an experiment folder (`results/gen-rate`) or an experiment name
    looked up in the results root (`results`, `$NICBENCH_RESULTS` or `./results`).
    """
    path = Path(experiment_or_dir)
    if any((path / d).is_dir() for d in ("runs", "parts", "failed")):
        store = ExperimentStore(path.parent, path.name)
    else:
        store = ExperimentStore(results_root(results), str(experiment_or_dir))
        if not store.exists():
            # Name what was given, and where a bare name was looked up (a folder path typo is not a name).
            raise FileNotFoundError(
                2,
                f"no results there, nor an experiment of that name in {results_root(results)} "
                "(run `nicbench run SPEC` first)",
                str(experiment_or_dir),
            )
    return store.load()


def error_text(exc: BaseException) -> str:
    """What a failed run stores: the exception line, then the traceback (last frames)."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__, limit=-8))
    return f"{type(exc).__name__}: {exc}\n{tb}"


def now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")
