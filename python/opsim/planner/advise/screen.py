"""The analytic screen: every candidate OP level on a fine grid, WAF from the analytic models
at the OP garbage collection sees, steady IOPS from a bottleneck bound on the drive's
resources, endurance from the P/E budget."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Protocol

from ... import models
from ...errors import ConfigError
from ...sim import costs, simulate
from ...workload.spec import Workload
from ..capacity import (
    GB,
    IDEMA_MIN_GB,
    Capacity,
    capacity_from_sectors,
    idema_lba_count,
    op_all,
)
from ..endurance import DAYS_PER_YEAR, RATING_FORMULA, TB, dwpd_from_tbw, lifetime_days, projection
from .drive import Drive
from .targets import Targets, latency_name


class SkewRatio(Protocol):
    """What scales the LRW model under skew (``opsim.planner.advise.skew.SkewModel``)."""

    def ratio(self, op_seen: float) -> float: ...

    def describe(self) -> str: ...

    def model_pages(self, drive_pages: int) -> int: ...


@dataclass
class Level:
    index: int
    user: Capacity
    held_back: Fraction  # (native - user) / native, by LBAs

    @property
    def user_bytes(self) -> int:
        return self.user.bytes


def grid(drive: Drive, step: Fraction, max_held_back: Fraction) -> list[Level]:
    """Candidate user capacities from the native one down to ``max_held_back`` of it, in
    steps of ``step`` of the native capacity: whole marketed GB (IDEMA LBA counts) when the
    native capacity is an IDEMA count, else whole sectors (floor, as HDAT2 does); the levels
    at which garbage collection sees some OP (the core's figure)."""
    nat = drive.native
    caps: dict[int, Capacity] = {}
    k = 0
    while k * step <= max_held_back:
        h = k * step
        if nat.gb is not None and nat.gb * (1 - h) >= IDEMA_MIN_GB:
            ugb = math.floor(nat.gb * (1 - h))
            cap = capacity_from_sectors(idema_lba_count(ugb, nat.sector_size), nat.sector_size)
        else:
            cap = capacity_from_sectors(max(1, math.floor(nat.sectors * (1 - h))), nat.sector_size)
        caps.setdefault(cap.sectors, cap)
        k += 1
    drive.prefetch_ops(c.bytes for c in caps.values())
    out: list[Level] = []
    for cap in caps.values():
        if drive.op_seen(cap.bytes) > 0:
            out.append(Level(len(out), cap, Fraction(nat.sectors - cap.sectors, nat.sectors)))
    return out


def level_ops(drive: Drive, lv: Level) -> dict:
    """OP in every basis at the level (exact, from the drive's capacities as given: the core
    rounds the NAND to whole blocks of its model; tests/core/test_core_truth_op.py pins the two
    together) and the OP garbage collection sees (the core's figure)."""
    ops = op_all(Fraction(lv.user_bytes), Fraction(drive.physical_bytes), Fraction(drive.native.bytes))
    return {k: float(v) for k, v in ops.items()} | {"seen_by_gc": drive.op_seen(lv.user_bytes)}


def waf_gc_model(drive: Drive, wl: Workload, op_seen: float, skew: SkewRatio | None = None) -> tuple[float, str]:
    """WAF of garbage collection (NAND pages programmed per host page) and the model's name.
    The user pages classified (zipf ranks) are the real drive's, at its native capacity.  A
    skewed workload's LRW figure is scaled by ``skew`` (``opsim.planner.advise.skew``: the
    core's functional model at anchor levels) when given."""
    if wl.sequential >= 1:
        return 1.0, "sequential overwrite: every block GC meets is fully invalid (WAF 1)"
    mix = (
        ""
        if wl.sequential == 0
        else f"; all writes taken as random (no analytic model for a {100 * wl.sequential:g}% sequential mix: "
        "an upper bound, the simulator runs the mix)"
    )
    w, src = _waf_random_model(drive, wl, op_seen, skew)
    return w, src + mix


def _waf_random_model(drive: Drive, wl: Workload, op_seen: float, skew: SkewRatio | None) -> tuple[float, str]:
    b = drive.pages_per_block
    pages = int(drive.native.bytes // drive.page_size)
    cls = wl.classes(pages) if wl.skewed else None
    if cls is not None:
        src = {"hot-cold": "hot/cold", "zipf": f"zipf (binned into {len(cls)} classes)", "jesd219": "JESD219 zones"}[
            wl.skew
        ]
        if skew is None:
            return models.waf_lrw_classes(op_seen, cls), (
                f"non-uniform LRW model (Desnoyers 2012), {src}: one shared write frontier; with GC copies "
                "in a frontier of their own (the core's default) the simulator is lower"
            )
        if wl.skew == "zipf":  # the anchors' page count: the real drive's is waf_drive_pages
            mp = skew.model_pages(pages)
            cls = wl.classes(mp)
            assert cls is not None  # a zipf workload has classes at any page count
            src = f"zipf over the scale model's {mp:,} pages (binned into {len(cls)} classes)"
        w = models.waf_lrw_classes(op_seen, cls)
        # the simulator's ratio scales GC's copies, never below none (WAF 1)
        return max(1.0, w * skew.ratio(op_seen)), f"non-uniform LRW model (Desnoyers 2012), {src}, {skew.describe()}"
    if drive.gc == "fifo":
        return models.waf_fifo(op_seen), "LRW Lambert-W (Desnoyers 2012)"
    if drive.gc == "random":
        return models.waf_random(op_seen), "(1 + OP) / OP (random victim)"
    if drive.gc == "greedy":
        return models.waf_greedy(op_seen, b), f"greedy mean field (Van Houdt 2013), b = {b}"
    return models.waf_greedy(op_seen, b), (
        f"greedy mean field (Van Houdt 2013), b = {b}, as an approximation for {drive.gc} GC"
    )


def waf_gc_drive_pages(drive: Drive, wl: Workload, op_seen: float, skew: SkewRatio | None) -> float | None:
    """A zipf workload's GC WAF with the real drive's pages in the LRW model (the screen's
    figure, :func:`waf_gc_model`, takes the scale model's, as the simulator runs): the zipf
    tail over many more pages is longer and the LRW model's WAF higher.  None for other
    workloads (their classes do not depend on the page count) or without the anchors."""
    if skew is None or wl.skew != "zipf" or wl.sequential > 0:
        return None
    cls = wl.classes(int(drive.native.bytes // drive.page_size))
    assert cls is not None  # a zipf workload has classes
    return models.waf_lrw_classes(op_seen, cls) * skew.ratio(op_seen)


def rmw_factor(wl: Workload, page: int) -> float:
    """NAND bytes programmed per host byte before GC: mapping units programmed per write over
    the bytes written (sub-page writes are read-modify-write of their units)."""
    return wl.pages_per_io(page) * page / wl.bytes_per_io()


def waf_bytes(waf_gc: float, wl: Workload, page: int, folds: bool = False, meta: float = 0.0) -> float:
    """Host-byte WAF: GC's page WAF (plus the SLC-mode program of each page when the SLC cache
    folds every write, and the WAF floor's ``meta`` pages, ``ftl.meta_writes``) times the units
    programmed per host byte.  The floor's pages also take NAND space, which the analytic WAF
    does not see (the simulator does: docs/planner.md)."""
    return (waf_gc + (1 if folds else 0) + meta) * rmw_factor(wl, page)


def iops_bound(drive: Drive, wl: Workload, waf_gc: float) -> tuple[float, str, dict]:
    """Steady IOPS bound: 1 / the busiest resource's time per IO (operational bottleneck
    law), as the core's cost model (``opsim.sim.costs``, the timed model's own charges)
    gives it for the drive's resolved timing, write cache and SLC folding, and the
    workload's mix at the commands the core keeps in flight (``outstanding``: the queue depth
    over its queues), where the core bounds random reads, and a mix's reads waiting behind the
    writes' NAND work, by their latency too (docs/timed.md, "Random reads at a queue depth").
    Returns (IOPS, bottleneck, {resource: IOPS it allows})."""
    model = drive.cost_model()
    mix = {
        "write_fraction": wl.write_fraction,
        "units_per_io": wl.pages_per_io(drive.page_size),
        "bytes_per_io": wl.bytes_per_io(),
        "queue_depth": drive.timing["outstanding"],
    }
    c = costs(model, mix, waf_gc)
    return c["iops"], c["bottleneck"], {r["resource"]: r["iops"] for r in c["resources"]}


def endurance(drive: Drive, wl: Workload, targets: Targets, waf: float, user_bytes: int, iops: float | None) -> dict:
    """TBW (host TB writable = P/E x NAND / WAF), DWPD, lifetime, price per IOPS."""
    out: dict[str, float | None] = {
        "tbw_tb": None,
        "dwpd": None,
        "lifetime_years": None,
        "price_per_iops": None,
        "price_per_gb": None,
    }
    if drive.pe is not None:
        proj = projection(Fraction(str(drive.pe)), drive.physical_bytes, Fraction(waf).limit_denominator(10**9))
        tbw = Fraction(proj["host_bytes_writable"], TB)
        out["tbw_tb"] = float(tbw)
        days = Fraction(str(targets.dwpd_years)) * DAYS_PER_YEAR
        out["dwpd"] = float(dwpd_from_tbw(tbw, Fraction(user_bytes, GB), days, RATING_FORMULA))
        if wl.write_rate:
            out["lifetime_years"] = float(lifetime_days(tbw, wl.write_rate) / DAYS_PER_YEAR)
    if targets.price is not None:
        out["price_per_gb"] = targets.price / (user_bytes / GB)
        if iops:
            out["price_per_iops"] = targets.price / iops
    return out


def screen_level(drive: Drive, wl: Workload, targets: Targets, lv: Level, skew: SkewRatio | None = None) -> dict:
    ops = level_ops(drive, lv)
    wg, wsrc = waf_gc_model(drive, wl, ops["seen_by_gc"], skew)
    wg = float(wg)
    wb = waf_bytes(wg, wl, drive.page_size, drive.slc_folds, drive.meta_writes)
    iops, bott, _ = iops_bound(drive, wl, wg)
    row = {
        "index": lv.index,
        "user_bytes": lv.user_bytes,
        "user_sectors": lv.user.sectors,
        "user_gb": lv.user.gb,
        "held_back": float(lv.held_back),
        "op": ops,
        "waf_gc": wg,
        "waf": wb,
        "iops": iops,
        "bottleneck": bott,
        "latency_us": None,
        "source": "model",
        "waf_model": wsrc,
    }
    wd = waf_gc_drive_pages(drive, wl, ops["seen_by_gc"], skew)
    row["waf_drive_pages"] = (
        None if wd is None else waf_bytes(wd, wl, drive.page_size, drive.slc_folds, drive.meta_writes)
    )
    row |= endurance(drive, wl, targets, wb, lv.user_bytes, iops)
    return row


def ceiling(drive: Drive, wl: Workload, targets: Targets, lv: Level) -> dict:
    """What the drive gives at this capacity with no garbage collection at all (WAF = 1 per
    programmed unit): the limit no amount of OP can pass."""
    iops, bott, _ = iops_bound(drive, wl, 1.0)
    wb = waf_bytes(1.0, wl, drive.page_size, drive.slc_folds, drive.meta_writes)
    return {"iops": iops, "bottleneck": bott, "waf": wb} | endurance(drive, wl, targets, wb, lv.user_bytes, iops)


def check(targets: Targets, row: dict, base: dict | None) -> dict:
    """{target name: (met?, value, required)} for one level's figures (plain bools and
    floats; met is None when the figure was not measured); ``base`` is the native
    configuration's row from the same source, for relative targets."""

    def of_base(key: str, relative: bool) -> Any:
        """The native configuration's figure a relative target multiplies (1 for an absolute one)."""
        if not relative:
            return 1
        assert base is not None  # relative targets are checked against the native configuration
        return base[key]

    req = []
    if targets.min_iops is not None:
        req.append(("iops", row["iops"], targets.min_iops * of_base("iops", targets.min_iops_relative), 1))
    if targets.min_tbw is not None:
        req.append(("tbw", row["tbw_tb"], targets.min_tbw * of_base("tbw_tb", targets.min_tbw_relative), 1))
    if targets.min_dwpd is not None:
        req.append(("dwpd", row["dwpd"], targets.min_dwpd, 1))
    if targets.min_lifetime_years is not None:
        req.append(("lifetime", row["lifetime_years"], targets.min_lifetime_years, 1))
    if targets.min_capacity is not None:
        req.append(("capacity", row["user_bytes"], targets.min_capacity, 1))
    for kind, key, us in targets.latency:
        lat = row.get("latency_us")
        req.append((latency_name(kind, key), None if not lat else lat.get(kind, {}).get(key), us, -1))
    out = {}
    for name, v, need, sign in req:
        v = None if v is None else float(v)
        out[name] = (None if v is None else bool(v >= need if sign > 0 else v <= need), v, float(need))
    return out


def failing(checks: dict, skip_unknown: bool = True) -> list[str]:
    """The targets a level misses; with ``skip_unknown`` False, also those not measured."""
    return [k for k, (ok, _, _) in checks.items() if ok is False or (ok is None and not skip_unknown)]


def jesd219_available() -> bool:
    """Whether the Rust core accepts ``workload.type = "jesd219"`` (another issue adds it)."""
    try:
        simulate(
            {
                "drive": {"user_capacity": 60 * 2**20, "physical_capacity": 64 * 2**20, "pages_per_block": 64},
                "workload": {"type": "jesd219"},
                "run": {"precondition": "none", "warmup_drive_writes": 0, "measure_drive_writes": 0.01},
            }
        )
        return True
    except ConfigError:
        return False
