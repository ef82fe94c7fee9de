"""A steady-state 4 KiB random-write run of a preset at a given user capacity (an OP level),
simulated on a scale model: capacities divided by ``scale``, every timing and die count kept
(steady-state IOPS depend on WAF and on the resources, not on the capacity).  The seed-drive
validation and the calibration both measure with it."""

from __future__ import annotations

from ..presets import scale_model
from ..sim import simulate


def steady_run(
    preset: str,
    user_bytes: int,
    scale: int = 64,
    timing: dict | None = None,
    drive: dict | None = None,
    seed: int = 1,
    measure: float = 0.5,
) -> dict:
    """Steady-state 4 KiB random writes at QD32 on ``preset`` configured to ``user_bytes``."""
    cfg = scale_model(preset, scale, user_bytes, drive) | {
        "run": {
            "seed": seed,
            "precondition": "analytic",
            "warmup_drive_writes": 0.25,
            "measure_drive_writes": measure,
            "round_drive_writes": measure / 5,
        },
        "timing": timing or {},
    }
    r = simulate(cfg)
    m = r.measure_counters
    # pages the controller copies per host write: GC copies and SLC-cache folds (both cost gc_fw_us)
    return {
        "iops": r.timed["measured_iops"],
        "waf": r.waf,
        "copies_per_write": (m["gc_copy_pages"] + m.get("fold_pages", 0)) / max(1, m["host_write_pages"]),
        "op_user": r.op["user"],
        "result": r,
    }
