"""Input files read whole by Python (specs, OpenFlow rules, megaflow counts): refused at once when
they are not files a read can finish on.

A named pipe (FIFO) with no writer blocks `open()` forever, and a device or a socket is never one of
nicbench's inputs, so these are refused by name before anything opens them (the pcap reader, which
streams, waits a bounded time for a FIFO's writer instead: `nicbench_pcap::FIFO_WRITER_WAIT_MS`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from nicbench.errors import NicbenchError, PcapError

__all__ = ["refuse_special_file", "read_input_text", "read_toml", "naming_capture", "PARSER_LIMITS", "parser_limit"]


def refuse_special_file(path: str | os.PathLike, what: str = "file") -> None:
    """Raise NicbenchError naming `path` when it is a named pipe, a socket or a device. A missing
    path or a directory is left to the read, whose error names it."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else None
    )
    if kind:
        raise NicbenchError(f"{path}: {kind}, not a {what}: give a regular file ({what}s are read whole)")


def read_input_text(path: str | os.PathLike, what: str = "file") -> str:
    """The text of input file `path` (UTF-8), after `refuse_special_file`."""
    refuse_special_file(path, what)
    return Path(path).read_text(encoding="utf-8")


# What Python's own text parsers (json, tomllib) raise past their limits, besides their decode
# errors: RecursionError on arrays or tables nested ~1000 deep (a traceback: no user error), and a
# bare ValueError on an integer of more than 4300 digits that advises sys.set_int_max_str_digits()
# (found by fuzzing, issue 38). `except PARSER_LIMITS as exc: ... parser_limit(exc)`.
PARSER_LIMITS = (RecursionError, ValueError)


def parser_limit(exc: BaseException) -> str:
    """The limit `exc` (one of PARSER_LIMITS from json or tomllib) reports, worded for the user."""
    if isinstance(exc, RecursionError):
        return "nested too deeply (arrays or tables inside each other hundreds of levels deep)"
    if "integer string conversion" in str(exc):
        return "an integer of more than 4300 digits"
    return str(exc)


def read_toml(path: str | os.PathLike, error: type[Exception] = NicbenchError, what: str = "TOML file") -> dict:
    """The TOML document in `path`, or `error` naming the file: not a regular file, not UTF-8, not
    valid TOML, or beyond a parser's limits (nesting, integer digits: `PARSER_LIMITS`)."""
    from nicbench.toml_parser import tomllib

    try:
        return tomllib.loads(read_input_text(path, what))
    except UnicodeDecodeError:
        raise error(f"{path}: not a text (TOML) file") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None
    except PARSER_LIMITS as exc:
        raise error(f"{path}: not a {what}: {parser_limit(exc)}") from None


@contextmanager
def naming_capture(path: str | os.PathLike) -> Iterator[None]:
    """Errors about a capture's content (not a pcap, a truncated header, an unknown link type) start
    with the capture's path, as the open errors do: a command reading a rule file and a capture
    must say which one is wrong."""
    try:
        yield
    except PcapError as exc:
        text = str(exc)
        if os.fspath(path) in text:
            raise
        raise PcapError(f"{os.fspath(path)}: {text}") from None
