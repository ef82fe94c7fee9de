"""The report's plain sections: the heading, the OP table, the steady-state verdicts, the model
assumptions, the versions and configurations behind every result, and the profiles of the
traces behind them (`opsim trace profile --json`)."""

from __future__ import annotations

import datetime as _dt
import json
import os
from collections.abc import Sequence

from .. import results
from .._version import __version__
from .markup import esc, html_table, num, pct, size
from .rows import groups_of

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


def heading(title: str, docs: Sequence[dict], ctx: dict) -> list[str]:
    """The title, the line saying what made the report and when, the introduction and notes."""
    now = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    versions = sorted({d["opsim_version"] for d in docs if d.get("opsim_version")})
    parts = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="meta">opsim {esc(__version__)} &middot; generated {esc(now)} &middot; {len(docs)} result(s)'
        + (f" (simulated with opsim {esc(', '.join(versions))})" if versions else "")
        + (f" &middot; <code>{esc(ctx['command'])}</code>" if ctx.get("command") else "")
        + "</p>",
    ]
    parts += [f"<p>{esc(para)}</p>" for para in ctx.get("intro", [])]
    parts += [f'<p class="note">{esc(note)}</p>' for note in ctx.get("notes", [])]
    return parts


_OP_HEADERS = [
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
]


def _op_cells(r: dict) -> list[str]:
    return [
        r["label"],
        r["workload"],
        size(r["user_bytes"]),
        size(r["physical_bytes"]),
        pct(r["op_user"]),
        pct(r["op_physical"]),
        pct(r["op_effective"], 2),
        r["gc"] or "-",
        num(r["waf"], "{:.3f}"),
        num(r["waf_model"], "{:.3f}"),
        num(r["tbw_rel"], "{:.2f}x"),
        num(r["dwpd_rel"], "{:.2f}x"),
        num(r["steady_iops"]),
        num(r["p99_us"]),
    ]


def op_table_section(op_rows: list[dict], given: dict | None) -> list[str]:
    """The OP table of ``op_rows``, or the one the context gives ({headers, rows, numeric?, caption?})."""
    parts = ["<h2>OP table</h2>"]
    if given:
        if given.get("caption"):
            parts.append(f"<p>{esc(given['caption'])}</p>")
        parts.append(html_table(given["headers"], given["rows"], given.get("numeric")))
        return parts
    parts.append(html_table(_OP_HEADERS, [_op_cells(r) for r in op_rows], [False, False] + [True] * 12))
    parts.append(
        "<p>TBW and DWPD relative to the least-OP simulation of the same workload on the same drive. "
        "WAF model: the "
        "analytic model of the GC policy at the OP garbage collection sees.</p>"
    )
    return parts


def _waf_rule_text(w: dict | None) -> str:
    if w is None:
        return "-"
    if w["reached"]:
        return (
            f'<span class="ok">reached</span> at round {w["round"]} (range {pct(w["range_ratio"])}, '
            f"excursion {pct(w['excursion_ratio'])})"
        )
    return (
        f'<span class="no">not reached</span> (last window: range {pct(w.get("range_ratio"))}, '
        f"excursion {pct(w.get('excursion_ratio'))})"
    )


def _iops_rule_text(i: dict | None) -> str:
    if i is None:
        return "-"
    if i["reached"]:
        return f'<span class="ok">reached</span> from {num(i["start_s"], "{:,.1f}")} s, {num(i["iops"])} IOPS'
    return '<span class="no">not reached</span>'


def verdicts_section(vs: list[dict]) -> list[str]:
    """The SNIA rule's verdicts per result, on WAF and on IOPS, and where fresh-out-of-box ends."""
    rows = []
    for v in vs:
        i = v.get("iops_rule")
        fob = "-" if i is None or i["fob_end_s"] is None else num(i["fob_end_s"], "{:,.1f}") + " s"
        rows.append(
            [v["label"], v["workload"], ("html", _waf_rule_text(v.get("waf_rule"))), ("html", _iops_rule_text(i)), fob]
        )
    return [
        "<h2>Steady-state verdicts</h2>",
        html_table(
            ["result", "workload", "WAF rule (functional)", "IOPS rule (timed / measured)", "fresh-out-of-box ends"],
            rows,
            [False] * 5,
        ),
    ]


def assumptions_section() -> list[str]:
    parts = ["<h2>Model assumptions</h2><dl>"]
    parts += [f"<dt><b>{esc(k)}</b></dt><dd>{esc(desc)}</dd>" for k, desc in ASSUMPTIONS]
    parts.append("</dl>")
    return parts


_MEASURED_KEYS = (
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


def _config_of(d: dict) -> dict:
    """What made a result: a simulation's version and config (and resolved timing), a
    measurement's test, target and parameters."""
    if results.kind_of(d) != results.SIM:
        return {k: d.get(k) for k in _MEASURED_KEYS}
    body = {"opsim_version": d.get("opsim_version"), "config": d["config"]}
    if d.get("timed"):
        body["timing_resolved"] = d["timed"].get("timing")
    return body


def configs_section(docs: Sequence[dict], labels: Sequence[str], ctx: dict) -> list[str]:
    """The report's version, its inputs, and every result's config in a collapsed block."""
    parts = [
        "<h2>Versions and configurations</h2>",
        f"<p>Report by opsim {esc(__version__)}."
        + (f" Inputs: {esc(', '.join(ctx['inputs']))}." if ctx.get("inputs") else "")
        + "</p>",
    ]
    for d, lab in zip(docs, labels):
        parts.append(
            f"<details><summary>{esc(lab)} ({esc(groups_of([d])[0])})</summary>"
            f"<pre>{esc(json.dumps(_config_of(d), indent=2, default=str))}</pre></details>"
        )
    return parts


def trace_profile_section(profiles: Sequence[dict]) -> list[str]:
    """One row per trace profile (``opsim trace profile --json``): the split, footprints,
    overwrite ratio, sequential share, the curve at 20% of the written blocks and the fitted
    workload with its error (docs/workloads.md, "Profiling a trace")."""
    rows = []
    for d in profiles:
        at = {c["blocks"]: c["writes"] for c in d["curve_at"]}
        fit = d.get("fit") or {}
        rows.append(
            [
                os.path.basename(d["path"]) + (" (partial)" if d.get("partial") else ""),
                num(d["records"]),
                pct(d["write"]["ios"] / max(1, d["records"])),
                size(d["write_footprint_bytes"]),
                pct(d["overwrite_ratio"]),
                pct(d["sequential_share"]),
                pct(at.get(0.2)),
                fit.get("skew", "-"),
                "-" if "error" not in fit else f"{100 * fit['error']:.2f}",
            ]
        )
    return [
        "<h2>Trace profiles</h2>",
        "<p>Block writes per 4 KiB block; the curve is the share of the writes taken by the hottest 20% of the "
        "written blocks; the fit is corrected for each trace's finite number of writes and its error is the largest "
        "gap between the curves, in points of the writes.</p>",
        html_table(
            [
                "trace",
                "requests",
                "writes",
                "written",
                "overwrites",
                "sequential",
                "hottest 20%",
                "fitted --skew",
                "fit error (points)",
            ],
            rows,
            [False, True, True, True, True, True, True, False, True],
        ),
    ]
