"""The timed model on the seed drives' presets beside their published figures
(``opsim validate --suite seeds`` and ``--suite workloads``): steady-state IOPS ratios against
OP, the Micron write-saturation curve, AnandTech's IO consistency, SanDisk's TBW trend."""

from __future__ import annotations

import numpy as np

from .. import presets
from .._output import markdown_table
from ..planner.endurance import X400_OP_LABELS, X400_TBW
from ..presets import scale_model
from ..sim import simulate
from .steady import steady_run


def _ratio_row(drive, label, sim, published, tol, status):
    err = (sim - published) / published
    return {
        "drive": drive,
        "figure": label,
        "simulated": sim,
        "published": published,
        "error": err,
        "tolerance": tol,
        "status": status,
        "pass": abs(err) <= tol,
    }


def run_seeds(scale: int = 64, progress=None) -> list[dict]:
    """The seeds' steady-state IOPS ratios, simulated on the presets (docs/validation.md)."""

    rows = []
    steps = 0

    def tick():
        nonlocal steps
        steps += 1
        if progress:
            progress(steps, 17)

    # Micron 1100 (seed 000): 11k / 13k / 29k IOPS at 1024 / 1000 / 800 GB
    m = {gb: steady_run("micron-1100-1tb", gb * 10**9, scale)["iops"] for gb in (1024, 1000, 800)}
    tick()
    rows.append(
        _ratio_row("Micron 1100 1 TB", "IOPS 1000 GB / 1024 GB", m[1000] / m[1024], 13000 / 11000, 0.15, "predicted")
    )
    rows.append(
        _ratio_row("Micron 1100 1 TB", "IOPS 800 GB / 1024 GB", m[800] / m[1024], 29000 / 11000, 0.15, "fitted")
    )
    # the same with Dynamic Write Acceleration modelled (SLC cache; controller refitted with it)
    m = {gb: steady_run("micron-1100-1tb-dwa", gb * 10**9, scale)["iops"] for gb in (1024, 1000, 800)}
    tick()
    rows.append(
        _ratio_row(
            "Micron 1100 1 TB, DWA", "IOPS 1000 GB / 1024 GB", m[1000] / m[1024], 13000 / 11000, 0.15, "predicted"
        )
    )
    rows.append(
        _ratio_row("Micron 1100 1 TB, DWA", "IOPS 800 GB / 1024 GB", m[800] / m[1024], 29000 / 11000, 0.15, "predicted")
    )
    # Intel 320 160 GB (seed 002): 3x with 20%, 4x with 40% of the native LBAs held back
    native = 160041885696
    i = {h: steady_run("intel-320-160gb", int(native * (1 - h)), scale)["iops"] for h in (0.0, 0.2, 0.4)}
    tick()
    rows.append(_ratio_row("Intel 320 160 GB", "IOPS 20% held back / native", i[0.2] / i[0.0], 3.0, 0.15, "fitted"))
    rows.append(_ratio_row("Intel 320 160 GB", "IOPS 40% held back / native", i[0.4] / i[0.0], 4.0, 0.15, "predicted"))
    # SanDisk X400 (seed 001): 4 KiB random write IOPS at 0%, 7% and 28% OP
    rows += x400_rows(scale, progress=tick)
    return rows


# seed 001: steady 4 KiB random-write IOPS at 0%, 7% and 28% OP, by capacity at 0%
X400_IOPS = {128: (651, 2255, 5737), 256: (2131, 4547, 9948), 512: (2696, 5693, 9957), 1024: (2176, 4066, 8264)}


