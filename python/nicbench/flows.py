"""The flow meter from Python: meter a pcap or a live interface into flow records.

The metering itself is Rust (`crates/nicbench-flowmeter`, bound in `crates/nicbench-py/src/flowmeter.rs`);
this module adds the ergonomics: durations with units, the output format from the file suffix,
Parquet (the native meter streams a temporary CSV that pyarrow converts batch by batch, so memory
stays bounded), and `load_records` to read any of the three formats back.

Invariants:
- The record file is written under a temporary name and renamed onto `out` at the end
  (`nicbench.outputs`): a run that fails leaves no file there.
- `meter` returns normally when the run is interrupted (Ctrl-C): every active flow has been flushed
  to the output, which is kept (complete up to its last record), and `stats["interrupted"]` is
  True; the caller decides how to exit.
- A truncated or corrupt pcap does not raise either: the packets before the bad record are metered
  (counted in the stats) but no record file is left, and `stats["input_error"]` names the capture,
  the packet index and its byte offset. Errors that prevent a run (missing file, not a capture, bad
  option, unreachable collector) raise `NicbenchError` / `PcapError` / `OSError`.
- Records have the same field names and values in CSV, JSON lines and Parquet (`RECORD_COLUMNS`).
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

from nicbench import _native
from nicbench.errors import NicbenchError
from nicbench.inputs import naming_capture
from nicbench.outputs import atomic_output
from nicbench.units import UnitError, parse_count, parse_duration_ns

__all__ = ["meter", "load_records", "format_for_path", "parse_seconds_ns", "FORMATS", "COMPATS", "RECORD_COLUMNS"]

FORMATS = ("csv", "jsonl", "parquet")
COMPATS = ("nicbench", "argus")
_SUFFIX_FORMATS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}

# Column → Arrow type name for the typed readers (CSV → Arrow, Parquet). Columns the meter adds
# later are read as strings: a new column never breaks a reader.
_COLUMN_TYPES = {
    "StartTime": "float64",
    "LastTime": "float64",
    "Dur": "float64",
    "Proto": "string",
    "SrcAddr": "string",
    "Sport": "int64",
    "Dir": "string",
    "DstAddr": "string",
    "Dport": "int64",
    "SrcPkts": "int64",
    "DstPkts": "int64",
    "TotPkts": "int64",
    "SrcBytes": "int64",
    "DstBytes": "int64",
    "TotBytes": "int64",
    "State": "string",
    "SrcTcpFlags": "string",
    "DstTcpFlags": "string",
    "MinSize": "int64",
    "MaxSize": "int64",
    "MeanSize": "float64",
    "IcmpType": "int64",
    "IcmpCode": "int64",
    "IcmpId": "int64",
    "Vlan": "int64",
    "Vni": "int64",
    "DnsTxId": "int64",
    "Seq": "int64",
    "EndReason": "string",
    "Worker": "int64",
}
RECORD_COLUMNS = tuple(_COLUMN_TYPES)

# Most active flows a run can keep: the meter's slot indices are u32 with one value reserved
# (MeterConfig::validate in crates/nicbench-flowmeter refuses 2^31 - 1 and up).
MAX_FLOWS = 2**31 - 2

Duration = str | int | float | None


# Longest timeout [s]: about 31 years, far beyond any capture, and within the meter's 64-bit ns.
MAX_TIMEOUT_S = 1e9


def parse_seconds_ns(value: Duration, what: str) -> int | None:
    """`"60s"`, `"500ms"`, `"2min"` or a number of seconds → ns; None stays None. Positive, at most
    MAX_TIMEOUT_S."""
    if value is None:
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = float(value)
    else:
        try:
            seconds = parse_duration_ns(str(value)) / 1e9
        except UnitError as exc:
            raise UnitError(f"{what}: {exc}") from None
    if not (seconds > 0):
        raise UnitError(f"{what} must be positive, found {value!r}")
    if seconds > MAX_TIMEOUT_S:
        raise UnitError(f"{what} {value}: at most {MAX_TIMEOUT_S:g} s (about 31 years)")
    return int(round(seconds * 1e9))


def format_for_path(path: str | os.PathLike | None, format: str | None = None) -> str:
    """The record format: `format` if given, else from the output suffix (.csv, .jsonl, .parquet)."""
    suffix = Path(path).suffix.lower() if path is not None else ""
    if format is not None:
        if format not in FORMATS:
            raise NicbenchError(f"unknown record format {format!r}: expected one of {', '.join(FORMATS)}")
        if _SUFFIX_FORMATS.get(suffix, format) != format:  # e.g. CSV text in a file named .parquet
            raise NicbenchError(
                f"--format {format} contradicts the output name {str(path)!r} (a "
                f"{_SUFFIX_FORMATS[suffix]} name): drop --format or name the file .{format}"
            )
        return format
    if path is None:
        return "csv"
    if suffix not in _SUFFIX_FORMATS:
        raise NicbenchError(
            f"cannot tell the record format from {str(path)!r}: use a .csv, .jsonl or .parquet name or --format"
        )
    return _SUFFIX_FORMATS[suffix]


def meter(
    pcap: str | os.PathLike | None = None,
    *,
    live: str | None = None,
    workers: int = 1,
    idle: Duration = None,
    active: Duration | bool = None,
    max_flows: int | str | None = None,
    compat: str = "nicbench",
    out: str | os.PathLike | None = None,
    format: str | None = None,
    ipfix: str | None = None,
    duration: Duration = None,
    progress: Callable[[int, int, int], None] | None = None,
) -> dict:
    """Meter `pcap` (or the interface `live`) into bidirectional flow records; returns the run's stats.

    - `workers`: worker threads behind symmetric RSS (1 = inline, no dispatcher thread).
    - `idle`: one idle timeout for every protocol (default: per protocol, TCP 60 s, UDP 30 s,
      ICMP 5 s); `active`: status interval splitting long flows (default 60 s; `False`/`"off"`: never).
      Durations are strings with units (`"60s"`, `"500ms"`) or seconds.
    - `max_flows`: bound on active flows over all workers; least-recently-seen flows are evicted
      (emitted, and counted in `evicted`).
    - `compat`: `"nicbench"` or `"argus"` (Argus byte counting, timeouts and DNS keying).
    - `out`, `format`: write the records (csv, jsonl or parquet; default from the suffix).
      Without `out` (and without `ipfix`) the records are only counted (benchmarks).
    - `ipfix`: `"host:port"` of an IPFIX collector (UDP), in addition to `out`.
    - `duration`: stop a live capture after this long (Ctrl-C stops it as well).
    - `progress(done, packets, records)`: called about every 100 ms; `done` is input bytes read
      (pcap) or packets (live).

    The stats: `packets`, `bytes`, `wire_bytes` (pcap totals), `non_ip_packets`, `non_ip_bytes`,
    `records`, `flows`, `evicted`, `idle_expired`, `active_splits`, `flushed`, `restarted`,
    `max_active_flows`, `workers` (list of per-worker `packets`, `bytes`, `flows`, `records`,
    `evicted`, `max_active_flows`), `imbalance` (max/mean per-worker packets), `first_ts_ns`,
    `last_ts_ns`, `elapsed_ns`, `elapsed_s`, `mpps`, `interrupted`, `input_error` (None or a message),
    `compat`, `config` (the effective timeouts and sizes), `output`, `format`, `ipfix`.
    """
    if (pcap is None) == (live is None):
        raise NicbenchError("give either a pcap file or a live interface (live=IFACE), not both or neither")
    if compat not in COMPATS:
        raise NicbenchError(f"unknown compat mode {compat!r}: expected one of {', '.join(COMPATS)}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise NicbenchError(f"workers must be a positive integer, found {workers!r}")
    if duration is not None and live is None:
        raise NicbenchError("duration applies to live capture only (a pcap is metered to its end)")
    fmt = format_for_path(out, format)
    # "0" is refused (must be positive) rather than read as "off": say off to mean off.
    no_active = active is False or (isinstance(active, str) and active.strip().lower() in ("off", "none"))
    if isinstance(active, (str, int, float)) and not isinstance(active, bool) and str(active).strip() in ("0", "0.0"):
        raise UnitError(f"--active {active}: the status interval must be positive; 'off' turns it off")
    active_ns = None if no_active or active is None or active is True else parse_seconds_ns(active, "--active")
    kwargs = dict(
        live=live is not None,
        compat=compat,
        workers=workers,
        max_flows=None
        if max_flows is None
        else parse_count(max_flows, at_most=MAX_FLOWS, what="--max-flows", at_least=1),
        idle_ns=parse_seconds_ns(idle, "--idle"),
        active_ns=active_ns,
        no_active=no_active,
        duration_ns=parse_seconds_ns(duration, "duration"),
        ipfix=ipfix,
        progress=progress,
    )
    source = str(live) if live is not None else os.fspath(pcap)
    if live is None and not Path(source).exists():
        # Say it before opening outputs: a typo must not leave an empty output file behind.
        raise FileNotFoundError(2, "No such file or directory", source)

    try:
        with naming_capture(source), nullcontext(None) if out is None else atomic_output(out) as tmp:
            if tmp is not None and fmt == "parquet":
                stats = _meter_to_parquet(source, tmp, kwargs)
            else:
                stats = json.loads(
                    _native.flows_meter(source, out=None if tmp is None else os.fspath(tmp), format=fmt, **kwargs)
                )
            if stats.get("input_error"):
                raise _Discarded  # records of a capture that could not be read to its end: not kept
    except _Discarded:
        out = None
        if not stats["input_error"].startswith(source):
            stats["input_error"] = f"{source}: {stats['input_error']}"
    stats["output"] = None if out is None else os.fspath(out)
    stats["format"] = fmt if out is not None else None
    stats["ipfix"] = ipfix
    stats["elapsed_s"] = stats["elapsed_ns"] / 1e9
    return stats


class _Discarded(Exception):
    """Leaves `meter`'s output block so that the record file is removed."""


