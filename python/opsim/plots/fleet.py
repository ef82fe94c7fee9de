"""Buy or over-provision: cost per usable TB-year against the share held back, one line per
candidate drive (``opsim advise --compare FILE --json`` documents)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from ..results import check_compare as check_doc
from .figure import axes_for, finish, legend, palette, percent_formatter, record, skip


def fleet_cost(comparisons, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Each candidate of each comparison: the cost per usable TB-year of a fleet bought for
    capacity alone (``ceil(usable / usable per drive)`` drives) at every share of the native
    capacity held back; solid where the analytic screen says that fleet meets the need, dotted
    where it does not; the candidate's answer (the advisor's, at its drive count) a filled dot
    with its range, the choice a star.  ``labels``: one per comparison, put before the names
    when there are several."""
    if isinstance(comparisons, dict):
        comparisons = [comparisons]
    docs = [check_doc(c, f"comparison {i + 1}") for i, c in enumerate(comparisons)]
    if not docs:
        raise InputError("no comparisons to plot", key="results")
    if labels is not None and len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} comparisons", key="labels")
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "fleet-cost", title or "Buy or over-provision: cost per usable TB-year")
    cands = [(i, c) for i, d in enumerate(docs) for c in d["candidates"]]
    for (i, c), color in zip(cands, palette(len(cands))):
        name = c["name"] if labels is None or len(docs) == 1 else f"{labels[i]}: {c['name']}"
        _candidate(ax, rec, c, name, color, docs[i].get("choice"))
    ax.xaxis.set_major_formatter(percent_formatter())
    ax.set_xlabel("share of the native capacity held back")
    ax.set_ylabel("cost per usable TB-year")
    legend(
        ax,
        [
            {"ls": ":", "label": "fleet misses the need (screen)"},
            {"ls": "", "marker": "o", "label": "the answer (its range)"},
            {"ls": "", "marker": "*", "markersize": 10, "label": "the choice"},
        ],
        loc="best",
    )
    finish(ax, rec)
    return fig


def _candidate(ax, rec: dict, c: dict, name: str, color, choice: dict | None) -> None:
    pts = c["curve"]
    if not pts:
        skip(rec, name, "no level of the drive leaves garbage collection spare")
        return
    xs = [p["held_back"] for p in pts]
    ys = [p["cost_per_usable_tb_year"] for p in pts]
    meets = [bool(p["meets"]) for p in pts]
    ax.plot(xs, ys, color=color, lw=0.9, ls=":", gid=f"misses:{name}")
    ok_y = [y if m else float("nan") for y, m in zip(ys, meets)]
    ax.plot(xs, ok_y, color=color, lw=1.6, label=name, gid=f"series:{name}")
    entry: dict[str, Any] = {"label": name, "source": "analytic screen", "x": xs, "y": ys, "meets": meets}
    rec["series"].append(entry)
    if not c["feasible"]:
        skip(rec, f"{name}: answer", "cannot meet the need at any OP allowed")
        return
    x, y = c["held_back"], c["cost_per_usable_tb_year"]
    lo, hi = c["cost_per_usable_tb_year_low"], c["cost_per_usable_tb_year_high"]
    ax.errorbar(
        [x],
        [y],
        yerr=[[y - lo], [0.0 if hi is None else hi - y]],
        fmt="o",
        color=color,
        capsize=3,
        gid=f"answer:{name}",
    )
    chosen = choice is not None and choice["name"] == c["name"]
    if chosen:
        ax.plot([x], [y], marker="*", markersize=14, color=color, markeredgecolor="black", gid=f"choice:{name}")
    rec["markers"].append(
        {"label": name, "phase": "choice" if chosen else "answer", "x": x, "y": y, "low": lo, "high": hi}
    )
