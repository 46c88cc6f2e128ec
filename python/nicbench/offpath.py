"""Off-path SmartNIC paths from Python: parse flows, run the native analytic model, read its answer.

The model (`nicbench_models::offpath`, run through `nicbench.models.run("offpath", ...)`) takes ONE
request and returns ONE result, both defined by their Rust serde types (schemas:
`models.contract_schema("offpath", "request")` / `("offpath", "result")`, the files
`docs/contracts/offpath.request.schema.json` / `offpath.result.schema.json`), summarized here:

    request  = {"nic": "bluefield2", "overrides": {...}, "mix": "max_min",
                "flows": [{"path": "client->soc", "verb": "READ", "payload_bytes": 4096, "share": 0.8,
                           "threads": 24, "machines": 1, "doorbell_batch": 16,
                           "address_range_bytes": 1536, "offered_mpps": 1.7}, ...]}
    result   = {"flows": [{"gbps", "mpps", "latency_us", "posting_latency_us", "saturated",
                           "pcie_mpps": {"pcie0_up", "pcie0_down", "pcie1_up", "pcie1_down"},
                           "pcie_data_mpps": {...}, "bottleneck"}, ...],   # data TLPs only: Table 3
                "mix", "total_gbps", "total_mpps", "pcie_mpps", "pcie_data_mpps", "bottleneck",
                "bottleneck_utilization",
                "utilization": {resource: fraction}, "advice": [{"id", "text"}]}

`mix`: how concurrent flows share the NIC. `shares` — the flows are ONE application's request mix:
flow i gets share_i of the requests, solved jointly. `max_min` — independent closed-loop requesters
(the seed's concurrency runs): each flow grows until a resource it uses saturates or its own
requesters cap it; weights = the given shares, else each flow's queue pairs (machines × threads,
the NIC serves QPs round-robin). `default_mix` picks `shares` when a flow states `x SHARE`.

Paths: `client->host` (① host memory), `client->soc` (② SoC memory), `host->soc` (③ H2S) and
`soc->host` (③ S2H). PCIe directions: `up` = away from the NIC cores (towards memory / the root
complex), `down` = towards the NIC cores.

A flow on the command line / in a study spec is one string (`parse_flow`):

    PATH VERB SIZE [x SHARE] [@ RATE] [batch N] [in RANGE] [threads N] [machines N]
    client->soc READ 4KiB x 80%          host->soc WRITE 64KiB @ 56Gbps       soc->host READ 64B batch 16
    client->soc WRITE 64B in 1.5KiB      host->soc READ 64B threads 24

`x SHARE` is the flow's fraction of the mix's requests (80% or 0.8); `@ RATE` an open-loop offered
load (Gbps of payload, or Mpps of requests); `batch` requests per doorbell (MMIO); `in RANGE` the
address range the requests hit (skew, seed Fig. 7). Several flows: separated by `;` (`parse_flows`).

Invariants: `predict` never changes its arguments; calibration overrides set with
`nicbench.profiles.parameter_overrides()` apply to every prediction inside the `with` block, beneath
the call's own `overrides`, and only for parameters the request's profile declares (a calibration
active around a study that also runs another model, or another kind of profile, must not hand it
names it would reject).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nicbench import models
from nicbench.errors import NicbenchError
from nicbench.profiles import overrides_for
from nicbench.units import UnitError, format_size_bytes, parse_rate, parse_size_bytes

__all__ = [
    "PATHS",
    "VERBS",
    "ADVICE_IDS",
    "BOTTLENECK_CLASSES",
    "PCIE_LINKS",
    "DEFAULT_NIC",
    "MAX_PAYLOAD_BYTES",
    "MIX_MODES",
    "Flow",
    "parse_flow",
    "parse_flows",
    "predict",
    "request",
    "bottleneck_class",
    "default_mix",
    "same_profile",
]

DEFAULT_NIC = "bluefield2"
PATHS = ("client->host", "client->soc", "host->soc", "soc->host")
VERBS = ("READ", "WRITE", "SEND")
PCIE_LINKS = ("pcie0_up", "pcie0_down", "pcie1_up", "pcie1_down")
ADVICE_IDS = (
    "avoid_skewed_soc_writes",
    "segment_large_reads",
    "bound_h2s_to_p_minus_n",
    "doorbell_batching_soc_only",
    "use_paths_1_and_2_concurrently",
)
# The paper names bottlenecks by component ("the network", "NIC cores", "PCIe", "SoC memory", "the
# requester's processor"); the model names resources with a direction or endpoint. A class is the
# longest prefix of the resource name found here (see `bottleneck_class`).
BOTTLENECK_CLASSES = (
    "network",
    "nic_cores",
    "pcie",
    "host_dram",
    "soc_dram",
    "host_cpu",
    "soc_cpu",
    "requester",
    "offered_load",
)
MAX_PAYLOAD_BYTES = 1 << 30  # the model's limit (1 GiB)
MIX_MODES = ("shares", "max_min")

_PATH_ALIASES = {p: p for p in PATHS} | {"h2s": "host->soc", "s2h": "soc->host"}
_VERB_ALIASES = {"READ": "READ", "WRITE": "WRITE", "SEND": "SEND", "RECV": "SEND", "SEND/RECV": "SEND"}
_KEYWORDS = ("x", "@", "batch", "in", "threads", "machines")


@dataclass(frozen=True)
class Flow:
    """One flow of requests (see the module doc for the string form)."""

    path: str
    verb: str
    payload_bytes: int
    share: float | None = None
    offered_mpps: float | None = None
    doorbell_batch: int | None = None
    address_range_bytes: int | None = None
    threads: int | None = None
    machines: int | None = None

    def to_request(self) -> dict[str, Any]:
        out: dict[str, Any] = {"path": self.path, "verb": self.verb, "payload_bytes": int(self.payload_bytes)}
        for key in ("share", "offered_mpps", "doorbell_batch", "address_range_bytes", "threads", "machines"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out

    def label(self) -> str:
        text = f"{self.path} {self.verb} {_size_text(self.payload_bytes)}"
        if self.share is not None:
            text += f" x {self.share:.0%}"
        if self.offered_mpps is not None:
            text += f" @ {self.offered_mpps:g}Mpps"
        if self.doorbell_batch is not None:
            text += f" batch {self.doorbell_batch}"
        if self.address_range_bytes is not None:
            text += f" in {_size_text(self.address_range_bytes)}"
        if self.threads is not None:
            text += f" threads {self.threads}"
        if self.machines is not None:
            text += f" machines {self.machines}"
        return text


def _size_text(n: int) -> str:
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale}{unit}"
    return f"{n}B"


def _bad(text: str, message: str) -> NicbenchError:
    return NicbenchError(f"flow {text.strip()!r}: {message}")


# Largest `batch`, `threads` and `machines` a flow may give: far beyond any testbed (Wei et al.'s: 24
# threads, up to 11 machines, batches up to 32), so a typo such as 99999999999999999999 is an error,
# not an extrapolation of the model to absurd requesters.
MAX_DOORBELL_BATCH = 1024
MAX_THREADS = 4096
MAX_MACHINES = 1024
_MAX_PER_KEY = {"batch": MAX_DOORBELL_BATCH, "threads": MAX_THREADS, "machines": MAX_MACHINES}


def _positive_int(text: str, key: str, token: str) -> int:
    most = _MAX_PER_KEY.get(key)
    allowed = f"a whole number from 1 to {most:,}" if most else "a whole number ≥ 1"
    try:
        value = int(token)
    except ValueError:
        raise _bad(text, f"{key}: expected {allowed}, found {token[:40]!r}") from None
    if value < 1 or (most is not None and value > most):
        raise _bad(text, f"{key}: expected {allowed}, found {token[:40]!r}")
    return value


def _share(text: str, token: str) -> float:
    try:
        value = float(token[:-1]) / 100.0 if token.endswith("%") else float(token)
    except ValueError:
        raise _bad(text, f"share: expected a fraction such as 80% or 0.8, found {token!r}") from None
    if not (0.0 < value <= 1.0) or not math.isfinite(value):
        raise _bad(text, f"share: expected a fraction in (0, 100%], found {token!r}")
    return value


def _offered_mpps(text: str, token: str, payload_bytes: int) -> float:
    try:
        rate = parse_rate(token)
    except UnitError:
        raise _bad(text, f"@: expected a rate such as 56Gbps or 1.5Mpps, found {token!r}") from None
    if not rate.value > 0:
        raise _bad(text, f"@: expected a positive rate, found {token!r}")
    if rate.unit == "pps":
        return rate.value / 1e6
    if payload_bytes <= 0:
        raise _bad(text, f"@ {token}: a bit rate needs a payload > 0 B (give requests/s, e.g. 10Mpps)")
    return rate.value / (8.0 * payload_bytes) / 1e6


def parse_flow(text: str) -> Flow:
    """`PATH VERB SIZE [x SHARE] [@ RATE] [batch N] [in RANGE] [threads N] [machines N]` → a Flow.

    Errors name the token that is wrong: `flow 'client->sox READ 4KiB': unknown path 'client->sox'
    (paths: client->host, client->soc, host->soc, soc->host)`.
    """
    if not isinstance(text, str) or not text.strip():
        raise NicbenchError("flow: expected 'PATH VERB SIZE [x SHARE]', e.g. 'client->soc READ 4KiB x 80%'")
    # "client -> soc" is the same path as "client->soc".
    tokens = " ".join(text.replace("->", " -> ").split()).replace(" -> ", "->").split()
    if len(tokens) < 3:
        raise _bad(text, "expected at least PATH VERB SIZE, e.g. 'client->soc READ 4KiB'")
    path = _PATH_ALIASES.get(tokens[0].lower())
    if path is None:
        raise _bad(text, f"unknown path {tokens[0]!r} (paths: {', '.join(PATHS)})")
    verb = _VERB_ALIASES.get(tokens[1].upper())
    if verb is None:
        raise _bad(text, f"unknown verb {tokens[1]!r} (verbs: {', '.join(VERBS)})")
    try:
        payload = parse_size_bytes(tokens[2])
    except UnitError:
        raise _bad(
            text,
            f"expected a payload size such as 64B or 4KiB (B, KB, KiB, MB, MiB, GB, GiB; at most 1 GiB), "
            f"found {tokens[2]!r}",
        ) from None
    if payload > MAX_PAYLOAD_BYTES:
        raise _bad(text, f"payload {tokens[2]!r} is larger than 1 GiB")
    fields: dict[str, Any] = {}
    rest = tokens[3:]
    i = 0
    while i < len(rest):
        key = rest[i].lower()
        if key not in _KEYWORDS:
            raise _bad(text, f"unexpected {rest[i]!r} (after SIZE: {', '.join(k + ' ...' for k in _KEYWORDS)})")
        if i + 1 >= len(rest):
            raise _bad(text, f"{rest[i]!r} needs a value")
        value = rest[i + 1]
        if key in fields:
            raise _bad(text, f"{rest[i]!r} given twice")
        if key == "x":
            fields[key] = _share(text, value)
        elif key == "@":
            fields[key] = _offered_mpps(text, value, payload)
        elif key == "in":
            try:
                fields[key] = parse_size_bytes(value)
            except UnitError:
                raise _bad(text, f"in: expected an address range such as 48KiB, found {value!r}") from None
            if fields[key] <= 0:
                raise _bad(text, f"in: the address range must be > 0 B, found {value!r}")
        else:
            fields[key] = _positive_int(text, key, value)
        i += 2
    if fields.get("in") is not None and fields["in"] < payload:
        # The model would silently widen it to the payload: one request touches its whole payload.
        raise _bad(
            text,
            f"in: the address range ({format_size_bytes(fields['in'])}) is smaller than one request's payload "
            f"({format_size_bytes(payload)}); give a range of at least the payload",
        )
    return Flow(
        path=path,
        verb=verb,
        payload_bytes=payload,
        share=fields.get("x"),
        offered_mpps=fields.get("@"),
        doorbell_batch=fields.get("batch"),
        address_range_bytes=fields.get("in"),
        threads=fields.get("threads"),
        machines=fields.get("machines"),
    )


def parse_flows(text: str) -> list[Flow]:
    """Several flows separated by `;` (one trailing `;` is allowed). An empty flow between two `;`
    is refused: it is a typo or a flow lost in editing, never a flow to drop without a word."""
    parts = text.split(";")
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]
    empty = [i for i, part in enumerate(parts, 1) if not part.strip()]
    if empty and len(parts) > 1:
        raise NicbenchError(
            f"flows: flow {empty[0]} of {len(parts)} in {text!r} is empty: separate flows by one ';', "
            "e.g. 'client->soc READ 4KiB; client->host WRITE 64B'"
        )
    flows = [parse_flow(part) for part in parts if part.strip()]
    if not flows:
        raise NicbenchError("flows: expected at least one flow, e.g. 'client->soc READ 4KiB'")
    return flows


# How far the stated shares may sum from 100% (rounding: three flows of 33.3%).
SHARES_SUM_TOLERANCE = 0.005


def check_shares(flows: list[Flow]) -> None:
    """Shares (`x SHARE`) split one mix of requests: when some flow states one, every flow must, and
    they must sum to 100% (within SHARES_SUM_TOLERANCE); otherwise the mix meant is unclear and the
    model's normalisation would silently change the numbers given."""
    stated = [f for f in flows if f.share is not None]
    if not stated:
        return
    missing = [f.label() for f in flows if f.share is None]
    if missing:
        raise NicbenchError(
            f"--flow {missing[0]!r}: no share (x SHARE) while other flows state one; give every "
            "flow its share of the requests (they sum to 100%) or none"
        )
    total = sum(f.share for f in stated)
    if abs(total - 1.0) > SHARES_SUM_TOLERANCE:
        parts = " + ".join(f"{f.share * 100:.4g}%" for f in stated)
        raise NicbenchError(
            f"--flow: the shares sum to {total * 100:.4g}% ({parts}); they are fractions of "
            "one mix of requests and must sum to 100%"
        )


