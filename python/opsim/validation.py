"""Validation suites: simulated figures beside the published models and seed numbers.

``opsim validate`` runs a suite and prints the table; ``--markdown FILE`` writes it as the
table docs/validation.md includes.  Every figure is computed when the command runs.
"""

from __future__ import annotations

import math

from . import models
from ._output import markdown_table
from .sim import simulate

MIN_BLOCKS = 16_000


def _drive(op: float, b: int, gc: str, d=None, workload=None, seed=11, warmup=4.0, measure=6.0):
    user_pages = math.ceil(MIN_BLOCKS * 1.02 * b / (1 + op))
    return {
        "drive": {"user_capacity": user_pages * 4096, "op": op, "pages_per_block": b},
        "ftl": {"gc": gc} | ({"d": d} if d is not None else {}),
        "workload": workload or {"type": "uniform"},
        "run": {"seed": seed, "warmup_drive_writes": warmup, "measure_drive_writes": measure,
                "round_drive_writes": 0.5},
    }


def oracle_cases():
    """(label, config, model function of the effective OP, model name)."""
    cases = []
    for b in (32, 64, 256):
        for op in (0.07, 0.28, 0.50):
            cases.append((f"greedy b={b}", op, _drive(op, b, "greedy"),
                          lambda e, b=b: models.waf_greedy(e, b), "greedy mean field (Van Houdt 2013)"))
    for op in (0.07, 0.28, 0.50):
        cases.append(("fifo b=64", op, _drive(op, 64, "fifo"), models.waf_fifo, "LRW Lambert-W (Desnoyers 2012)"))
    for op in (0.07, 0.28, 0.50):
        cases.append(("random b=64", op, _drive(op, 64, "random"), models.waf_random, "(1+OP)/OP"))
    for d in (2, 10):
        for op in (0.07, 0.28):
            cases.append((f"d-choices d={d} b=64", op, _drive(op, 64, "d-choices", d=d),
                          lambda e, d=d: models.waf_dchoices(e, 64, d), "d-choices mean field (Van Houdt 2013)"))
    hc = {"type": "hot-cold", "hot_fraction": 0.2, "hot_write_fraction": 0.8}
    for op in (0.07, 0.28):
        cases.append(("fifo 80/20 hot/cold b=64", op, _drive(op, 64, "fifo", workload=hc),
                      lambda e: models.waf_lrw_classes(e, [(0.2, 0.8), (0.8, 0.2)]),
                      "non-uniform LRW (Desnoyers 2012)"))
    # JEDEC JESD219's LBA mix (50% of writes to the first 5% of LBAs, 30% to the next 15%)
    jz = {"type": "jesd219", "request_size": "4KiB"}
    for op in (0.07, 0.28):
        cases.append(("fifo JESD219 zones 4 KiB b=64", op, _drive(op, 64, "fifo", workload=jz),
                      lambda e: models.waf_lrw_classes(e, models.jesd219_classes()),
                      "non-uniform LRW (Desnoyers 2012)"))
    return cases


def run_oracles(progress=None) -> list[dict]:
    rows = []
    cases = oracle_cases()
    for i, (label, op, cfg, model, source) in enumerate(cases):
        r = simulate(cfg)
        eff = r.op["effective"]
        m = model(eff)
        rows.append({"case": label, "op_user": op, "op_effective": eff, "blocks": r.drive["blocks"],
                     "waf_sim": r.waf, "waf_model": m, "error": (r.waf - m) / m,
                     "steady_round": r.steady_state["round"], "model": source})
        if progress:
            progress(i + 1, len(cases))
    return rows


def markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["case", "OP (user)", "OP seen by GC", "blocks", "WAF simulated", "WAF model", "error", "model"], "lrrrrrrl",
        [[r["case"], f"{100 * r['op_user']:.0f}%", f"{100 * r['op_effective']:.3f}%", f"{r['blocks']:,}",
          f"{r['waf_sim']:.4f}", f"{r['waf_model']:.4f}", f"{100 * r['error']:+.2f}%", r["model"]] for r in rows])


