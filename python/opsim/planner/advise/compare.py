"""Buy or over-provision: the candidates of a compare file ranked by cost per usable TB-year,
each with the drives it takes and the OP each drive needs (``opsim advise --compare FILE``;
docs/planner.md, "Buy or over-provision").

Each candidate's fleet is solved by :mod:`.fleet` (the drive count and the OP, the advisor the
judge), costed by :mod:`.fleet_cost`; the choice is the feasible candidate with the lowest cost
per usable TB-year (ties: the lower high end, then the file's order).  A candidate no OP lets
meet the need is listed with the advisor's reasons, not dropped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from ...errors import InputError
from ...results import SCHEMA_ADVISE_COMPARE
from ..endurance import TB
from .compare_file import Candidate, CompareFile
from .confirm import DEFAULT_MODEL_BLOCKS
from .fleet import ENDS, Fleet, per_drive_iops, per_drive_writes
from .fleet_cost import fleet_cost
from .trace import fitted_workload, replay_model

#: the advisor's IO budget of a level's run (its default)
IO_BUDGET = 1_500_000

SCHEMA = SCHEMA_ADVISE_COMPARE

#: the advisor's target names as the need says them
_BINDING = {"lifetime": "endurance", "iops": "iops"}


def compare(
    cf: CompareFile,
    *,
    step: Fraction = Fraction(1, 200),
    max_held_back: Fraction = Fraction(1, 2),
    confirm: bool = True,
    model_blocks: int = DEFAULT_MODEL_BLOCKS,
    seed: int = 1,
    progress: Callable[[str], None] | None = None,
) -> dict:
    """The comparison's JSON document (``opsim advise --compare FILE --json``)."""
    if cf.need.latency and not confirm:
        raise cf.error(
            ("need", "max_latency"), "latency has no analytic model: it needs the simulator (drop --no-simulate)"
        )
    if cf.need.trace is not None and confirm:
        check_replays(cf, model_blocks)
    out = []
    for cand in cf.candidates:
        fleet = Fleet(
            cand,
            cf.need,
            step=step,
            max_held_back=max_held_back,
            confirm=confirm,
            model_blocks=model_blocks,
            seed=seed,
            progress=progress,
        )
        out.append(_entry(cf, cand, fleet, fleet.solve()))
    return {
        "schema": SCHEMA,
        "schema_version": 1,
        "file": cf.path,
        "need": cf.need.to_dict(),
        "candidates": out,
        "choice": choose(out),
        "search": {
            "step_of_native": float(step),
            "max_held_back": float(max_held_back),
            "confirmed": confirm,
            "model_blocks": model_blocks,
            "seed": seed,
        },
        "assumptions": assumptions(cf, confirm),
    }


def check_replays(cf: CompareFile, model_blocks: int) -> None:
    """Each candidate's replay of the need's trace planned before any work (the advisor's own
    plan, :func:`.trace.replay_model`): a trace too short to age a drive's scale model is
    refused now, naming the candidate, not after the screens of those before it."""
    src = cf.need.trace
    assert src is not None  # called with a trace
    for i, cand in enumerate(cf.candidates):
        try:
            replay_model(cand.drive, fitted_workload(src), src, model_blocks, IO_BUDGET)
        except InputError as e:
            key = "drive" if cand.drive.load_args.get("preset_option") == "drive" else "preset"
            raise cf.error(("candidate", i, key), f"the need's trace on this drive: {e}") from None


