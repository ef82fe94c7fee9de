"""The report as a document: the results checked and labelled, the sections in order (heading,
drives and workloads, OP table, data placement, verdicts, figures, assumptions, configs), and
the file written atomically."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._output import atomic_write_text
from .._version import __version__
from ..errors import InputError
from ..results import as_doc, check, check_compare, default_label
from .drives import drives_section
from .figures import Figures, figure_plan
from .fleet import fleet_section
from .markup import page
from .placement import handle_rows, namespace_rows, placement_plan, placement_section
from .rows import groups_of, op_rows, verdicts
from .sections import (
    assumptions_section,
    configs_section,
    heading,
    op_table_section,
    trace_profile_section,
    verdicts_section,
)


def _checked(results, labels: Sequence[str] | None, others: bool = False) -> tuple[list[dict], list[str]]:
    """The result documents and their labels; a label may name two results only of different
    workloads.  None is an error unless the report has ``others`` (fleet comparisons)."""
    docs = [check(as_doc(r), f"result {i + 1}") for i, r in enumerate(results)]
    if not docs and not others:
        raise InputError("no results for the report", key="results")
    labels = [str(x) for x in (labels or [default_label(d) for d in docs])]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} results", key="labels")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        grp = groups_of(docs)
        if len(set(zip(labels, grp))) != len(labels):
            raise InputError(f"labels: {', '.join(dup)} label more than one result of the same workload", key="labels")
    return docs, labels


def build(
    results,
    labels: Sequence[str] | None = None,
    title: str = "opsim report",
    context: dict | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict]:
    """(HTML text, summary dict).  ``context`` (optional): ``intro`` (paragraphs), ``op_table``
    ({headers, rows, numeric?, caption}) to replace the generated OP table, ``notes`` (list),
    ``command`` (how the results were made), ``inputs`` (file names), ``trace_profiles``
    (``opsim trace profile --json`` documents: a "Trace profiles" section), ``comparisons``
    (``opsim advise --compare FILE --json`` documents: a "Buy or over-provision" section; with
    them the results may be none)."""
    ctx = context or {}
    comparisons = [check_compare(c, f"comparison {i + 1}") for i, c in enumerate(ctx.get("comparisons") or [])]
    docs, labels = _checked(results, labels, others=bool(comparisons))
    parts = heading(title, docs, ctx)
    place_plan = placement_plan(docs, labels) if docs else []
    fig_plan = figure_plan(docs, labels) if docs else []
    figures = Figures(docs, labels, len(place_plan) + len(fig_plan) + len(comparisons), progress)
    rows_data: list[dict] = []
    ns_rows: list[dict] = []
    h_rows: list[dict] = []
    vs: list[dict] = []
    if docs:
        parts += drives_section(docs, labels)
        rows_data = op_rows(docs, labels)
        parts += op_table_section(rows_data, ctx.get("op_table"))
    if ctx.get("trace_profiles"):
        parts += trace_profile_section(ctx["trace_profiles"])
    if comparisons:
        parts += fleet_section(comparisons, figures)
    if docs:
        # data placement: per-namespace and per-handle tables, tenant WAF bars, WAF against OP by placement
        ns_rows, h_rows = namespace_rows(docs, labels), handle_rows(docs, labels)
        if ns_rows or h_rows or place_plan:
            parts.append(placement_section(docs, labels, ns_rows, h_rows))
            parts += [figures.render(*entry) for entry in place_plan]
        vs = verdicts(docs, labels)
        parts += verdicts_section(vs)
        parts.append("<h2>Figures</h2>")
        parts += [figures.render(*entry) for entry in fig_plan]
    parts += assumptions_section() + configs_section(docs, labels, ctx)
    summary = {
        "title": title,
        "opsim_version": __version__,
        "results": labels,
        "op_table": rows_data,
        "verdicts": vs,
        "namespaces": ns_rows,
        "handles": h_rows,
        "figures": [{"kind": f["kind"], "title": f["title"], "results": f["results"]} for f in figures.drawn],
        "comparisons": [{"file": c["file"], "choice": c["choice"]} for c in comparisons],
    }
    return page(title, parts), summary


def write(path, results, labels: Sequence[str] | None = None, **kw) -> dict:
    """Build the report and write it to ``path`` atomically; returns the summary."""
    text, summary = build(results, labels, **kw)
    atomic_write_text(path, text)
    summary["path"] = str(path)
    summary["bytes"] = len(text.encode("utf-8"))
    return summary