def x400_users(cap: int) -> dict:
    """User capacities (bytes) of an X400 at 0%, 7% and 28% OP (seed 001's table)."""
    return {0: cap * 10**9, 7: cap * 15 // 16 * 10**9, 28: cap * 200 // 256 * 10**9}


def x400_rows(scale: int = 64, timing: dict | None = None, physical=None, progress=None) -> list[dict]:
    """The eight X400 IOPS ratios (7%/0%, 28%/0% per capacity) simulated beside seed 001's.
    ``timing`` overrides the presets' timing; ``physical(cap)`` their physical capacity (bytes)."""

    rows = []
    for cap, (p0, p7, p28) in X400_IOPS.items():
        drive = {"physical_capacity": physical(cap) // scale} if physical else None
        x = {
            k: steady_run(f"sandisk-x400-{cap}gb", u, scale, timing, drive=drive)["iops"]
            for k, u in x400_users(cap).items()
        }
        if progress:
            progress()
        # the controller times are fitted at 256 GB; the presets' reserve was chosen on all eight
        status = "fitted" if cap == 256 else "predicted, reserve chosen"
        rows.append(
            _ratio_row(
                f"SanDisk X400 {cap} GB", "IOPS 7% / 0%", x[7] / x[0], p7 / p0, 0.25, "predicted, reserve chosen"
            )
            | {"iops": [x[0], x[7], x[28]]}
        )
        rows.append(
            _ratio_row(f"SanDisk X400 {cap} GB", "IOPS 28% / 0%", x[28] / x[0], p28 / p0, 0.25, status)
            | {"iops": [x[0], x[7], x[28]]}
        )
    return rows


def write_saturation(
    preset: str = "micron-1100-1tb", scale: int = 256, user_bytes: int | None = None, ftl: dict | None = None
) -> dict:
    """Write saturation from fresh-out-of-box: 4 KiB random writes at QD32 for 7 drive writes,
    per-second IOPS; returns the FOB, transition and steady figures found in the series.

    ``burst_end_s``: the first point under 90% of the FOB level (the end of the burst at that
    level; ``fob_end_s`` is the timed model's phase rule, the first point under half of it),
    ``burst_drive_writes``: the host writes up to then, in drive capacities; ``transition``:
    the highest and lowest point between the burst's end and the steady-state window."""
    cfg = scale_model(preset, scale, user_bytes or None)
    user = cfg["drive"]["user_capacity"]
    cfg |= {
        "run": {"precondition": "none", "warmup_drive_writes": 5, "measure_drive_writes": 2, "round_drive_writes": 0.25}
    }
    if ftl:
        cfg["ftl"] = ftl
    r = simulate(cfg)
    s = r.timed["iops_series"]
    fob = max(x["iops"] for x in s[:3])
    steady = r.timed["steady_iops"]
    steady_start = r.timed["phases"]["steady_start_s"]
    burst_end = next((x["t_s"] for x in s if x["iops"] < 0.9 * fob), None)
    dt = s[0]["t_s"] if s else 1.0
    pages = user // 4096
    written = sum(x["write_iops"] * dt for x in s if burst_end is not None and x["t_s"] < burst_end)
    between = [
        x["iops"]
        for x in s
        if burst_end is not None and burst_end <= x["t_s"] and (steady_start is None or x["t_s"] < steady_start)
    ]
    return {
        "preset": preset,
        "fob_iops": fob,
        "steady_iops": steady,
        "fob_end_s": r.timed["phases"]["fob_end_s"],
        "steady_start_s": steady_start,
        "series": s,
        "cliff_ratio": fob / steady if steady else None,
        "burst_end_s": burst_end,
        "burst_drive_writes": written / pages if burst_end is not None else None,
        "transition": (max(between), min(between)) if between else None,
        "waf": r.waf,
        "fold_pages": r.counters.get("fold_pages", 0),
        "scale": scale,
    }


#: Micron 1100 1 TB write saturation, seed 000 Figure 1 (4 KiB random writes, QD32, full capacity)
MICRON_WSAT = {"fob_iops": 80000, "transition": (70000, 18000), "steady_iops": 11000}


def micron_dwa(scale: int = 256) -> dict:
    """Write saturation of the Micron 1100 against seed 000's Figure 1, three ways: the preset
    without Dynamic Write Acceleration (``micron-1100-1tb``), the preset with it
    (``micron-1100-1tb-dwa``: the SLC cache, controller refitted with it), and the latter with
    its cache turned off (the same controller: what the cache alone changes)."""
    runs = {
        "no DWA (micron-1100-1tb)": write_saturation("micron-1100-1tb", scale),
        "DWA (micron-1100-1tb-dwa)": write_saturation("micron-1100-1tb-dwa", scale),
        "DWA preset, cache off": write_saturation("micron-1100-1tb-dwa", scale, ftl={"slc_cache": {"enabled": False}}),
    }
    return {"published": MICRON_WSAT, "runs": runs, "scale": scale}


def micron_dwa_markdown(doc: dict) -> str:
    pub = doc["published"]
    names = list(doc["runs"])
    runs = [doc["runs"][n] for n in names]

    def k(v):
        return f"{v:,.0f}" if v is not None else "-"

    rows = [
        ["FOB IOPS (first seconds)", f"over {pub['fob_iops']:,}"]
        + [k(r["fob_iops"]) for r in runs]
        + ["fitted (DWA preset: 1 / fw_overhead_us); predicted (the others)"],
        ["FOB level held for (drive writes)", "-"]
        + [f"{r['burst_drive_writes']:.2f}" if r["burst_drive_writes"] is not None else "-" for r in runs]
        + ["predicted"],
        ["transition, highest and lowest IOPS", f"{pub['transition'][0]:,} to {pub['transition'][1]:,}"]
        + [f"{k(r['transition'][0])} to {k(r['transition'][1])}" if r["transition"] else "-" for r in runs]
        + ["predicted"],
        ["steady-state IOPS (SNIA rule, from FOB)", f"about {pub['steady_iops']:,}"]
        + [k(r["steady_iops"]) for r in runs]
        + ["predicted (both presets fitted to 11,000 in steady state after analytic preconditioning)"],
        ["FOB / steady state", f"over {pub['fob_iops'] / pub['steady_iops']:.1f}"]
        + [f"{r['cliff_ratio']:.1f}" if r["cliff_ratio"] else "-" for r in runs]
        + ["predicted"],
        ["WAF from FOB to the end (7 drive writes)", "-"] + [f"{r['waf']:.2f}" for r in runs] + ["predicted"],
    ]
    return markdown_table(
        ["figure", "published (seed 000, Figure 1)", *names, "fitted or predicted"], "ll" + "r" * len(names) + "l", rows
    )


def seeds_cells(rows: list[dict]) -> list[list[str]]:
    """The seed drives' rows as table cells: drive, figure, simulated, published, error,
    tolerance, fitted or predicted, pass/FAIL (the markdown table and `opsim validate`'s)."""
    return [
        [
            r["drive"],
            r["figure"],
            f"{r['simulated']:.2f}",
            f"{r['published']:.2f}",
            f"{100 * r['error']:+.1f}%",
            f"{100 * r['tolerance']:.0f}%",
            r["status"],
            "pass" if r["pass"] else "FAIL",
        ]
        for r in rows
    ]


def seeds_markdown(rows: list[dict]) -> str:
    return markdown_table(
        ["drive", "figure", "simulated", "published", "error", "tolerance", "fitted or predicted", ""],
        "llrrrrll",
        seeds_cells(rows),
    )


def io_consistency(preset: str = "samsung-840-pro-256gb", scale: int = 16) -> list[dict]:
    """AnandTech's experiment (seed 003): fill the drive, then 4 KiB random writes at QD32
    over the span, at the default capacity and with 12%, 25% and 50% of the NAND as spare;
    per-second IOPS in the second half of the run (steady state)."""
    nand = 256 * 2**30
    out = []
    for label, spare in [("default", None), ("12% spare", 0.12), ("25% spare", 0.25), ("50% spare", 0.50)]:
        user = 256 * 10**9 if spare is None else int(nand * (1 - spare))
        r = simulate(
            {
                "preset": preset,
                "drive": {"user_capacity": user // scale // 4096 * 4096, "physical_capacity": nand // scale},
                "run": {
                    "precondition": "fill",
                    "warmup_drive_writes": 3,
                    "measure_drive_writes": 1.5,
                    "round_drive_writes": 0.25,
                },
            }
        )
        s = np.array([p["iops"] for p in r.timed["iops_series"]])
        tail = s[len(s) // 2 :]
        med = float(np.median(tail))
        out.append(
            {
                "configuration": label,
                "spare_area": r.op["physical"],
                "waf": r.waf,
                "median_iops": med,
                "p99_9_over_p50": float(np.quantile(tail, 0.999)) / med,
                "cv": float(tail.std() / tail.mean()),
                "seconds": len(tail),
                "zero_iops_seconds": int((tail == 0).sum()),
            }
        )
    return out


def x400_tbw_trend(model_bytes: int = 2 << 30, caps=(128, 256, 512, 1024)) -> list[dict]:
    """SanDisk X400 endurance against OP under the JEDEC JESD219 enterprise workload (seed 001's
    TBW table): host bytes writable per P/E cycle = physical NAND / WAF(OP), WAF from the
    functional simulator on a scale model of the preset (about ``model_bytes`` of NAND, same
    block size and OP), relative to 0% OP, beside SanDisk's TBW ratings relative to 0%."""
    rows = []
    for cap in caps:
        name = f"sandisk-x400-{cap}gb"
        d = presets.settings(name)["drive"]
        scale = max(1, round(presets.physical_bytes(name) / model_bytes))
        users = (cap * 10**9, cap * 15 // 16 * 10**9, cap * 200 // 256 * 10**9)  # 0%, 7%, 28% (seed 001)
        per_pe = []
        for label, u in zip(X400_OP_LABELS, users):
            model = presets.scale_model(name, scale, u)["drive"]  # functional only: no timing
            phys = model["physical_capacity"]
            r = simulate(
                {
                    "drive": model | {"page_size": d["page_size"], "pages_per_block": d["pages_per_block"]},
                    "workload": {"type": "jesd219"},
                    "run": {"seed": 5, "warmup_drive_writes": 2, "measure_drive_writes": 2, "round_drive_writes": 0.25},
                }
            )
            per_pe.append((label, r.op["user"], r.waf, phys * scale / r.waf))
        for (label, op, waf, tb), pub in zip(per_pe, X400_TBW[cap]):
            rows.append(
                {
                    "drive": f"SanDisk X400 {cap} GB",
                    "op": label,
                    "op_user": op,
                    "waf": waf,
                    "host_bytes_per_pe": tb,
                    "simulated_vs_0": tb / per_pe[0][3],
                    "published_tbw": pub,
                    "published_vs_0": pub / X400_TBW[cap][0],
                }
            )
    return rows


# ----------------------------------------------------------------------------- SK hynix (seed 004)
#
# "Over-Provisioning and Performance of Mobile Storage" (SK hynix, 2016; seed 004): BrickSim on a
