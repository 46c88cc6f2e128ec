"""The off-path model's options: `nicbench paths`'s flags and the `offpath.*` targets' parameters.

`OPTIONS` is the table (see `nicbench.options`). The command line gives its flows as `--flow` text
(`PATH VERB SIZE [x SHARE] [@ RATE] [batch N] [in RANGE] [threads N] [machines N]`, repeatable),
which is `offpath.mix`'s `flows` (`;`-separated); `offpath.single` takes one flow's fields as
parameters of their own, with the limits the flow syntax has (`nicbench.offpath`'s constants).
"""

from __future__ import annotations

from nicbench import models, offpath
from nicbench.options import Option, Options

__all__ = ["OPTIONS", "MAX_DOORBELL_BATCH"]

MAX_DOORBELL_BATCH = offpath.MAX_DOORBELL_BATCH

OPTIONS = Options(
    [
        Option(
            "nic",
            "str",
            offpath.DEFAULT_NIC,
            "Off-path profile: bluefield2, connectx6-rnic (the RNIC baseline) or a .toml path.",
            flag="--nic",
            profile_kinds=models.profile_kinds("offpath"),
        ),
        Option(
            "flows",
            "str",
            "client->host READ {payload}; client->soc READ {payload}",
            "PATH VERB SIZE [x SHARE] [@ RATE] [batch N] [in RANGE] [threads N] [machines N], e.g. "
            "'client->soc READ 4KiB x 80%'. Paths: client->host, client->soc, host->soc, soc->host; verbs: READ, "
            "WRITE, SEND. Repeatable (or several in one, separated by ;): the flows run concurrently.",
            flag="--flow",
            cli_default=None,
            cli_multiple=True,
            cli_metavar="FLOW",
        ),
        Option(
            "mix",
            "choice",
            "max_min",
            "How the flows share the NIC. shares: one application's request mix "
            "(x SHARE = fraction of the requests, solved jointly). max_min: independent requesters, each grows "
            "until a resource it uses saturates (weights: the shares, else machines x threads).",
            flag="--mix",
            cli_default=None,
            choices=offpath.MIX_MODES,
            cli_note="Default: shares if some flow gives x SHARE, else max_min.",
        ),
        Option("path", "choice", "client->host", "Communication path.", choices=offpath.PATHS),
        Option("verb", "choice", "READ", "RDMA verb (SEND = SEND/RECV echo).", choices=offpath.VERBS),
        Option("payload", "size_bytes", 64, "Request payload.", minimum=0, maximum=offpath.MAX_PAYLOAD_BYTES),
        Option(
            "doorbell_batch",
            "int",
            1,
            "Requests posted per MMIO doorbell (a flow's `batch N`).",
            minimum=1,
            maximum=MAX_DOORBELL_BATCH,
        ),
        Option(
            "address_range",
            "size_bytes",
            None,
            "Address range the requests hit (none: 10 GB random; a flow's `in RANGE`).",
            minimum=1,
            none_word="none",
        ),
        Option(
            "threads",
            "int",
            None,
            "Requester threads per machine (none: the model's default).",
            minimum=1,
            maximum=offpath.MAX_THREADS,
            none_word="none",
        ),
        Option(
            "machines",
            "int",
            None,
            "Requester machines (none: the model's default).",
            minimum=1,
            maximum=offpath.MAX_MACHINES,
            none_word="none",
        ),
        Option(
            "offered",
            "rate_pps",
            None,
            "Open-loop offered load (none: closed-loop peak; a flow's `@ RATE`).",
            none_word="none",
        ),
    ]
)