def _entry(cf: CompareFile, cand: Candidate, fleet: Fleet, solved: dict) -> dict:
    """One candidate's row: its fleet, cost, range and why."""
    need, n, doc = cf.need, solved["n"], solved["doc"]
    e: dict = cand.to_dict() | {"feasible": n is not None, "search": _search(fleet, solved)}
    e["curve"] = [
        p | {"cost_per_usable_tb_year": fleet_cost(cand, need, p["drives"])["per_usable_tb_year"]}
        for p in solved["curve"]
    ]
    if n is None:
        reasons = [] if doc is None else doc["reasons"]
        why = solved.get("why") or "; ".join(f"{r['target']}: {r['reason']}" for r in reasons)
        return e | _empty() | {"reasons": reasons, "why": f"cannot meet the need at any OP allowed: {why}"}
    rec = doc["recommendation"]
    cost = fleet_cost(cand, need, n)
    ends = solved["ends"]
    n_low = min(x for x in (ends["high"], n) if x is not None)  # the intervals' optimistic end: fewer drives
    n_high = None if ends["low"] is None else max(ends["low"], n)
    low, high = fleet_cost(cand, need, n_low), None if n_high is None else fleet_cost(cand, need, n_high)
    c = fleet.cap_level(n)
    assert c is not None  # a feasible count holds the need
    binding = [_BINDING.get(b, b) for b in rec["binding"]] or ["capacity"]
    return e | {
        "held_back": rec["held_back"],
        "held_back_max": float(fleet.levels[c].held_back),
        "usable_bytes_per_drive": rec["user_bytes"],
        "usable_bytes_total": n * rec["user_bytes"],
        "drives": n,
        "drives_low": n_low,
        "drives_high": n_high,
        "per_drive": {"writes_per_day_bytes": per_drive_writes(need, n), "iops": per_drive_iops(need, n)},
        "cost": cost["total"],
        "cost_low": low["total"],
        "cost_high": None if high is None else high["total"],
        "cost_breakdown": cost,
        "cost_per_usable_tb_year": cost["per_usable_tb_year"],
        "cost_per_usable_tb_year_low": low["per_usable_tb_year"],
        "cost_per_usable_tb_year_high": None if high is None else high["per_usable_tb_year"],
        "binding": binding,
        "why": binding_why(cf, n, rec, binding),
        "source": rec["source"],
        "figures": rec["figures"],
        "plan_command": rec["plan_command"],
        "reasons": [],
        "advisor_assumptions": doc["assumptions"],
    }


def _empty() -> dict:
    keys = (
        "held_back",
        "held_back_max",
        "usable_bytes_per_drive",
        "usable_bytes_total",
        "drives",
        "drives_low",
        "drives_high",
        "per_drive",
        "cost",
        "cost_low",
        "cost_high",
        "cost_breakdown",
        "cost_per_usable_tb_year",
        "cost_per_usable_tb_year_low",
        "cost_per_usable_tb_year_high",
        "source",
        "figures",
        "plan_command",
    )
    return dict.fromkeys(keys) | {"binding": []}


def _search(fleet: Fleet, solved: dict) -> dict:
    return {
        "drives_from": fleet.n_lo if fleet.allowed else None,
        "drives_to": fleet.n_cap if fleet.allowed else None,
        "screen_drives": {e: solved["ends"].get(e) for e in ENDS},
        "judged": fleet.probes,
        "interval": fleet.has_interval,
    }