def default_mix(flows: list[Flow]) -> str:
    """`shares` when some flow states its share of the requests (`x SHARE`: one application's mix),
    else `max_min` (independent requesters, each as fast as the NIC lets it)."""
    return "shares" if any(f.share is not None for f in flows) else "max_min"


def _check_mix(mix: str | None) -> None:
    if mix is not None and mix not in MIX_MODES:
        raise NicbenchError(f"offpath: unknown mix {mix!r} (known: {', '.join(MIX_MODES)})")


def request(
    nic: str,
    flows: list[Flow | dict[str, Any] | str],
    overrides: dict[str, float] | None = None,
    mix: str | None = None,
    context_overrides: bool = True,
) -> dict[str, Any]:
    """The request JSON object for `flows` on `nic` (calibration overrides merged in unless
    `context_overrides` is False — a baseline profile compared with the calibrated one; `mix`: see
    the module doc, None = the model's default, `shares`)."""
    if not flows:
        raise NicbenchError("offpath: at least one flow is needed")
    _check_mix(mix)
    items = []
    for f in flows:
        if isinstance(f, str):
            f = parse_flow(f)
        items.append(f.to_request() if isinstance(f, Flow) else dict(f))
    out: dict[str, Any] = {"nic": nic, "flows": items}
    if mix is not None:
        out["mix"] = mix
    merged = {**(overrides_for(nic) if context_overrides else {}), **(overrides or {})}
    if merged:
        out["overrides"] = merged
    return out


