"""Skewed against uniform writes under each temperature separation (``ftl.separation``): the
table in docs/validation.md, "Skewed against uniform writes".

A preset's scale model (whole drive, sequential fill, then 3 drive writes of warm-up and 2
measured) under uniform, Zipf 0.8 and hot-cold 20/80 4 KiB random writes, for each policy;
beside them the analytic models at the OP garbage collection sees and the unit's pages: the
greedy mean field for uniform writes (Van Houdt 2013), and for hot-cold the FIFO/LRW model
without separation (Desnoyers 2012) and the ideal separation bound (each class its own pool,
the spare split between them at the optimum, each pool greedy's mean field: Desnoyers 2012's
hot/cold pools).

Each WAF is the mean over ``SEEDS`` with a 95% t interval (Student's t over the seeds' WAFs;
zipf over uniform from each seed's pair); the first seed's runs are the table's runs before
seeds were added, bit-identical.  A row "separation unknown" is a drive whose policy is not
known, each of the three as likely: the mean of the policies' means, and the envelope of their
intervals.

    python -m opsim.validation.separation [PRESET] [SCALE]     # 45 timed runs: ten minutes or so
"""

from __future__ import annotations

import math
import statistics
import sys
from collections.abc import Sequence

from scipy.optimize import minimize_scalar
from scipy.stats import t as student_t

from .. import models, presets
from .._output import markdown_table
from ..sim import describe, simulate_many

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
#: the seeds each WAF is the mean of (the first is RUN's: the table's runs before intervals)
SEEDS = (1, 2, 3, 4, 5)
RATIO = "zipf / uniform"


def ideal_separation(op: float, b: int, hot: float = 0.2, hot_writes: float = 0.8) -> float:
    """WAF of hot-cold writes with each class in its own pool and the spare split optimally."""

    def waf(s_hot: float) -> float:
        cold = op - s_hot
        return hot_writes * models.waf_greedy(s_hot / hot, b) + (1 - hot_writes) * models.waf_greedy(
            cold / (1 - hot), b
        )

    return float(minimize_scalar(waf, bounds=(1e-4 * op, op * (1 - 1e-4)), method="bounded").fun)


def t_interval(xs: Sequence[float]) -> tuple[float, float]:
    """The 95% Student's t interval of the mean of ``xs`` (one value: that value, no width)."""
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, m
    half = float(student_t.ppf(0.975, len(xs) - 1)) * statistics.stdev(xs) / math.sqrt(len(xs))
    return m - half, m + half


def rows(preset: str, scale: int, seeds: Sequence[int] = SEEDS) -> list[dict]:
    """One row per policy: its WAF under each workload and zipf's over uniform, each the mean
    over ``seeds`` with its 95% interval (``interval``) and every seed's value (``seeds``)."""
    cells = [(ftl, name, wl, seed) for ftl in POLICIES for name, wl in WORKLOADS.items() for seed in seeds]
    configs = []
    for ftl, _, wl, seed in cells:
        cfg = presets.scale_model(preset, scale)
        cfg["ftl"] = cfg.get("ftl", {}) | ftl
        configs.append(cfg | {"workload": wl, "run": RUN | {"seed": seed}})
    results = simulate_many(configs)
    wafs: dict[tuple, float] = {}
    for (ftl, name, _, seed), r in zip(cells, results):
        assert r.waf is not None  # every run writes
        wafs[ftl.get("separation", "none"), name, seed] = r.waf
    out = []
    for ftl in POLICIES:
        sep = ftl.get("separation", "none")
        per = {name: [wafs[sep, name, s] for s in seeds] for name in WORKLOADS}
        per[RATIO] = [z / u - 1 for z, u in zip(per["zipf 0.8"], per["uniform"])]
        row: dict = {"separation": sep, "seeds": per, "interval": {k: t_interval(v) for k, v in per.items()}}
        row |= {name: statistics.fmean(v) for name, v in per.items() if name != RATIO}
        row[RATIO] = row["zipf 0.8"] / row["uniform"] - 1
        out.append(row)
    return out


def unknown(policies: Sequence[dict]) -> dict:
    """A drive whose separation is not known, each policy as likely: the mean of the policies'
    values and the envelope of their intervals."""
    row: dict = {"separation": "separation unknown (each as likely)", "interval": {}}
    for k in (*WORKLOADS, RATIO):
        row[k] = statistics.fmean(r[k] for r in policies)
        row["interval"][k] = (min(r["interval"][k][0] for r in policies), max(r["interval"][k][1] for r in policies))
    return row


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


def cell(row: dict, col: str) -> str:
    """A cell: the value, with its 95% interval where the row has one."""
    v = row[col]
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    fmt = "{:+.1%}" if col == RATIO else "{:.3f}"
    iv = row.get("interval", {}).get(col)
    return fmt.format(v) + ("" if iv is None else f" ({fmt.format(iv[0])} to {fmt.format(iv[1])})")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    preset = args[0] if args else "solidigm-d7-p5520-1920gb"
    # the arguments checked before the long work
    if preset not in presets.names():
        print(
            f"separation: PRESET {preset!r}: no such preset; the presets are {', '.join(presets.names())}",
            file=sys.stderr,
        )
        return 2
    if len(args) > 1 and not (args[1].isdigit() and int(args[1]) >= 1):
        print(f"separation: SCALE {args[1]!r}: must be a whole number, 1 or more", file=sys.stderr)
        return 2
    scale = int(args[1]) if len(args) > 1 else 256
    policies = rows(preset, scale)
    table = [*policies, unknown(policies), analytic(preset, scale)]
    cols = ["separation", *WORKLOADS, RATIO]
    print(markdown_table(cols, "lrrrr", [[cell(r, c) for c in cols] for r in table]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
