"""A trace's write-frequency curve (opsim trace profile) with its fitted workload's."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from ..results import check_trace_profile as check_doc
from .figure import axes_for, finish, palette, record


def write_curve(profiles, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """The write-frequency curve of trace profiles (``opsim trace profile --json`` documents or
    :class:`opsim.trace_profile.TraceProfile`): the share of the writes taken by the hottest
    share of the written blocks (log x), the fitted workload's expected curve dashed when the
    document has a fit, and the diagonal (every block written equally)."""
    if isinstance(profiles, dict) or hasattr(profiles, "data"):
        profiles = [profiles]
    docs = [check_doc(getattr(p, "data", p), f"profile {i + 1}") for i, p in enumerate(profiles)]
    if not docs:
        raise InputError("no trace profiles to plot", key="results")
    labels = [os.path.basename(d["path"]) for d in docs] if labels is None else [str(x) for x in labels]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} profiles", key="labels")
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "write-curve", title or "Write-frequency curve (hottest blocks first)")
    for i, (doc, label, color) in enumerate(zip(docs, labels, palette(len(docs)))):
        pts = [(c["blocks"], c["writes"]) for c in doc["curve"] if c["blocks"] > 0]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        ax.plot(xs, ys, color=color, lw=1.4, label=label, gid=f"series:{i}")
        entry: dict[str, Any] = {"label": label, "source": "trace profile", "x": xs, "y": ys}
        fit = doc.get("fit")
        if fit and fit.get("curve"):
            fx = [p[0] for p in fit["curve"] if p[0] > 0]
            fy = [p[1] for p in fit["curve"] if p[0] > 0]
            ax.plot(fx, fy, color=color, lw=1.0, ls="--", label=f"{label}: fit {fit['skew']}", gid=f"model:{i}")
            rec["models"].append(
                {"name": f"{label}: fit {fit['skew']}", "skew": fit["skew"], "error": fit["error"], "x": fx, "y": fy}
            )
        rec["series"].append(entry)
    lo = min([s["x"][0] for s in rec["series"] if s["x"]] + [1e-3])
    ax.plot([lo, 1], [lo, 1], color="0.6", lw=0.8, ls=":", label="uniform (no skew)")
    ax.set_xscale("log")
    ax.set_xlim(lo, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("share of the written 4 KiB blocks, hottest first")
    ax.set_ylabel("share of the block writes")
    ax.legend(fontsize=8, loc="upper left")
    finish(ax, rec)
    return fig
