"""Why no OP meets the targets: per target, the level the screen would need, or why none
can (above what the drive gives with no garbage collection, or more OP than the capacity allows)."""

from __future__ import annotations

from ..capacity import (
    GB,
)
from .screen import (
    ceiling,
)


def why_not(drive, wl, targets, levels, allowed, rows, per_target_model, max_held_back) -> list[dict]:
    """Why no allowed OP meets the targets: per failing target, what the largest allowed OP
    gives, what the drive gives with no GC at all, and the OP the analytic models say the
    target would need."""
    if not allowed:
        return [
            {
                "target": "capacity",
                "reason": f"no candidate level keeps {targets.min_capacity:,} bytes usable "
                "and leaves room for garbage collection",
            }
        ]
    last = allowed[-1]
    row = rows[last.index]
    ceil = ceiling(drive, wl, targets, last)
    out = []
    for name in row["fails"]:
        _, val, need = row["checks"][name]
        item = {
            "target": name,
            "at_largest_allowed": {
                "held_back": float(last.held_back),
                "user_bytes": last.user_bytes,
                "value": val,
                "required": need,
                "source": row["source"],
            },
        }
        idx = per_target_model.get(name)
        if name == "iops" and need > ceil["iops"]:
            item["reason"] = (
                f"no OP can reach {need:,.0f} IOPS on this workload: even with no garbage "
                f"collection at all the drive gives {ceil['iops']:,.0f} (limited by the "
                f"{ceil['bottleneck']}; bottleneck bound)"
            )
        elif name == "tbw" and need > ceil["tbw_tb"]:
            item["reason"] = (
                f"no OP can reach {need:,.0f} TB: even at WAF {ceil['waf']:.2f} (no GC) the P/E "
                f"budget gives {ceil['tbw_tb']:,.0f} TB"
            )
        elif name == "lifetime" and need > ceil["lifetime_years"]:
            item["reason"] = (
                f"no OP can last {need:g} years at this write rate: even with no GC the P/E "
                f"budget lasts {ceil['lifetime_years']:.2f} years"
            )
        elif idx is not None:
            item["reason"] = (
                f"needs about {100 * float(levels[idx].held_back):.1f}% of the native capacity held "
                f"back ({levels[idx].user_bytes / GB:,.1f} GB usable; analytic models), more than "
                + (
                    "the capacity target allows"
                    if targets.min_capacity is not None and levels[idx].user_bytes < targets.min_capacity
                    else "--max-held-back allows"
                )
            )
        elif name.startswith(("latency", "read latency", "write latency")):
            v = "not measured" if val is None else f"{val:,.0f} us"
            item["reason"] = f"at the largest allowed OP the simulated {name} is {v}, above {need:,g} us"
        else:
            item["reason"] = "not met anywhere up to 75% of the native capacity held back (analytic models)"
        out.append(item)
    return out
