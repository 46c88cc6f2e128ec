"""The `nicbench advise --report PAGE` page: per NIC, a figure of the user's scenario beside each
advice's what-if (received Gb/s, and loss where the model has one), then the advice with its
mechanism, source and command, and the lint. Self-contained (figures inline as PNG), as the
experiment reports are."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from nicbench.outputs import atomic_output
from nicbench.report.html import page, table

__all__ = ["advice_report"]


def _figure(nic: dict[str, Any]) -> str:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = ["your scenario", *(a["id"] for a in nic["advice"])]
    gbps = [nic["predicted"].get("rx_gbps") or 0.0, *(a["predicted"].get("rx_gbps") or 0.0 for a in nic["advice"])]
    fig, ax = plt.subplots(figsize=(7.5, 0.6 + 0.45 * len(labels)))
    bars = ax.barh(range(len(labels)), gbps, color=["#888888", *["#2a7ab0"] * (len(labels) - 1)])
    ax.set_yticks(range(len(labels)), labels)
    ax.invert_yaxis()
    ax.set_xlabel("received [Gb/s]")
    ax.set_title(f"{nic['nic']}: your scenario and each what-if")
    ax.bar_label(bars, labels=[f"{g:.3g}" for g in gbps], padding=3, fontsize=8)
    ax.set_xlim(0, max(gbps + [1e-9]) * 1.18)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode()
    title = html.escape(f"{nic['nic']}: received Gb/s, your scenario and each what-if")
    return f'<figure><img alt="{title}" src="data:image/png;base64,{data}"><figcaption>{title}</figcaption></figure>'


def _fmt(v: Any) -> str:
    return "–" if not isinstance(v, (int, float)) else f"{v:.4g}"


def advice_report(report: dict[str, Any], out: str | Path) -> Path:
    """Write the page for an `advise` report to `out` (atomically); returns its path."""
    body = ["<h1>nicbench advise</h1>"]
    for nic in report["nics"]:
        p = nic["predicted"]
        body.append(f"<h2>{html.escape(nic['nic'])}</h2>")
        body.append(f"<p><code>{html.escape(nic['command'])}</code></p>")
        body.append(
            f"<p>received {_fmt(p.get('rx_gbps'))} Gb/s, lost {_fmt(p.get('loss_ratio'))}, "
            f"bottleneck {html.escape(str(p.get('bottleneck')))}</p>"
        )
        body.append(_figure(nic))
        if nic["lint"]:
            body.append("<h3>What it cannot take</h3>")
            body.append(
                table(
                    ["line", "what", "source"],
                    [["–" if i["line"] is None else str(i["line"]), i["what"], i["source"]] for i in nic["lint"]],
                )
            )
        if nic["advice"]:
            body.append("<h3>Advice, by predicted gain</h3>")
            body.append(
                table(
                    ["advice", "change", "received Gb/s", "gain Gb/s", "because", "source", "command"],
                    [
                        [
                            a["id"],
                            a["change"],
                            _fmt(a["predicted"].get("rx_gbps")),
                            _fmt(a["gain"]["rx_gbps"]),
                            a["because"],
                            a["source"],
                            a["command"],
                        ]
                        for a in nic["advice"]
                    ],
                )
            )
        else:
            body.append("<p>No what-if tried helps this scenario.</p>")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(out) as temp:
        temp.write_text(page("nicbench advise", body), encoding="utf-8")
    return out
