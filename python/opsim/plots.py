"""Plots of simulated and measured results (matplotlib, Agg; nothing is shown on a display).

Every function takes a list of results (``SimResult``, a simulation result dict, or an
``opsim measure`` result dict), optional ``labels`` and an optional matplotlib ``ax`` to draw
into, and returns the Figure.  What was drawn (axis labels and scales, every series' x and y,
the phase markers, the model curves, and what was left out and why) is recorded on each Axes
and returned by :func:`drawn`; ``opsim plot --json`` prints it and the tests check it.

    >>> from opsim import plots
    >>> fig = plots.saturation([r1, r2], labels=["7% OP", "28% OP"])
    >>> plots.save(fig, "wsat.png")
    >>> plots.drawn(fig)[0]["series"][0]["y"][:3]

Kinds (:data:`KINDS`): ``saturation`` (per-interval IOPS against time), ``saturation-written``
(against host data written, in drive writes), ``waf-op`` (WAF against OP with the analytic
models), ``steady-iops`` (bars), ``endurance`` (TBW and DWPD bars, relative), ``latency``
(CDF), ``wear`` (erase-count distribution), ``victims`` (valid fraction of GC victims),
``tenants`` (per-namespace WAF bars, with and without placement), ``placement-waf`` (WAF
against OP, one line per placement mode).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import Any

from . import results as result_docs
from ._output import atomic_write
from .errors import InputError

_PHASE_STYLE = {"fob_end": "--", "steady_start": ":"}
_PHASE_NAME = {"fob_end": "fresh-out-of-box ends", "steady_start": "steady state from"}


# ----------------------------------------------------------------------------- plumbing


def _mpl():
    try:
        import matplotlib
    except ImportError as e:  # pragma: no cover - a dev dependency
        from .errors import CommandError

        raise CommandError("plots need matplotlib (pip install matplotlib)") from e
    return matplotlib


def new_figure(ncols: int = 1, width: float = 7.5, height: float = 4.4):
    """A Figure on the Agg canvas (no pyplot, no display) with ``ncols`` axes."""
    _mpl()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols if ncols > 1 else width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, i + 1) for i in range(ncols)]
    return fig, axes


def _record(ax, kind: str, title: str) -> dict:
    rec = {
        "kind": kind,
        "title": title,
        "xlabel": "",
        "ylabel": "",
        "xscale": "linear",
        "yscale": "linear",
        "series": [],
        "markers": [],
        "models": [],
        "skipped": [],
    }
    ax.opsim_drawn = rec
    ax.set_title(title, fontsize=10)
    return rec


def _finish(ax, rec: dict) -> None:
    rec["xlabel"], rec["ylabel"] = ax.get_xlabel(), ax.get_ylabel()
    rec["xscale"], rec["yscale"] = ax.get_xscale(), ax.get_yscale()


def drawn(obj) -> list[dict] | dict:
    """What was drawn: for an Axes its record; for a Figure the records of its axes."""
    if hasattr(obj, "opsim_drawn"):
        return obj.opsim_drawn
    return [ax.opsim_drawn for ax in getattr(obj, "axes", []) if hasattr(ax, "opsim_drawn")]


def _docs(results, labels) -> tuple[list[dict], list[str]]:
    if isinstance(results, dict) or hasattr(results, "data"):
        results = [results]
    docs = []
    for i, r in enumerate(results):
        docs.append(result_docs.check(result_docs.as_doc(r), f"result {i + 1}"))
    if not docs:
        raise InputError("no results to plot", key="results")
    if labels is None:
        labels = [result_docs.default_label(d) for d in docs]
    labels = [str(x) for x in labels]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} results", key="labels")
    return docs, labels


def _colors(n: int) -> list:
    _mpl()
    from matplotlib import colormaps

    if n <= 10:
        cmap = colormaps["tab10"]
        return [cmap(i) for i in range(n)]
    cmap = colormaps["viridis"]
    return [cmap(i / max(1, n - 1)) for i in range(n)]


def _axes(ax, ncols=1, **kw):
    if ax is None:
        fig, axes = new_figure(ncols, **kw)
        return fig, axes
    axes = list(ax) if isinstance(ax, (list, tuple)) else [ax]
    if len(axes) != ncols:
        raise InputError(f"ax: this plot needs {ncols} axes, got {len(axes)}", key="ax")
    return axes[0].figure, axes


def save(fig, path: str | os.PathLike, dpi: int = 110) -> str:
    """Write ``fig`` to ``path`` (format from the suffix: png, svg, pdf) atomically."""
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise InputError(f"output: {path}: the file name must end in .png, .svg or .pdf", key="output")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise InputError(f"output: {path}: directory {d} does not exist", key="output")
    atomic_write(path, lambda f: fig.savefig(f, format=fmt, dpi=dpi), binary=True, suffix="." + fmt)
    return path


def to_bytes(fig, fmt: str = "png", dpi: int = 100) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, dpi=dpi)
    return buf.getvalue()


def _skip(rec, label, reason):
    rec["skipped"].append({"label": label, "reason": reason})


def _nothing(ax, rec):
    """No result had what this plot needs: say so on the axes (the record lists why)."""
    ax.text(
        0.5,
        0.5,
        "nothing to draw:\n" + "\n".join(f"{s['label']}: {s['reason']}" for s in rec["skipped"]),
        ha="center",
        va="center",
        transform=ax.transAxes,
        fontsize=8,
        wrap=True,
    )


# ----------------------------------------------------------------------------- saturation


def _rolling_median(y, window: int):
    import numpy as np

    n = len(y)
    h = window // 2
    out = np.empty(n)
    for i in range(n):
        out[i] = np.median(y[max(0, i - h) : i + h + 1])
    return np.where(out > 0, out, np.nan)


def _draw_iops_line(ax, rec, xs, iops, label: str, color, smooth: int | None):
    """The per-interval IOPS line (or faint dots and their running median); the median or None."""
    import numpy as np

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
    import numpy as np

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
    import numpy as np

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
    import numpy as np

    s = result_docs.series(doc)
    if s is None:
        _skip(
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
            _skip(rec, label, "capacity unknown: cannot express data written in drive writes")
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
    from matplotlib.lines import Line2D

    handles, _ = ax.get_legend_handles_labels()
    extra = [
        Line2D([], [], color="0.3", ls=_PHASE_STYLE[p], label=_PHASE_NAME[p])
        for p in ("fob_end", "steady_start")
        if any(m["phase"] == p for m in rec["markers"])
    ]
    if any_zero:
        extra.append(Line2D([], [], color="0.3", ls="none", marker="v", label="no completion in the interval"))
    ax.legend(handles=handles + extra, fontsize=7, loc="best", ncol=2 if len(handles) > 5 else 1)


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
    docs, labels = _docs(results, labels)
    fig, (ax,) = _axes(ax)
    kind = "saturation" if x == "time" else "saturation-written"
    rec = _record(
        ax,
        kind,
        title or ("Write saturation: IOPS over time" if x == "time" else "Write saturation: IOPS against data written"),
    )
    colors = _colors(len(docs))
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
        _nothing(ax, rec)
    _finish(ax, rec)
    return fig


def saturation_panels(
    results, labels: Sequence[str] | None = None, x: str = "time", ncols: int = 2, title: str | None = None
):
    """Write saturation as small multiples: one panel per result (phases shaded), the same x
    and y axes on every panel, like the seeds' one-chart-per-configuration figures."""
    import numpy as np

    docs, labels = _docs(results, labels)
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
        axx.yaxis.set_minor_locator(_null_locator())
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
    import numpy as np

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