def _meter_to_parquet(source: str, out: Path, kwargs: dict) -> dict:
    """Meter into a temporary CSV next to `out`, then convert it to Parquet in bounded memory."""
    # Same directory as `out`: the temporary CSV lands on the same file system, and a directory
    # that does not exist fails before any metering.
    fd, tmp_name = tempfile.mkstemp(prefix=f"{out.name}.", suffix=".csv", dir=out.parent)
    os.close(fd)
    try:
        stats = json.loads(_native.flows_meter(source, out=tmp_name, format="csv", **kwargs))
        csv_to_parquet(tmp_name, out)
    finally:
        Path(tmp_name).unlink(missing_ok=True)
    return stats


def _arrow_convert_options():
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {name: getattr(pa, kind)() for name, kind in _COLUMN_TYPES.items()}
    return pacsv.ConvertOptions(column_types=types, strings_can_be_null=False)


def csv_to_parquet(csv_path: str | os.PathLike, parquet_path: str | os.PathLike) -> int:
    """Convert a record CSV to Parquet, streaming record batches; returns the number of rows."""
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    rows = 0
    reader = pacsv.open_csv(
        os.fspath(csv_path),
        convert_options=_arrow_convert_options(),
        read_options=pacsv.ReadOptions(block_size=1 << 22),
    )
    with pq.ParquetWriter(os.fspath(parquet_path), reader.schema, compression="zstd") as writer:
        for batch in reader:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows


def load_records(path: str | os.PathLike, format: str | None = None) -> list[dict]:
    """Read a record file written by `meter` (any format) into a list of dicts, one per record.

    Values are typed the same way for the three formats: counts and ports are ints, times floats
    (Unix seconds), empty optional fields None (empty strings in string columns of CSV stay "")."""
    fmt = format_for_path(path, format)
    if fmt == "jsonl":
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(os.fspath(path)).to_pylist()
    import pyarrow.csv as pacsv

    return pacsv.read_csv(os.fspath(path), convert_options=_arrow_convert_options()).to_pylist()
