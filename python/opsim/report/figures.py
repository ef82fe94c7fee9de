"""The report's figure plan (which figures, of which results, with which caption) and the
renderer that draws each into a numbered ``<figure>``."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .. import plots, results
from .markup import esc, img
from .rows import drive_key, groups_of

#: (kind, title, indexes of the results drawn, options, caption)
Entry = tuple[str, str, list[int], dict, str]


def pattern_groups(docs: Sequence[dict]) -> list[tuple[str, list[int]]]:
    """(title, indexes) per workload pattern (command size and read share): the simulated
    results of a workload and the measured ones with the same pattern go on the same axes."""
    keys: dict = {}
    for i, d in enumerate(docs):
        ns = results.namespaces_of(d)  # tenants: their own group, whatever the top-level workload says
        keys.setdefault(
            results.pattern(d) if ns is None else ("tenants", *(str(n.get("name")) for n in ns)), []
        ).append(i)
    out = []
    for idx in keys.values():
        sim = next((i for i in idx if results.kind_of(docs[i]) == results.SIM), idx[0])
        out.append(
            (
                results.workload_of(docs[sim])
                if results.kind_of(docs[sim]) == results.SIM
                else "measured: " + results.workload_label(docs[sim]),
                idx,
            )
        )
    return out


def _saturation(g: str, idx: list[int]) -> list[Entry]:
    """IOPS over time in panels, and against data written overlaid."""
    return [
        (
            "saturation-panels",
            f"IOPS over time: {g}",
            idx,
            {"x": "time"},
            "Per-interval IOPS (log scale), one panel per configuration on the same axes; shaded: "
            "fresh out of box (FOB), transition, steady state (the SNIA rule); triangles on the bottom "
            "edge: intervals with no completion.",
        ),
        (
            "saturation-written",
            f"IOPS against data written: {g}",
            idx,
            {"smooth": 15} if len(idx) > 1 else {},
            "Every configuration overlaid against host data written in drive writes (multiples of the "
            "user capacity, independent of the drive's size)"
            + ("; dots: intervals, line: running median of 15 intervals" if len(idx) > 1 else "")
            + ". Dashed: FOB ends; dotted: steady state from.",
        ),
    ]


def _latency(g: str, idx: list[int]) -> Entry:
    return (
        "latency",
        f"Latency CDF: {g}",
        idx,
        {},
        "Completion latency percentiles over the measurement window (simulated: the timed "
        "model's histogram; measured: fio clat); the cross is the maximum.",
    )


def _per_pattern(docs: Sequence[dict]) -> list[Entry]:
    """Per workload pattern: saturation (results with a series) and latency (with percentiles)."""
    plan: list[Entry] = []
    with_series = {i for i, d in enumerate(docs) if results.series(d) is not None}
    with_lat = {i for i, d in enumerate(docs) if results.latency(d) is not None}
    for g, members in pattern_groups(docs):
        idx = [i for i in members if i in with_series]
        if idx:
            plan += _saturation(g, idx)
        lidx = [i for i in members if i in with_lat]
        if lidx:
            plan.append(_latency(g, lidx))
    return plan


def _endurance(docs: Sequence[dict], sims: list[int], grp: list[str]) -> Entry:
    """Relative TBW and DWPD, per workload (and drive, when the simulations span several)."""
    drives = {drive_key(docs[i]) for i in sims}
    names = {k: f"drive {n + 1}" for n, k in enumerate(dict.fromkeys(drive_key(docs[i]) for i in sims))}
    egroups = [grp[i] + (f", {names[drive_key(docs[i])]}" if len(drives) > 1 else "") for i in sims]
    return (
        "endurance",
        "Endurance relative to the least OP",
        sims,
        {"groups": egroups},
        "TBW and DWPD from the simulated WAF, each workload (and drive) against its least-OP configuration.",
    )


def _wear_and_victims(docs: Sequence[dict], sims: list[int]) -> list[Entry]:
    """Per workload pattern, of the simulations: erase counts and GC victims' valid fraction."""
    plan: list[Entry] = []
    for g, members in pattern_groups(docs):
        idx = [i for i in members if i in sims]
        if idx:
            plan.append(
                ("wear", f"Erase counts: {g}", idx, {}, "Share of blocks at each erase count at the end of the run.")
            )
            plan.append(
                (
                    "victims",
                    f"GC victims' valid fraction: {g}",
                    idx,
                    {},
                    "Valid pages in the blocks garbage collection erased in the measurement window; dotted: "
                    "the analytic model's mean (1 - 1/WAF).",
                )
            )
    return plan


def figure_plan(docs: Sequence[dict], labels: Sequence[str]) -> list[Entry]:
    """(kind, title, indexes of the results drawn, options, caption) for every figure."""
    grp = groups_of(docs)
    with_series = [i for i, d in enumerate(docs) if results.series(d) is not None]
    sims = [i for i, d in enumerate(docs) if results.kind_of(d) == results.SIM]
    plan = _per_pattern(docs)
    if sims:
        plan.append(
            (
                "waf-op",
                "WAF against OP, simulated and modelled",
                sims,
                {},
                "Simulated WAF (measurement window) at the OP garbage collection sees, with the analytic "
                "models for uniform random writes.",
            )
        )
    if with_series:
        plan.append(
            (
                "steady-iops",
                "Steady-state IOPS",
                with_series,
                {"groups": [grp[i] for i in with_series]},
                "Mean IOPS of the steady-state window; hatched bars did not reach steady state and show the "
                "measurement window's IOPS.",
            )
        )
    if sims:
        plan.append(_endurance(docs, sims, grp))
        plan += _wear_and_victims(docs, sims)
    return plan


class Figures:
    """Draws planned figures into numbered ``<figure>`` elements and records what each drew;
    ``progress`` (optional) is told "figure N/TOTAL: TITLE" before each."""

    def __init__(self, docs: Sequence[dict], labels: Sequence[str], total: int, progress: Callable[[str], None] | None):
        self.docs, self.labels, self.total, self.progress = docs, labels, total, progress
        self.drawn: list[dict] = []  #: kind, title, results, axes of every figure drawn

    def render(self, kind: str, ftitle: str, idx: list[int], opts: dict, caption: str) -> str:
        return self.render_docs(kind, ftitle, [self.docs[i] for i in idx], [self.labels[i] for i in idx], opts, caption)

    def render_docs(
        self, kind: str, ftitle: str, sel: Sequence[dict], sel_labels: Sequence[str], opts: dict, caption: str
    ) -> str:
        """Draw ``kind`` of these documents (results, or others a kind reads: a fleet comparison)."""
        n = len(self.drawn) + 1
        if self.progress:
            self.progress(f"figure {n}/{self.total}: {ftitle}")
        fig = plots.plot(kind, sel, sel_labels, title=ftitle, **opts)
        self.drawn.append({"kind": kind, "title": ftitle, "results": sel_labels, "axes": plots.drawn(fig)})
        out = f'<figure id="fig-{n}">{img(fig, ftitle)}<figcaption>Figure {n}. {esc(caption)}</figcaption></figure>'
        fig.clear()
        return out
