"""Calibration of the presets' fitted parameters, and the seed-drive experiments.

A steady-state 4 KiB random-write run of a preset at a given user capacity (an OP level) is
simulated on a scale model: capacities divided by ``scale``, every timing and die count
kept (steady-state IOPS depend on WAF and on the resources, not on the capacity).

The client presets' controller does ``fw_overhead_us`` of firmware work per host command
and ``gc_fw_us`` per page garbage collection copies, so while the controller is the
bottleneck   1 / IOPS = fw + copies_per_write x gc_fw.   :func:`fit_controller` solves that
for two published points, using the copies per write the simulator measures, and repeats
until the simulated IOPS match.

    python -m opsim.validation.calibration micron-1100      # prints the fitted values
    python -m opsim.validation.calibration sandisk-x400-reserve   # the X400 NAND readings compared
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

import numpy as np

from .seeds import x400_rows
from .steady import steady_run

SECTOR = 512


def fit_controller(
    preset: str,
    points: Sequence[tuple[int, float]],
    fw: float | None = None,
    scale: int = 64,
    iterations: int = 3,
    drive: dict | None = None,
) -> dict:
    """Fit (fw_overhead_us, gc_fw_us) to [(user_bytes, published IOPS)] (two points), or
    gc_fw_us alone when ``fw`` is given (then the points are ratios: IOPS relative).
    ``drive`` overrides the preset's drive settings (already scaled)."""
    a, c = (fw if fw is not None else 20.0), 10.0
    for _ in range(iterations):
        runs = [steady_run(preset, u, scale, {"fw_overhead_us": a, "gc_fw_us": c}, drive) for u, _ in points]
        if fw is None:
            # 1/IOPS_target = a + copies x c  (two equations)
            A = np.array([[1.0, r["copies_per_write"]] for r in runs])
            y = np.array([1e6 / t for _, t in points])
            a, c = (float(v) for v in np.linalg.solve(A, y))
        else:
            # a fixed; the ratio IOPS(p1)/IOPS(p0) = target: (a + k0 c) / (a + k1 c) = R
            (k0, k1), R = (runs[0]["copies_per_write"], runs[1]["copies_per_write"]), points[1][1] / points[0][1]
            c = a * (R - 1) / (k0 - R * k1)
    runs = [steady_run(preset, u, scale, {"fw_overhead_us": a, "gc_fw_us": c}, drive) for u, _ in points]
    return {
        "fw_overhead_us": round(a, 2),
        "gc_fw_us": round(c, 2),
        "check": [
            {"user_bytes": u, "target": t, "simulated_iops": r["iops"], "waf": r["waf"]}
            for (u, t), r in zip(points, runs)
        ],
    }


def fit_gc_fw(preset: str, fw: float, point: tuple[int, float], scale: int = 64, iterations: int = 3) -> dict:
    """Fit gc_fw_us alone to one published steady-state point (user_bytes, IOPS), with
    fw_overhead_us given:  1 / IOPS = fw + copies_per_write x gc_fw."""
    c = 10.0
    for _ in range(iterations):
        r = steady_run(preset, point[0], scale, {"fw_overhead_us": fw, "gc_fw_us": c})
        c = (1e6 / point[1] - fw) / r["copies_per_write"]
    r = steady_run(preset, point[0], scale, {"fw_overhead_us": fw, "gc_fw_us": round(c, 2)})
    return {
        "fw_overhead_us": round(fw, 2),
        "gc_fw_us": round(c, 2),
        "check": [{"user_bytes": point[0], "target": point[1], "simulated_iops": r["iops"], "waf": r["waf"]}],
    }


# seed 001: the 256 GB X400 at 0% (2,131 IOPS) and 28% OP (9,948 at 200 GB), the family's fit
X400_FIT_POINTS = [(256 * 10**9, 2131), (200 * 10**9, 9948)]

