"""Endurance ratings under the JEDEC workloads: the WAF a datasheet's DWPD or TBW is rated at.

JEDEC JESD218 (SSD requirements and endurance test method) defines a drive's endurance rating
(TBW) as the host writes, under the workload of its application class (enterprise or client),
that the drive sustains while it keeps its class's data retention, UBER and failure rate;
JESD219 and JESD219A (SSD endurance workloads) define the workloads.  The enterprise workload
is synthetic: random writes over 100% of the user LBAs, 50% of them to the first 5% of the
LBAs, 30% to the next 15%, 20% to the remaining 80%, in transfer sizes from 512 B to 64 KiB
(67% of them 4 KiB), those of 4 KiB and up 4 KiB-aligned.  The core generates it (``[workload]
type = "jesd219"``: ``JESD219_SIZES`` and ``JESD219_ZONES`` in
``crates/opsim-core/src/workload/mod.rs``, checked against the table by the Rust test
``jesd219_sizes_and_zones_match_the_definition``; docs/workloads.md).  The client workload
(JESD219A) is a recorded trace of a notebook's commands, which the core does not carry.

A P/E rating is therefore derived at the WAF of the class's workload.  Enterprise: the core's
functional simulator runs the JESD219 workload over the whole user range of a scale model of
the calibrated drive (the core's scale model at the drive's OP seen by GC: as many superblocks,
each smaller, run as FTL blocks of that many pages), after a sequential fill and
``WARMUP_DRIVE_WRITES`` drive writes of ageing.  Client: the model's 4 KiB uniform random-write
WAF over the whole drive stands in for the trace, and the source says so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache

from ..sim import describe, simulate
from .inputs import DriveSpec

#: the workload of each of JESD218's application classes (inputs.ENDURANCE_CLASSES), as the P/E source names it
WORKLOAD = {
    "enterprise": "the JESD219 enterprise workload",
    "client": "4 KiB random writes over the whole drive, standing in for the JESD219A client workload "
    "(a recorded trace the core does not carry)",
}
#: drive writes of ageing after the sequential fill: the cold 80% of the LBAs takes 20% of the
#: writes, so each of its pages is rewritten about every 4 drive writes (the 7450 PRO's WAF:
#: 2.5687 after 4, 2.5702 after 10)
WARMUP_DRIVE_WRITES = 4.0
MEASURE_DRIVE_WRITES = 1.0
#: the scale model's size: the core's rule with at most this many 256-page blocks' worth of
#: pages (4 Mi pages; the 7450 PRO: its 1,589 superblocks of 2,048 pages each, WAF 2.569;
#: 2.557 on units of 512 or 1,024 pages, 2.558 on the timed scale model's 1,536)
MODEL_BLOCKS = 16384


def rating_class(spec: DriveSpec) -> tuple[str, str]:
    """JESD218's application class of a datasheet's endurance rating, and why: ``[datasheet]
    class`` when given; else enterprise when the endurance is given in drive writes per day
    (data-center drives are rated per day of 24-hour use; client drives state TBW) or the drive
    is SAS; else client."""
    given = spec.endurance_class
    if given is not None:
        return given, "[datasheet] class"
    if spec.dwpd is not None:
        return "enterprise", "a data-center rating: the endurance is given in drive writes per day"
    if spec.interface == "sas":
        return "enterprise", "a SAS drive"
    return "client", "the endurance is given in TBW only and the drive is not SAS; [datasheet] class sets it"


@dataclass(frozen=True)
class RatingWaf:
    """The enterprise workload's steady WAF at one user capacity, simulated."""

    waf: float
    #: GC copies per host unit written
    copies: float
    #: the OP garbage collection sees (the core's figure, the same on the model and the drive)
    seen_by_gc: float
    #: GC units of the scale model and pages per unit
    units: int
    pages_per_unit: int
    #: the OP garbage collection sees on the scale model (the drive's, to the model's whole pages)
    model_seen_by_gc: float


def enterprise_waf(cfg: dict, user_bytes: int, seed: int = 1) -> RatingWaf:
    """The JESD219 enterprise workload's steady WAF on the drive ``cfg`` with its user capacity
    set to ``user_bytes`` (every user LBA in the workload's range), from the core's functional
    simulator on a scale model at the same OP seen by garbage collection."""
    return _enterprise_waf(json.dumps({"cfg": cfg, "user": int(user_bytes), "seed": seed}, sort_keys=True))


@lru_cache(maxsize=32)
def _enterprise_waf(key: str) -> RatingWaf:
    k = json.loads(key)
    cfg, user = k["cfg"], k["user"]
    d = describe(cfg, model_limits=False, users=[user], scale_blocks=MODEL_BLOCKS)
    level = d["levels"][0]
    seen, sm = float(level["seen_by_gc"]), level["scale_model"]
    page, ppb, units = d["drive"]["page_size"], sm["pages_per_block"], sm["blocks"]
    # the functional model of those units: a superblock without dies is a block of its pages
    # (the same GC, reserve and open units); a superblock would need [timing], and a run with
    # [timing] is timed
    ftl = {k: v for k, v in cfg.get("ftl", {}).items() if k not in ("gc_unit", "superblock_scale")}
    slc = ftl.get("slc_cache")
    if isinstance(slc, dict) and "bits_per_cell" not in slc:  # as the timing's cell gives it (curve.py)
        cell = cfg.get("timing", {}).get("cell", "tlc")
        ftl["slc_cache"] = slc | {"bits_per_cell": max(2, {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}[cell])}
    drive = {
        "physical_capacity": units * ppb * page,
        "page_size": page,
        "pages_per_block": ppb,
        "sector_size": cfg["drive"].get("sector_size", 512),
    }
    pool = describe({"drive": drive | {"user_capacity": page}, "ftl": ftl}, model_limits=False)["op"]["gc_pool_blocks"]
    model = {
        "drive": drive | {"user_capacity": math.floor(pool * ppb / (1 + seen)) * page},
        "ftl": ftl,
        "workload": {"type": "jesd219"},
        "run": {
            "seed": k["seed"],
            "precondition": "fill",
            "warmup_drive_writes": WARMUP_DRIVE_WRITES,
            "measure_drive_writes": MEASURE_DRIVE_WRITES,
            "round_drive_writes": MEASURE_DRIVE_WRITES / 4,
        },
    }
    model_seen = float(describe(model, model_limits=False)["op"]["seen_by_gc"])
    r = simulate(model)
    m = r.measure_counters
    copies = m["gc_copy_pages"] / max(1, m["host_write_pages"])
    return RatingWaf(float(r.waf or 1.0), copies, seen, units, ppb, model_seen)