# ----------------------------------------------------------------------------- WAF vs OP

MODEL_NAMES = {
    "greedy": "greedy, mean field (Van Houdt 2013)",
    "fifo": "LRW / FIFO (Desnoyers 2012)",
    "random": "random victim, (1+OP)/OP",
}


#: why a simulated result has no WAF to draw
NO_WAF = "WAF undefined: no host writes in the measurement window (a read-only load)"


def _waf_points(docs, labels, rec) -> list[tuple[dict, str]]:
    """The (document, label) of the results with a WAF and an OP; the others listed as skipped."""
    pts = []
    for doc, label in zip(docs, labels):
        if result_docs.kind_of(doc) != result_docs.SIM:
            _skip(rec, label, "measured result: the drive's OP (its NAND) is unknown")
            continue
        if doc["waf"] is None:
            _skip(rec, label, NO_WAF)
            continue
        pts.append((doc, label))
    return pts


def _waf_groups(pts: list[tuple[dict, str]], by: str) -> dict[str, list]:
    """Series name -> its (document, label)s: by GC policy and workload (and placement mode),
    or by placement mode (GC policy and workload join the name only when they differ)."""
    groups: dict[str, list] = {}
    if by == "workload":
        for doc, label in pts:
            mode = placement_of(doc)["mode"]
            name = f"{doc['gc']}, {workload_of(doc)}" + ("" if mode == "none" else f", placement {mode}")
            groups.setdefault(name, []).append((doc, label))
        return groups
    keys = _placement_keys([doc for doc, _ in pts])
    context = {f"{doc['gc']}, {workload_of(doc)}" for doc, _ in pts}
    for (doc, label), key in zip(pts, keys):
        name = key if len(context) == 1 else f"{key}: {doc['gc']}, {workload_of(doc)}"
        groups.setdefault(name, []).append((doc, label))
    return groups


def _draw_waf_series(ax, rec, groups: dict[str, list], by: str, op: str) -> None:
    """Each group's simulated points in OP order: markers (by workload) or joined (by placement)."""
    import numpy as np

    markers = "os^Dv<>P*X"
    colors = _colors(max(1, len(groups)))
    for gi, (gname, members) in enumerate(groups.items()):
        xs = [d["op"][op] for d, _ in members]
        ys = [d["waf"] for d, _ in members]
        order = np.argsort(xs, kind="stable")
        xs_o = [xs[i] for i in order]
        ys_o = [ys[i] for i in order]
        ax.plot(
            xs_o,
            ys_o,
            linestyle="none" if by == "workload" else "-",
            lw=1.4,
            marker=markers[gi % len(markers)],
            ms=6,
            color=colors[gi],
            label=f"simulated: {gname}" if by == "workload" else gname,
            gid=f"series:{gi}",
            zorder=3,
        )
        entry = {"label": gname, "source": "sim", "x": xs_o, "y": ys_o, "points": [members[i][1] for i in order]}
        if by == "placement":
            entry["placement"] = placement_of(members[0][0])["mode"]
        rec["series"].append(entry)