def binding_why(cf: CompareFile, n: int, rec: dict, binding: list[str]) -> str:
    """Which target binds, in the need's terms, and what one grid step less OP would miss."""
    need = cf.need
    u = rec["user_bytes"]
    fit = -(-need.usable // u)
    count = f"{n:,} drives" + (
        f" (more than the {fit:,} that hold the need at this OP: with {fit:,} each drive would write more than it allows)"
        if n > fit
        else f" (ceil({need.usable / TB:,.3g} TB / {u / TB:,.4g} TB))"
    )
    if binding == ["capacity"]:
        return f"capacity: every drive meets its targets at its native capacity; {count}"
    below = rec["below"]
    parts = []
    for name in rec["binding"]:
        _, val, req = below["checks"][name]
        v = "not measured" if val is None else f"{val:,.3g}"
        parts.append(f"{_BINDING.get(name, name)} {v} against {req:,.3g}")
    return (
        f"{', '.join(binding)}: {count}, each writing {per_drive_writes(need, n) / TB:,.3g} TB a day"
        + (f" and serving {per_drive_iops(need, n):,.0f} IOPS" if need.min_iops_per_tb is not None else "")
        + f"; one step less OP ({100 * below['held_back']:.1f}% held back) misses it: {'; '.join(parts)}"
    )


def choose(entries: list[dict]) -> dict | None:
    """The feasible candidate with the lowest cost per usable TB-year, and why."""
    ok = [e for e in entries if e["feasible"]]
    if not ok:
        return None
    ranked = sorted(
        ok,
        key=lambda e: (
            e["cost_per_usable_tb_year"],
            math.inf if e["cost_per_usable_tb_year_high"] is None else e["cost_per_usable_tb_year_high"],
        ),
    )
    best = ranked[0]
    why = f"{best['name']}: {_money(best)} per usable TB-year, the lowest"
    others = [f"{e['name']} {_money(e)}" for e in ranked[1:]]
    if others:
        why += f" (against {', '.join(others)})"
    overlap = [
        e["name"]
        for e in ranked[1:]
        if best["cost_per_usable_tb_year_high"] is None
        or e["cost_per_usable_tb_year_low"] <= best["cost_per_usable_tb_year_high"]
    ]
    if overlap:
        why += (
            f"; the ranges overlap with {', '.join(overlap)}'s: within the drives' 95% intervals the order could turn"
        )
    infeasible = [e["name"] for e in entries if not e["feasible"]]
    if infeasible:
        why += f"; {', '.join(infeasible)} cannot meet the need"
    return {
        "name": best["name"],
        "cost_per_usable_tb_year": best["cost_per_usable_tb_year"],
        "ranges_overlap": overlap,
        "why": why + f"; binding: {best['why']}",
    }


def _money(e: dict) -> str:
    hi = e["cost_per_usable_tb_year_high"]
    return (
        f"{e['cost_per_usable_tb_year']:,.4g} ({e['cost_per_usable_tb_year_low']:,.4g}-"
        f"{'no limit' if hi is None else f'{hi:,.4g}'})"
    )


def assumptions(cf: CompareFile, confirm: bool) -> list[str]:
    """The model behind the numbers, said once."""
    need = cf.need
    return [
        f"the need: {need.usable / TB:,.6g} TB usable (decimal: 10^12 bytes), {need.host_writes_per_day / TB:,.6g} TB "
        f"of host writes a day, {need.years:g} years; workload: {need.workload.describe()}",
        "writes, IOPS and data spread evenly over the drives (no hot drive); each drive's writes are the fleet's over "
        "the drive count, rounded up to a byte; its IOPS min_iops_per_tb for every TB of the need over the count",
        "drives: the fewest that hold the usable capacity at the OP they then need (the advisor at that per-drive "
        "rate); held_back is that least OP, held_back_max the most the same count allows (the same cost); more drives "
        "than the most OP allowed (--max-held-back) would need are not bought to spread the writes",
        "endurance: the advisor's lifetime target, the P/E budget (P/E x NAND / WAF) lasting the years at the "
        "per-drive writes; no drive failures, spares or replacements; warranty terms not modelled",
        "cost: drives once (price), bays once (slots, per drive), power at watts_active all the time for the years "
        "(365 days) at power_cost_per_kwh; nothing discounted; per usable TB-year = total / (the need's TB x years)",
        "ranges: the fleet solved again on each end of the drive's 95% intervals (its calibrated profile: the "
        "analytic screen's lowest and highest TBW and IOPS at every level); the high cost from the low end; a drive "
        "without a profile has none; 'no limit': at the low end no allowed OP meets the need",
        "each candidate's figures are the advisor's at its drive count: "
        + ("confirmed by the timed simulator on a scale model" if confirm else "the analytic screen (--no-simulate)"),
    ]
