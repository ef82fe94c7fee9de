"""The screen's WAF under a skewed workload (hot/cold, zipf, JESD219 zones).

No closed form gives greedy GC's WAF when GC copies have a write frontier of their own (the
core's default, ``ftl.gc_frontier = "separate"``: Van Houdt's "double log-structure", 2013).
The non-uniform LRW model (Desnoyers 2012, :func:`opsim.models.waf_lrw_classes`) holds for one
shared frontier (the core's functional model with ``gc_frontier = "shared"`` is within 1% of
it); with a frontier of their own the copies, mostly cold, are kept apart from the host's hot
writes and the WAF is 1% to 30% lower on the NVMe presets.  Fluid models of the two frontiers
bracket the simulator but do not pin it (every GC block a mix of all victims' survivors: above
the LRW figure; no block mixing victims of different generations: below the simulator), so
where it lies depends on how GC blocks mix their victims (docs/planner.md, "WAF under skew").

So the screen takes the LRW model's shape over OP and scales it by the ratio the core's own
functional model (the FTL the simulator runs, no timing) gives at anchor levels of the scale
model the advisor simulates: a sequential fill, the confirmation's aging
(``confirm.aging_drive_writes``), then ``MEASURE_DRIVE_WRITES`` measured.  The ratio is
interpolated in log OP between the anchors; anchors start every 12.5% held back and are
added halfway (down to ``ANCHOR_STEP``) either side of one the interpolation misses by more
than ``ANCHOR_TOLERANCE``.  The zipf classes are the scale model's pages, as simulated; the
real drive's (a longer tail, a higher LRW figure) are reported beside
(``screen.waf_gc_drive_pages``)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ... import models
from ...sim import Simulator
from ...workload.spec import Workload
from ..capacity import capacity_from_sectors
from .confirm import (
    MIN_MODEL_BLOCKS,
    ScaleModel,
    aging_drive_writes,
    model_blocks_asked,
    model_geometry,
    sim_config,
)
from .drive import Drive
from .screen import Level

#: anchor levels: multiples of this share of the native capacity held back ...
ANCHOR_STEP = Fraction(1, 40)
#: ... starting from these (those where GC sees OP) ...
ANCHOR_START = tuple(Fraction(k, 8) for k in range(7))
#: ... and halving the gaps either side of an anchor whose ratio is further than this from
#: the line through its neighbours' (in log OP): hot/cold drops sharply at high OP
ANCHOR_TOLERANCE = 0.01
#: the anchors' scale model holds at most this many pages (a superblock drive's model does by the
#: core's rule; a block drive's has fewer blocks, at least ``MIN_MODEL_BLOCKS``, else no anchors)
ANCHOR_MAX_PAGES = 2048 * 256
#: host drive writes measured at each anchor, after the aging
MEASURE_DRIVE_WRITES = 2.0
ANCHOR_SEED = 1


@dataclass
class Anchor:
    held_back: Fraction
    op_seen: float  # the scale model's OP seen by GC
    waf_gc: float  # the core's functional model
    waf_lrw: float  # the non-uniform LRW model, the scale model's classes
    model_pages: int  # the scale model's user pages
    drive_pages: int  # the real drive's user pages at this level

    @property
    def ratio(self) -> float:
        return self.waf_gc / self.waf_lrw


@dataclass
class SkewModel:
    anchors: list[Anchor]

    def ratio(self, op_seen: float) -> float:
        """The functional model's WAF over the LRW model's, interpolated in log OP between the
        anchors (the nearest anchor's beyond them)."""
        xs = [math.log(a.op_seen) for a in self.anchors]
        return float(np.interp(math.log(op_seen), xs, [a.ratio for a in self.anchors]))

    def model_pages(self, drive_pages: int) -> int:
        """The scale model's user pages for ``drive_pages`` of the real drive (the scale the
        anchors ran at)."""
        a = self.anchors[0]
        return max(1, round(drive_pages * a.model_pages / a.drive_pages))

    def describe(self) -> str:
        pts = ", ".join(f"{100 * float(a.held_back):g}% held back x{a.ratio:.3f}" for a in self.anchors)
        return f"scaled by the core's functional model at {len(self.anchors)} anchor levels ({pts})"


_CACHE: dict[tuple, tuple[Drive, SkewModel | None]] = {}


def skew_model(drive: Drive, wl: Workload, model_blocks: int) -> SkewModel | None:
    """The anchors for this drive and workload on the scale model of ``model_blocks`` blocks
    (the advisor's ``--model-blocks``), computed once; None when no anchor level leaves GC any
    OP, or the workload has no classes."""
    key = (
        id(drive),
        model_blocks,
        wl.skew,
        wl.hot_fraction,
        wl.hot_write_fraction,
        wl.zipf_exponent,
        wl.block_size,
        wl.read_fraction,
        repr(sorted(wl.sim_workload(drive.page_size, drive.pages_per_block).items())),  # a fio job: its file
    )
    if wl.classes(int(drive.native.bytes // drive.page_size)) is None:
        return None
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is drive:
        return hit[1]
    blocks = anchor_blocks(drive, model_blocks)
    if blocks is None:
        _CACHE[key] = (drive, None)
        return None
    anchors = [a for a in (_anchor(drive, wl, h, blocks) for h in ANCHOR_START) if a is not None]
    tried = set(ANCHOR_START)
    while True:
        todo: set[Fraction] = set()
        for i in range(1, len(anchors) - 1):
            a, m, b = anchors[i - 1], anchors[i], anchors[i + 1]
            if abs(SkewModel([a, b]).ratio(m.op_seen) - m.ratio) > ANCHOR_TOLERANCE:
                todo |= {h for h in (_between(a, m), _between(m, b)) if h is not None and h not in tried}
        if not todo:
            break
        tried |= todo
        anchors += [x for x in (_anchor(drive, wl, h, blocks) for h in sorted(todo)) if x is not None]
        anchors.sort(key=lambda x: x.held_back)
    anchors.sort(key=lambda a: a.op_seen)
    out = SkewModel(anchors) if anchors else None
    _CACHE[key] = (drive, out)
    return out


def anchor_blocks(drive: Drive, model_blocks: int) -> int | None:
    """Blocks asked of the core's scale model for the anchors: the confirmation's
    (``model_blocks``), fewer for a block drive whose model would hold more than
    ``ANCHOR_MAX_PAGES`` pages; None when that leaves fewer than ``MIN_MODEL_BLOCKS`` (drives
    with 128 MiB GC units: the screen is then the bare LRW figure, and says so)."""
    blocks = model_blocks_asked(drive, model_blocks)
    units, ppb, _ = model_geometry(drive, blocks)
    if drive.superblocks or units * ppb <= ANCHOR_MAX_PAGES:
        return blocks
    blocks = ANCHOR_MAX_PAGES // ppb
    return blocks if blocks >= MIN_MODEL_BLOCKS else None


def _between(a: Anchor, b: Anchor) -> Fraction | None:
    """The anchor level halfway between two (on the ``ANCHOR_STEP`` grid), or None when they
    are neighbours on it."""
    gap = (b.held_back - a.held_back) / ANCHOR_STEP
    return None if gap < 2 else a.held_back + (gap // 2) * ANCHOR_STEP


def _anchor(drive: Drive, wl: Workload, held_back: Fraction, blocks: int) -> Anchor | None:
    """The core's functional model at ``held_back``: a sequential fill in 128 KiB commands,
    the aging the confirmation uses, then ``MEASURE_DRIVE_WRITES`` measured (GC's page WAF:
    1 + copies per host page programmed)."""
    nat = drive.native
    cap = capacity_from_sectors(max(1, math.floor(nat.sectors * (1 - held_back))), nat.sector_size)
    if drive.op_seen(cap.bytes) <= 0:
        return None
    lv = Level(0, cap, held_back)
    model = ScaleModel(blocks, "fill + aging", 0.0, 0.0, MEASURE_DRIVE_WRITES, [])
    cfg = sim_config(drive, wl, lv, model, ANCHOR_SEED)
    user = cfg["drive"]["user_capacity"]
    user_pages = user // drive.page_size
    s = Simulator(cfg)
    sectors = user // cfg["drive"]["sector_size"]
    step = (128 * 1024) // cfg["drive"]["sector_size"]
    for lba in range(0, sectors, step):
        s.write(lba, min(step, sectors - lba))
    s.run_for(int(aging_drive_writes(wl, user_pages) * user))
    c0 = s.counters
    s.run_for(int(MEASURE_DRIVE_WRITES * user))
    c1 = s.counters
    host = c1["host_write_pages"] - c0["host_write_pages"]
    waf_gc = 1 + (c1["gc_copy_pages"] - c0["gc_copy_pages"]) / host
    op_seen = drive.op_seen(cap.bytes)  # the scale model keeps it (the core's rule)
    cls = wl.classes(int(user_pages))
    assert cls is not None  # only a workload with classes is anchored
    lrw = models.waf_lrw_classes(op_seen, cls)
    return Anchor(held_back, op_seen, waf_gc, lrw, int(user_pages), cap.bytes // drive.page_size)