# ----------------------------------------------------------------------------- seed drives

def _ratio_row(drive, label, sim, published, tol, status):
    err = (sim - published) / published
    return {"drive": drive, "figure": label, "simulated": sim, "published": published,
            "error": err, "tolerance": tol, "status": status, "pass": abs(err) <= tol}


def run_seeds(scale: int = 64, progress=None) -> list[dict]:
    """The seeds' steady-state IOPS ratios, simulated on the presets (docs/validation.md)."""
    from .calibration import steady_run

    rows = []
    steps = 0

    def tick():
        nonlocal steps
        steps += 1
        if progress:
            progress(steps, 16)

    # Micron 1100 (seed 000): 11k / 13k / 29k IOPS at 1024 / 1000 / 800 GB
    m = {gb: steady_run("micron-1100-1tb", gb * 10**9, scale)["iops"] for gb in (1024, 1000, 800)}
    tick()
    rows.append(_ratio_row("Micron 1100 1 TB", "IOPS 1000 GB / 1024 GB", m[1000] / m[1024], 13000 / 11000, 0.15,
                           "predicted"))
    rows.append(_ratio_row("Micron 1100 1 TB", "IOPS 800 GB / 1024 GB", m[800] / m[1024], 29000 / 11000, 0.15,
                           "fitted"))
    # Intel 320 160 GB (seed 002): 3x with 20%, 4x with 40% of the native LBAs held back
    native = 160041885696
    i = {h: steady_run("intel-320-160gb", int(native * (1 - h)), scale)["iops"] for h in (0.0, 0.2, 0.4)}
    tick()
    rows.append(_ratio_row("Intel 320 160 GB", "IOPS 20% held back / native", i[0.2] / i[0.0], 3.0, 0.15, "fitted"))
    rows.append(_ratio_row("Intel 320 160 GB", "IOPS 40% held back / native", i[0.4] / i[0.0], 4.0, 0.15,
                           "predicted"))
    # SanDisk X400 (seed 001): 4 KiB random write IOPS at 0%, 7% and 28% OP
    pub = {128: (651, 2255, 5737), 256: (2131, 4547, 9948), 512: (2696, 5693, 9957), 1024: (2176, 4066, 8264)}
    for cap, (p0, p7, p28) in pub.items():
        users = {0: cap * 10**9, 7: cap * 15 // 16 * 10**9, 28: cap * 200 // 256 * 10**9}
        x = {k: steady_run(f"sandisk-x400-{cap}gb", u, scale)["iops"] for k, u in users.items()}
        tick()
        status = "fitted" if cap == 256 else "predicted"
        rows.append(_ratio_row(f"SanDisk X400 {cap} GB", "IOPS 7% / 0%", x[7] / x[0], p7 / p0, 0.25, "predicted"))
        rows.append(_ratio_row(f"SanDisk X400 {cap} GB", "IOPS 28% / 0%", x[28] / x[0], p28 / p0, 0.25, status))
    return rows


def write_saturation(preset: str = "micron-1100-1tb", scale: int = 256, user_bytes: int | None = None) -> dict:
    """Write saturation from fresh-out-of-box: 4 KiB random writes at QD32 for 3 drive writes,
    per-second IOPS; returns the FOB, transition and steady figures found in the series."""
    from .commands.presets import load
    from .units import parse_size

    p = {x["name"]: x for x in load()}[preset]["settings"]
    phys = parse_size(p["drive"]["physical_capacity"]) // scale
    user = (user_bytes or parse_size(p["drive"]["user_capacity"])) // scale // 4096 * 4096
    r = simulate({"preset": preset, "drive": {"user_capacity": user, "physical_capacity": phys},
                  "run": {"precondition": "none", "warmup_drive_writes": 5, "measure_drive_writes": 2,
                          "round_drive_writes": 0.25}})
    s = r.timed["iops_series"]
    fob = max(x["iops"] for x in s[:3])
    steady = r.timed["steady_iops"]
    return {"preset": preset, "fob_iops": fob, "steady_iops": steady, "fob_end_s": r.timed["phases"]["fob_end_s"],
            "steady_start_s": r.timed["phases"]["steady_start_s"], "series": s,
            "cliff_ratio": fob / steady if steady else None}


def seeds_markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["drive", "figure", "simulated", "published", "error", "tolerance", "fitted or predicted", ""], "llrrrrll",
        [[r["drive"], r["figure"], f"{r['simulated']:.2f}", f"{r['published']:.2f}", f"{100 * r['error']:+.1f}%",
          f"{100 * r['tolerance']:.0f}%", r["status"], "pass" if r["pass"] else "FAIL"] for r in rows])


