"""The report's "Buy or over-provision" section: each fleet comparison (``opsim advise --compare
FILE --json``) as its need, a table of the candidates and the figure of cost per usable TB-year
against the share held back (:func:`opsim.plots.fleet_cost`)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from .figures import Figures
from .markup import esc, html_table, num, pct

HEADERS = [
    "candidate",
    "price",
    "held back",
    "usable per drive",
    "drives",
    "cost",
    "per usable TB-year",
    "binding",
]


def _range(v, lo, hi, fmt: str) -> str:
    if v is None:
        return "-"
    if lo == v and hi == v:
        return num(v, fmt)
    return f"{num(v, fmt)} ({num(lo, fmt)}-{'no limit' if hi is None else num(hi, fmt)})"


def _row(c: dict) -> list[str]:
    if not c["feasible"]:
        return [c["name"], num(c["price"], "{:,.4g}"), "cannot meet the need", "-", "-", "-", "-", c["why"]]
    return [
        c["name"],
        num(c["price"], "{:,.4g}"),
        pct(c["held_back"]) + (f" (up to {pct(c['held_back_max'])})" if c["held_back_max"] > c["held_back"] else ""),
        num(c["usable_bytes_per_drive"] / 1e9, "{:,.1f} GB"),
        _range(c["drives"], c["drives_low"], c["drives_high"], "{:,}"),
        _range(c["cost"], c["cost_low"], c["cost_high"], "{:,.0f}"),
        _range(
            c["cost_per_usable_tb_year"], c["cost_per_usable_tb_year_low"], c["cost_per_usable_tb_year_high"], "{:,.3f}"
        ),
        ", ".join(c["binding"]),
    ]


def fleet_section(comparisons: Sequence[dict], figures: Figures) -> list[str]:
    """One block per comparison: the need, the candidates, the choice and why, the figure."""
    parts = [
        "<h2>Buy or over-provision</h2>",
        "<p>Each candidate's fleet: the fewest drives that hold the usable capacity at the OP they then need "
        "(the advisor at the per-drive write rate), its cost and the cost per usable TB-year; the ranges in "
        "parentheses are the fleet solved again at each end of the drive's 95% intervals (docs/planner.md, "
        "'Buy or over-provision').</p>",
    ]
    for d in comparisons:
        need = d["need"]
        name = os.path.basename(str(d["file"]))
        parts.append(
            f"<h3>{esc(name)}</h3><p>{esc(need['usable_bytes'] / 1e12)} TB usable, "
            f"{esc(need['host_writes_per_day_bytes'] / 1e12)} TB written a day, {esc(need['years'])} years; "
            f"workload: {esc(need['workload']['description'])}.</p>"
        )
        parts.append(
            html_table(HEADERS, [_row(c) for c in d["candidates"]], [False, True, True, True, True, True, True, False])
        )
        ch = d["choice"]
        parts.append(f"<p>Choice: {esc(ch['why'] if ch else 'none: no candidate can meet the need')}</p>")
        parts.append(
            figures.render_docs(
                "fleet-cost",
                f"Cost per usable TB-year: {name}",
                [d],
                [name],
                {},
                "Each candidate bought for capacity alone at every share held back (ceil(usable / usable per drive) "
                "drives): solid where the analytic screen says the fleet meets the need, dotted where it does not; "
                "the dot is the candidate's answer with its range, the star the choice.",
            )
        )
    return parts
