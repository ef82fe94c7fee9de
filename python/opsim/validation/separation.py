"""Skewed against uniform writes under each temperature separation (``ftl.separation``): the
table in docs/validation.md, "Skewed against uniform writes".

A preset's scale model (whole drive, sequential fill, then 3 drive writes of warm-up and 2
measured) under uniform, Zipf 0.8 and hot-cold 20/80 4 KiB random writes, for each policy;
beside them the analytic models at the OP garbage collection sees and the unit's pages: the
greedy mean field for uniform writes (Van Houdt 2013), and for hot-cold the FIFO/LRW model
without separation (Desnoyers 2012) and the ideal separation bound (each class its own pool,
the spare split between them at the optimum, each pool greedy's mean field: Desnoyers 2012's
hot/cold pools).

    python -m opsim.validation.separation [PRESET] [SCALE]     # a few minutes
"""

from __future__ import annotations

import sys

from scipy.optimize import minimize_scalar

from .. import models, presets
from .._output import markdown_table
from ..sim import describe, simulate

WORKLOADS = {
    "uniform": {"type": "uniform"},
    "zipf 0.8": {"type": "zipf", "zipf_exponent": 0.8},
    "hot-cold 20/80": {"type": "hot-cold", "hot_fraction": 0.2, "hot_write_fraction": 0.8},
}
POLICIES: tuple[dict[str, str], ...] = ({}, {"separation": "gc-age"}, {"separation": "sepbit"})
RUN = {
    "seed": 1,
    "precondition": "fill",
    "warmup_drive_writes": 3,
    "measure_drive_writes": 2,
    "round_drive_writes": 0.5,
}


def ideal_separation(op: float, b: int, hot: float = 0.2, hot_writes: float = 0.8) -> float:
    """WAF of hot-cold writes with each class in its own pool and the spare split optimally."""

    def waf(s_hot: float) -> float:
        cold = op - s_hot
        return hot_writes * models.waf_greedy(s_hot / hot, b) + (1 - hot_writes) * models.waf_greedy(
            cold / (1 - hot), b
        )

    return float(minimize_scalar(waf, bounds=(1e-4 * op, op * (1 - 1e-4)), method="bounded").fun)


def rows(preset: str, scale: int) -> list[dict]:
    """One row per policy: its WAF under each workload and zipf's over uniform."""
    out = []
    for ftl in POLICIES:
        row: dict = {"separation": ftl.get("separation", "none")}
        for name, wl in WORKLOADS.items():
            cfg = presets.scale_model(preset, scale)
            cfg["ftl"] = cfg.get("ftl", {}) | ftl
            row[name] = simulate(cfg | {"workload": wl, "run": RUN}).waf
        row["zipf / uniform"] = row["zipf 0.8"] / row["uniform"] - 1
        out.append(row)
    return out


def analytic(preset: str, scale: int) -> dict:
    """The analytic models at the scale model's OP seen by GC and pages per unit."""
    d = describe(presets.scale_model(preset, scale))
    op, b = d["op"]["seen_by_gc"], d["drive"]["pages_per_block"]
    return {
        "separation": f"analytic (OP {op:.1%}, {b} pages a unit)",
        "uniform": models.waf_greedy(op, b),
        "zipf 0.8": None,
        "hot-cold 20/80": f"{models.waf_lrw_classes(op, [(0.2, 0.8), (0.8, 0.2)]):.3f} none (LRW); "
        f"{ideal_separation(op, b):.3f} ideal",
        "zipf / uniform": None,
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    preset = args[0] if args else "solidigm-d7-p5520-1920gb"
    scale = int(args[1]) if len(args) > 1 else 256
    table = [*rows(preset, scale), analytic(preset, scale)]
    cols = ["separation", *WORKLOADS, "zipf / uniform"]

    def cell(v) -> str:
        if v is None:
            return "-"
        return v if isinstance(v, str) else f"{v:.3f}"

    body = [[cell(r[c]) if c != "zipf / uniform" or r[c] is None else f"{r[c]:+.1%}" for c in cols] for r in table]
    print(markdown_table(cols, "lrrrr", body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