def predict(
    nic: str,
    flows: list[Flow | dict[str, Any] | str],
    overrides: dict[str, float] | None = None,
    mix: str | None = None,
    context_overrides: bool = True,
) -> dict[str, Any]:
    """Predict throughput, latency, PCIe packet rates, the bottleneck and the advice for a mix of flows.

    `flows`: Flow objects, flow strings (`"client->soc READ 4KiB x 80%"`) or request dicts.
    Bad input raises `NicbenchError` (a ValueError) with a one-line message.
    """
    return models.run("offpath", request(nic, flows, overrides, mix, context_overrides))


def same_profile(a: str, b: str) -> bool:
    """True when two `nic` arguments name the same profile (`bluefield2` and `.../bluefield2.toml`)."""
    return Path(str(a)).stem == Path(str(b)).stem


def bottleneck_class(resource: str | None) -> str:
    """The paper's word for a model resource: `network_out` → `network`, `pcie1_up` → `pcie`,
    `nic_cores_soc` → `nic_cores`, `soc_dram_bw` → `soc_dram`; unknown names map to themselves."""
    if not resource:
        return ""
    for cls in sorted(BOTTLENECK_CLASSES, key=len, reverse=True):
        if resource == cls or resource.startswith(cls + "_") or (cls == "pcie" and resource.startswith("pcie")):
            return cls
    return resource