def _draw_waf_models(ax, rec, grid, models: Sequence[str], block_sizes: list, op: str) -> None:
    """The analytic curves over ``grid`` (greedy once per block size); an unknown model is an
    InputError; on the configured-OP axis no curve is drawn (they are functions of the OP GC sees)."""
    from . import models as analytic

    styles = {"greedy": "-", "fifo": "--", "random": "-."}
    for m in models:
        if m not in MODEL_NAMES:
            raise InputError(f"models: no analytic model {m!r} (known: {', '.join(MODEL_NAMES)})", key="models")
        if op != "effective":
            continue
        for b in block_sizes if m == "greedy" else [None]:
            ys = [analytic.waf_greedy(o, b) if m == "greedy" else analytic.waf(m, o) for o in grid]  # type: ignore[arg-type]  # b is a block size when m is greedy
            name = MODEL_NAMES[m] + (f", b = {b}" if b is not None else "")
            ax.plot(
                grid, ys, ls=styles[m], color="0.35" if m != "greedy" else "k", lw=1.2, label=name, gid=f"model:{m}:{b}"
            )
            rec["models"].append(
                {"model": m, "name": name, "pages_per_block": b, "x": grid.tolist(), "y": [float(v) for v in ys]}
            )


def _waf_axes(ax, rec, pts, models, pages_per_block, by: str, op: str) -> None:
    """The models over the points' OP range, and axes limits that hold points and models."""
    import numpy as np

    from . import models as analytic

    ops = [d["op"][op] for d, _ in pts]
    lo, hi = max(min(ops) * 0.6, 0.01), max(ops) * 1.25
    grid = np.geomspace(lo, hi, 48)
    bs = sorted({d["drive"]["pages_per_block"] for d, _ in pts}) if pages_per_block is None else [pages_per_block]
    top = max(d["waf"] for d, _ in pts)
    _draw_waf_models(ax, rec, grid, models, bs, op)
    if rec["models"] or (by == "workload" and op == "effective"):  # room for the models (FIFO's is highest)
        top = max(top, max(analytic.waf_fifo(o) for o in (lo, hi)))
    ax.set_ylim(1.0 if by == "workload" else 0.95, top * 1.15)
    ax.set_xlim(lo, hi)
    ax.legend(fontsize=7, loc="upper right")


def waf_op(
    results,
    labels: Sequence[str] | None = None,
    ax=None,
    models: Sequence[str] = ("greedy", "fifo", "random"),
    pages_per_block: int | None = None,
    title: str | None = None,
    by: str = "workload",
    op: str = "effective",
):
    """WAF against OP: the simulated points (at the OP garbage collection sees, user basis)
    with the analytic curves overlaid (greedy mean field at the results' pages per block,
    LRW/FIFO, random), as in the IBM Zurich chart.  Measured results join when they carry a
    SMART WAF and an OP is known (never: a measured result does not know its drive's NAND),
    so they are listed as skipped.

    ``by``: what makes a series: ``"workload"`` (default: GC policy and workload, and the
    placement mode when a result has one, as separate markers) or ``"placement"`` (one line
    per placement mode, the points joined in OP order: :func:`placement_waf`).  ``op``: the
    x axis, ``"effective"`` (the OP garbage collection sees, default) or ``"user"`` (the
    configured OP, ``op.user``); the analytic models are functions of the former and are
    drawn only on that axis."""
    if by not in ("workload", "placement"):
        raise InputError(f"by: {by!r} is not 'workload' or 'placement'", key="by")
    if op not in ("effective", "user"):
        raise InputError(f"op: {op!r} is not 'effective' or 'user'", key="op")
    docs, labels = _docs(results, labels)
    fig, (ax,) = _axes(ax)
    kind = "waf-op" if by == "workload" else "placement-waf"
    default_title = (
        "Write amplification against over-provisioning"
        if by == "workload"
        else "Write amplification against over-provisioning, with and without data placement"
    )
    rec = _record(ax, kind, title or default_title)
    pts = _waf_points(docs, labels, rec)
    _draw_waf_series(ax, rec, _waf_groups(pts, by), by, op)
    if pts:
        _waf_axes(ax, rec, pts, models, pages_per_block, by, op)
    else:
        _nothing(ax, rec)
    if op == "effective":
        ax.set_xlabel("OP seen by garbage collection, user basis ((physical - user) / user)")
    else:
        ax.set_xlabel("OP, user basis ((physical - user) / user), as configured")
    ax.set_ylabel("write amplification (WAF)")
    ax.grid(True, alpha=0.25)
    from matplotlib.ticker import PercentFormatter

    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    _finish(ax, rec)
    return fig


