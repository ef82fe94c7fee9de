"""The advisor with tenants: the smallest OP that meets endurance targets when several
namespaces share the drive, with data placement and without it, side by side.

The tenants file holds ``[[namespace]]`` tables as in a simulation config (each capacity a
share of the user capacity, so the same tenants fit every candidate level), and optionally
``[ftl.placement]`` (handles, isolation) and ``[run] interleave``.  At each candidate level
the drive's scale model (``model_blocks`` blocks with the OP garbage collection sees at that
level, the core's figure) runs the tenants in the functional simulator, once per placement
mode; WAF gives TBW, DWPD and lifetime through the same endurance arithmetic as the
single-workload advisor.  WAF falls as OP grows, so the smallest passing level is bracketed
by a gallop and a bisection (:func:`.confirm.smallest_passing`).

Only WAF-derived targets (TBW, DWPD, lifetime) and usable capacity apply: IOPS and latency
targets need the timed model, which the tenants advisor does not run.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ... import userfile
from ...errors import InputError
from ...sim import describe, simulate
from ...workload.spec import Workload
from .confirm import model_blocks_asked, model_geometry, smallest_passing
from .drive import Drive
from .options import _bad
from .screen import Level, check, endurance, failing, level_ops
from .targets import Targets

#: the most bytes a tenants file may have (a few dozen tables; refuse before reading more)
MAX_FILE_BYTES = 1 << 20
#: placement modes the advisor compares
MODES = ("none", "streams", "fdp")
#: drive writes of warm-up and measurement of each level's run (sequential tenants reach
#: their steady state after one pass over their namespace; random ones after a few)
WARMUP_DRIVE_WRITES = 3.0
MEASURE_DRIVE_WRITES = 2.0


def load_tenants(path: str) -> dict:
    """The tenants file: ``namespace`` (list of tables), ``placement`` and ``run`` settings."""
    # a regular file (a FIFO or device refused unread), capped, nested at most MAX_NESTING levels
    doc = userfile.load_toml(path, what="--tenants", key="tenants", cap=MAX_FILE_BYTES)
    extra = set(doc) - {"namespace", "ftl", "run"}
    if extra:
        raise _bad(
            "tenants",
            f"{path}: unknown table(s) {', '.join(sorted(extra))}; expected [[namespace]], [ftl.placement], [run]",
        )
    ftl = doc.get("ftl", {})
    if set(ftl) - {"placement"}:
        raise _bad("tenants", f"{path}: [ftl] may hold only [ftl.placement] (the drive comes from --preset/--drive)")
    run = doc.get("run", {})
    if set(run) - {"interleave"}:
        raise _bad("tenants", f"{path}: [run] may hold only interleave")
    ns = doc.get("namespace")
    if not isinstance(ns, list) or not ns:
        raise _bad("tenants", f"{path}: no [[namespace]] table")
    for i, n in enumerate(ns):
        cap = n.get("capacity")
        share = isinstance(cap, float) or (isinstance(cap, str) and cap.strip().endswith("%"))
        if not share:
            raise InputError(
                f'namespace[{i}].capacity: {cap!r}: give a share of the user capacity ("25%" or 0.25), so the '
                "tenants fit every OP level the advisor tries",
                key=f"namespace[{i}].capacity",
            )
    placement = dict(ftl.get("placement", {}))
    placement.pop("mode", None)  # the advisor sets the mode
    return {"namespace": ns, "placement": placement, "run": run}


def model_shape(drive: Drive, model_blocks: int) -> tuple[int, int]:
    """(GC units, pages per unit) of the tenants' scale model: ``model_blocks`` of the drive's
    blocks (at most its own); a superblock drive's, the core's scale model of it (its
    superblocks kept, each smaller), run in the functional model as FTL blocks of that many
    pages: without dies a superblock is a block of its pages (the same GC, reserve and open
    units), and a superblock needs [timing], which would make the run timed."""
    if not drive.superblocks:
        return min(drive.blocks, model_blocks), drive.pages_per_block
    units, ppb, _ = model_geometry(drive, model_blocks_asked(drive, model_blocks))
    return units, ppb


def level_config(
    drive: Drive, lv: Level, tenants: dict, mode: str, blocks: int, seed: int, ppb: int | None = None
) -> dict:
    """The scale model of ``lv`` running the tenants with placement ``mode``: ``blocks``
    blocks (of ``ppb`` pages, default the drive's) holding the user pages that give the OP
    garbage collection sees at this level (the core's figure), functional model (no [timing])."""
    ppb, page = ppb or drive.pages_per_block, drive.page_size
    geometry = {
        "physical_capacity": blocks * ppb * page,
        "page_size": page,
        "pages_per_block": ppb,
        "sector_size": drive.native.sector_size,
    }
    ftl = {"gc": drive.gc, "gc_low_watermark": drive.gc_low}
    # the blocks garbage collection may fill on this model, as the core reserves them; the user
    # pages that leave it the drive's OP seen by GC at this level (its definition: pool / user - 1)
    pool = _gc_pool_blocks(geometry | {"user_capacity": page}, ftl)
    user_pages = math.floor(pool * ppb / (1 + drive.op_seen(lv.user_bytes)))
    placement = {"mode": mode} | (tenants["placement"] if mode != "none" else {})
    if mode == "streams":
        placement.pop("isolation", None)
    return {
        "drive": geometry | {"user_capacity": user_pages * page},
        "ftl": ftl | {"placement": placement},
        "namespace": tenants["namespace"],
        "run": {
            "seed": seed,
            "precondition": "fill",
            "warmup_drive_writes": WARMUP_DRIVE_WRITES,
            "measure_drive_writes": MEASURE_DRIVE_WRITES,
            "round_drive_writes": 0.5,
        }
        | tenants["run"],
    }


def _gc_pool_blocks(drive_table: dict, ftl: dict) -> int:
    """The core's GC pool (blocks outside the free-block reserve) of a drive with these tables."""
    return int(describe({"drive": drive_table, "ftl": ftl}, model_limits=False)["op"]["gc_pool_blocks"])


def advise_tenants(
    drive: Drive,
    targets: Targets,
    levels: list[Level],
    tenants: dict,
    placement: str,
    model_blocks: int,
    seed: int,
    progress: Callable[[str], None] = lambda m: None,
) -> dict:
    """The smallest level meeting ``targets`` with placement ``placement`` and with none,
    side by side, and the OP placement saves."""
    if targets.min_iops is not None or targets.latency:
        raise _bad(
            "tenants",
            "IOPS and latency targets need the timed model; with --tenants give endurance targets "
            "(--min-tbw, --min-dwpd, --min-lifetime) or --min-capacity",
        )
    if targets.min_tbw_relative:
        raise _bad("min_tbw", "a relative TBW target (4x) is not supported with --tenants; give TB")
    if not levels:
        raise _bad("max_held_back", "no candidate level leaves garbage collection any OP")
    if targets.names() and drive.pe is None and set(targets.names()) - {"capacity"}:
        raise _bad("pe", "endurance targets need the drive's P/E rating (--pe, or a preset's)")
    if targets.min_capacity is not None:
        levels = [lv for lv in levels if lv.user_bytes >= targets.min_capacity]
        if not levels:
            raise _bad("min_capacity", "no candidate level keeps this much capacity")
    blocks, ppb = model_shape(drive, model_blocks)
    modes = ["none", placement] if placement != "none" else ["none", "fdp"]
    # every config checked by the core before any simulation (errors name namespace[i].*)
    for m in modes:
        describe(level_config(drive, levels[0], tenants, m, blocks, seed, ppb))
    wl = Workload()
    cache: dict[tuple[str, int], dict] = {}

    def row(mode: str, i: int) -> dict:
        if (mode, i) not in cache:
            lv = levels[i]
            progress(f"{mode}: {100 * float(lv.held_back):.1f}% held back")
            res = simulate(level_config(drive, lv, tenants, mode, blocks, seed, ppb)).data
            r = {
                "index": i,
                "user_bytes": lv.user_bytes,
                "user_gb": lv.user.gb,
                "held_back": float(lv.held_back),
                "op": level_ops(drive, lv),
                "waf": res["waf"],
                "namespaces": [{"name": n["name"], "waf": n["waf"]} for n in res["namespaces"]],
            }
            r |= endurance(drive, wl, targets, res["waf"], lv.user_bytes, None)
            r["checks"] = check(targets, r, None)
            cache[(mode, i)] = r
        return cache[(mode, i)]

    out: dict = {"placement": placement, "modes": {}, "model_blocks": blocks}
    for m in modes:
        lo, hi = smallest_passing(len(levels), 0, lambda i, m=m: not failing(row(m, i)["checks"]))
        out["modes"][m] = {
            "recommended": None if hi is None else row(m, hi),
            "below": None if lo is None else row(m, lo),
        }
    a, b = out["modes"][modes[0]]["recommended"], out["modes"][modes[1]]["recommended"]
    out["op_saved"] = (
        None
        if a is None or b is None
        else {
            "held_back": a["held_back"] - b["held_back"],
            "user_bytes": b["user_bytes"] - a["user_bytes"],
            "by": modes[1],
        }
    )
    out["levels_simulated"] = len(cache)
    return out
