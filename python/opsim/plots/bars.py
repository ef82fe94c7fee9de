"""Bars per configuration: steady-state IOPS, and TBW and DWPD relative to the least OP."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import results as result_docs
from ..errors import InputError
from .figure import NO_WAF, axes_for, docs_and_labels, finish, lazy_numpy, nothing, palette, record, skip


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
    np = lazy_numpy()

    docs, labels = docs_and_labels(results, labels)
    cats, grps, groups = _categories(docs, labels, groups)
    fig, (ax,) = axes_for(ax)
    rec = record(ax, "steady-iops", title or "Steady-state IOPS by configuration")
    width = 0.8 / max(1, len(grps))
    colors = palette(len(grps))
    for gi, g in enumerate(grps):
        ys, steady, xs = [], [], []
        for ci, c in enumerate(cats):
            member = [d for d, lab, gg in zip(docs, labels, groups) if lab == c and gg == g]
            if not member:
                continue
            d = member[0]
            if result_docs.series(d) is None:
                skip(rec, f"{c} ({g})", "no IOPS (a functional simulation)")
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
        nothing(ax, rec)
    ax.set_xlabel("configuration")
    ax.set_ylabel("steady-state IOPS")
    ax.grid(True, axis="y", alpha=0.25)
    finish(ax, rec)
    return fig


def _endurance_reference(recs, g: str, members: list, reference: str | None):
    """The (document, label) a group is compared with: ``reference``, or its least OP; None
    (listed as skipped) when the group has no result of that label."""
    if reference is None:
        return min(members, key=lambda t: t[0]["op"]["user"])
    found = [(d, lab) for d, lab in members if lab == reference]
    if not found:
        for rc in recs:
            skip(rc, g, f"no result labelled {reference!r} in this group to compare with")
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
    np = lazy_numpy()

    docs, labels = docs_and_labels(results, labels)
    cats, grps, groups = _categories(docs, labels, groups)
    fig, axes = axes_for(ax, ncols=2, width=5.2)
    recs = [
        record(axes[0], "endurance-tbw", (title + ": " if title else "") + "TBW relative"),
        record(axes[1], "endurance-dwpd", (title + ": " if title else "") + "DWPD relative"),
    ]
    sims = [
        (d, lab, g)
        for d, lab, g in zip(docs, labels, groups)
        if result_docs.kind_of(d) == result_docs.SIM and d["waf"] is not None
    ]
    for d, lab, _g in zip(docs, labels, groups):
        if result_docs.kind_of(d) != result_docs.SIM:
            for rc in recs:
                skip(rc, lab, "measured result: no WAF from the drive's NAND (opsim smart gives one)")
        elif d["waf"] is None:
            for rc in recs:
                skip(rc, lab, NO_WAF)
    if reference is not None and reference not in [lab for _, lab, _ in sims]:
        raise InputError(f"reference: {reference!r} is not one of the labels", key="reference")
    refs_used = []
    if sims:
        width = 0.8 / max(1, len(grps))
        colors = palette(len(grps))
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
            nothing(axx, rc)
    for axx, rc in zip(axes, recs):
        finish(axx, rc)
    return fig