def placement_waf(
    results,
    labels: Sequence[str] | None = None,
    ax=None,
    op: str = "effective",
    models: Sequence[str] = (),
    pages_per_block: int | None = None,
    title: str | None = None,
):
    """WAF against OP with and without data placement: :func:`waf_op` with one line per
    placement mode (``none``, ``streams``, ``fdp``; a result without a ``placement`` ran
    without one), the results of each mode joined in OP order, for instance the points of an
    ``opsim sweep`` over ``drive.op`` x ``ftl.placement.mode``.  ``op="user"`` draws against
    the configured OP instead of the OP garbage collection sees.  No analytic curve by
    default (they model uniform random writes without placement); ``models=("greedy",)``
    adds one."""
    return waf_op(
        results, labels, ax=ax, models=models, pages_per_block=pages_per_block, title=title, by="placement", op=op
    )


# ----------------------------------------------------------------------------- placement

#: how a result without a ``placement`` object ran: every write through one frontier
NO_PLACEMENT = {"mode": "none", "isolation": None, "handles": 0, "shared_blocks": None}


def placement_of(doc: dict) -> dict:
    """The data placement a simulated result ran with (``mode``: none, streams or fdp;
    ``isolation``, ``handles``, ``shared_blocks``); ``mode`` ``"none"`` for a result that
    carries no ``placement`` (made without ``[ftl.placement]`` or by an opsim without it) and
    for a measured result."""
    p = doc.get("placement") if result_docs.kind_of(doc) == result_docs.SIM else None
    if isinstance(p, dict) and p.get("mode"):
        return {**NO_PLACEMENT, **p}
    return dict(NO_PLACEMENT)


def placement_label(doc: dict) -> str:
    """The placement a result ran with, for legends: ``placement none``, ``placement fdp, 4
    handles``, ``placement streams, 2 streams``; with the isolation when it is not the default
    (initially)."""
    p = placement_of(doc)
    mode = p["mode"]
    if mode == "none":
        return "placement none"
    n = p.get("handles") or 0
    out = f"placement {mode}, {n} {'handle' if mode == 'fdp' else 'stream'}{'' if n == 1 else 's'}"
    if mode == "fdp" and p.get("isolation") not in (None, "initially"):
        out += f", isolated {p['isolation']}"
    return out


def _placement_keys(docs: Sequence[dict]) -> list[str]:
    """The line each result belongs to in :func:`placement_waf`: its placement mode, with the
    isolation and handle count only when results of the same mode differ in them."""
    ps = [placement_of(d) for d in docs]
    isolations: dict[str, set] = {}
    handles: dict[str, set] = {}
    for p in ps:
        isolations.setdefault(p["mode"], set()).add(p.get("isolation"))
        handles.setdefault(p["mode"], set()).add(p.get("handles"))
    keys = []
    for p in ps:
        key = f"placement {p['mode']}"
        if len(isolations[p["mode"]]) > 1:
            key += f", isolated {p.get('isolation')}"
        if len(handles[p["mode"]]) > 1:
            key += f", {p.get('handles')} {'handles' if p['mode'] == 'fdp' else 'streams'}"
        keys.append(key)
    return keys


def namespaces_of(doc: dict) -> list[dict] | None:
    """A simulated result's per-namespace results (``namespaces``), or None without them."""
    if result_docs.kind_of(doc) != result_docs.SIM:
        return None
    ns = doc.get("namespaces")
    return ns if isinstance(ns, list) and ns else None


def workload_of(doc: dict) -> str:
    """The workload of a result: :func:`opsim.results.workload_label`, or for a result with
    namespaces the tenants ("4 tenants: seq-4k, seq-16k, ...")."""
    ns = namespaces_of(doc)
    if ns is None:
        return result_docs.workload_label(doc)
    names = [str(n.get("name")) for n in ns]
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"{len(names)} tenant{'' if len(names) == 1 else 's'}: {shown}"


def _tenant_labels(docs: Sequence[dict]) -> list[str]:
    """Default bar labels: the placement, with the OP when two results share a placement."""
    labels = [placement_label(d) for d in docs]
    if len(set(labels)) < len(labels):
        labels = [f"{lab}, OP {d['op']['user'] * 100:.1f}%" for lab, d in zip(labels, docs)]
    if len(set(labels)) < len(labels):
        labels = [f"{lab} ({i + 1})" for i, lab in enumerate(labels)]
    return labels


def _check_tenant_results(docs: Sequence[dict], labels: Sequence[str]) -> None:
    """Every result a simulation with namespaces, else an InputError naming it."""
    for i, (d, lab) in enumerate(zip(docs, labels)):
        if result_docs.kind_of(d) != result_docs.SIM:
            raise InputError(
                f"result {i + 1} ({lab}): a measured result has no per-namespace WAF; the tenants plot needs "
                "simulations of configs with [[namespace]] tables",
                key="results",
            )
        if namespaces_of(d) is None:
            raise InputError(
                f"result {i + 1} ({lab}): no namespaces in the result (no 'namespaces' list); the tenants plot "
                "needs a simulation of a config with [[namespace]] tables, e.g. examples/fdp-blender.toml",
                key="results",
            )


