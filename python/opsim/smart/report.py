"""The table for people of a WAF result (lifetime or interval): the drive, the rule, the
counters with their units and sources, the WAF or why it is not available, the warnings."""

from __future__ import annotations

from typing import Any

from .._output import kv_table


def _human(n) -> str:
    n = float(n)
    for u, m in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= m:
            return f"{n / m:.3f} {u}"
    return f"{n:.0f} B"


def _counter_line(c) -> str:
    if not c:
        return "not available"
    raw = c.get("delta", c.get("raw"))
    s = f"{raw:,} x {c['unit']}"
    if c.get("bytes") is not None:
        s += f" = {_human(c['bytes'])}"
    return s + f"  [{c['counter']}]"


def _drive_line(d: dict) -> str:
    name = " / ".join(x for x in (d.get("model_name"), d.get("model_family")) if x) or "-"
    kinds: dict[Any, str] = {"hdd": "hard disk", "ssd": "SSD"}
    kind = kinds.get(d.get("media"), "medium unknown")
    if d.get("media") == "hdd" and d.get("rotation_rate"):
        kind = f"{d['rotation_rate']} rpm hard disk"
    what = ", ".join(x for x in (d.get("vendor"), d.get("transport") or d.get("protocol"), kind) if x)
    return f"{name} ({what})"


def waf_text(r: dict) -> str:
    d = r["drive"]
    rows = [
        ("drive", _drive_line(d)),
        ("serial", d.get("serial_number")),
        ("rule", r["rule"]),
        ("mode", "lifetime (one snapshot)" if r["mode"] == "lifetime" else "interval (AFTER - BEFORE)"),
        ("host writes", _counter_line(r.get("host_writes"))),
        ("NAND writes", _counter_line(r.get("nand_writes"))),
    ]
    if r.get("available"):
        rows.append(("WAF", f"{r['waf']:.4f}"))
        rows.append(("formula", r.get("formula")))
        if r.get("assumption"):
            rows.append(("assumption", r["assumption"]))
        if r.get("resolution_note"):
            rows.append(("note", r["resolution_note"]))
    else:
        rows.append(("WAF", "not available"))
        rows.append(("reason", r.get("reason")))
        if r.get("missing"):
            rows.append(("missing", "; ".join(r["missing"])))
    if r.get("reported_waf"):
        rows.append(("drive-reported WAF", f"{r['reported_waf']['raw']} [{r['reported_waf']['counter']}]"))
    for k, v in (r.get("raw_other") or {}).items():
        rows.append((f"raw {k}", v))
    rows.append(("units", r.get("rule_note")))
    for w in r.get("warnings") or []:
        rows.append(("warning", w))
    return kv_table(rows, title="opsim smart waf")
