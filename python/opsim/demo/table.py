"""The demo's OP table: one row per OP level with the drive-level figures (capacities, OP,
WAF simulated and modelled, TBW and DWPD against native) and each workload's IOPS, latency
and steady-state verdicts; and its cells, for the terminal and for the report."""

from __future__ import annotations

from .. import results
from ..units import pct
from .levels import SECTOR
from .study import WORKLOADS, Study

#: the terminal table's columns and alignment
HEADERS = [
    "configuration",
    "user capacity",
    "OP",
    "spare area",
    "held back",
    "WAF",
    "WAF model",
    "TBW",
    "DWPD",
    "IOPS 4K write",
    "p99.9 us",
    "IOPS 95:5",
    "WAF 95:5",
    "steady",
    "seed",
]
ALIGN = "lrrrrrrrrrrrrll"

#: the report's OP table's columns (the terminal's without "steady", with the source second)
REPORT_HEADERS = [
    "configuration",
    "source",
    "user capacity",
    "OP (user)",
    "spare area",
    "held back of native",
    "WAF 4K write",
    "WAF model",
    "TBW",
    "DWPD",
    "steady IOPS 4K write",
    "p99.9 latency 4K write (us)",
    "steady IOPS 95:5",
    "WAF 95:5",
]

REPORT_CAPTION = (
    "Full-drive capacities; WAF, TBW and DWPD from 4 KiB random writes, TBW and DWPD relative to the "
    "native capacity; IOPS: mean of the SNIA steady-state window; * = not steady (the measurement "
    "window's IOPS or WAF)."
)


def _workload_figures(doc: dict, label: str) -> dict:
    """One workload's figures at one level, from its result document."""
    ph = results.phases(doc)
    lat = results.latency(doc) or {}
    return {
        "workload": label,
        "waf": doc["waf"],
        "waf_steady": doc["steady_state"]["reached"],
        "steady_iops": ph["steady_iops"],
        "iops_steady": ph["steady_reached"],
        "measured_iops": results.measured_iops(doc),
        "fob_end_s": ph["fob_end_s"],
        "steady_start_s": ph["steady_start_s"],
        "latency_us": {k: lat.get(k) for k in ("p50", "p99", "p99.9")},
        "simulated_seconds": doc["timed"]["simulated_seconds"],
        "wall_seconds": doc["perf"]["wall_seconds"],
    }


def _level_row(study: Study, i: int, res: dict) -> dict:
    """Level ``i``'s row: its capacities and OP, the random-write WAF beside the greedy model."""
    # lazy: the models take numpy and scipy, which `opsim --help` (this package is on its path) does not need
    from .. import models  # noqa: PLC0415

    label, sectors, source = study.levels[i]
    native_sectors = study.levels[0][1]
    user = sectors * SECTOR
    rw = res[(i, "random-write")]
    return {
        "configuration": label,
        "source": source,
        "user_bytes": user,
        "op_user": (study.nand - user) / user,
        "spare_area": (study.nand - user) / study.nand,
        "held_back_of_native": (native_sectors - sectors) / native_sectors,
        "model_user_bytes": rw["drive"]["user_bytes"],
        "model_op_effective": rw["op"]["effective"],
        "waf": rw["waf"],
        "waf_model": models.waf_greedy(rw["op"]["effective"], rw["drive"]["pages_per_block"]),
        "steady_state": rw["steady_state"]["reached"],
        "workloads": {key: _workload_figures(res[(i, key)], wl_label) for key, wl_label, _wl, _run in WORKLOADS},
    }


def level_rows(study: Study, res: dict) -> list[dict]:
    """The OP table's rows from the runs' results ({(level index, workload key): document}),
    native first, with TBW and DWPD relative to native."""
    rows = [_level_row(study, i, res) for i in range(len(study.levels))]
    base = rows[0]
    for d in rows:
        # same NAND and P/E rating: host bytes writable scale with 1/WAF,
        # drive writes per day with 1/(WAF x user capacity)
        d["tbw_vs_native"] = base["waf"] / d["waf"]
        d["dwpd_vs_native"] = base["waf"] * base["user_bytes"] / (d["waf"] * d["user_bytes"])
    return rows


def _iops_cell(w: dict) -> str:
    v = w["steady_iops"] if w["iops_steady"] else w["measured_iops"]
    return f"{v:,.0f}" + ("" if w["iops_steady"] else "*")


def _drive_cells(d: dict) -> list[str]:
    """user capacity, OP, spare area, held back, WAF, WAF model, TBW, DWPD."""
    return [
        f"{d['user_bytes'] / 1e9:.1f} GB",
        pct(d["op_user"], 1),
        pct(d["spare_area"], 1),
        pct(d["held_back_of_native"], 1),
        f"{d['waf']:.3f}",
        f"{d['waf_model']:.3f}",
        f"{d['tbw_vs_native']:.2f}x",
        f"{d['dwpd_vs_native']:.2f}x",
    ]


def _workload_cells(d: dict) -> list[str]:
    """IOPS 4K write, p99.9, IOPS 95:5, WAF 95:5."""
    w, h = d["workloads"]["random-write"], d["workloads"]["read-heavy"]
    return [
        _iops_cell(w),
        f"{w['latency_us']['p99.9']:,.0f}" if w["latency_us"]["p99.9"] else "-",
        _iops_cell(h),
        f"{h['waf']:.3f}" + ("" if h["waf_steady"] else "*"),
    ]


def _steady(d: dict) -> bool:
    w, h = d["workloads"]["random-write"], d["workloads"]["read-heavy"]
    return d["steady_state"] and w["iops_steady"] and h["iops_steady"]


def text_rows(rows: list[dict]) -> list[list[str]]:
    """The terminal table's cells (columns :data:`HEADERS`)."""
    return [
        [d["configuration"], *_drive_cells(d), *_workload_cells(d), "yes" if _steady(d) else "no", d["source"]]
        for d in rows
    ]


def title(study: Study, scale: int, blocks: int, pages_per_block: int) -> str:
    """The terminal table's title: the drive, the scale model and what the columns mean."""
    return (
        f"OP study of {study.drive} ({study.nand_text}; {study.what}), greedy GC, timed model at QD32\n"
        f"simulated on a 1/{scale} scale model ({blocks} blocks of {pages_per_block:,} pages); "
        f"OP = (NAND - user)/user, spare area = (NAND - user)/NAND, held back = of {study.native_text};\n"
        "WAF, TBW and DWPD (relative to native) from 4 KiB random writes; IOPS: mean of the SNIA steady-state "
        "window; * = not steady (IOPS and WAF of the measurement window); p99.9: 4 KiB random-write latency;\n"
        "steady: the SNIA rule held on 4 KiB random-write WAF and on both workloads' IOPS"
    )


def report_table(rows: list[dict]) -> dict:
    """The OP table the report shows instead of its generated one ({headers, numeric, caption, rows})."""
    return {
        "headers": REPORT_HEADERS,
        "numeric": [False, False] + [True] * 12,
        "caption": REPORT_CAPTION,
        "rows": [[d["configuration"], d["source"], *_drive_cells(d), *_workload_cells(d)] for d in rows],
    }