def _tenant_names(docs: Sequence[dict]) -> tuple[list[str], dict[str, str]]:
    """The namespace names in first-seen order, and each one's capacity text (size, share)."""
    names: list[str] = []
    capacity: dict[str, str] = {}
    for d in docs:
        for n in namespaces_of(d) or []:
            name = str(n.get("name"))
            if name not in names:
                names.append(name)
                cap = n.get("capacity_bytes")
                user = d["drive"].get("user_bytes")
                capacity[name] = (
                    "" if cap is None else f"{_fmt_bytes(cap)}" + (f", {100 * cap / user:.0f}%" if user else "")
                )
    return names, capacity


def _tenant_bars(rec, label: str, by_name: dict, names: list[str]) -> tuple[list, list, list]:
    """(group positions, WAFs, names) of one result's bars; namespaces without a WAF listed as skipped."""
    xs, ys, cats = [], [], []
    for gi, name in enumerate(names):
        this = by_name.get(name)
        if this is None:
            _skip(rec, f"{label}: {name}", "the result has no namespace of that name")
            continue
        if this.get("waf") is None:
            _skip(rec, f"{label}: {name}", "no host writes to this namespace in the measurement window")
            continue
        xs.append(gi)
        ys.append(float(this["waf"]))
        cats.append(name)
    return xs, ys, cats


def _draw_drive_waf(ax, ri: int, drive_waf: float, n_names: int, color) -> None:
    """A dashed line across the groups at the drive's WAF, named at the right."""
    ax.hlines(drive_waf, -0.5, n_names - 0.5, colors=[color], linestyles="--", lw=1.2, gid=f"drive:{ri}", zorder=3)
    ax.text(
        n_names - 0.5,
        drive_waf,
        f" drive {drive_waf:.2f}",
        color=color,
        ha="left",
        va="center",
        fontsize=7,
        gid=f"drivelabel:{ri}",
    )


def _draw_tenant_result(ax, rec, ri: int, n_docs: int, d: dict, label: str, color, names: list[str]) -> float:
    """One result's bars (and its drive WAF line); returns the highest WAF drawn (at least 1)."""
    import numpy as np

    width = 0.8 / max(1, n_docs)
    top = 1.0
    mode = placement_of(d)["mode"]
    by_name = {str(n.get("name")): n for n in namespaces_of(d) or []}
    xs, ys, cats = _tenant_bars(rec, label, by_name, names)
    shown = label if mode.lower() in label.lower() else f"{label} (placement {mode})"
    pos = np.asarray(xs, dtype=float) - 0.4 + width * (ri + 0.5)
    if xs:
        ax.bar(pos, ys, width=width * 0.95, color=color, label=shown, gid=f"series:{ri}")
        for p, v in zip(pos, ys):
            ax.text(p, v, f"{v:.2f}", ha="center", va="bottom", fontsize=6)
        top = max(top, *ys)
    drive_waf = d.get("waf")
    if drive_waf is not None:
        _draw_drive_waf(ax, ri, drive_waf, len(names), color)
        top = max(top, drive_waf)
    by_cat = [by_name[c] for c in cats]
    rec["series"].append(
        {
            "label": label,
            "source": "sim",
            "placement": mode,
            "x": cats,
            "y": ys,
            "drive_waf": drive_waf,
            "host_write_bytes": [n.get("host_write_bytes") for n in by_cat],
            "nand_write_bytes": [n.get("nand_write_bytes") for n in by_cat],
        }
    )
    return top


