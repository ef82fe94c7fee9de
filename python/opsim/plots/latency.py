"""Latency CDF from the percentiles a result carries (log x, logit y)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from .figure import axes_for, docs_and_labels, finish, legend, nothing, null_locator, palette, record, skip

LATENCY_PCTS = result_docs.LATENCY_PERCENTILES


def latency(results, labels: Sequence[str] | None = None, direction: str = "all", ax=None, title: str | None = None):
    """Latency CDF from the percentiles the results carry (p50 ... p99.99; simulated: the
    timed model's histogram over the measurement window; measured: fio's clat), log x,
    logit y (the tail percentiles spread out); the maximum is a cross at the plotting
    position 1 - 0.5/count when the count is known."""
    if direction not in ("all", "read", "write"):
        raise InputError(f"direction: {direction!r} is not all, read or write", key="direction")
    docs, labels = docs_and_labels(results, labels)
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "latency", title or f"Latency CDF ({direction} IOs)")
    colors = palette(len(docs))
    for doc, label, color in zip(docs, labels, colors):
        lat = result_docs.latency(doc, direction)
        if lat is None:
            skip(rec, label, f"no {direction} latency percentiles (functional simulation, or no such IOs)")
            continue
        xs, ys = [], []
        for key, q in LATENCY_PCTS:
            v = lat.get(key)
            if v is not None and v > 0:
                xs.append(float(v))
                ys.append(q)
        ax.plot(xs, ys, color=color, marker="o", ms=3.5, lw=1.2, label=label, gid=f"series:{len(rec['series'])}")
        entry = {
            "label": label,
            "source": result_docs.kind_of(doc),
            "x": xs,
            "y": ys,
            "max_us": lat.get("max"),
            "count": lat.get("count"),
        }
        if lat.get("max") and lat.get("count"):
            qmax = 1.0 - 0.5 / lat["count"]
            ax.plot(
                [lat["max"]], [qmax], color=color, marker="x", ms=6, linestyle="none", gid=f"max:{len(rec['series'])}"
            )
            entry["max_q"] = qmax
        rec["series"].append(entry)
    ax.set_xscale("log")
    ax.set_yscale("logit")
    qs = [q for s in rec["series"] for q in s["y"] + ([s["max_q"]] if "max_q" in s else [])]
    top = max([*qs, 0.9999])
    ticks = [(q, name) for name, q in LATENCY_PCTS] + [
        (1 - 10.0**-k, f"p{100 * (1 - 10.0**-k):.{k - 2}f}") for k in range(5, 9)
    ]
    ticks = [(q, name) for q, name in ticks if q <= top * (1 + 1e-12) or q <= 0.9999]
    ax.set_ylim(0.3, 1 - (1 - top) / 3)
    ax.set_yticks([q for q, _ in ticks], [n for _, n in ticks])
    ax.yaxis.set_minor_locator(null_locator())
    ax.set_xlabel("latency (microseconds, log scale)")
    ax.set_ylabel("fraction of IOs completed within (logit scale)")
    ax.grid(True, which="both", alpha=0.25)
    if rec["series"]:
        maximum = any("max_q" in s for s in rec["series"])
        legend(ax, [{"marker": "x", "ls": "none", "label": "maximum"}] if maximum else [], loc="lower right")
    else:
        nothing(ax, rec)
    finish(ax, rec)
    return fig
