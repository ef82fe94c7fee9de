"""Write saturation: per-interval IOPS against time or data written, phases marked
(SNIA PTS write saturation; the seeds' per-second scatter plots)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from .figure import (
    axes_for,
    docs_and_labels,
    finish,
    lazy_numpy,
    legend,
    new_figure,
    nothing,
    null_locator,
    palette,
    record,
    skip,
)

_PHASE_STYLE = {"fob_end": "--", "steady_start": ":"}
_PHASE_NAME = {"fob_end": "fresh-out-of-box ends", "steady_start": "steady state from"}


def _rolling_median(y, window: int):
    np = lazy_numpy()

    n = len(y)
    h = window // 2
    out = np.empty(n)
    for i in range(n):
        out[i] = np.median(y[max(0, i - h) : i + h + 1])
    return np.where(out > 0, out, np.nan)


def _draw_iops_line(ax, rec, xs, iops, label: str, color, smooth: int | None):
    """The per-interval IOPS line (or faint dots and their running median); the median or None."""
    np = lazy_numpy()

    y = np.where(iops <= 0, np.nan, iops)
    med = None
    if smooth:
        ax.plot(xs, y, color=color, lw=0, marker=".", ms=1.5, alpha=0.3, gid=f"points:{len(rec['series'])}")
        med = _rolling_median(iops, int(smooth))
        (line,) = ax.plot(xs, med, color=color, lw=1.6, label=label)
    else:
        (line,) = ax.plot(xs, y, color=color, lw=0.8, marker="." if len(xs) <= 400 else None, ms=2.5, label=label)
    line.set_gid(f"series:{len(rec['series'])}")
    return med


def _draw_zero_intervals(ax, rec, xs, zero, color) -> None:
    """Intervals with no completion: triangles on the bottom edge (a log axis has no zero)."""
    np = lazy_numpy()

    ax.plot(
        xs[zero],
        np.zeros(int(zero.sum())),
        linestyle="none",
        marker="v",
        ms=4,
        color=color,
        transform=ax.get_xaxis_transform(),
        clip_on=False,
        gid=f"zeros:{len(rec['series'])}",
    )


def _draw_phase_markers(ax, rec, ph: dict, ts, xs, x: str, label: str, color) -> None:
    """A line in the result's colour where fresh-out-of-box ends and where steady state starts."""
    np = lazy_numpy()

    for phase in ("fob_end", "steady_start"):
        t = ph[f"{phase}_s"]
        if t is None:
            continue
        px = float(t) if x == "time" else float(np.interp(t, ts, xs))
        ax.axvline(
            px, color=color, ls=_PHASE_STYLE[phase], lw=1.1, alpha=0.8, gid=f"phase:{phase}:{len(rec['series']) - 1}"
        )
        rec["markers"].append({"label": label, "phase": phase, "x": px, "t_s": float(t)})


def _draw_saturation_series(ax, rec, doc: dict, label: str, color, x: str, smooth, shade: bool) -> bool | None:
    """One result's series with its phases; None when it has nothing to draw (listed as skipped),
    else whether it has intervals with no completion."""
    np = lazy_numpy()

    s = result_docs.series(doc)
    if s is None:
        skip(
            rec,
            label,
            "no per-interval IOPS series (a functional simulation: add a [timing] "
            "table or a preset for the timed model)",
        )
        return None
    ts = np.asarray(s["t_s"])
    if x == "time":
        xs = ts
    else:
        if s["written_dw"] is None:
            skip(rec, label, "capacity unknown: cannot express data written in drive writes")
            return None
        xs = np.asarray(s["written_dw"])
    iops = np.asarray(s["iops"], dtype=float)
    zero = iops <= 0
    med = _draw_iops_line(ax, rec, xs, iops, label, color, smooth)
    if zero.any():
        _draw_zero_intervals(ax, rec, xs, zero, color)
    ph = result_docs.phases(doc)
    entry = {
        "label": label,
        "source": result_docs.kind_of(doc),
        "x": xs.tolist(),
        "y": iops.tolist(),
        "points": len(xs),
        "zero_intervals": int(zero.sum()),
        "phases": ph,
    }
    if smooth:
        entry["smoothed"] = {"window": int(smooth), "y": [None if math.isnan(v) else float(v) for v in med]}
    rec["series"].append(entry)
    _draw_phase_markers(ax, rec, ph, ts, xs, x, label, color)
    if shade:
        _shade_phases(ax, ph, ts, xs, x)
    return bool(zero.any())


def _saturation_legend(ax, rec, any_zero: bool) -> None:
    """The results, and the phase lines and no-completion triangles drawn."""
    extra = [
        {"ls": _PHASE_STYLE[p], "label": _PHASE_NAME[p]}
        for p in ("fob_end", "steady_start")
        if any(m["phase"] == p for m in rec["markers"])
    ]
    if any_zero:
        extra.append({"ls": "none", "marker": "v", "label": "no completion in the interval"})
    legend(ax, extra, loc="best", ncol=2 if len(rec["series"]) > 5 else 1)