# Readings of the X400's NAND behind its user capacity at 0% OP, (label, physical bytes for a
# capacity in GB).  The presets use "reserve 6 GB".
X400_READINGS = [
    ("seed 001's example: 262 GB of NAND per 256 GB (2.3% spare)", lambda cap: cap * 262 // 256 * 10**9),
    ("binary NAND (cap GiB), nothing reserved", lambda cap: cap * 2**30),
    *[
        (
            f"binary NAND less a fixed {r} GB" + (" (the presets)" if r == 6 else ""),
            (lambda reserve: lambda cap: cap * 2**30 - reserve * 10**9)(r),
        )
        for r in (4, 5, 6, 7, 8)
    ],
]


def x400_reserve(scale: int = 64, readings=None) -> list[dict]:
    """For each reading of the X400's NAND (default: all of ``X400_READINGS``): refit the family's
    two controller times to the 256 GB drive (0% and 28% OP), then the eight IOPS ratios against
    seed 001."""

    out = []
    for label, phys in readings or X400_READINGS:
        fit = fit_controller(
            "sandisk-x400-256gb", X400_FIT_POINTS, scale=scale, drive={"physical_capacity": phys(256) // scale}
        )
        timing = {k: fit[k] for k in ("fw_overhead_us", "gc_fw_us")}
        rows = x400_rows(scale, timing, phys)
        out.append(
            {
                "reading": label,
                **timing,
                "spare_at_0": {cap: phys(cap) / (cap * 10**9) - 1 for cap in (128, 256, 512, 1024)},
                "ratios": [
                    {k: r[k] for k in ("drive", "figure", "simulated", "published", "error", "pass")} for r in rows
                ],
                "passing": sum(r["pass"] for r in rows),
                "worst_error": max(abs(r["error"]) for r in rows),
            }
        )
    return out


def x400_reserve_markdown(study: list[dict]) -> str:
    """The reserve study as a markdown table (docs/validation.md)."""
    head = (
        "| reading of the NAND at 0% OP | spare at 0%, 128 / 1024 GB | fw_overhead_us | gc_fw_us | "
        + " | ".join(f"{c} 7%/0% | {c} 28%/0%" for c in (128, 256, 512, 1024))
        + " | within 25% |"
    )
    lines = [head, "|---|---|---:|---:|" + "---:|" * 8 + "---:|"]
    for s in study:
        cells = [f"{r['simulated']:.2f} ({r['error']:+.0%})" for r in s["ratios"]]
        sp = s["spare_at_0"]
        lines.append(
            f"| {s['reading']} | {sp[128]:.1%} / {sp[1024]:.1%} | {s['fw_overhead_us']:.2f} | "
            f"{s['gc_fw_us']:.2f} | " + " | ".join(cells) + f" | {s['passing']}/8 |"
        )
    pub = [f"{r['published']:.2f}" for r in study[0]["ratios"]]
    lines.append("| published (seed 001) | | | | " + " | ".join(pub) + " | |")
    return "\n".join(lines)


def idema(gb: int) -> int:
    from ..planner.capacity import idema_lba_count

    return idema_lba_count(gb) * SECTOR


FITS = {
    # seed 000: 11,000 IOPS at 1024 GB, 29,000 at 800 GB (13,000 at 1000 GB is predicted)
    "micron-1100": lambda: fit_controller("micron-1100-1tb", [(1024 * 10**9, 11000), (800 * 10**9, 29000)]),
    # with Dynamic Write Acceleration (SLC cache) modelled: the fresh-out-of-box burst (over 80,000
    # IOPS) is the controller's rate, 1 / fw; then gc_fw to 11,000 IOPS at 1024 GB (29,000 at 800 GB
    # and 13,000 at 1000 GB are predicted)
    "micron-1100-dwa": lambda: fit_gc_fw("micron-1100-1tb-dwa", 1e6 / 80000, (1024 * 10**9, 11000)),
    # seed 001: 256 GB X400 at 0% (2,131) and 28% (9,948 at 200 GB)
    "sandisk-x400": lambda: fit_controller("sandisk-x400-256gb", X400_FIT_POINTS),
    # seed 002: 3x with 20% of the native LBAs held back (fw_overhead_us is an estimate)
    "intel-320": lambda: fit_controller(
        "intel-320-160gb", [(160041885696, 1.0), (int(160041885696 * 0.8) // 4096 * 4096, 3.0)], fw=40.0
    ),
}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "sandisk-x400-reserve":
        print(x400_reserve_markdown(x400_reserve()))
        return 0
    if not argv or argv[0] not in FITS:
        print(
            f"usage: python -m opsim.validation.calibration {{{','.join([*FITS, 'sandisk-x400-reserve'])}}}",
            file=sys.stderr,
        )
        return 2
    import json

    print(json.dumps(FITS[argv[0]](), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