def tenants(results, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Per-tenant WAF: one group of bars per namespace (matched by name across results), one
    bar per result (default label: its placement, e.g. ``placement none`` against
    ``placement fdp, 4 handles``), each bar the namespace's WAF over the measurement window
    (its NAND writes, GC copies included, over its host writes); a dashed line in each
    result's colour marks the drive's WAF.  Every result must carry ``namespaces`` (a config
    with ``[[namespace]]`` tables): anything else is an :class:`InputError` naming it."""
    given = labels
    docs, labels = _docs(results, labels)
    _check_tenant_results(docs, labels)
    if given is None:
        labels = _tenant_labels(docs)
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "tenants", title or "Write amplification per tenant (namespace)")
    names, capacity = _tenant_names(docs)
    colors = _colors(len(docs))
    top = 1.0
    for ri, (d, label, color) in enumerate(zip(docs, labels, colors)):
        top = max(top, _draw_tenant_result(ax, rec, ri, len(docs), d, label, color, names))
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(
        [f"{n}\n{capacity[n]}" if capacity.get(n) else n for n in names],
        fontsize=7,
        rotation=0 if len(names) <= 6 else 30,
        ha="center" if len(names) <= 6 else "right",
    )
    ax.set_xlim(-0.5, len(names) - 0.5 + (0.6 if len(names) <= 6 else 0.9))
    ax.axhline(1.0, color="0.4", lw=0.8)
    ax.set_ylim(0, top * 1.15)
    ax.set_xlabel("namespace (capacity, share of the user capacity)")
    ax.set_ylabel("write amplification (WAF), measurement window")
    ax.grid(True, axis="y", alpha=0.25)
    if any(s["y"] for s in rec["series"]):
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        handles.append(Line2D([], [], color="0.3", ls="--", label="drive WAF (all namespaces)"))
        ax.legend(handles=handles, fontsize=7, loc="upper right")
    else:
        _nothing(ax, rec)
    _finish(ax, rec)
    return fig


def _fmt_bytes(n) -> str:
    from .units import fmt_bytes

    return fmt_bytes(n)


# ----------------------------------------------------------------------------- bars


def _categories(docs, labels, groups):
    cats, grp = [], []
    for _d, lab in zip(docs, labels):
        if lab not in cats:
            cats.append(lab)
    if groups is None:
        groups = [
            result_docs.workload_label(d)
            if result_docs.kind_of(d) == result_docs.SIM
            else "measured: " + result_docs.workload_label(d)
            for d in docs
        ]
    for g in groups:
        if g not in grp:
            grp.append(g)
    return cats, grp, list(groups)


def _op_ticks(ax, docs, labels, cats):
    ticks = []
    for c in cats:
        op = next(
            (d["op"]["user"] for d, lab in zip(docs, labels) if lab == c and result_docs.kind_of(d) == result_docs.SIM),
            None,
        )
        ticks.append(c if op is None else f"{c}\nOP {op * 100:.1f}%")
    ax.set_xticks(range(len(cats)))
    ax.set_xticklabels(
        ticks, fontsize=7, rotation=0 if len(cats) <= 4 else 30, ha="center" if len(cats) <= 4 else "right"
    )


def steady_iops(
    results, labels: Sequence[str] | None = None, groups: Sequence[str] | None = None, ax=None, title: str | None = None
):
    """Steady-state IOPS as bars, one category per label (OP level), one bar per group
    (default: the workload; simulated and measured side by side).  Steady IOPS: the mean of
    the SNIA steady-state window (:func:`opsim.results.phases`); a run that did not reach
    steady state is drawn hatched at its measurement-window IOPS and marked "not steady"."""
    import numpy as np

    docs, labels = _docs(results, labels)
    cats, grps, groups = _categories(docs, labels, groups)
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "steady-iops", title or "Steady-state IOPS by configuration")
    width = 0.8 / max(1, len(grps))
    colors = _colors(len(grps))
    for gi, g in enumerate(grps):
        ys, steady, xs = [], [], []
        for ci, c in enumerate(cats):
            member = [d for d, lab, gg in zip(docs, labels, groups) if lab == c and gg == g]
            if not member:
                continue
            d = member[0]
            if result_docs.series(d) is None:
                _skip(rec, f"{c} ({g})", "no IOPS (a functional simulation)")
                continue
            ph = result_docs.phases(d)
            v = ph["steady_iops"] if ph["steady_reached"] else result_docs.measured_iops(d)
            xs.append(ci)
            ys.append(float(v) if v is not None else float("nan"))
            steady.append(bool(ph["steady_reached"]))
        if not xs:
            continue
        pos = np.asarray(xs) - 0.4 + width * (gi + 0.5)
        bars = ax.bar(pos, ys, width=width * 0.95, color=colors[gi], label=g, gid=f"series:{gi}")
        for b, st in zip(bars, steady):
            if not st:
                b.set_hatch("//")
                b.set_alpha(0.6)
        for p, v, st in zip(pos, ys, steady):
            if math.isfinite(v):
                ax.text(p, v, f"{v:,.0f}" + ("" if st else "\nnot steady"), ha="center", va="bottom", fontsize=6)
        rec["series"].append({"label": g, "x": [cats[i] for i in xs], "y": ys, "steady": steady})
    if rec["series"]:
        _op_ticks(ax, docs, labels, cats)
        ax.legend(fontsize=7, loc="upper left")
        ax.margins(y=0.15)
    else:
        _nothing(ax, rec)
    ax.set_xlabel("configuration")
    ax.set_ylabel("steady-state IOPS")
    ax.grid(True, axis="y", alpha=0.25)
    _finish(ax, rec)
    return fig


def _endurance_reference(recs, g: str, members: list, reference: str | None):
    """The (document, label) a group is compared with: ``reference``, or its least OP; None
    (listed as skipped) when the group has no result of that label."""
    if reference is None:
        return min(members, key=lambda t: t[0]["op"]["user"])
    found = [(d, lab) for d, lab in members if lab == reference]
    if not found:
        for rc in recs:
            _skip(rc, g, f"no result labelled {reference!r} in this group to compare with")
        return None
    return found[0]


def _draw_endurance_bars(axes, recs, gi: int, g: str, members: list, found, pos, width: float, color) -> None:
    """One group's TBW and DWPD bars relative to ``found`` (document, label), at ``pos``."""
    ref, ref_label = found
    tbw = [ref["waf"] / d["waf"] for d, _ in members]
    dwpd = [ref["waf"] * ref["drive"]["user_bytes"] / (d["waf"] * d["drive"]["user_bytes"]) for d, _ in members]
    for axx, rc, ys in ((axes[0], recs[0], tbw), (axes[1], recs[1], dwpd)):
        axx.bar(pos, ys, width=width * 0.95, color=color, label=g, gid=f"series:{gi}")
        for p, v in zip(pos, ys):
            axx.text(p, v, f"{v:.2f}x", ha="center", va="bottom", fontsize=6)
        rc["series"].append({"label": g, "x": [lab for _, lab in members], "y": ys, "reference": ref_label})


def endurance(
    results,
    labels: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    ax=None,
    reference: str | None = None,
    title: str | None = None,
):
    """TBW and DWPD as bars (two axes), relative to ``reference`` (a label) or, by default, to
    the configuration with the least OP in each group (workload).  Same NAND and P/E rating:
    host bytes writable scale with 1/WAF, drive writes per day with 1/(WAF x user capacity)."""
    import numpy as np

    docs, labels = _docs(results, labels)
    cats, grps, groups = _categories(docs, labels, groups)
    fig, axes = _axes(ax, ncols=2, width=5.2)
    recs = [
        _record(axes[0], "endurance-tbw", (title + ": " if title else "") + "TBW relative"),
        _record(axes[1], "endurance-dwpd", (title + ": " if title else "") + "DWPD relative"),
    ]
    sims = [
        (d, lab, g)
        for d, lab, g in zip(docs, labels, groups)
        if result_docs.kind_of(d) == result_docs.SIM and d["waf"] is not None
    ]
    for d, lab, _g in zip(docs, labels, groups):
        if result_docs.kind_of(d) != result_docs.SIM:
            for rc in recs:
                _skip(rc, lab, "measured result: no WAF from the drive's NAND (opsim smart gives one)")
        elif d["waf"] is None:
            for rc in recs:
                _skip(rc, lab, NO_WAF)
    if reference is not None and reference not in [lab for _, lab, _ in sims]:
        raise InputError(f"reference: {reference!r} is not one of the labels", key="reference")
    refs_used = []
    if sims:
        width = 0.8 / max(1, len(grps))
        colors = _colors(len(grps))
        for gi, g in enumerate(grps):
            members = [(d, lab) for d, lab, gg in sims if gg == g]
            found = _endurance_reference(recs, g, members, reference) if members else None
            if found is None:
                continue
            refs_used.append(found[1])
            pos = np.asarray([cats.index(lab) for _, lab in members]) - 0.4 + width * (gi + 0.5)
            _draw_endurance_bars(axes, recs, gi, g, members, found, pos, width, colors[gi])
    if refs_used:
        against = refs_used[0] if len(set(refs_used)) == 1 else "the least OP of each workload"
        for axx, _rc, what in ((axes[0], recs[0], "TBW"), (axes[1], recs[1], "DWPD")):
            _op_ticks(axx, docs, labels, cats)
            axx.axhline(1.0, color="0.4", lw=0.8)
            axx.set_ylabel(f"{what} relative to {against}")
            axx.set_xlabel("configuration")
            axx.legend(fontsize=7, loc="upper left")
            axx.margins(y=0.15)
            axx.grid(True, axis="y", alpha=0.25)
    else:
        for axx, rc in zip(axes, recs):
            _nothing(axx, rc)
    for axx, rc in zip(axes, recs):
        _finish(axx, rc)
    return fig


# ----------------------------------------------------------------------------- distributions

LATENCY_PCTS = result_docs.LATENCY_PERCENTILES


def latency(results, labels: Sequence[str] | None = None, direction: str = "all", ax=None, title: str | None = None):
    """Latency CDF from the percentiles the results carry (p50 ... p99.99; simulated: the
    timed model's histogram over the measurement window; measured: fio's clat), log x,
    logit y (the tail percentiles spread out); the maximum is a cross at the plotting
    position 1 - 0.5/count when the count is known."""
    if direction not in ("all", "read", "write"):
        raise InputError(f"direction: {direction!r} is not all, read or write", key="direction")
    docs, labels = _docs(results, labels)
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "latency", title or f"Latency CDF ({direction} IOs)")
    colors = _colors(len(docs))
    for doc, label, color in zip(docs, labels, colors):
        lat = result_docs.latency(doc, direction)
        if lat is None:
            _skip(rec, label, f"no {direction} latency percentiles (functional simulation, or no such IOs)")
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
    ax.yaxis.set_minor_locator(_null_locator())
    ax.set_xlabel("latency (microseconds, log scale)")
    ax.set_ylabel("fraction of IOs completed within (logit scale)")
    ax.grid(True, which="both", alpha=0.25)
    if rec["series"]:
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        if any("max_q" in s for s in rec["series"]):
            handles.append(Line2D([], [], color="0.3", marker="x", ls="none", label="maximum"))
        ax.legend(handles=handles, fontsize=7, loc="lower right")
    else:
        _nothing(ax, rec)
    _finish(ax, rec)
    return fig


