"""The report's data-placement section: per-namespace and per-handle rows, the NVMe FDP
statistics, and its figures (per-tenant WAF bars, WAF against OP by placement mode)."""

from __future__ import annotations

from collections.abc import Sequence

from .. import results
from .markup import esc, html_table, num, pct, size


def _namespace_row(label: str, mode: str, user, n: dict) -> dict:
    cap = n.get("capacity_bytes")
    return {
        "label": label,
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


def _namespaces_total(label: str, mode: str, user, ns: list[dict], drive_waf) -> dict:
    """The row of all namespaces summed: their NAND bytes over their host bytes is the drive's WAF."""
    host = sum(n.get("host_write_bytes") or 0 for n in ns)
    nand = sum(n.get("nand_write_bytes") or 0 for n in ns)
    caps = [int(n["capacity_bytes"]) for n in ns if n.get("capacity_bytes") is not None]
    cap_sum = sum(caps) if len(caps) == len(ns) else None
    return {
        "label": label,
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
        "drive_waf": drive_waf,
    }


def namespace_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per namespace of every result that carries ``namespaces`` (the tenants of a
    config with ``[[namespace]]`` tables), then a row per result with the namespaces summed
    (``total``: their NAND bytes over their host bytes, which is the drive's WAF)."""
    rows: list[dict] = []
    for d, lab in zip(docs, labels):
        ns = results.namespaces_of(d)
        if ns is None:
            continue
        mode = results.placement_of(d)["mode"]
        user = d["drive"].get("user_bytes")
        rows += [_namespace_row(lab, mode, user, n) for n in ns]
        rows.append(_namespaces_total(lab, mode, user, ns, d.get("waf")))
    return rows


_HANDLE_KEYS = (
    "handle",
    "host_write_bytes",
    "nand_write_bytes",
    "media_reallocated_bytes",
    "reclaim_units_opened",
    "blocks",
    "waf",
)


def handle_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per placement handle (FDP reclaim unit handle or stream) of every result that
    carries ``handles``: host and NAND bytes, media reallocated, reclaim units opened, WAF."""
    rows = []
    for d, lab in zip(docs, labels):
        if results.kind_of(d) != results.SIM or not isinstance(d.get("handles"), list):
            continue
        mode = results.placement_of(d)["mode"]
        for h in d["handles"]:
            rows.append({"label": lab, "placement": mode, **{k: h.get(k) for k in _HANDLE_KEYS}})
    return rows


def placement_plan(docs: Sequence[dict], labels: Sequence[str]) -> list[tuple[str, str, list[int], dict, str]]:
    """The figures of the data-placement section, as :func:`opsim.report.figure_plan`: per-tenant
    WAF bars for the results with the same namespaces (by name), and WAF against OP by placement
    mode when the simulations span more than one mode."""
    plan: list[tuple[str, str, list[int], dict, str]] = []
    layouts: dict[tuple, list[int]] = {}
    for i, d in enumerate(docs):
        ns = results.namespaces_of(d)
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
    sims = [i for i, d in enumerate(docs) if results.kind_of(d) == results.SIM and d["waf"] is not None]
    modes = {results.placement_of(docs[i])["mode"] for i in sims}
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


def _namespace_cells(r: dict) -> list:
    name = "all namespaces" if r["total"] else r["namespace"]
    cap = size(r["capacity_bytes"]) + (f" ({pct(r['capacity_share'])})" if r["capacity_share"] is not None else "")
    waf = num(r["waf"], "{:.3f}")
    if r["total"] and r.get("drive_waf") is not None:
        waf += f" (drive {r['drive_waf']:.3f})"
    return [
        ("html", f"<b>{esc(r['label'])}</b>") if r["total"] else r["label"],
        r["placement"],
        ("html", f"<b>{esc(name)}</b>") if r["total"] else name,
        cap,
        pct(r["share"]),
        ", ".join(str(h) for h in r["handles"]) or "-",
        size(r["host_write_bytes"]),
        size(r["nand_write_bytes"]),
        size(r["gc_copy_bytes"]),
        waf,
    ]


def _namespace_table(ns_rows: list[dict]) -> list[str]:
    headers = [
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
    ]
    numeric = [False, False, False, True, True, False, True, True, True, True]
    return [
        html_table(headers, [_namespace_cells(r) for r in ns_rows], numeric),
        "<p>Per namespace over the measurement window: host bytes written, NAND bytes written for its data "
        "(host writes and GC copies), WAF = NAND / host. Share of the stream: the namespace's fraction of the "
        "commands (or bytes, by <code>run.interleave</code>). Handles: the placement handles its writes go "
        "through (none without placement). The row of all namespaces sums them; its WAF is the drive's.</p>",
    ]


def _handle_table(h_rows: list[dict]) -> list[str]:
    headers = [
        "result",
        "placement",
        "handle",
        "host writes",
        "NAND writes",
        "media reallocated",
        "reclaim units opened",
        "blocks",
        "WAF",
    ]
    rows = [
        [
            r["label"],
            r["placement"],
            num(r["handle"]),
            size(r["host_write_bytes"]),
            size(r["nand_write_bytes"]),
            size(r["media_reallocated_bytes"]),
            num(r["reclaim_units_opened"]),
            num(r["blocks"]),
            num(r["waf"], "{:.3f}"),
        ]
        for r in h_rows
    ]
    return [
        html_table(headers, rows, [False, False] + [True] * 7),
        "<p>Per placement handle (FDP reclaim unit handle, or stream): media reallocated are the bytes "
        "garbage collection copied into the handle's reclaim units; blocks: the blocks it holds at the end.</p>",
    ]


def _fdp_stats_table(docs: Sequence[dict], labels: Sequence[str]) -> list[str]:
    """The NVMe FDP statistics log's terms of the results that carry ``fdp_stats`` (none: [])."""
    stats = [
        (lab, d["fdp_stats"])
        for d, lab in zip(docs, labels)
        if results.kind_of(d) == results.SIM and isinstance(d.get("fdp_stats"), dict)
    ]
    if not stats:
        return []
    rows = []
    for lab, st in stats:
        hb, mb = st.get("host_bytes_with_metadata_written"), st.get("media_bytes_with_metadata_written")
        rows.append(
            [
                lab,
                size(hb),
                size(mb),
                size(st.get("media_bytes_erased")),
                num(mb / hb if hb and mb is not None else None, "{:.3f}"),
            ]
        )
    headers = [
        "result",
        "host bytes with metadata written",
        "media bytes with metadata written",
        "media bytes erased",
        "WAF (media / host)",
    ]
    return [
        html_table(headers, rows),
        "<p>The NVMe FDP statistics log's terms over the whole run (as a drive counts them), comparable with "
        "<code>nvme fdp stats</code> and <code>opsim smart fdp</code>.</p>",
    ]


def placement_section(docs: Sequence[dict], labels: Sequence[str], ns_rows: list[dict], h_rows: list[dict]) -> str:
    """The tables of the data-placement section (its figures are added by :func:`opsim.report.build`)."""
    parts = ["<h2>Data placement and tenants</h2>"]
    if ns_rows:
        parts += _namespace_table(ns_rows)
    if h_rows:
        parts += _handle_table(h_rows)
    parts += _fdp_stats_table(docs, labels)
    return "\n".join(parts)
