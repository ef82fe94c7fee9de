"""The functional simulator beside the published analytic models (``opsim validate``, the
default suite): greedy, FIFO, random, d-choices and windowed greedy at 16,000+ blocks."""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

from .. import models
from .._output import markdown_table
from ..sim import simulate

MIN_BLOCKS = 16_000


def _drive(op: float, b: int, gc: str, d=None, workload=None, seed=11, warmup=4.0, measure=6.0):
    user_pages = math.ceil(MIN_BLOCKS * 1.02 * b / (1 + op))
    return {
        "drive": {"user_capacity": user_pages * 4096, "op": op, "pages_per_block": b},
        "ftl": {"gc": gc} | ({"d": d} if d is not None else {}),
        "workload": workload or {"type": "uniform"},
        "run": {
            "seed": seed,
            "warmup_drive_writes": warmup,
            "measure_drive_writes": measure,
            "round_drive_writes": 0.5,
        },
    }


#: a model's WAF as a function of the effective OP
WafModel = Callable[[float], float]


def oracle_cases() -> list[tuple[str, float, dict, WafModel, str]]:
    """(label, OP, config, model function of the effective OP, model name)."""
    cases: list[tuple[str, float, dict, WafModel, str]] = []
    for b in (32, 64, 256):
        for op in (0.07, 0.28, 0.50):
            cases.append(
                (
                    f"greedy b={b}",
                    op,
                    _drive(op, b, "greedy"),
                    partial(models.waf_greedy, b=b),
                    "greedy mean field (Van Houdt 2013)",
                )
            )
    for op in (0.07, 0.28, 0.50):
        cases.append(("fifo b=64", op, _drive(op, 64, "fifo"), models.waf_fifo, "LRW Lambert-W (Desnoyers 2012)"))
    for op in (0.07, 0.28, 0.50):
        cases.append(("random b=64", op, _drive(op, 64, "random"), models.waf_random, "(1+OP)/OP"))
    for d in (2, 10):
        for op in (0.07, 0.28):
            cases.append(
                (
                    f"d-choices d={d} b=64",
                    op,
                    _drive(op, 64, "d-choices", d=d),
                    partial(models.waf_dchoices, b=64, d=d),
                    "d-choices mean field (Van Houdt 2013)",
                )
            )
    hc = {"type": "hot-cold", "hot_fraction": 0.2, "hot_write_fraction": 0.8}
    for op in (0.07, 0.28):
        cases.append(
            (
                "fifo 80/20 hot/cold b=64",
                op,
                _drive(op, 64, "fifo", workload=hc),
                lambda e: models.waf_lrw_classes(e, [(0.2, 0.8), (0.8, 0.2)]),
                "non-uniform LRW (Desnoyers 2012)",
            )
        )
    # JEDEC JESD219's LBA mix (50% of writes to the first 5% of LBAs, 30% to the next 15%)
    jz = {"type": "jesd219", "request_size": "4KiB"}
    for op in (0.07, 0.28):
        cases.append(
            (
                "fifo JESD219 zones 4 KiB b=64",
                op,
                _drive(op, 64, "fifo", workload=jz),
                lambda e: models.waf_lrw_classes(e, models.jesd219_classes()),
                "non-uniform LRW (Desnoyers 2012)",
            )
        )
    return cases


def run_oracles(progress=None) -> list[dict]:
    rows = []
    cases = oracle_cases()
    for i, (label, op, cfg, model, source) in enumerate(cases):
        r = simulate(cfg)
        eff = r.op["effective"]
        m = model(eff)
        assert r.waf is not None, f"{label}: no host writes measured"  # every case writes
        rows.append(
            {
                "case": label,
                "op_user": op,
                "op_effective": eff,
                "blocks": r.drive["blocks"],
                "waf_sim": r.waf,
                "waf_model": m,
                "error": (r.waf - m) / m,
                "steady_round": r.steady_state["round"],
                "model": source,
            }
        )
        if progress:
            progress(i + 1, len(cases))
    return rows


def markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["case", "OP (user)", "OP seen by GC", "blocks", "WAF simulated", "WAF model", "error", "model"],
        "lrrrrrrl",
        [
            [
                r["case"],
                f"{100 * r['op_user']:.0f}%",
                f"{100 * r['op_effective']:.3f}%",
                f"{r['blocks']:,}",
                f"{r['waf_sim']:.4f}",
                f"{r['waf_model']:.4f}",
                f"{100 * r['error']:+.2f}%",
                r["model"],
            ]
            for r in rows
        ],
    )