def _null_locator():
    from matplotlib.ticker import NullLocator

    return NullLocator()


def wear(results, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """Erase-count distribution (``wear.histogram``): share of blocks at each erase count."""
    docs, labels = _docs(results, labels)
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "wear", title or "Erase counts: distribution over blocks")
    colors = _colors(len(docs))
    for doc, label, color in zip(docs, labels, colors):
        if result_docs.kind_of(doc) != result_docs.SIM:
            _skip(rec, label, "measured result: no per-block erase counts")
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
        _nothing(ax, rec)
    _finish(ax, rec)
    return fig


def _draw_victims(ax, rec, doc: dict, label: str, color, bins: int) -> None:
    """One result's victims per bin of valid fraction, and the model's mean as a dotted line."""
    import numpy as np

    from . import models as analytic

    if result_docs.kind_of(doc) != result_docs.SIM:
        _skip(rec, label, "measured result: no GC victim data")
        return
    h = np.asarray(doc["victims"]["valid_histogram"], dtype=float)
    if h.sum() == 0:
        _skip(rec, label, "no block was collected in the measurement window")
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
    docs, labels = _docs(results, labels)
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "victims", title or "Garbage-collection victims: valid fraction")
    colors = _colors(len(docs))
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
    from matplotlib.ticker import PercentFormatter

    ax.xaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    ax.set_xlabel("valid pages in the victim block (fraction of the block)")
    ax.set_ylabel("share of victims")
    ax.grid(True, alpha=0.25)
    if rec["series"]:
        from matplotlib.lines import Line2D

        handles, _ = ax.get_legend_handles_labels()
        if any(s.get("model_mean_valid_fraction") is not None for s in rec["series"]):
            handles.append(Line2D([], [], color="0.3", ls=":", label="model mean (1 - 1/WAF)"))
        ax.legend(handles=handles, fontsize=7, loc="upper left")
    else:
        _nothing(ax, rec)
    _finish(ax, rec)
    return fig