def io_consistency(preset: str = "samsung-840-pro-256gb", scale: int = 16) -> list[dict]:
    """AnandTech's experiment (seed 003): fill the drive, then 4 KiB random writes at QD32
    over the span, at the default capacity and with 12%, 25% and 50% of the NAND as spare;
    per-second IOPS in the second half of the run (steady state)."""
    import numpy as np

    nand = 256 * 2**30
    out = []
    for label, spare in [("default", None), ("12% spare", 0.12), ("25% spare", 0.25), ("50% spare", 0.50)]:
        user = 256 * 10**9 if spare is None else int(nand * (1 - spare))
        r = simulate({"preset": preset,
                      "drive": {"user_capacity": user // scale // 4096 * 4096, "physical_capacity": nand // scale},
                      "run": {"precondition": "fill", "warmup_drive_writes": 3, "measure_drive_writes": 1.5,
                              "round_drive_writes": 0.25}})
        s = np.array([p["iops"] for p in r.timed["iops_series"]])
        tail = s[len(s) // 2:]
        med = float(np.median(tail))
        out.append({"configuration": label, "spare_area": r.op["physical"], "waf": r.waf, "median_iops": med,
                    "p99_9_over_p50": float(np.quantile(tail, 0.999)) / med,
                    "cv": float(tail.std() / tail.mean()), "seconds": int(len(tail)),
                    "zero_iops_seconds": int((tail == 0).sum())})
    return out


def x400_tbw_trend(model_bytes: int = 2 << 30, caps=(128, 256, 512, 1024)) -> list[dict]:
    """SanDisk X400 endurance against OP under the JEDEC JESD219 enterprise workload (seed 001's
    TBW table): host bytes writable per P/E cycle = physical NAND / WAF(OP), WAF from the
    functional simulator on a scale model of the preset (about ``model_bytes`` of NAND, same
    block size and OP), relative to 0% OP, beside SanDisk's TBW ratings relative to 0%."""
    from .commands.presets import load
    from .planner.endurance import X400_OP_LABELS, X400_TBW
    from .units import parse_size

    presets = {x["name"]: x["settings"] for x in load()}
    rows = []
    for cap in caps:
        d = presets[f"sandisk-x400-{cap}gb"]["drive"]
        scale = max(1, round(parse_size(d["physical_capacity"]) / model_bytes))
        phys = parse_size(d["physical_capacity"]) // scale
        users = (cap * 10**9, cap * 15 // 16 * 10**9, cap * 200 // 256 * 10**9)  # 0%, 7%, 28% (seed 001)
        per_pe = []
        for label, u in zip(X400_OP_LABELS, users):
            r = simulate({
                "drive": {"user_capacity": u // scale // 4096 * 4096, "physical_capacity": phys,
                          "page_size": d["page_size"], "pages_per_block": d["pages_per_block"]},
                "workload": {"type": "jesd219"},
                "run": {"seed": 5, "warmup_drive_writes": 2, "measure_drive_writes": 2, "round_drive_writes": 0.25},
            })
            per_pe.append((label, r.op["user"], r.waf, phys * scale / r.waf))
        for (label, op, waf, tb), pub in zip(per_pe, X400_TBW[cap]):
            rows.append({"drive": f"SanDisk X400 {cap} GB", "op": label, "op_user": op, "waf": waf,
                         "host_bytes_per_pe": tb, "simulated_vs_0": tb / per_pe[0][3],
                         "published_tbw": pub, "published_vs_0": pub / X400_TBW[cap][0]})
    return rows
