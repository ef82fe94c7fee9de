"""What garbage collection did to the blocks: erase-count distribution and the victims' valid fraction."""

from __future__ import annotations

from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from .figure import (
    axes_for,
    docs_and_labels,
    finish,
    lazy_models,
    lazy_numpy,
    legend,
    nothing,
    palette,
    percent_formatter,
    record,
    skip,
)


def wear(results, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Erase-count distribution (``wear.histogram``): share of blocks at each erase count."""
    docs, labels = docs_and_labels(results, labels)
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "wear", title or "Erase counts: distribution over blocks")
    colors = palette(len(docs))
    for doc, label, color in zip(docs, labels, colors):
        if result_docs.kind_of(doc) != result_docs.SIM:
            skip(rec, label, "measured result: no per-block erase counts")
            continue
        h = doc["wear"]["histogram"]
        total = sum(n for _, n in h)
        xs = [int(c) for c, _ in h]
        ys = [n / total for _, n in h]
        ax.plot(
            xs,
            ys,
            drawstyle="steps-mid",
            color=color,
            lw=1.2,
            marker="." if len(xs) < 40 else None,
            label=f"{label} (mean {doc['wear']['mean']:.1f})",
            gid=f"series:{len(rec['series'])}",
        )
        rec["series"].append(
            {
                "label": label,
                "source": "sim",
                "x": xs,
                "y": ys,
                "blocks": total,
                "min": doc["wear"]["min"],
                "mean": doc["wear"]["mean"],
                "max": doc["wear"]["max"],
            }
        )
    ax.set_xlabel("erase count (program/erase cycles of the run)")
    ax.set_ylabel("share of blocks")
    ax.grid(True, alpha=0.25)
    if rec["series"]:
        ax.legend(fontsize=7)
    else:
        nothing(ax, rec)
    finish(ax, rec)
    return fig


def _draw_victims(ax, rec, doc: dict, label: str, color, bins: int) -> None:
    """One result's victims per bin of valid fraction, and the model's mean as a dotted line."""
    np = lazy_numpy()

    analytic = lazy_models()

    if result_docs.kind_of(doc) != result_docs.SIM:
        skip(rec, label, "measured result: no GC victim data")
        return
    h = np.asarray(doc["victims"]["valid_histogram"], dtype=float)
    if h.sum() == 0:
        skip(rec, label, "no block was collected in the measurement window")
        return
    # entry i counts the victims with i x w .. i x w + w - 1 valid pages (w = 1: exact; units of
    # more than 1,024 pages are reported in bins of w)
    w = int(doc["victims"].get("valid_histogram_bin_pages", 1))
    b = len(h) - 1 if w == 1 else int(doc["drive"]["pages_per_block"])
    nb = min(bins, len(h))
    edges = np.linspace(0, b + 1, nb + 1)
    mid = np.minimum(np.arange(len(h)) * w + (w - 1) // 2, b)  # an entry's (middle) valid count
    idx = np.minimum((mid * nb) // (b + 1), nb - 1)
    counts = np.bincount(idx, weights=h, minlength=nb)
    centers = ((edges[:-1] + edges[1:]) / 2 - 0.5) / b
    share = counts / counts.sum()
    ax.plot(centers, share, drawstyle="steps-mid", color=color, lw=1.2, label=label, gid=f"series:{len(rec['series'])}")
    mean = doc["victims"]["mean_valid_fraction"]
    entry = {
        "label": label,
        "source": "sim",
        "x": centers.tolist(),
        "y": share.tolist(),
        "victims": int(h.sum()),
        "mean_valid_fraction": mean,
        "pages_per_block": b,
    }
    try:
        wm = analytic.waf(doc["gc"], doc["op"]["effective"], b)
        entry["model_mean_valid_fraction"] = 1 - 1 / wm
        ax.axvline(1 - 1 / wm, color=color, ls=":", lw=1.2, gid=f"model:{len(rec['series'])}")
    except InputError:  # no analytic model for this policy
        entry["model_mean_valid_fraction"] = None
    rec["series"].append(entry)


def victims(results, labels: Sequence[str] | None = None, ax=None, bins: int = 200, title: str | None = None):
    """Valid fraction of the blocks GC collected (``victims.valid_histogram``, measurement
    window), as the share of victims per bin of valid fraction; a dotted line marks the
    analytic model's mean victim valid fraction, 1 - 1/WAF (greedy, FIFO, random)."""
    docs, labels = docs_and_labels(results, labels)
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "victims", title or "Garbage-collection victims: valid fraction")
    colors = palette(len(docs))
    for doc, label, color in zip(docs, labels, colors):
        _draw_victims(ax, rec, doc, label, color, bins)
    occupied = [x for s in rec["series"] for x, y in zip(s["x"], s["y"]) if y > 0]
    occupied += [s["model_mean_valid_fraction"] for s in rec["series"] if s["model_mean_valid_fraction"] is not None]
    if occupied:  # zoom on where the victims are (the x axis stays a fraction of the block)
        lo, hi = min(occupied), max(occupied)
        pad = max(0.02, 0.1 * (hi - lo))
        ax.set_xlim(max(0.0, lo - pad), min(1.0, hi + pad))
    else:
        ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(percent_formatter())
    ax.set_xlabel("valid pages in the victim block (fraction of the block)")
    ax.set_ylabel("share of victims")
    ax.grid(True, alpha=0.25)
    if rec["series"]:
        model = any(s.get("model_mean_valid_fraction") is not None for s in rec["series"])
        legend(ax, [{"ls": ":", "label": "model mean (1 - 1/WAF)"}] if model else [], loc="upper left")
    else:
        nothing(ax, rec)
    finish(ax, rec)
    return fig
