"""`--updates` for `advise`: a user's rule-update pattern in words, as `simulate`'s installer flags.

    insert 20k/s same-core        rules inserted at 20K/s by the forwarding core of queue 0
    batch 100k distinct-core      one batch of 100K inserts from a core that polls no queue
    modify 10k/s group 1          rules modified (delete + insert) at 10K/s in table 1
    update_inplace 10k/s          the in-place update API (rte_flow_actions_update)

Words, in any order: an operation (insert, delete, modify = update, update_inplace; default insert),
either RATE/s or `batch N`, `same-core` or `distinct-core` (default same-core: the PAM'21 NF's
case), `group G` (default 0, the root table), what the rules match: `ipv4` (default), `ipv6`, `vlan`
or `tunnel` (VXLAN network slices).
"""

from __future__ import annotations

from nicbench.errors import NicbenchError
from nicbench.units import parse_count

OPS = {
    "insert": "insert",
    "delete": "delete",
    "modify": "update",
    "update": "update",
    "update_inplace": "update_inplace",
}
CORES = {"same-core": "same", "distinct-core": "distinct"}
# What the updated rules match (simulate's --install-match): seed 001 measured each.
MATCHES = ("ipv4", "ipv6", "vlan", "tunnel")
EXAMPLE = "'insert 20k/s same-core', 'batch 100k distinct-core', 'modify 10k/s group 1'"


def parse_updates(text: str) -> list[str]:
    """`simulate` flags for an update pattern (see the module doc); NicbenchError naming the word."""
    words = text.split()
    if not words:
        raise NicbenchError(f"--updates: empty; give a pattern such as {EXAMPLE}")
    flags: dict[str, str] = {}
    i = 0
    while i < len(words):
        w = words[i].lower()
        if w in OPS:
            flags["--install-op"] = OPS[w]
        elif w in CORES:
            flags["--install-core"] = CORES[w]
        elif w in MATCHES:
            flags["--install-match"] = w
        elif w == "batch" and i + 1 < len(words):
            flags["--install-batch"] = str(parse_count(words[i + 1], what="--updates batch", at_least=1))
            i += 1
        elif w == "group" and i + 1 < len(words) and words[i + 1].isdigit():
            flags["--install-group"] = words[i + 1]
            i += 1
        elif w.endswith("/s"):
            flags["--install-rate"] = w
        else:
            raise NicbenchError(
                f"--updates: {words[i]!r} is not an operation ({', '.join(OPS)}), a rate (20k/s), 'batch N', "
                f"'same-core'/'distinct-core', a match ({', '.join(MATCHES)}) or 'group G'; e.g. {EXAMPLE}"
            )
        i += 1
    if ("--install-rate" in flags) == ("--install-batch" in flags):
        raise NicbenchError(f"--updates {text!r}: give either a rate (20k/s) or 'batch N'; e.g. {EXAMPLE}")
    flags.setdefault("--install-core", "same")
    return [part for kv in flags.items() for part in kv]
