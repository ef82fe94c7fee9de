"""WAF against OP: simulated points with the analytic models, by workload or by placement mode."""

from __future__ import annotations

from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from ..results import placement_of, workload_of
from .figure import (
    NO_WAF,
    axes_for,
    docs_and_labels,
    finish,
    lazy_models,
    lazy_numpy,
    nothing,
    palette,
    percent_formatter,
    record,
    skip,
)

MODEL_NAMES = {
    "greedy": "greedy, mean field (Van Houdt 2013)",
    "fifo": "LRW / FIFO (Desnoyers 2012)",
    "random": "random victim, (1+OP)/OP",
}


def _waf_points(docs, labels, rec) -> list[tuple[dict, str]]:
    """The (document, label) of the results with a WAF and an OP; the others listed as skipped."""
    pts = []
    for doc, label in zip(docs, labels):
        if result_docs.kind_of(doc) != result_docs.SIM:
            skip(rec, label, "measured result: the drive's OP (its NAND) is unknown")
            continue
        if doc["waf"] is None:
            skip(rec, label, NO_WAF)
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
    np = lazy_numpy()

    markers = "os^Dv<>P*X"
    colors = palette(max(1, len(groups)))
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
    analytic = lazy_models()

    styles = {"greedy": "-", "fifo": "--", "random": "-."}
    for m in models:
        if m not in MODEL_NAMES:
            raise InputError(f"models: no analytic model {m!r} (known: {', '.join(MODEL_NAMES)})", key="models")
        if op != "effective":
            continue
        for b in block_sizes if m == "greedy" else [None]:
            ys = [
                analytic.waf_greedy(o, b) if m == "greedy" else analytic.waf(m, o) for o in grid
            ]  # b is a block size when m is greedy
            name = MODEL_NAMES[m] + (f", b = {b}" if b is not None else "")
            ax.plot(
                grid, ys, ls=styles[m], color="0.35" if m != "greedy" else "k", lw=1.2, label=name, gid=f"model:{m}:{b}"
            )
            rec["models"].append(
                {"model": m, "name": name, "pages_per_block": b, "x": grid.tolist(), "y": [float(v) for v in ys]}
            )


def _waf_axes(ax, rec, pts, models, pages_per_block, by: str, op: str) -> None:
    """The models over the points' OP range, and axes limits that hold points and models."""
    np = lazy_numpy()

    analytic = lazy_models()

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
    docs, labels = docs_and_labels(results, labels)
    fig, (ax,) = axes_for(ax)
    kind = "waf-op" if by == "workload" else "placement-waf"
    default_title = (
        "Write amplification against over-provisioning"
        if by == "workload"
        else "Write amplification against over-provisioning, with and without data placement"
    )
    rec = record(ax, kind, title or default_title)
    pts = _waf_points(docs, labels, rec)
    _draw_waf_series(ax, rec, _waf_groups(pts, by), by, op)
    if pts:
        _waf_axes(ax, rec, pts, models, pages_per_block, by, op)
    else:
        nothing(ax, rec)
    if op == "effective":
        ax.set_xlabel("OP seen by garbage collection, user basis ((physical - user) / user)")
    else:
        ax.set_xlabel("OP, user basis ((physical - user) / user), as configured")
    ax.set_ylabel("write amplification (WAF)")
    ax.grid(True, alpha=0.25)
    ax.xaxis.set_major_formatter(percent_formatter())
    finish(ax, rec)
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
