"""Steady-state WAF against the OP garbage collection sees, from the core's functional
simulator.

Under uniform random writes the steady WAF of a page-mapped FTL depends on the spare area GC
works with (the core's ``seen_by_gc``: pool pages over the pages written), the block size in
pages, the GC policy and the request size; not on the drive's capacity once it has a few
hundred blocks.  So the calibration simulates a small drive of the same FTL at a ladder of
user capacities once, reads each point's ``seen_by_gc`` from the core, and interpolates
between them (log of GC copies per host page against log of ``seen_by_gc``).  Every WAF the
calibration uses comes from these simulations.

A WAF floor (``ftl.meta_writes``: metadata pages per host page, programmed into the host blocks and
invalid at once) takes NAND space as well as writes, so it raises GC's copies too: the curve of a
drive with a floor is simulated with it.  The fit moves the floor continuously, so the curve is
simulated at the floors of ``META_GRID`` around it (each once, cached), at six of the ladder's
levels (``META_LEVELS``: the ratio of its GC copies to the curve's without a floor is smooth in
the OP and interpolated in log OP between them), and the GC copies interpolated between the two
floors (log of copies, linear in the floor); the floor itself is in the drive WAF exactly.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cached_property, lru_cache

import numpy as np

from ..sim import describe, simulate_many
from .scale import MIN_UNIT_PAGES, superblock_pages, unit_scale

#: FTL blocks of the small drive the curve is simulated on
CURVE_BLOCKS = 1024
#: the ladder of GC-visible OP levels (user basis) simulated
LADDER = tuple(float(x) for x in np.geomspace(0.02, 3.0, 14))
#: the WAF floors (``ftl.meta_writes``) the curve is simulated at; a floor between two is interpolated
META_GRID: tuple[float, ...] = (0.0, 0.02, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0)
#: the ladder's levels (indices) a floor's curve is simulated at: its GC copies over the curve's
#: without a floor, a smooth ratio, interpolated in log OP between them
META_LEVELS: tuple[int, ...] = (0, 3, 6, 9, 12, 13)


@dataclass(frozen=True)
class Curve:
    """(seen_by_gc, host pages copied per host page written, drive WAF) at each simulated level."""

    seen: tuple[float, ...]
    copies: tuple[float, ...]
    waf: tuple[float, ...]
    #: SLC-mode programs and folds per host page (0 without an SLC cache): WAF - 1 - copies
    extra: float

    @cached_property
    def _log(self) -> tuple[np.ndarray, np.ndarray]:
        """log(seen) and log(copies) at the levels (computed once: :meth:`at` is asked thousands of times)."""
        return np.log(np.asarray(self.seen)), np.log(np.maximum(np.asarray(self.copies), 1e-9))

    def at(self, seen: float) -> tuple[float, float]:
        """(drive WAF, GC WAF = 1 + copies per host page) at ``seen``, interpolated in log-log and
        extrapolated along the end segments."""
        if not seen > 0:
            return math.inf, math.inf
        x, y = self._log
        lx = math.log(seen)
        if lx <= x[0]:
            slope = (y[1] - y[0]) / (x[1] - x[0])
            ly = y[0] + slope * (lx - x[0])
        elif lx >= x[-1]:
            slope = (y[-1] - y[-2]) / (x[-1] - x[-2])
            ly = y[-1] + slope * (lx - x[-1])
        else:
            ly = float(np.interp(lx, x, y))
        c = math.exp(ly)
        return 1.0 + c + self.extra, 1.0 + c


#: the ``[timing]`` keys a superblock's size comes from (the rest of the timing has no say in WAF)
UNIT_TIMING = ("cell", "nand_page_size", "nand_block_size", "planes", "channels", "dies_per_channel")


def _ftl_key(drive: dict, ftl: dict, block_size: int, timing_cell: str | None, unit: dict | None) -> str:
    return json.dumps({"drive": drive, "ftl": ftl, "bs": block_size, "cell": timing_cell, "unit": unit}, sort_keys=True)


def curve(
    drive: dict, ftl: dict, block_size: int, cell: str | None = None, seed: int = 1, timing: dict | None = None
) -> Curve:
    """The WAF curve of an FTL: ``drive`` holds ``page_size`` and ``pages_per_block`` (and
    ``sector_size``), ``ftl`` the ``[ftl]`` table (policy, watermarks, SLC cache); a drive whose
    GC unit is a superblock takes its size from ``timing`` (the keys of ``UNIT_TIMING``), and the
    curve is simulated on superblocks of the same count per drive, each scaled down
    (:mod:`.scale`)."""
    keep = {k: drive[k] for k in ("page_size", "pages_per_block", "sector_size") if k in drive}
    unit = None
    if ftl.get("gc_unit") == "superblock":
        unit = {k: (timing or {})[k] for k in UNIT_TIMING if k in (timing or {})}
    meta = float(ftl.get("meta_writes") or 0.0)
    if meta == 0.0:
        return _curve(_ftl_key(keep, ftl, block_size, cell, unit), seed)
    base = {k: v for k, v in ftl.items() if k != "meta_writes"}

    def at(m: float) -> Curve:
        plain = _curve(_ftl_key(keep, base, block_size, cell, unit), seed)
        if m == 0.0:
            return plain
        few = _curve(_ftl_key(keep, base | {"meta_writes": m}, block_size, cell, unit), seed, META_LEVELS)
        return with_floor(plain, few, m)

    if meta in META_GRID or not 0.0 < meta < META_GRID[-1]:
        return at(meta)
    i = next(k for k, m in enumerate(META_GRID) if m > meta)
    return blend(at(META_GRID[i - 1]), at(META_GRID[i]), META_GRID[i - 1], META_GRID[i], meta)


def with_floor(plain: Curve, few: Curve, meta: float) -> Curve:
    """The curve of floor ``meta`` from the curve without it (``plain``) and the floor's simulated at
    ``META_LEVELS`` (``few``): the ratio of their GC copies interpolated in log OP (constant past
    the ends)."""
    ratio = np.log(np.maximum(np.asarray(few.copies), 1e-9)) - np.log(
        np.maximum(np.asarray([plain.copies[i] for i in META_LEVELS]), 1e-9)
    )
    r = np.interp(np.log(np.asarray(plain.seen)), np.log(np.asarray(few.seen)), ratio)
    copies = np.exp(np.log(np.maximum(np.asarray(plain.copies), 1e-9)) + r)
    extra = few.extra
    return Curve(plain.seen, tuple(float(c) for c in copies), tuple(float(1 + c + extra) for c in copies), extra)


def blend(a: Curve, b: Curve, ma: float, mb: float, meta: float) -> Curve:
    """The curve at floor ``meta`` between the curves ``a`` (at floor ``ma``) and ``b`` (at
    ``mb``): the log of the GC copies linear in the floor, the SLC cache's programs as simulated
    and the floor itself exact."""
    t = (meta - ma) / (mb - ma)
    ca, cb = np.maximum(np.asarray(a.copies), 1e-9), np.maximum(np.asarray(b.copies), 1e-9)
    copies = np.exp((1 - t) * np.log(ca) + t * np.log(cb))
    slc = (1 - t) * max(0.0, a.extra - ma) + t * max(0.0, b.extra - mb)
    extra = slc + meta
    return Curve(a.seen, tuple(float(c) for c in copies), tuple(float(1 + c + extra) for c in copies), extra)


@lru_cache(maxsize=64)
def _curve(key: str, seed: int, levels: tuple[int, ...] | None = None) -> Curve:
    """The curve simulated at the ``LADDER`` levels of index ``levels`` (None: every one)."""
    k = json.loads(key)
    drive, ftl, bs, cell = k["drive"], k["ftl"], k["bs"], k["cell"]
    base = {"drive": dict(drive), "ftl": dict(ftl)}
    if k["unit"] is not None:
        # superblocks: the drive's unit, scaled to about MIN_UNIT_PAGES pages (greedy's WAF hardly
        # depends on the pages per unit above that), CURVE_BLOCKS of them
        base["timing"] = dict(k["unit"])
        probe = base | {"drive": drive | {"user_capacity": 1 << 20, "physical_capacity": 1 << 50}}
        pages = superblock_pages(probe)
        assert pages is not None
        base["ftl"]["superblock_scale"] = unit_scale(pages, pages)
    if cell:
        # an SLC cache takes its bits per cell from the timing's cell; the functional model needs
        # no other timing key
        base.setdefault("ftl", {})
        slc = base["ftl"].get("slc_cache")
        if isinstance(slc, dict) and "bits_per_cell" not in slc:
            bits = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}[cell]
            base["ftl"]["slc_cache"] = slc | {"bits_per_cell": max(2, bits)}
    probe = describe(
        base | {"drive": drive | {"user_capacity": 1 << 20, "physical_capacity": 1 << 40}}, model_limits=False
    )
    page, ppb = probe["drive"]["page_size"], probe["drive"]["pages_per_block"]
    physical = int(k.get("blocks", CURVE_BLOCKS)) * ppb * page
    cfg0 = base | {"drive": drive | {"physical_capacity": physical, "user_capacity": page * 64}}
    pool_pages = describe(cfg0, model_limits=False)["op"]["gc_pool_blocks"] * ppb
    workload = {"type": "uniform", "request_size": bs}
    # a structural alternative's small model starts from a fill, as its reference does (the
    # mean field of some policies is slow to place: d-choices)
    analytic = (
        not k.get("fill") and describe(cfg0 | {"workload": workload}, model_limits=False)["analytic_precondition"]
    )
    cfgs = []
    for s in LADDER if levels is None else [LADDER[i] for i in levels]:
        user = int(pool_pages / (1 + s)) * page
        # a drive write, or as many commands as the model has pages when requests are smaller than a
        # page (each programs a whole page: the P5336's 4 KiB writes on 16 KiB units program 4 drive
        # writes' worth): every curve then measures as many GC units' programs, the same precision
        measure = min(1.0, physical / (user / bs * page)) if bs < page else 1.0
        cfg = base | {
            "drive": drive | {"physical_capacity": physical, "user_capacity": user},
            "workload": workload,
            "run": {
                "seed": seed,
                "precondition": "analytic" if analytic else "fill",
                "warmup_drive_writes": min(0.5, measure) if analytic else 2.0,
                "measure_drive_writes": measure,
                "round_drive_writes": measure / 4,
            },
        }
        cfgs.append(cfg)
    seen, copies, wafs, extras = [], [], [], []
    # the levels side by side on the process's cores (independent seeded runs: the same results)
    for cfg, r in zip(cfgs, simulate_many(cfgs)):
        m = r.measure_counters
        host = max(1, m["host_write_pages"])
        c = m["gc_copy_pages"] / host
        waf = float(r.waf or 1.0)
        seen.append(float(r.op.get("seen_by_gc") or describe(cfg, model_limits=False)["op"]["seen_by_gc"]))
        copies.append(c)
        wafs.append(waf)
        extras.append(waf - 1.0 - c)
    return Curve(tuple(seen), tuple(copies), tuple(wafs), max(0.0, float(np.median(extras))))


#: pages per FTL block of the small model a structural alternative's GC copies are compared on
#: (:func:`alternative`): CURVE_BLOCKS blocks of these, a fraction of a second a curve
ALT_PAGES = 256
#: a superblock on the small model (the GC unit's alternative): UNIT_BLOCKS units of
#: MIN_UNIT_PAGES pages (greedy's WAF barely moves with the pages per unit above it)
UNIT_BLOCKS = 256
#: the [ftl] keys a structural alternative sets (:mod:`.structure`)
ALT_KEYS = ("gc", "d", "window", "meta_writes", "gc_unit")


def _small(
    drive: dict,
    ftl: dict,
    block_size: int,
    cell: str | None,
    keys: dict,
    seed: int,
    pages: int = ALT_PAGES,
    blocks: int = CURVE_BLOCKS,
) -> Curve:
    """The curve of ``ftl`` with ``keys`` on the small model: the drive's mapping unit in
    ``blocks`` FTL blocks of ``pages`` pages, from a fill, at the ladder's levels META_LEVELS
    (the ratio is smooth in the OP and interpolated between them, as a floor's is)."""
    keep = {k: drive[k] for k in ("page_size", "sector_size") if k in drive} | {"pages_per_block": pages}
    base = {k: v for k, v in ftl.items() if k not in ("superblock_scale", *ALT_KEYS)} | keys
    key = json.loads(_ftl_key(keep, base, block_size, cell, None)) | {"fill": True, "blocks": blocks}
    return _curve(json.dumps(key, sort_keys=True), seed, META_LEVELS)


def _log_ratio(alt: Curve, ref: Curve, at: np.ndarray) -> np.ndarray:
    """log(alt's GC WAF / ref's), GC WAF = 1 + copies per host page, at log seen ``at``,
    interpolated in log seen (constant past the ends): the copies' ratio where GC copies many,
    1 where it copies next to nothing (a ratio of two near-zero copy counts is noise)."""
    r = np.log1p(np.asarray(alt.copies)) - np.log1p(np.asarray(ref.copies))
    return np.interp(at, np.log(np.asarray(ref.seen)), r)


def alternative(
    ref: Curve, drive: dict, ftl: dict, block_size: int, cell: str | None, keys: dict, seed: int = 1
) -> Curve:
    """The curve of a structural alternative (``keys``: ``gc`` with its ``d`` or ``window``,
    ``meta_writes``, ``gc_unit``) of the drive whose own curve is ``ref``: ref's GC WAF times the ratio
    of the alternative's GC WAF (1 + copies) to the reference's on a small model of the same FTL
    (:func:`_small`: the policy's and the floor's ratios each against the reference, multiplied:
    the two barely interact), the floor itself exact.  The ratio, not the copies, comes from
    the small model, so a superblock drive keeps its own curve's level (docs/calibrate.md,
    "What a datasheet never states")."""
    if not keys:
        return ref
    # the same alternative of the same curve is asked for at every point of a profile's walk:
    # kept by what it is made of (the curve's figures, not the object: a curve the cache of
    # _curve drops is made again equal)
    memo = (ref, repr(drive), repr(ftl), block_size, cell, repr(sorted(keys.items())), seed)
    if memo in _ALTERNATIVES:
        return _ALTERNATIVES[memo]
    if len(_ALTERNATIVES) >= ALTERNATIVES_KEPT:
        del _ALTERNATIVES[next(iter(_ALTERNATIVES))]
    _ALTERNATIVES[memo] = out = _alternative(ref, drive, ftl, block_size, cell, keys, seed)
    return out


#: the alternatives' curves :func:`alternative` keeps (oldest dropped first)
ALTERNATIVES_KEPT = 256
_ALTERNATIVES: dict[tuple, Curve] = {}


def _alternative(ref: Curve, drive: dict, ftl: dict, block_size: int, cell: str | None, keys: dict, seed: int) -> Curve:
    """:func:`alternative`, made."""
    small_ref = _small(drive, ftl, block_size, cell, {}, seed)
    at = np.log(np.asarray(ref.seen))
    r = np.zeros(len(ref.seen))
    policy = {k: v for k, v in keys.items() if k not in ("meta_writes", "gc_unit")}
    meta = float(keys.get("meta_writes") or 0.0)
    if policy:
        r += _log_ratio(_small(drive, ftl, block_size, cell, policy, seed), small_ref, at)
    if keys.get("gc_unit") == "superblock":  # units of a superblock's pages against FTL blocks
        unit = _small(drive, ftl, block_size, cell, {}, seed, MIN_UNIT_PAGES, UNIT_BLOCKS)
        r += _log_ratio(unit, small_ref, at)
    if meta > 0:
        r += _log_ratio(_small(drive, ftl, block_size, cell, {"meta_writes": meta}, seed), small_ref, at)
    copies = np.maximum(0.0, np.expm1(np.log1p(np.asarray(ref.copies)) + r))
    extra = ref.extra + meta
    return Curve(ref.seen, tuple(float(c) for c in copies), tuple(float(1 + c + extra) for c in copies), extra)