# ----------------------------------------------------------------------------- dispatch


def write_curve(profiles, labels: Sequence[str] | None = None, ax=None, title: str | None = None):
    """The write-frequency curve of trace profiles (``opsim trace profile --json`` documents or
    :class:`opsim.trace_profile.TraceProfile`): the share of the writes taken by the hottest
    share of the written blocks (log x), the fitted workload's expected curve dashed when the
    document has a fit, and the diagonal (every block written equally)."""
    from .trace_profile import check_doc

    if isinstance(profiles, dict) or hasattr(profiles, "data"):
        profiles = [profiles]
    docs = [check_doc(getattr(p, "data", p), f"profile {i + 1}") for i, p in enumerate(profiles)]
    if not docs:
        raise InputError("no trace profiles to plot", key="results")
    labels = [os.path.basename(d["path"]) for d in docs] if labels is None else [str(x) for x in labels]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} profiles", key="labels")
    fig, (ax,) = _axes(ax)
    rec = _record(ax, "write-curve", title or "Write-frequency curve (hottest blocks first)")
    for i, (doc, label, color) in enumerate(zip(docs, labels, _colors(len(docs)))):
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
    _finish(ax, rec)
    return fig


KINDS = {
    "saturation": (
        lambda res, labels, ax, **kw: saturation(res, labels, x="time", ax=ax, **kw),
        "per-interval IOPS against time, log y, FOB/transition/steady marked",
    ),
    "saturation-written": (
        lambda res, labels, ax, **kw: saturation(res, labels, x="written", ax=ax, **kw),
        "per-interval IOPS against host data written (drive writes), log y, phases marked",
    ),
    "saturation-panels": (
        lambda res, labels, ax, **kw: _no_ax(ax, "saturation-panels") or saturation_panels(res, labels, **kw),
        "one write-saturation panel per result (phases shaded), shared axes",
    ),
    "waf-op": (
        lambda res, labels, ax, **kw: waf_op(res, labels, ax=ax, **kw),
        "WAF against OP: simulated points and the greedy, LRW/FIFO and random models",
    ),
    "steady-iops": (
        lambda res, labels, ax, **kw: steady_iops(res, labels, ax=ax, **kw),
        "steady-state IOPS per configuration (bars)",
    ),
    "endurance": (
        lambda res, labels, ax, **kw: endurance(res, labels, ax=ax, **kw),
        "TBW and DWPD relative to the least-OP configuration (bars)",
    ),
    "latency": (
        lambda res, labels, ax, **kw: latency(res, labels, ax=ax, **kw),
        "latency CDF from the percentiles (log x, logit y)",
    ),
    "wear": (lambda res, labels, ax, **kw: wear(res, labels, ax=ax, **kw), "erase-count distribution"),
    "victims": (
        lambda res, labels, ax, **kw: victims(res, labels, ax=ax, **kw),
        "GC victims' valid-fraction distribution with the model mean",
    ),
    "tenants": (
        lambda res, labels, ax, **kw: tenants(res, labels, ax=ax, **kw),
        "per-namespace WAF bars, one group per namespace, one bar per result, the drive's WAF dashed",
    ),
    "write-curve": (
        lambda res, labels, ax, **kw: write_curve(res, labels, ax=ax, **kw),
        "a trace's write-frequency curve (opsim trace profile --json) with its fitted workload's, log x",
    ),
    "placement-waf": (
        lambda res, labels, ax, **kw: placement_waf(res, labels, ax=ax, **kw),
        "WAF against OP, one line per placement mode (none, streams, fdp)",
    ),
}


def _no_ax(ax, kind):
    if ax is not None:
        raise InputError(f"ax: {kind} draws its own grid of axes; call it without ax", key="ax")
    return None


def plot(kind: str, results, labels: Sequence[str] | None = None, ax=None, **options: Any):
    """Draw ``kind`` (one of :data:`KINDS`) for ``results``; returns the Figure."""
    if kind not in KINDS:
        raise InputError(f"kind: {kind!r} is not a plot kind (known: {', '.join(KINDS)})", key="kind")
    return KINDS[kind][0](results, labels, ax, **options)