def saturation(
    results,
    labels: Sequence[str] | None = None,
    x: str = "time",
    ax=None,
    shade: bool | None = None,
    smooth: int | None = None,
    title: str | None = None,
):
    """Write saturation: per-interval IOPS against time (``x="time"``) or host data written
    (``x="written"``, in drive writes), log y axis, overlaid results, phases marked: a dashed
    line where fresh-out-of-box ends, a dotted line where steady state starts (in each
    result's colour); with one result (or ``shade=True``) the FOB, transition and steady
    spans are shaded and named.  ``smooth=N``: the intervals become faint dots and a centred
    running median over N intervals is drawn as the line (for many overlaid, noisy series).  Intervals with no completion cannot sit on a log axis: they
    are drawn as triangles on the bottom edge and counted in the record."""
    if x not in ("time", "written"):
        raise InputError(f"x: {x!r} is not 'time' or 'written'", key="x")
    docs, labels = docs_and_labels(results, labels)
    fig, (ax,) = axes_for(ax)
    kind = "saturation" if x == "time" else "saturation-written"
    rec = record(
        ax,
        kind,
        title or ("Write saturation: IOPS over time" if x == "time" else "Write saturation: IOPS against data written"),
    )
    colors = palette(len(docs))
    drawable = [(d, lab, c) for d, lab, c in zip(docs, labels, colors)]
    shade = (sum(1 for d, _, _ in drawable if result_docs.series(d)) == 1) if shade is None else shade
    zeros = [_draw_saturation_series(ax, rec, doc, label, color, x, smooth, shade) for doc, label, color in drawable]
    ax.set_yscale("log")
    ax.set_xlabel("time (s)" if x == "time" else "host data written (drive writes = multiples of the user capacity)")
    ax.set_ylabel("IOPS per interval (log scale)")
    ax.grid(True, which="both", alpha=0.25)
    if rec["series"]:
        _saturation_legend(ax, rec, any(zeros))
    else:
        nothing(ax, rec)
    finish(ax, rec)
    return fig


def saturation_panels(
    results, labels: Sequence[str] | None = None, x: str = "time", ncols: int = 2, title: str | None = None
):
    """Write saturation as small multiples: one panel per result (phases shaded), the same x
    and y axes on every panel, like the seeds' one-chart-per-configuration figures."""
    np = lazy_numpy()

    docs, labels = docs_and_labels(results, labels)
    n = len(docs)
    ncols = max(1, min(ncols, n))
    nrows = -(-n // ncols)
    fig, _ = new_figure(1, width=5.0 * ncols, height=2.9 * nrows)
    fig.clear()
    # the same y axis on every panel; each panel its own time (runs at more OP are shorter)
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel().tolist()
    for doc, label, axx in zip(docs, labels, axes):
        saturation([doc], [label], x=x, ax=axx, shade=True, title=label)
        axx.opsim_drawn["kind"] = "saturation-panels"
        axx.grid(False, which="minor")  # minor log ticks on every panel cost seconds to lay out
        axx.yaxis.set_minor_locator(null_locator())
        if axx.get_legend():
            axx.get_legend().remove()
    for axx in axes[n:]:
        axx.set_visible(False)
    ys = [v for axx in axes[:n] for srs in axx.opsim_drawn["series"] for v in srs["y"] if v > 0]
    if ys:
        axes[0].set_ylim(min(ys) / 1.5, max(ys) * 1.5)
    for i, axx in enumerate(axes[:n]):  # the records keep every label; the figure shows the outer ones
        xs = [v for srs in axx.opsim_drawn["series"] for v in srs["x"]]
        if xs:
            axx.set_xlim(min(0.0, float(np.min(xs))), float(np.max(xs)))
        if i + ncols < n:
            axx.set_xlabel("")
        if i % ncols:
            axx.set_ylabel("")
    for axx in axes[:n]:  # name only the spans wide enough to hold their name
        lo, hi = axx.get_xlim()
        spans = {sp["phase"]: sp for sp in axx.opsim_drawn.get("spans", [])}
        for t in axx.texts:
            gid = t.get_gid() or ""
            if gid.startswith("spanlabel:"):
                sp = spans.get(gid.split(":", 1)[1])
                if sp and (sp["x1"] - sp["x0"]) < 0.08 * (hi - lo):
                    t.set_visible(False)
    if title:
        fig.suptitle(title, fontsize=11)
    return fig


def _shade_phases(ax, ph, ts, xs, x):
    np = lazy_numpy()

    def to_x(t):
        return float(t) if x == "time" else float(np.interp(t, ts, xs))

    x0 = 0.0
    x_end = float(xs[-1])
    spans = []
    fob, steady = ph["fob_end_s"], ph["steady_start_s"]
    if fob is not None:
        spans.append(("FOB", x0, to_x(fob), "#2ca02c"))
        if steady is not None and steady > fob:
            spans.append(("transition", to_x(fob), to_x(steady), "#ff7f0e"))
            spans.append(("steady", to_x(steady), x_end, "#1f77b4"))
        elif steady is None:
            spans.append(("transition", to_x(fob), x_end, "#ff7f0e"))
    elif steady is not None:
        spans.append(("steady", to_x(steady), x_end, "#1f77b4"))
    for name, a, b, color in spans:
        if b <= a:
            continue
        ax.axvspan(a, b, color=color, alpha=0.07, lw=0, gid=f"span:{name}")
        ax.text(
            (a + b) / 2,
            0.98,
            name,
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=8,
            color=color,
            gid=f"spanlabel:{name}",
        )
        ax.opsim_drawn.setdefault("spans", []).append({"phase": name, "x0": a, "x1": b})
