"""One self-contained HTML report from simulated and measured results.

    >>> from opsim import report
    >>> report.write("report.html", [r1, r2], labels=["7% OP", "28% OP"])

The file holds everything (figures as base64 PNG, no external resource): the drives and
workloads, the OP table, the figures of :mod:`opsim.plots`, the steady-state verdicts, the
model assumptions, and opsim's version and every result's config.  It is written atomically.
A small inline script marks ``<body data-figures=N data-figures-loaded=M>`` once the page has
loaded (and logs a console error if a figure did not decode): the headless-browser test
reads it back.
"""

from __future__ import annotations

import base64
import datetime as _dt
import html
import json
from collections.abc import Callable, Sequence
from typing import Any

from . import plots
from . import results as R
from ._output import atomic_write_text
from ._version import __version__
from .errors import InputError

ASSUMPTIONS = [
    (
        "Functional FTL",
        "Page-mapped FTL: every logical page maps to one NAND page; writes go to open frontier blocks; "
        "garbage collection picks victims by the configured policy when fewer than the low-watermark free blocks "
        "remain, copies their valid pages and erases them. Metadata, bad blocks and firmware reserves are not modelled "
        "separately: the physical capacity is the NAND left for user data and spare.",
    ),
    (
        "Over-provisioning",
        "OP (user basis) = (physical - user) / user; spare area (physical basis) = "
        "(physical - user) / physical; the OP garbage collection sees excludes the free-block reserve.",
    ),
    (
        "Analytic models",
        "Greedy: mean-field limit of Van Houdt (2013), exact as the number of blocks grows "
        "(Bux and Iliadis 2010); LRW / FIFO: Desnoyers (2012), Lambert-W closed form; random victim: (1 + OP) / OP. "
        "All assume uniform random single-page writes in steady state; victims' mean valid fraction is 1 - 1/WAF.",
    ),
    (
        "Endurance",
        "Same NAND and P/E rating in every configuration: host bytes writable (TBW) scale with 1/WAF, "
        "drive writes per day (DWPD) with 1 / (WAF x user capacity).",
    ),
    (
        "Timed model",
        "Host link, controller firmware per command and per GC copy, DRAM write buffer, NAND channels "
        "and dies (tR, tPROG per program unit, tBERS per physical block spanned); foreground and background GC; "
        "closed-loop queue depth. Not modelled: SLC caching, program/erase suspend, per-page program times, "
        "mapping-table caching, read disturb (docs/timed.md).",
    ),
    (
        "Phases and steady state",
        "Fresh-out-of-box ends at the first interval under half the first interval's "
        "IOPS. Steady state: the SNIA PTS rule (5-round window, range within 20% and best-fit excursion within 10% "
        "of the mean); for timed runs the rule is applied to per-round IOPS with rounds in which no block was erased "
        "excluded; for the functional WAF to per-round WAF with the same exclusion.",
    ),
    (
        "Measured results",
        "opsim measure with fio: per-second IOPS from fio's logs, completion latency (clat) "
        "percentiles, the SNIA rule on the tracked rounds (docs/measure.md).",
    ),
]

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;max-width:1180px;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.meta{color:#555;font-size:.9em}table{border-collapse:collapse;margin:.6em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}th{background:#f3f3f3;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}figure{margin:1em 0;page-break-inside:avoid}
figure img{max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:.85em;color:#444;max-width:60em}
pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em}.ok{color:#176e2b}.no{color:#a33}
.note{background:#fff8e1;border-left:4px solid #f0c36d;padding:.4em .8em;font-size:.9em}
details{margin:.3em 0}
"""

_SCRIPT = """
window.addEventListener('load', function () {
  var imgs = Array.prototype.slice.call(document.images);
  var ok = imgs.filter(function (i) { return i.complete && i.naturalWidth > 0; }).length;
  document.body.setAttribute('data-figures', String(imgs.length));
  document.body.setAttribute('data-figures-loaded', String(ok));
  if (ok !== imgs.length) { console.error('opsim report: ' + (imgs.length - ok) + ' figure(s) did not load'); }
});
"""


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(v, fmt="{:,.0f}") -> str:
    if v is None:
        return "-"
    try:
        return fmt.format(v)
    except (ValueError, TypeError):
        return _e(v)


def _pct(v, digits=1) -> str:
    return "-" if v is None else f"{100 * v:.{digits}f}%"


def _size(n) -> str:
    from .units import fmt_bytes

    return fmt_bytes(n) if n is not None else "-"


def html_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[bool] | None = None) -> str:
    """An HTML table; cells are escaped unless given as ``("html", text)``."""
    numeric = numeric or [False] + [True] * (len(headers) - 1)
    out = ["<table>", "<tr>" + "".join(f"<th>{_e(h)}</th>" for h in headers) + "</tr>"]
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            body = c[1] if isinstance(c, tuple) and c and c[0] == "html" else _e("-" if c is None else c)
            cls = ' class="n"' if numeric[i] else ""
            cells.append(f"<td{cls}>{body}</td>")
        out.append("<tr>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _model_waf(doc) -> float | None:
    from . import models as M

    if R.kind_of(doc) != R.SIM:
        return None
    try:
        return M.waf(
            doc["gc"], doc["op"]["effective"], doc["drive"]["pages_per_block"], d=doc["config"]["ftl"].get("d")
        )
    except InputError:
        return None


def drive_key(doc: dict) -> str:
    """What makes two results the same drive (NAND, geometry, preset): endurance compares only those."""
    if R.kind_of(doc) != R.SIM:
        return "measured:" + str((doc.get("target") or {}).get("path"))
    drv = doc["drive"]
    return json.dumps([doc["config"].get("preset"), drv["physical_bytes"], drv["pages_per_block"], drv["page_size"]])


def groups_of(docs: Sequence[dict]) -> list[str]:
    """The workload group of each result (simulated and measured kept apart)."""
    return [plots.workload_of(d) if R.kind_of(d) == R.SIM else "measured: " + R.workload_label(d) for d in docs]


def op_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per result: capacities, OP in every basis, WAF and model, relative TBW and DWPD
    (against the least-OP simulation of the same workload), steady-state IOPS and latency."""
    grp = groups_of(docs)
    keys = [(g, drive_key(d)) for d, g in zip(docs, grp)]
    refs: dict = {}
    for d, k in zip(docs, keys):
        # (a result without a WAF, e.g. of a read-only load, is no reference)
        if (
            R.kind_of(d) == R.SIM
            and d["waf"] is not None
            and (k not in refs or d["op"]["user"] < refs[k]["op"]["user"])
        ):
            refs[k] = d
    rows = []
    for d, lab, g, k in zip(docs, labels, grp, keys):
        ph = R.phases(d)
        lat = R.latency(d) or {}
        row = {
            "label": lab,
            "workload": g,
            "kind": R.kind_of(d),
            "user_bytes": R.user_bytes(d),
            "physical_bytes": None,
            "op_user": None,
            "op_physical": None,
            "op_effective": None,
            "gc": None,
            "waf": R.waf(d),
            "waf_model": _model_waf(d),
            "tbw_rel": None,
            "dwpd_rel": None,
            "steady_iops": ph["steady_iops"] if ph["steady_reached"] else None,
            "measured_iops": R.measured_iops(d),
            "p99_us": lat.get("p99"),
            "p99_9_us": lat.get("p99.9"),
        }
        if R.kind_of(d) == R.SIM:
            row.update(
                physical_bytes=d["drive"]["physical_bytes"],
                op_user=d["op"]["user"],
                op_physical=d["op"]["physical"],
                op_effective=d["op"]["effective"],
                gc=d["gc"],
            )
            ref = refs.get(k)
            if ref is not None and d["waf"] is not None:  # relative endurance needs both WAFs
                row.update(
                    tbw_rel=ref["waf"] / d["waf"],
                    dwpd_rel=ref["waf"] * ref["drive"]["user_bytes"] / (d["waf"] * d["drive"]["user_bytes"]),
                    reference=next(lb for dd, lb in zip(docs, labels) if dd is ref),
                )
        rows.append(row)
    return rows


def verdicts(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    out = []
    for d, lab in zip(docs, labels):
        v: dict[str, Any] = {"label": lab, "workload": groups_of([d])[0]}
        if R.kind_of(d) == R.SIM:
            ss = d["steady_state"]
            v["waf_rule"] = (
                {
                    "reached": True,
                    "round": ss["round"],
                    "mean": ss["mean"],
                    "range_ratio": ss["range_ratio"],
                    "excursion_ratio": ss["excursion_ratio"],
                }
                if ss["reached"]
                else {
                    "reached": False,
                    "range_ratio": ss.get("range_ratio"),
                    "excursion_ratio": ss.get("excursion_ratio"),
                }
            )
        if R.series(d) is not None:
            ph = R.phases(d)
            v["iops_rule"] = {
                "reached": ph["steady_reached"],
                "start_s": ph["steady_start_s"],
                "iops": ph["steady_iops"],
                "fob_end_s": ph["fob_end_s"],
            }
        out.append(v)
    return out


def _img(fig, alt: str) -> str:
    data = base64.b64encode(plots.to_bytes(fig, "png", dpi=96)).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{data}">'


def pattern_groups(docs: Sequence[dict]) -> list[tuple[str, list[int]]]:
    """(title, indexes) per workload pattern (command size and read share): the simulated
    results of a workload and the measured ones with the same pattern go on the same axes."""
    keys: dict = {}
    for i, d in enumerate(docs):
        ns = plots.namespaces_of(d)  # tenants: their own group, whatever the top-level workload says
        keys.setdefault(R.pattern(d) if ns is None else ("tenants", *(str(n.get("name")) for n in ns)), []).append(i)
    out = []
    for idx in keys.values():
        sim = next((i for i in idx if R.kind_of(docs[i]) == R.SIM), idx[0])
        out.append(
            (
                plots.workload_of(docs[sim])
                if R.kind_of(docs[sim]) == R.SIM
                else "measured: " + R.workload_label(docs[sim]),
                idx,
            )
        )
    return out


def figure_plan(docs: Sequence[dict], labels: Sequence[str]) -> list[tuple[str, str, list[int], dict, str]]:
    """(kind, title, indexes of the results drawn, options, caption) for every figure."""
    grp = groups_of(docs)
    plan: list[tuple[str, str, list[int], dict, str]] = []
    with_series = [i for i, d in enumerate(docs) if R.series(d) is not None]
    sims = [i for i, d in enumerate(docs) if R.kind_of(d) == R.SIM]
    with_lat = [i for i, d in enumerate(docs) if R.latency(d) is not None]
    for g, members in pattern_groups(docs):
        idx = [i for i in members if i in with_series]
        if idx:
            plan.append(
                (
                    "saturation-panels",
                    f"IOPS over time: {g}",
                    idx,
                    {"x": "time"},
                    "Per-interval IOPS (log scale), one panel per configuration on the same axes; shaded: "
                    "fresh out of box (FOB), transition, steady state (the SNIA rule); triangles on the bottom "
                    "edge: intervals with no completion.",
                )
            )
            plan.append(
                (
                    "saturation-written",
                    f"IOPS against data written: {g}",
                    idx,
                    {"smooth": 15} if len(idx) > 1 else {},
                    "Every configuration overlaid against host data written in drive writes (multiples of the "
                    "user capacity, independent of the drive's size)"
                    + ("; dots: intervals, line: running median of 15 intervals" if len(idx) > 1 else "")
                    + ". Dashed: FOB ends; dotted: steady state from.",
                )
            )
        lidx = [i for i in members if i in with_lat]
        if lidx:
            plan.append(
                (
                    "latency",
                    f"Latency CDF: {g}",
                    lidx,
                    {},
                    "Completion latency percentiles over the measurement window (simulated: the timed "
                    "model's histogram; measured: fio clat); the cross is the maximum.",
                )
            )
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
        drives = {drive_key(docs[i]) for i in sims}
        names = {k: f"drive {n + 1}" for n, k in enumerate(dict.fromkeys(drive_key(docs[i]) for i in sims))}
        egroups = [grp[i] + (f", {names[drive_key(docs[i])]}" if len(drives) > 1 else "") for i in sims]
        plan.append(
            (
                "endurance",
                "Endurance relative to the least OP",
                sims,
                {"groups": egroups},
                "TBW and DWPD from the simulated WAF, each workload (and drive) against its least-OP configuration.",
            )
        )
        for g, members in pattern_groups(docs):
            idx = [i for i in members if i in sims]
            if idx:
                plan.append(
                    (
                        "wear",
                        f"Erase counts: {g}",
                        idx,
                        {},
                        "Share of blocks at each erase count at the end of the run.",
                    )
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


def namespace_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per namespace of every result that carries ``namespaces`` (the tenants of a
    config with ``[[namespace]]`` tables), then a row per result with the namespaces summed
    (``total``: their NAND bytes over their host bytes, which is the drive's WAF)."""
    rows: list[dict] = []
    for d, lab in zip(docs, labels):
        ns = plots.namespaces_of(d)
        if ns is None:
            continue
        mode = plots.placement_of(d)["mode"]
        user = d["drive"].get("user_bytes")
        for n in ns:
            cap = n.get("capacity_bytes")
            rows.append(
                {
                    "label": lab,
                    "placement": mode,
                    "namespace": n.get("name"),
                    "total": False,
                    "first_lba": n.get("first_lba"),
                    "capacity_bytes": cap,
                    "capacity_share": cap / user if cap is not None and user else None,
                    "share": n.get("share"),
                    "handles": list(n.get("placement") or []),
                    "host_write_bytes": n.get("host_write_bytes"),
                    "nand_write_bytes": n.get("nand_write_bytes"),
                    "gc_copy_bytes": n.get("gc_copy_bytes"),
                    "waf": n.get("waf"),
                }
            )
        host = sum(n.get("host_write_bytes") or 0 for n in ns)
        nand = sum(n.get("nand_write_bytes") or 0 for n in ns)
        caps = [int(n["capacity_bytes"]) for n in ns if n.get("capacity_bytes") is not None]
        cap_sum = sum(caps) if len(caps) == len(ns) else None
        rows.append(
            {
                "label": lab,
                "placement": mode,
                "namespace": None,
                "total": True,
                "first_lba": None,
                "capacity_bytes": cap_sum,
                "capacity_share": cap_sum / user if cap_sum is not None and user else None,
                "share": None,
                "handles": sorted({h for n in ns for h in (n.get("placement") or [])}),
                "host_write_bytes": host,
                "nand_write_bytes": nand,
                "gc_copy_bytes": sum(n.get("gc_copy_bytes") or 0 for n in ns),
                "waf": nand / host if host else None,
                "drive_waf": d.get("waf"),
            }
        )
    return rows


def handle_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per placement handle (FDP reclaim unit handle or stream) of every result that
    carries ``handles``: host and NAND bytes, media reallocated, reclaim units opened, WAF."""
    rows = []
    for d, lab in zip(docs, labels):
        if R.kind_of(d) != R.SIM or not isinstance(d.get("handles"), list):
            continue
        mode = plots.placement_of(d)["mode"]
        for h in d["handles"]:
            rows.append(
                {
                    "label": lab,
                    "placement": mode,
                    **{
                        k: h.get(k)
                        for k in (
                            "handle",
                            "host_write_bytes",
                            "nand_write_bytes",
                            "media_reallocated_bytes",
                            "reclaim_units_opened",
                            "blocks",
                            "waf",
                        )
                    },
                }
            )
    return rows


def placement_plan(docs: Sequence[dict], labels: Sequence[str]) -> list[tuple[str, str, list[int], dict, str]]:
    """The figures of the data-placement section, as :func:`figure_plan`: per-tenant WAF bars
    for the results with the same namespaces (by name), and WAF against OP by placement mode
    when the simulations span more than one mode."""
    plan: list[tuple[str, str, list[int], dict, str]] = []
    layouts: dict[tuple, list[int]] = {}
    for i, d in enumerate(docs):
        ns = plots.namespaces_of(d)
        if ns is not None:
            layouts.setdefault(tuple(str(n.get("name")) for n in ns), []).append(i)
    for names, idx in layouts.items():
        plan.append(
            (
                "tenants",
                "WAF per tenant: " + ", ".join(names),
                idx,
                {},
                "Each namespace's WAF over the measurement window (its NAND writes, GC copies of its data "
                "included, over its host writes), one bar per result; dashed: the drive's WAF.",
            )
        )
    sims = [i for i, d in enumerate(docs) if R.kind_of(d) == R.SIM and d["waf"] is not None]
    modes = {plots.placement_of(docs[i])["mode"] for i in sims}
    if len(modes) > 1:
        plan.append(
            (
                "placement-waf",
                "WAF against OP, with and without data placement",
                sims,
                {},
                "Simulated WAF (measurement window) at the OP garbage collection sees, one line per placement "
                "mode (" + ", ".join(m for m in ("none", "streams", "fdp") if m in modes) + ").",
            )
        )
    return plan


def _placement_section(docs: Sequence[dict], labels: Sequence[str], ns_rows: list[dict], h_rows: list[dict]) -> str:
    """The tables of the data-placement section (its figures are added by :func:`build`)."""
    parts = ["<h2>Data placement and tenants</h2>"]
    if ns_rows:
        rows = []
        for r in ns_rows:
            name = "all namespaces" if r["total"] else r["namespace"]
            cap = _size(r["capacity_bytes"]) + (
                f" ({_pct(r['capacity_share'])})" if r["capacity_share"] is not None else ""
            )
            handles = ", ".join(str(h) for h in r["handles"]) or "-"
            waf = _num(r["waf"], "{:.3f}")
            if r["total"] and r.get("drive_waf") is not None:
                waf += f" (drive {r['drive_waf']:.3f})"
            rows.append(
                [
                    ("html", f"<b>{_e(r['label'])}</b>") if r["total"] else r["label"],
                    r["placement"],
                    ("html", f"<b>{_e(name)}</b>") if r["total"] else name,
                    cap,
                    _pct(r["share"]),
                    handles,
                    _size(r["host_write_bytes"]),
                    _size(r["nand_write_bytes"]),
                    _size(r["gc_copy_bytes"]),
                    waf,
                ]
            )
        parts.append(
            html_table(
                [
                    "result",
                    "placement",
                    "namespace",
                    "capacity (of the user capacity)",
                    "share of the stream",
                    "handles",
                    "host writes",
                    "NAND writes",
                    "GC copies",
                    "WAF",
                ],
                rows,
                [False, False, False, True, True, False, True, True, True, True],
            )
        )
        parts.append(
            "<p>Per namespace over the measurement window: host bytes written, NAND bytes written for its data "
            "(host writes and GC copies), WAF = NAND / host. Share of the stream: the namespace's fraction of the "
            "commands (or bytes, by <code>run.interleave</code>). Handles: the placement handles its writes go "
            "through (none without placement). The row of all namespaces sums them; its WAF is the drive's.</p>"
        )
    if h_rows:
        parts.append(
            html_table(
                [
                    "result",
                    "placement",
                    "handle",
                    "host writes",
                    "NAND writes",
                    "media reallocated",
                    "reclaim units opened",
                    "blocks",
                    "WAF",
                ],
                [
                    [
                        r["label"],
                        r["placement"],
                        _num(r["handle"]),
                        _size(r["host_write_bytes"]),
                        _size(r["nand_write_bytes"]),
                        _size(r["media_reallocated_bytes"]),
                        _num(r["reclaim_units_opened"]),
                        _num(r["blocks"]),
                        _num(r["waf"], "{:.3f}"),
                    ]
                    for r in h_rows
                ],
                [False, False] + [True] * 7,
            )
        )
        parts.append(
            "<p>Per placement handle (FDP reclaim unit handle, or stream): media reallocated are the bytes "
            "garbage collection copied into the handle's reclaim units; blocks: the blocks it holds at the end.</p>"
        )
    stats = [
        (lab, d["fdp_stats"])
        for d, lab in zip(docs, labels)
        if R.kind_of(d) == R.SIM and isinstance(d.get("fdp_stats"), dict)
    ]
    if stats:
        rows = []
        for lab, st in stats:
            hb, mb = st.get("host_bytes_with_metadata_written"), st.get("media_bytes_with_metadata_written")
            rows.append(
                [
                    lab,
                    _size(hb),
                    _size(mb),
                    _size(st.get("media_bytes_erased")),
                    _num(mb / hb if hb and mb is not None else None, "{:.3f}"),
                ]
            )
        parts.append(
            html_table(
                [
                    "result",
                    "host bytes with metadata written",
                    "media bytes with metadata written",
                    "media bytes erased",
                    "WAF (media / host)",
                ],
                rows,
            )
        )
        parts.append(
            "<p>The NVMe FDP statistics log's terms over the whole run (as a drive counts them), comparable with "
            "<code>nvme fdp stats</code> and <code>opsim smart fdp</code>.</p>"
        )
    return "\n".join(parts)


def build(
    results,
    labels: Sequence[str] | None = None,
    title: str = "opsim report",
    context: dict | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[str, dict]:
    """(HTML text, summary dict).  ``context`` (optional): ``intro`` (paragraphs), ``op_table``
    ({headers, rows, numeric?, caption}) to replace the generated OP table, ``notes`` (list),
    ``command`` (how the results were made), ``inputs`` (file names)."""
    docs = [R.check(R.as_doc(r), f"result {i + 1}") for i, r in enumerate(results)]
    if not docs:
        raise InputError("no results for the report", key="results")
    labels = [str(x) for x in (labels or [R.default_label(d) for d in docs])]
    if len(labels) != len(docs):
        raise InputError(f"labels: {len(labels)} labels for {len(docs)} results", key="labels")
    if len(set(labels)) != len(labels):
        dup = sorted({x for x in labels if labels.count(x) > 1})
        grp = groups_of(docs)
        if len(set(zip(labels, grp))) != len(labels):
            raise InputError(f"labels: {', '.join(dup)} label more than one result of the same workload", key="labels")
    ctx = context or {}
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    versions = sorted({d["opsim_version"] for d in docs if d.get("opsim_version")})
    parts = [
        f"<h1>{_e(title)}</h1>",
        f'<p class="meta">opsim {_e(__version__)} &middot; generated {_e(now)} &middot; {len(docs)} result(s)'
        + (f" (simulated with opsim {_e(', '.join(versions))})" if versions else "")
        + (f" &middot; <code>{_e(ctx['command'])}</code>" if ctx.get("command") else "")
        + "</p>",
    ]
    for para in ctx.get("intro", []):
        parts.append(f"<p>{_e(para)}</p>")
    for note in ctx.get("notes", []):
        parts.append(f'<p class="note">{_e(note)}</p>')

    # drives and workloads
    parts.append("<h2>Drives and workloads</h2>")
    drives: dict[str, list] = {}
    for d, lab in zip(docs, labels):
        if R.kind_of(d) == R.SIM:
            cfg, drv = d["config"], d["drive"]
            key = json.dumps(
                [cfg.get("preset"), drv["physical_bytes"], drv["pages_per_block"], drv["page_size"], cfg.get("timing")],
                sort_keys=True,
                default=str,
            )
            if lab not in drives.setdefault(key, [d, []])[1]:
                drives[key][1].append(lab)
        else:
            t = d.get("target") or {}
            key = json.dumps(["measured", t.get("path")])
            drives.setdefault(key, [d, []])[1].append(lab)
    rows = []
    for d, labs in drives.values():
        if R.kind_of(d) == R.SIM:
            drv, t = d["drive"], d["config"].get("timing") or {}
            timing = (
                "-"
                if not d.get("timed")
                else f"{t.get('interface')}, QD{t.get('queue_depth')}, {t.get('channels')} ch x "
                f"{t.get('dies_per_channel')} dies x {t.get('planes')} planes, tR {t.get('t_read_us')} us, "
                f"tPROG {t.get('t_prog_us')} us, tBERS {t.get('t_erase_us')} us, "
                f"buffer {_size(t.get('write_buffer'))}"
            )
            rows.append(
                [
                    d["config"].get("preset") or "(no preset)",
                    "simulated",
                    f"{_size(drv['physical_bytes'])} NAND, {drv['blocks']:,} blocks x {drv['pages_per_block']:,} "
                    f"pages x {_size(drv['page_size'])}",
                    timing,
                    ", ".join(labs),
                ]
            )
        else:
            t = d.get("target") or {}
            rows.append(
                [
                    t.get("path", "?"),
                    f"measured ({d.get('source', 'fio')}, {d.get('fio_version', '')})",
                    f"{t.get('kind', '?')}, span {_size(t.get('span_bytes'))}",
                    "-",
                    ", ".join(labs),
                ]
            )
    parts.append(html_table(["drive", "source", "geometry", "timing", "results"], rows, [False] * 5))
    grp = groups_of(docs)
    wrows = []
    for g in dict.fromkeys(grp):
        d = docs[grp.index(g)]
        if R.kind_of(d) == R.SIM:
            wl, run = d["config"]["workload"], d["config"]["run"]
            how = (
                f"precondition {run.get('precondition')}, warm-up {run.get('warmup_drive_writes')} and measured "
                f"{run.get('measure_drive_writes')} drive writes in rounds of {run.get('round_drive_writes')}; "
                f"GC {d['gc']}; seed {run.get('seed')}"
            )
            tenants = d["config"].get("namespace") if plots.namespaces_of(d) is not None else None
            if isinstance(tenants, list) and tenants:  # each tenant's own workload, not the unused top-level one
                params = json.dumps(
                    [
                        {
                            k: ({kk: vv for kk, vv in v.items() if vv is not None} if isinstance(v, dict) else v)
                            for k, v in t.items()
                            if v is not None
                        }
                        for t in tenants
                        if isinstance(t, dict)
                    ]
                )
            else:
                params = json.dumps({k: v for k, v in wl.items() if v is not None})
            wrows.append([g, params, how])
        else:
            p = d.get("parameters") or {}
            wrows.append(
                [
                    g,
                    json.dumps({k: p.get(k) for k in ("bs", "rwmix", "iodepth", "numjobs", "round_s")}),
                    f"{d.get('test')}: {d.get('stop_reason')}",
                ]
            )
    parts.append(html_table(["workload", "parameters", "run"], wrows, [False] * 3))

    # OP table
    parts.append("<h2>OP table</h2>")
    rows_data = op_rows(docs, labels)
    if ctx.get("op_table"):
        t = ctx["op_table"]
        if t.get("caption"):
            parts.append(f"<p>{_e(t['caption'])}</p>")
        parts.append(html_table(t["headers"], t["rows"], t.get("numeric")))
    else:
        parts.append(
            html_table(
                [
                    "result",
                    "workload",
                    "user",
                    "physical",
                    "OP (user)",
                    "spare area",
                    "OP seen by GC",
                    "GC",
                    "WAF",
                    "WAF model",
                    "TBW",
                    "DWPD",
                    "steady IOPS",
                    "p99 latency (us)",
                ],
                [
                    [
                        r["label"],
                        r["workload"],
                        _size(r["user_bytes"]),
                        _size(r["physical_bytes"]),
                        _pct(r["op_user"]),
                        _pct(r["op_physical"]),
                        _pct(r["op_effective"], 2),
                        r["gc"] or "-",
                        _num(r["waf"], "{:.3f}"),
                        _num(r["waf_model"], "{:.3f}"),
                        _num(r["tbw_rel"], "{:.2f}x"),
                        _num(r["dwpd_rel"], "{:.2f}x"),
                        _num(r["steady_iops"]),
                        _num(r["p99_us"]),
                    ]
                    for r in rows_data
                ],
                [False, False] + [True] * 12,
            )
        )
        parts.append(
            "<p>TBW and DWPD relative to the least-OP simulation of the same workload on the same drive. "
            "WAF model: the "
            "analytic model of the GC policy at the OP garbage collection sees.</p>"
        )

    # data placement: per-namespace and per-handle tables, tenant WAF bars, WAF against OP by placement
    ns_rows = namespace_rows(docs, labels)
    h_rows = handle_rows(docs, labels)
    place_plan = placement_plan(docs, labels)
    fig_plan = figure_plan(docs, labels)
    total_figs = len(place_plan) + len(fig_plan)
    drawn_all: list[dict] = []

    def render(kind: str, ftitle: str, idx: list[int], opts: dict, caption: str) -> str:
        n = len(drawn_all) + 1
        if progress:
            progress(f"figure {n}/{total_figs}: {ftitle}")
        sel = [docs[i] for i in idx]
        sel_labels = [labels[i] for i in idx]
        fig = plots.plot(kind, sel, sel_labels, title=ftitle, **opts)
        drawn_all.append({"kind": kind, "title": ftitle, "results": sel_labels, "axes": plots.drawn(fig)})
        out = f'<figure id="fig-{n}">{_img(fig, ftitle)}<figcaption>Figure {n}. {_e(caption)}</figcaption></figure>'
        fig.clear()
        return out

    if ns_rows or h_rows or place_plan:
        parts.append(_placement_section(docs, labels, ns_rows, h_rows))
        for entry in place_plan:
            parts.append(render(*entry))

    # steady-state verdicts
    parts.append("<h2>Steady-state verdicts</h2>")
    vs = verdicts(docs, labels)
    vrows = []
    for v in vs:
        w = v.get("waf_rule")
        i = v.get("iops_rule")
        wtxt = (
            "-"
            if w is None
            else (
                f'<span class="ok">reached</span> at round {w["round"]} (range {_pct(w["range_ratio"])}, '
                f"excursion {_pct(w['excursion_ratio'])})"
                if w["reached"]
                else f'<span class="no">not reached</span> (last window: range {_pct(w.get("range_ratio"))}, '
                f"excursion {_pct(w.get('excursion_ratio'))})"
            )
        )
        if i is None:
            itxt = "-"
        elif i["reached"]:
            itxt = f'<span class="ok">reached</span> from {_num(i["start_s"], "{:,.1f}")} s, {_num(i["iops"])} IOPS'
        else:
            itxt = '<span class="no">not reached</span>'
        fob = "-" if i is None or i["fob_end_s"] is None else _num(i["fob_end_s"], "{:,.1f}") + " s"
        vrows.append([v["label"], v["workload"], ("html", wtxt), ("html", itxt), fob])
    parts.append(
        html_table(
            ["result", "workload", "WAF rule (functional)", "IOPS rule (timed / measured)", "fresh-out-of-box ends"],
            vrows,
            [False] * 5,
        )
    )

    # figures
    parts.append("<h2>Figures</h2>")
    for entry in fig_plan:
        parts.append(render(*entry))

    # assumptions, versions, configs
    parts.append("<h2>Model assumptions</h2><dl>")
    for k, desc in ASSUMPTIONS:
        parts.append(f"<dt><b>{_e(k)}</b></dt><dd>{_e(desc)}</dd>")
    parts.append("</dl>")
    parts.append("<h2>Versions and configurations</h2>")
    parts.append(
        f"<p>Report by opsim {_e(__version__)}."
        + (f" Inputs: {_e(', '.join(ctx['inputs']))}." if ctx.get("inputs") else "")
        + "</p>"
    )
    for d, lab in zip(docs, labels):
        if R.kind_of(d) == R.SIM:
            body = {"opsim_version": d.get("opsim_version"), "config": d["config"]}
            if d.get("timed"):
                body["timing_resolved"] = d["timed"].get("timing")
        else:
            body = {
                k: d.get(k)
                for k in (
                    "schema",
                    "schema_version",
                    "test",
                    "source",
                    "fio_version",
                    "target",
                    "parameters",
                    "stop_reason",
                    "started_at",
                )
            }
        parts.append(
            f"<details><summary>{_e(lab)} ({_e(groups_of([d])[0])})</summary>"
            f"<pre>{_e(json.dumps(body, indent=2, default=str))}</pre></details>"
        )

    doc = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<title>{_e(title)}</title><link rel="icon" href="data:,"><style>{_CSS}</style>'
        f"<script>{_SCRIPT}</script></head>\n<body>\n" + "\n".join(parts) + "\n</body></html>\n"
    )
    summary = {
        "title": title,
        "opsim_version": __version__,
        "results": labels,
        "op_table": rows_data,
        "verdicts": vs,
        "namespaces": ns_rows,
        "handles": h_rows,
        "figures": [{"kind": f["kind"], "title": f["title"], "results": f["results"]} for f in drawn_all],
    }
    return doc, summary


def write(path, results, labels: Sequence[str] | None = None, **kw) -> dict:
    """Build the report and write it to ``path`` atomically; returns the summary."""
    text, summary = build(results, labels, **kw)
    atomic_write_text(path, text)
    summary["path"] = str(path)
    summary["bytes"] = len(text.encode("utf-8"))
    return summary
