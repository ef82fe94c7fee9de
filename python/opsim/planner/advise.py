"""The OP advisor: the smallest over-provisioning that meets a workload's targets.

Given a drive (a preset, or native/physical capacity, P/E rating and interface), a workload
(read/write mix, transfer size, random/sequential mix, skew or the JEDEC JESD219 profile,
host writes per day) and targets (steady-state IOPS, TBW, DWPD, lifetime, usable capacity,
a latency percentile), :func:`advise`

1. **screens** every candidate OP level on a fine grid (by default every 0.5% of the native
   capacity held back) with the analytic models: WAF from :mod:`opsim.models` at the OP
   garbage collection sees, steady IOPS from a bottleneck bound on the drive's resources
   (the same cost rules as the timed model), endurance from the P/E budget;
2. **confirms** with the simulator: the timed model on a scale model of the drive (every
   timing and die count kept, the same OP seen by GC, fewer blocks), starting at the level
   the screen picked and searching down or up until the smallest level that meets every
   target in simulation is bracketed by one that does not;
3. says which target **binds** (fails one grid step below the recommendation), and when no
   OP can meet the targets, **why** (the target is above what the drive gives even with no
   garbage collection at all, or it needs more OP than the capacity target allows).

Every figure carries the model that produced it; nothing is tabulated.  The CLI is
``opsim advise`` (:mod:`opsim.commands.advise`); docs/planner.md, section "Advisor".
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from ..errors import InputError, OpsimError
from ..units import parse_size
from . import endurance as E
from .capacity import (
    GB,
    IDEMA_MIN_GB,
    Capacity,
    assumed_physical,
    capacity_from_sectors,
    idema_lba_count,
    op_all,
    parse_capacity,
)

#: JEDEC JESD219 enterprise endurance workload: transfer sizes and their share of IOs
#: (JESD219, Sept. 2010, as summarised by Tom's Hardware/Seagate, "SSD Endurance: Endurance
#: Workloads"; the LBA zones are :func:`opsim.models.jesd219_classes`).
JESD219_SIZES = ((512, 0.04), (1024, 0.01), (1536, 0.01), (2048, 0.01), (2560, 0.01), (3072, 0.01),
                 (3584, 0.01), (4096, 0.67), (8192, 0.10), (16384, 0.07), (32768, 0.03), (65536, 0.03))

DAYS_PER_YEAR = E.DAYS_PER_YEAR

# Sizes of a simulation run (see the "Simulator confirmation" notes in docs/planner.md).
AGING_DRIVE_WRITES = {"uniform": 2.0, "skewed": 4.0}   # after a sequential fill, before timing
#: a random/sequential mix also ages 1/s drive writes: the core's interleaved pattern
#: (``sk-hynix``) lets its random writes reach only what its sequential stream has written
AGING_OPS_CAP = 40_000_000                            # functional IOs spent on aging, at most
TIMED_OPS_CAP = 4_000_000                             # timed IOs spent on aging, at most
MIN_MODEL_BLOCKS = 512
MIN_WINDOW_BLOCKS = 128                               # the measured host writes fill this many blocks
DIAGNOSIS_HELD_BACK = Fraction(3, 4)                   # the screen looks this far (max --max-held-back)


def _opt(name: str) -> str:
    return "--" + name.replace("_", "-")


def _bad(option: str, msg: str) -> InputError:
    return InputError(f"{_opt(option)}: {msg}", key=option)


def _as_option(option: str, fn, *args, **kw):
    """``fn(*args)``, with an input error re-raised under the command-line option's name."""
    try:
        return fn(*args, **kw)
    except InputError as e:
        raise _bad(option, str(e).split(": ", 1)[-1]) from None


# ----------------------------------------------------------------------------- inputs


@dataclass
class Drive:
    """The drive being advised on, every parameter with where it came from."""

    name: str
    title: str
    preset: str | None
    native: Capacity
    physical_bytes: int
    page_size: int
    pages_per_block: int
    gc: str
    gc_low: int
    pe: float | None
    interface: str
    queue_depth: int
    write_cache: bool
    timing_overrides: dict          # what the advisor puts in [timing] on top of the preset
    drive_overrides: dict           # [drive] keys for a drive given by parameters
    timing: dict                    # resolved by the core (ns, counts)
    sources: dict = field(default_factory=dict)
    slc_min_fraction: float = 0.0   # the SLC cache's static part (fraction of blocks), if it has one
    slc_folds: bool = False         # steady state: every host write goes to SLC and is folded

    @property
    def blocks(self) -> int:
        return self.physical_bytes // (self.pages_per_block * self.page_size)

    @property
    def slc_static_blocks(self) -> int:
        return math.floor(self.slc_min_fraction * self.blocks)

    def op_seen(self, user_bytes: int) -> float:
        """The OP garbage collection sees (user basis): physical pages outside the free-block
        reserve (and the SLC cache's static part, as the core's analytic preconditioning)
        over user pages."""
        up = user_bytes // self.page_size
        return ((self.blocks - self.gc_low - self.slc_static_blocks) * self.pages_per_block - up) / up

    def to_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "preset": self.preset,
                "native_bytes": self.native.bytes, "native_sectors": self.native.sectors,
                "native_gb": self.native.gb, "sector_size": self.native.sector_size,
                "physical_bytes": self.physical_bytes, "page_size": self.page_size,
                "pages_per_block": self.pages_per_block, "blocks": self.blocks, "gc": self.gc,
                "gc_low_watermark": self.gc_low, "pe_cycles": self.pe, "interface": self.interface,
                "queue_depth": self.queue_depth, "write_cache": self.write_cache,
                "timing": self.timing, "sources": self.sources}


def _probe(base: dict, page: int, ppb: int) -> dict:
    """The config and timing as the core resolves them (defaults filled, times in ns): a
    tiny timed run of the same preset/[ftl]/[timing], so the analytic screen uses exactly
    what the simulator will."""
    from ..sim import simulate

    cfg = json.loads(json.dumps(base))
    cfg["drive"] = dict(cfg.get("drive", {})) | {"user_capacity": 8 * ppb * page,
                                                  "physical_capacity": 16 * ppb * page, "pages_per_block": ppb}
    cfg["run"] = {"precondition": "none", "warmup_drive_writes": 0, "measure_drive_writes": 0.0005,
                  "round_drive_writes": 0.0005}
    r = simulate(cfg)
    return {"config": r.data["config"], "timing": r.timed["timing"]}


def load_drive(*, preset: str | None = None, native=None, physical=None, pages_per_block=None,
               interface=None, pe=None, gc=None, queue_depth=None, sector_size: int = 512) -> Drive:
    """A :class:`Drive` from a preset name or from parameters (errors name the option)."""
    from .. import presets as P

    sources: dict = {}
    timing_over: dict = {}
    drive_over: dict = {}
    if preset is not None:
        if preset not in P.names():
            raise _bad("preset", f"unknown preset {preset!r}; known: {', '.join(sorted(P.names()))}")
        for opt, v in (("native", native), ("physical", physical), ("pages_per_block", pages_per_block),
                       ("interface", interface)):
            if v is not None:
                raise _bad(opt, f"the preset {preset} fixes this; drop {_opt(opt)} or --preset")
        p = P.get(preset)
        s = p["settings"]
        msrc = p["meta"]["sources"]
        native_text = s["drive"]["user_capacity"]
        nat = parse_capacity(native_text, sector_size, "native")
        phys = parse_size(s["drive"]["physical_capacity"], key="physical")
        sources["native"] = msrc.get("drive.user_capacity", "preset")
        sources["physical"] = msrc.get("drive.physical_capacity", "preset")
        sources["timing"] = {k.split(".", 1)[1]: v for k, v in msrc.items() if k.startswith("timing.")}
        base = {"preset": preset}
        ppb = int(s["drive"].get("pages_per_block", 256))
        page = parse_size(s["drive"].get("page_size", 4096), key="page_size")
        name, title = preset, p["meta"]["title"]
    else:
        if native is None:
            raise _bad("native", "give a drive: --preset NAME (see `opsim presets`) or --native SIZE "
                                 "(with --physical, --pe, --interface)")
        nat = _as_option("native", parse_capacity, native, sector_size, "native")
        if physical is not None:
            phys = _as_option("physical", parse_size, physical, key="physical")
            sources["physical"] = "given with --physical"
        else:
            phys, note = assumed_physical(nat)
            if phys is None:
                raise _bad("physical", note)
            sources["physical"] = note
        sources["native"] = "given with --native"
        if phys <= nat.bytes:
            raise _bad("physical", f"{phys:,} bytes is not more than the native capacity ({nat.bytes:,} bytes); "
                                   "the drive would have no spare area at all")
        if pages_per_block is not None and not (2 <= int(pages_per_block) <= 65536):
            raise _bad("pages_per_block", f"{pages_per_block} is out of range 2..65536")
        ppb, page = int(pages_per_block or 256), 4096
        drive_over = {"pages_per_block": ppb}
        sources["pages_per_block"] = "given with --pages-per-block" if pages_per_block else "default 256"
        timing_over["interface"] = interface or "sata"
        sources["timing"] = "the core's defaults for the interface (docs/timed.md): not a specific drive"
        base = {"drive": dict(drive_over)}
        name, title = "custom", f"drive given by parameters ({timing_over['interface']})"
    if gc is not None:
        base.setdefault("ftl", {})["gc"] = gc
    if queue_depth is not None:
        if int(queue_depth) < 1:
            raise _bad("queue_depth", "must be at least 1")
        timing_over["queue_depth"] = int(queue_depth)
    base["timing"] = dict(timing_over)
    base["drive"] = {"sector_size": sector_size}
    try:
        probe = _probe(base, page, ppb)
    except OpsimError as e:
        raise _bad(_option_for_key(e.key), str(e)) from None
    c, resolved = probe["config"], probe["timing"]
    t = c.get("timing") or {}
    if phys // (ppb * page) < 16:
        raise _bad("physical", f"{phys:,} bytes is fewer than 16 blocks of {ppb} x {page}-byte pages")
    if pe is not None:
        try:
            pe_v = float(str(pe).replace(",", "").replace("_", ""))
        except ValueError:
            raise _bad("pe", f"{pe!r} is not a number of P/E cycles") from None
        if not (pe_v > 0 and math.isfinite(pe_v)):
            raise _bad("pe", f"{pe} must be a positive number of P/E cycles")
        sources["pe"] = "given with --pe"
    else:
        pe_v = None
    # SLC cache: in steady state (every addressable LBA written) the cache is its static part;
    # with one, and "fold" when full, every host write is programmed in SLC mode and folded
    slc = c["ftl"].get("slc_cache") or {}
    slc_on = bool(slc) and slc.get("enabled", True) and "slc" in resolved
    slc_min = float(slc.get("min_fraction", 0)) if slc_on else 0.0
    return Drive(name=name, title=title, preset=preset, native=nat, physical_bytes=int(phys),
                 slc_min_fraction=slc_min, slc_folds=slc_on and slc_min > 0 and slc.get("when_full", "fold") == "fold",
                 page_size=page, pages_per_block=ppb, gc=c["ftl"]["gc"], gc_low=c["ftl"]["gc_low_watermark"],
                 pe=pe_v, interface=t.get("interface", "sata"), queue_depth=t.get("queue_depth", 32),
                 write_cache=bool(t.get("write_cache", True)), timing_overrides=timing_over,
                 drive_overrides=drive_over, timing=resolved, sources=sources)


def _option_for_key(key: str | None) -> str:
    k = (key or "").split(".")[-1]
    return {"user_capacity": "native", "physical_capacity": "physical", "gc": "gc",
            "queue_depth": "queue_depth", "interface": "interface"}.get(k, k or "preset")


@dataclass
class Workload:
    read_fraction: float = 0.0
    block_size: int | None = 4096          # None: the JESD219 size mix
    sequential: float = 0.0                # share of the writes that are sequential
    skew: str = "uniform"                  # uniform | hot-cold | zipf | jesd219
    hot_fraction: float | None = None
    hot_write_fraction: float | None = None
    zipf_exponent: float | None = None
    write_rate: int | None = None          # host bytes per day
    _classes: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def write_fraction(self) -> float:
        return 1.0 - self.read_fraction

    @property
    def skewed(self) -> bool:
        return self.skew != "uniform"

    def sizes(self) -> list[tuple[int, float]]:
        if self.block_size is None:
            return list(JESD219_SIZES)
        return [(self.block_size, 1.0)]

    def describe(self) -> str:
        rw = f"{100 * self.read_fraction:g}:{100 * self.write_fraction:g} read:write"
        size = "JESD219 transfer sizes (0.5-64 KiB)" if self.block_size is None else _fmt_size(self.block_size)
        if self.skew == "uniform":
            sk = "uniform over the LBAs"
        elif self.skew == "hot-cold":
            sk = (f"hot/cold: {100 * self.hot_write_fraction:g}% of writes to {100 * self.hot_fraction:g}% "
                  "of the LBAs")
        elif self.skew == "zipf":
            sk = f"zipf s = {self.zipf_exponent:g}"
        else:
            sk = "JESD219 zones (50% of IOs to 5% of the LBAs, 30% to 15%, 20% to 80%)"
        seq = ("random" if self.sequential == 0 else "sequential" if self.sequential == 1
               else f"{100 * self.sequential:g}% of writes sequential, the rest random")
        s = f"{size} {seq}, {rw}, {sk}"
        if self.write_rate:
            s += f", {self.write_rate / GB:g} GB written per day"
        return s

    def classes(self, user_pages: int) -> list[tuple[float, float]] | None:
        """The LBA classes [(share of LBAs, share of writes)] of the random writes, or None
        for uniform."""
        from .. import models

        if self.skew == "uniform":
            return None
        if self.skew == "hot-cold":
            f, r = self.hot_fraction, self.hot_write_fraction
            return [(f, r), (1 - f, 1 - r)] if 0 < f < 1 else None
        if self.skew == "jesd219":
            return models.jesd219_classes()
        if user_pages not in self._classes:
            self._classes[user_pages] = zipf_classes(self.zipf_exponent, user_pages)
        return self._classes[user_pages]

    def pages_per_io(self, page: int) -> float:
        """Mapping units a command touches (reads and writes alike), with the simulator's
        alignment: a single transfer size is aligned to min(size, page) (its default
        ``align``); in the JESD219 mix, transfers of 4 KiB and up are 4 KiB-aligned and
        smaller ones start on any 512-byte sector (as the core's jesd219 type)."""
        if self.block_size is None:
            return sum(p * _units_touched(s, page, 4096 if s >= 4096 else 512) for s, p in JESD219_SIZES)
        return _units_touched(self.block_size, page, min(self.block_size, page))

    def bytes_per_io(self) -> float:
        return sum(s * p for s, p in self.sizes())

    def mix_chunks(self, page: int, ppb: int) -> tuple[int, int]:
        """The core's interleaved random/sequential pattern (``type = "sk-hynix"``): one FTL
        block of sequential writes, then the random bytes that keep the asked share."""
        seq = ppb * page
        bs = self.block_size
        rnd = max(bs, round(seq * (1 - self.sequential) / self.sequential / bs) * bs)
        return seq, rnd

    def sim_workload(self, page: int, ppb: int) -> dict:
        w: dict = {"read_fraction": self.read_fraction}
        if self.sequential >= 1:
            w["type"] = "sequential"
        elif self.sequential > 0:
            seq, rnd = self.mix_chunks(page, ppb)
            w.update(type="sk-hynix", sequential_chunk=seq, random_chunk=rnd,
                     sequential_request_size=self.block_size)
        elif self.skew == "jesd219":
            w["type"] = "jesd219"
        elif self.skew == "hot-cold":
            w.update(type="hot-cold", hot_fraction=self.hot_fraction, hot_write_fraction=self.hot_write_fraction)
        elif self.skew == "zipf":
            w.update(type="zipf", zipf_exponent=self.zipf_exponent)
        else:
            w["type"] = "uniform"
        if self.block_size is not None:
            w["request_size"] = self.block_size
        return w

    def to_dict(self) -> dict:
        return {"read_fraction": self.read_fraction, "write_fraction": self.write_fraction,
                "block_size": self.block_size, "sizes": self.sizes(), "sequential_fraction": self.sequential,
                "skew": self.skew, "hot_fraction": self.hot_fraction, "hot_write_fraction": self.hot_write_fraction,
                "zipf_exponent": self.zipf_exponent, "write_rate_bytes_per_day": self.write_rate,
                "description": self.describe()}


def _units_touched(size: int, page: int, align: int) -> float:
    """Mean mapping units spanned by a ``size``-byte transfer at a random ``align``-aligned
    offset (every offset modulo the page equally likely)."""
    step = math.gcd(align, page)
    offs = range(0, page, step)
    return sum((o + size - 1) // page + 1 for o in offs) / len(offs)


def _fmt_size(n: int) -> str:
    for u, m in (("MiB", 2**20), ("KiB", 1024)):
        if n % m == 0:
            return f"{n // m} {u}"
    return f"{n} B"


def _gen_harmonic(n: int, s: float, head) -> float:
    """sum_{i=1}^{n} i^-s: exact from the prefix sums ``head`` (head[k] = sum up to k), the
    Euler-Maclaurin expansion beyond them."""
    m = len(head) - 1
    if n <= m:
        return float(head[n])
    integral = math.log(n / m) if s == 1 else (n ** (1 - s) - m ** (1 - s)) / (1 - s)
    em = (n ** -s - m ** -s) / 2 - s * (n ** (-s - 1) - m ** (-s - 1)) / 12
    return float(head[m]) + integral + em


def zipf_classes(s: float, n: int, bins: int = 48) -> list[tuple[float, float]]:
    """Zipf(s) over ``n`` pages (rank 1 = hottest) as LBA classes for the non-uniform LRW
    model: log-spaced rank bins, each with its share of the LBAs and of the writes."""
    import numpy as np

    m = min(n, 100_000)
    head = np.concatenate([[0.0], np.cumsum(np.arange(1, m + 1, dtype=float) ** -s)])
    edges = sorted({0, *(int(round(n ** (k / bins))) for k in range(1, bins + 1)), n})
    total = _gen_harmonic(n, s, head)
    out = []
    prev_h = 0.0
    for a, b in zip(edges, edges[1:]):
        if b <= a:
            continue
        h = _gen_harmonic(b, s, head)
        out.append(((b - a) / n, (h - prev_h) / total))
        prev_h = h
    # normalise rounding
    fs, rs = sum(f for f, _ in out), sum(r for _, r in out)
    return [(f / fs, r / rs) for f, r in out if r > 0]


LATENCY_KEYS = ("mean", "p50", "p90", "p99", "p99.9", "p99.99", "max")


@dataclass
class Targets:
    min_iops: float | None = None
    min_iops_relative: bool = False         # "3x": a multiple of the IOPS at the native capacity
    min_tbw: float | None = None            # TB
    min_tbw_relative: bool = False
    min_dwpd: float | None = None
    dwpd_years: float = 5.0
    min_lifetime_years: float | None = None
    min_capacity: int | None = None         # bytes
    latency: list = field(default_factory=list)   # [(op "all"/"read"/"write", key "p99", max us)]
    price: float | None = None

    def describe(self) -> list[str]:
        out = []
        if self.min_iops is not None:
            out.append(f"steady IOPS >= {self.min_iops:g}x the native configuration's" if self.min_iops_relative
                       else f"steady IOPS >= {self.min_iops:,.0f}")
        if self.min_tbw is not None:
            out.append(f"TBW >= {self.min_tbw:g}x the native configuration's" if self.min_tbw_relative
                       else f"TBW >= {self.min_tbw:,g} TB")
        if self.min_dwpd is not None:
            out.append(f"DWPD >= {self.min_dwpd:g} over {self.dwpd_years:g} years")
        if self.min_lifetime_years is not None:
            out.append(f"lifetime >= {self.min_lifetime_years:g} years at the write rate")
        if self.min_capacity is not None:
            out.append(f"usable capacity >= {self.min_capacity / GB:,.3f} GB".replace(".000 GB", " GB"))
        for kind, key, us in self.latency:
            out.append(f"{'' if kind == 'all' else kind + ' '}latency {key} <= {us:,g} us")
        return out

    def names(self) -> list[str]:
        n = []
        if self.min_iops is not None:
            n.append("iops")
        if self.min_tbw is not None:
            n.append("tbw")
        if self.min_dwpd is not None:
            n.append("dwpd")
        if self.min_lifetime_years is not None:
            n.append("lifetime")
        if self.min_capacity is not None:
            n.append("capacity")
        n += [latency_name(k, key) for k, key, _ in self.latency]
        return n

    def to_dict(self) -> dict:
        return {"min_iops": self.min_iops, "min_iops_relative": self.min_iops_relative,
                "min_tbw_tb": self.min_tbw, "min_tbw_relative": self.min_tbw_relative,
                "min_dwpd": self.min_dwpd, "dwpd_years": self.dwpd_years,
                "min_lifetime_years": self.min_lifetime_years, "min_capacity_bytes": self.min_capacity,
                "max_latency_us": [{"ios": k, "percentile": key, "us": us} for k, key, us in self.latency],
                "price": self.price, "described": self.describe()}


def latency_name(kind: str, key: str) -> str:
    return f"latency {key}" if kind == "all" else f"{kind} latency {key}"


# ----------------------------------------------------------------------------- parsing helpers


def parse_target_number(text, option: str, allow_relative: bool = False) -> tuple[float, bool]:
    s = str(text).strip().replace(",", "").replace("_", "").lower()
    rel = allow_relative and s.endswith("x")
    if rel:
        s = s[:-1]
    try:
        v = float(s)
    except ValueError:
        hint = " (a number, or a multiple of the native configuration's such as 3x)" if allow_relative else ""
        raise _bad(option, f"{text!r} is not a number{hint}") from None
    if not math.isfinite(v):
        raise _bad(option, f"{text!r} is not a finite number")
    if v <= 0:
        raise _bad(option, f"{text} must be positive")
    return v, rel


def parse_fraction_option(text, option: str) -> float:
    s = str(text).strip()
    pct = s.endswith("%")
    try:
        v = float(s[:-1] if pct else s)
    except ValueError:
        raise _bad(option, f"{text!r} is not a percentage (examples: 30%, 0.3)") from None
    v = v / 100 if pct else v
    if not (0 <= v <= 1):
        raise _bad(option, f"{text} is outside 0..100%")
    return v


def parse_read_write(text) -> float:
    """``95:5`` (read:write) -> read fraction 0.95; ``70/30`` and ``R:W`` with any scale."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*[:/]\s*([0-9.]+)\s*", str(text))
    if not m:
        raise _bad("read_write", f"{text!r} is not a read:write ratio (examples: 0:100, 70:30, 95:5)")
    r, w = float(m.group(1)), float(m.group(2))
    if r < 0 or w < 0 or r + w == 0:
        raise _bad("read_write", f"{text!r}: both parts must be >= 0 and not both 0")
    if w == 0:
        raise _bad("read_write", f"{text!r} has no writes; over-provisioning only changes how writes "
                                 "are garbage-collected, so a read-only workload needs none")
    return r / (r + w)


def parse_skew(text) -> dict:
    """``uniform``, ``hot-cold:20/80`` (20% of the LBAs take 80% of the writes) or ``zipf:1.0``."""
    s = str(text).strip().lower()
    if s in ("uniform", "none", "random"):
        return {"skew": "uniform"}
    if s in ("jesd219", "jedec"):
        raise _bad("skew", "JESD219 is a whole profile (sizes and zones): use --profile jesd219")
    m = re.fullmatch(r"hot-?cold:\s*([0-9.]+)%?\s*/\s*([0-9.]+)%?", s)
    if m:
        f, r = float(m.group(1)) / 100, float(m.group(2)) / 100
        if not (0 < f < 1 and 0 < r < 1):
            raise _bad("skew", f"{text!r}: hot-cold:F/R needs 0 < F, R < 100 (percent of LBAs / of writes)")
        return {"skew": "hot-cold", "hot_fraction": f, "hot_write_fraction": r}
    m = re.fullmatch(r"zipf:\s*([0-9.]+)", s)
    if m:
        z = float(m.group(1))
        if not (z > 0 and math.isfinite(z)):
            raise _bad("skew", f"{text!r}: the zipf exponent must be > 0")
        return {"skew": "zipf", "zipf_exponent": z}
    raise _bad("skew", f"{text!r} is not a skew; use uniform, hot-cold:20/80 or zipf:0.9 (JESD219: --profile jesd219)")


_TIME_UNITS = {"us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1e6, "ns": 1e-3}


def parse_latency(text) -> tuple[str, str, float]:
    """``p99=2ms``, ``read:p99.9=5000us``, ``write:mean=1ms`` -> (ios, percentile, us)."""
    m = re.fullmatch(r"\s*(?:(read|write|all)\s*:\s*)?(p[0-9.]+|mean|max)\s*[=<]=?\s*([0-9.]+)\s*(us|µs|ms|s|ns)?\s*",
                     str(text).lower())
    if not m:
        raise _bad("max_latency", f"{text!r}: write it as p99=2ms, p99.9=5000us or read:p99=1ms")
    kind, key, val, unit = m.group(1) or "all", m.group(2), float(m.group(3)), m.group(4) or "us"
    if key not in LATENCY_KEYS:
        raise _bad("max_latency", f"{text!r}: the simulator reports {', '.join(LATENCY_KEYS)}")
    us = val * _TIME_UNITS[unit]
    if us <= 0:
        raise _bad("max_latency", f"{text!r}: the bound must be positive")
    return kind, key, us


# ----------------------------------------------------------------------------- OP levels


@dataclass
class Level:
    index: int
    user: Capacity
    held_back: Fraction               # (native - user) / native, by LBAs

    @property
    def user_bytes(self) -> int:
        return self.user.bytes


def grid(drive: Drive, step: Fraction, max_held_back: Fraction) -> list[Level]:
    """Candidate user capacities from the native one down to ``max_held_back`` of it, in
    steps of ``step`` of the native capacity: whole marketed GB (IDEMA LBA counts) when the
    native capacity is an IDEMA count, else whole sectors (floor, as HDAT2 does)."""
    nat = drive.native
    out: list[Level] = []
    seen = set()
    k = 0
    while k * step <= max_held_back:
        h = k * step
        if nat.gb is not None and nat.gb * (1 - h) >= IDEMA_MIN_GB:
            ugb = math.floor(nat.gb * (1 - h))
            cap = capacity_from_sectors(idema_lba_count(ugb, nat.sector_size), nat.sector_size)
        else:
            cap = capacity_from_sectors(max(1, math.floor(nat.sectors * (1 - h))), nat.sector_size)
        if cap.sectors not in seen and drive.op_seen(cap.bytes) > 0:
            seen.add(cap.sectors)
            out.append(Level(len(out), cap, Fraction(nat.sectors - cap.sectors, nat.sectors)))
        k += 1
    return out


def level_ops(drive: Drive, lv: Level) -> dict:
    ops = op_all(Fraction(lv.user_bytes), Fraction(drive.physical_bytes), Fraction(drive.native.bytes))
    return {k: float(v) for k, v in ops.items()} | {"seen_by_gc": drive.op_seen(lv.user_bytes)}


# ----------------------------------------------------------------------------- analytic screen


def waf_gc_model(drive: Drive, wl: Workload, op_seen: float) -> tuple[float, str]:
    """WAF of garbage collection (NAND pages programmed per host page) and the model's name.
    The user pages classified (zipf ranks) are the real drive's, at its native capacity."""
    if wl.sequential >= 1:
        return 1.0, "sequential overwrite: every block GC meets is fully invalid (WAF 1)"
    mix = ("" if wl.sequential == 0 else
           f"; all writes taken as random (no analytic model for a {100 * wl.sequential:g}% sequential mix: "
           "an upper bound, the simulator runs the mix)")
    w, src = _waf_random_model(drive, wl, op_seen)
    return w, src + mix


def _waf_random_model(drive: Drive, wl: Workload, op_seen: float) -> tuple[float, str]:
    from .. import models

    b = drive.pages_per_block
    cls = wl.classes(int(drive.native.bytes // drive.page_size)) if wl.skewed else None
    if cls is not None:
        src = {"hot-cold": "hot/cold", "zipf": f"zipf (binned into {len(cls)} classes)",
               "jesd219": "JESD219 zones"}[wl.skew]
        w = models.waf_lrw_classes(op_seen, cls)
        if drive.gc == "fifo":
            return w, f"non-uniform LRW model (Desnoyers 2012), {src}"
        return w, (f"non-uniform LRW model (Desnoyers 2012), {src}: the screen for {drive.gc} GC, which has "
                   "no closed form under skew (LRW is at or above greedy in the simulator)")
    if drive.gc == "fifo":
        return models.waf_fifo(op_seen), "LRW Lambert-W (Desnoyers 2012)"
    if drive.gc == "random":
        return models.waf_random(op_seen), "(1 + OP) / OP (random victim)"
    if drive.gc == "greedy":
        return models.waf_greedy(op_seen, b), f"greedy mean field (Van Houdt 2013), b = {b}"
    return models.waf_greedy(op_seen, b), (f"greedy mean field (Van Houdt 2013), b = {b}, as an approximation "
                                           f"for {drive.gc} GC")


def rmw_factor(wl: Workload, page: int) -> float:
    """NAND bytes programmed per host byte before GC: mapping units programmed per write over
    the bytes written (sub-page writes are read-modify-write of their units)."""
    return wl.pages_per_io(page) * page / wl.bytes_per_io()


def waf_bytes(waf_gc: float, wl: Workload, page: int, folds: bool = False) -> float:
    """Host-byte WAF: GC's page WAF (plus the SLC-mode program of each page when the SLC cache
    folds every write) times the units programmed per host byte."""
    return (waf_gc + (1 if folds else 0)) * rmw_factor(wl, page)


def iops_bound(drive: Drive, wl: Workload, waf_gc: float) -> tuple[float, str, dict]:
    """Steady IOPS bound: 1 / the busiest resource's time per IO (operational bottleneck
    law), with the timed model's cost rules: controller firmware per command and per copied
    page, host link per byte, dies (program per mapping unit with the cache on, padded
    programs with it off; GC copies read and program; erases charge every die for the share
    of a physical block the FTL block spans), channels per mapping unit moved.  With an SLC
    cache that folds every write (``drive.slc_folds``) each unit is programmed in SLC mode,
    then read in SLC mode and programmed in native mode, with the controller's per-page GC
    time, as the core charges a fold.  Queueing is not modelled, so this is an upper bound;
    the simulator gives the achieved figure."""
    t = drive.timing
    w = wl.write_fraction
    u = wl.pages_per_io(drive.page_size)
    copies = u * (waf_gc - 1)
    folds = u if drive.slc_folds else 0.0
    xfer, tr, te = t["xfer_ns"], t["t_read_ns"], t["t_erase_ns"]
    upp = t["units_per_program"]
    dies, chans = t["dies"], t["channels"]
    prog_unit = t["t_prog_ns"] / upp
    if drive.slc_folds:
        slc = t["slc"]
        host_prog = u * (xfer + slc["t_prog_ns"] / slc["units_per_program"])
        fold_ns = folds * (slc["t_read_ns"] + xfer + prog_unit)
    elif drive.write_cache:
        host_prog, fold_ns = u * (xfer + prog_unit), 0.0
    else:
        # write cache off: every unit pays a padded program of its own (a whole word line,
        # or with page-by-page times the page it lands on: the mean page time), as the core
        pages = t.get("pages") or {}
        pad = sum(pages["t_prog_ns"]) / len(pages["t_prog_ns"]) if pages.get("t_prog_ns") else t["t_prog_ns"]
        host_prog, fold_ns = u * (xfer + pad), 0.0
    per_die = min(1.0, drive.pages_per_block / dies / t["block_units"])
    erases = (u + copies) / drive.pages_per_block
    die_ns = (w * (host_prog + fold_ns + copies * (tr + xfer + prog_unit) + erases * te * per_die * dies)
              + (1 - w) * u * tr)
    ch_ns = w * (u * xfer + (copies + folds) * 2 * xfer) + (1 - w) * u * xfer
    per_io = {
        "controller": t["fw_ns"] + w * (copies + folds) * t["gc_fw_ns"],
        "host link": wl.bytes_per_io() * t["link_ps_per_byte"] / 1000,
        "NAND dies": die_ns / dies,
        "flash channels": ch_ns / chans,
    }
    per_io = {k: v for k, v in per_io.items() if v > 0}
    worst = max(per_io, key=per_io.get)
    return 1e9 / per_io[worst], worst, {k: 1e9 / v for k, v in per_io.items()}


def endurance(drive: Drive, wl: Workload, targets: Targets, waf: float, user_bytes: int,
              iops: float | None) -> dict:
    """TBW (host TB writable = P/E x NAND / WAF), DWPD, lifetime, price per IOPS."""
    out = {"tbw_tb": None, "dwpd": None, "lifetime_years": None, "price_per_iops": None,
           "price_per_gb": None}
    if drive.pe is not None:
        proj = E.projection(Fraction(str(drive.pe)), drive.physical_bytes, Fraction(waf).limit_denominator(10**9))
        tbw = Fraction(proj["host_bytes_writable"], E.TB)
        out["tbw_tb"] = float(tbw)
        days = Fraction(str(targets.dwpd_years)) * DAYS_PER_YEAR
        out["dwpd"] = float(E.dwpd_from_tbw(tbw, Fraction(user_bytes, GB), days))
        if wl.write_rate:
            out["lifetime_years"] = float(E.lifetime_days(tbw, wl.write_rate) / DAYS_PER_YEAR)
    if targets.price is not None:
        out["price_per_gb"] = targets.price / (user_bytes / GB)
        if iops:
            out["price_per_iops"] = targets.price / iops
    return out


def screen_level(drive: Drive, wl: Workload, targets: Targets, lv: Level) -> dict:
    ops = level_ops(drive, lv)
    wg, wsrc = waf_gc_model(drive, wl, ops["seen_by_gc"])
    wg = float(wg)
    wb = waf_bytes(wg, wl, drive.page_size, drive.slc_folds)
    iops, bott, _ = iops_bound(drive, wl, wg)
    row = {"index": lv.index, "user_bytes": lv.user_bytes, "user_sectors": lv.user.sectors,
           "user_gb": lv.user.gb, "held_back": float(lv.held_back), "op": ops,
           "waf_gc": wg, "waf": wb, "iops": iops, "bottleneck": bott,
           "latency_us": None, "source": "model", "waf_model": wsrc}
    row |= endurance(drive, wl, targets, wb, lv.user_bytes, iops)
    return row


def ceiling(drive: Drive, wl: Workload, targets: Targets, lv: Level) -> dict:
    """What the drive gives at this capacity with no garbage collection at all (WAF = 1 per
    programmed unit): the limit no amount of OP can pass."""
    iops, bott, _ = iops_bound(drive, wl, 1.0)
    wb = waf_bytes(1.0, wl, drive.page_size, drive.slc_folds)
    return {"iops": iops, "bottleneck": bott, "waf": wb} | endurance(drive, wl, targets, wb, lv.user_bytes, iops)


# ----------------------------------------------------------------------------- targets


def check(targets: Targets, row: dict, base: dict | None) -> dict:
    """{target name: (met?, value, required)} for one level's figures (plain bools and
    floats; met is None when the figure was not measured); ``base`` is the native
    configuration's row from the same source, for relative targets."""
    req = []
    if targets.min_iops is not None:
        req.append(("iops", row["iops"], targets.min_iops * (base["iops"] if targets.min_iops_relative else 1), 1))
    if targets.min_tbw is not None:
        req.append(("tbw", row["tbw_tb"], targets.min_tbw * (base["tbw_tb"] if targets.min_tbw_relative else 1), 1))
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


# ----------------------------------------------------------------------------- simulator


def jesd219_available() -> bool:
    """Whether the Rust core accepts ``workload.type = "jesd219"`` (another issue adds it)."""
    from ..errors import ConfigError
    from ..sim import simulate

    try:
        simulate({"drive": {"user_capacity": 60 * 2**20, "physical_capacity": 64 * 2**20, "pages_per_block": 64},
                  "workload": {"type": "jesd219"},
                  "run": {"precondition": "none", "warmup_drive_writes": 0, "measure_drive_writes": 0.01}})
        return True
    except ConfigError:
        return False


@dataclass
class ScaleModel:
    blocks: int
    precondition: str                 # "analytic" or "fill + aging"
    aging_drive_writes: float
    warmup_drive_writes: float
    measure_drive_writes: float
    notes: list


def plan_model(drive: Drive, wl: Workload, model_blocks: int, io_budget: int) -> ScaleModel:
    """The scale model: ``model_blocks`` blocks (fewer if aging would take too long) and the
    run lengths (warm-up and measurement from the IO budget).

    * uniform single-page writes: analytic preconditioning (the mean-field steady state),
      when the model has at least twice as many blocks as pages per block (the placement
      rounds block counts per valid-page level; with fewer blocks it starts off steady state);
    * other workloads: a sequential fill, then aging drive writes of the workload in the
      functional model (fast), then the timed rounds;
    * a random/sequential mix: the core's interleaved pattern keeps state (its random writes
      reach only what its sequential stream has written), so it ages in the timed run itself,
      after the core's fill."""
    notes = []
    blocks = min(drive.blocks, model_blocks)
    analytic = (wl.skew == "uniform" and wl.sequential == 0 and wl.block_size == drive.page_size
                and drive.gc in ("greedy", "fifo", "random", "d-choices") and blocks >= 2 * drive.pages_per_block)
    w = wl.write_fraction
    bpw = wl.bytes_per_io()
    per_block_ios = drive.pages_per_block * drive.page_size * 0.8 / (w * bpw)   # IOs per drive write per block
    aging = 0.0
    if analytic:
        kind = "analytic"
    elif 0 < wl.sequential < 1:
        kind = "fill + timed aging"
        seq, rnd = wl.mix_chunks(drive.page_size, drive.pages_per_block)
        aging = AGING_DRIVE_WRITES["uniform"] + (seq + rnd) / seq
        cap = TIMED_OPS_CAP
    else:
        kind = "fill + aging"
        aging = 1.0 if wl.sequential >= 1 else AGING_DRIVE_WRITES["skewed" if wl.skewed else "uniform"]
        cap = AGING_OPS_CAP
    if aging and aging * blocks * per_block_ios > cap and blocks > MIN_MODEL_BLOCKS:
        new = max(MIN_MODEL_BLOCKS, int(cap / (aging * per_block_ios)))
        if new < blocks:
            notes.append(f"scale model cut to {new:,} blocks to keep the aging run short")
            blocks = new
    # about io_budget IOs, and at least MIN_WINDOW_BLOCKS blocks of host writes measured
    measure = max(2 / 3 * io_budget / (blocks * per_block_ios), MIN_WINDOW_BLOCKS / (0.8 * blocks))
    measure = min(0.5, measure)
    return ScaleModel(blocks=blocks, precondition=kind, aging_drive_writes=aging,
                      warmup_drive_writes=measure / 2, measure_drive_writes=measure, notes=notes)


def sim_config(drive: Drive, wl: Workload, lv: Level, model: ScaleModel, seed: int,
               arrival_iops: float | None = None) -> dict:
    """The scale model of ``lv``: ``model.blocks`` blocks holding the user pages that give
    the same OP seen by GC as the real drive at this capacity."""
    ppb, page = drive.pages_per_block, drive.page_size
    op = drive.op_seen(lv.user_bytes)
    static = math.floor(drive.slc_min_fraction * model.blocks)   # the SLC cache's static part, as op_seen
    user_pages = math.floor((model.blocks - drive.gc_low - static) * ppb / (1 + op))
    cfg: dict = {}
    if drive.preset:
        cfg["preset"] = drive.preset
    cfg["drive"] = dict(drive.drive_overrides) | {
        "user_capacity": user_pages * page, "physical_capacity": model.blocks * ppb * page,
        "sector_size": drive.native.sector_size}
    cfg["ftl"] = {"gc": drive.gc}
    cfg["workload"] = wl.sim_workload(page, ppb)
    t = dict(drive.timing_overrides)
    if arrival_iops is not None:
        t["arrival_iops"] = arrival_iops
    if t:
        cfg["timing"] = t
    m = model.measure_drive_writes
    pre = {"analytic": "analytic", "fill + timed aging": "fill"}.get(model.precondition, "none")
    warm = model.warmup_drive_writes + (model.aging_drive_writes if pre == "fill" else 0)
    cfg["run"] = {"seed": seed, "precondition": pre, "warmup_drive_writes": warm, "measure_drive_writes": m,
                  "round_drive_writes": m / 5}
    return cfg


def run_sim(cfg: dict, model: ScaleModel) -> dict:
    """One timed run.  "fill + aging": a sequential fill in 128 KiB commands and
    ``aging_drive_writes`` of the workload in the functional model, then the timed rounds;
    otherwise the core does it all (analytic preconditioning, or fill and timed warm-up)."""
    from ..sim import Simulator, simulate

    if model.precondition != "fill + aging":
        return simulate(cfg).data
    s = Simulator(cfg)
    user = cfg["drive"]["user_capacity"]
    sector = cfg["drive"]["sector_size"]
    sectors = user // sector
    step = (128 * 1024) // sector
    for lba in range(0, sectors, step):
        s.write(lba, min(step, sectors - lba))
    s.run_for(int(model.aging_drive_writes * user))
    return s.run().data


def sim_level(drive: Drive, wl: Workload, targets: Targets, lv: Level, model: ScaleModel, seed: int) -> dict:
    """One OP level in the timed model, closed loop at the queue depth."""
    r = run_sim(sim_config(drive, wl, lv, model, seed), model)
    t = r["timed"]
    k = rmw_factor(wl, drive.page_size)
    waf_sim = r["waf"]
    wg, wb = waf_sim / k, waf_sim
    iops, bott = t["measured_iops"], None
    iops_src = "timed model, measurement window"
    row = {"index": lv.index, "user_bytes": lv.user_bytes, "user_sectors": lv.user.sectors,
           "user_gb": lv.user.gb, "held_back": float(lv.held_back), "op": level_ops(drive, lv),
           "waf_gc": wg, "waf": wb, "iops": iops, "bottleneck": bott, "iops_source": iops_src,
           "latency_us": t["latency_us"],
           "latency_source": f"timed model, closed loop at queue depth {drive.queue_depth}",
           "source": "simulator", "steady_state": t["steady_state"]["reached"],
           "model_op_seen": r["op"]["effective"], "model_blocks": r["drive"]["blocks"],
           "simulated_seconds": t["simulated_seconds"], "wall_seconds": r["perf"]["wall_seconds"]}
    row |= endurance(drive, wl, targets, wb, lv.user_bytes, iops)
    return row


def open_loop_latency(drive: Drive, wl: Workload, row: dict, lv: Level, model: ScaleModel, seed: int,
                      rate: float) -> None:
    """Replace ``row``'s latency by an open-loop run at ``rate`` IOPS (Poisson arrivals), the
    load the IOPS target asks for; a level that does not reach that rate is not run."""
    if row["iops"] < rate:
        row["latency_us"] = None
        row["latency_source"] = f"not run: the level does not reach {rate:,.0f} IOPS"
        return
    r = run_sim(sim_config(drive, wl, lv, model, seed, arrival_iops=rate), model)
    row["latency_us"] = r["timed"]["latency_us"]
    row["latency_source"] = f"timed model, open loop at {rate:,.0f} IOPS (Poisson arrivals)"
    row["wall_seconds"] += r["perf"]["wall_seconds"]


def smallest_passing(n: int, start: int, ok) -> tuple[int | None, int | None]:
    """For a predicate ``ok`` over 0..n-1 that is false then true (more OP never hurts),
    the largest index found failing (``lo``) and the smallest passing (``hi``; None: none
    passes), evaluating ``ok`` as few times as possible from the guess ``start``: gallop
    down (or up) from it, then bisect."""
    if ok(start):
        lo, hi, d = None, start, 1
        while hi > 0:
            j = max(0, hi - d)
            if ok(j):
                hi, d = j, 2 * d
            else:
                lo = j
                break
    else:
        lo, hi, d = start, None, 1
        while lo < n - 1:
            j = min(n - 1, lo + d)
            if ok(j):
                hi = j
                break
            lo, d = j, 2 * d
    if lo is not None and hi is not None:
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if ok(mid):
                hi = mid
            else:
                lo = mid
    return lo, hi


# ----------------------------------------------------------------------------- the advisor


def advise(drive: Drive, wl: Workload, targets: Targets, *, step: Fraction = Fraction(1, 200),
           max_held_back: Fraction = Fraction(1, 2), confirm: bool = True, model_blocks: int = 2048,
           io_budget: int = 1_500_000, seed: int = 1, progress=None) -> dict:
    """Screen, confirm, explain.  Returns the JSON document of ``opsim advise``."""
    needs_pe = [o for o, v in (("min_tbw", targets.min_tbw), ("min_dwpd", targets.min_dwpd),
                               ("min_lifetime", targets.min_lifetime_years)) if v is not None]
    if needs_pe and drive.pe is None:
        raise _bad(needs_pe[0], "an endurance target needs the NAND's P/E cycle rating: give --pe "
                                "(host TB writable = P/E x NAND capacity / WAF)")
    if targets.min_lifetime_years is not None and not wl.write_rate:
        raise _bad("min_lifetime", "a lifetime target needs the host writes per day: give --write-rate")
    if not targets.names():
        raise _bad("min_iops", "give at least one target: --min-iops, --min-tbw, --min-dwpd, --min-lifetime, "
                               "--min-capacity or --max-latency")
    if targets.min_capacity is not None and targets.min_capacity > drive.native.bytes:
        raise _bad("min_capacity", f"{targets.min_capacity:,} bytes is more than the drive's native capacity "
                                   f"({drive.native.bytes:,} bytes)")
    if targets.latency and not confirm:
        raise _bad("max_latency", "latency has no analytic model: it needs the simulator (drop --no-simulate)")
    if wl.sequential > 0 and wl.skewed:
        raise _bad("sequential", "a random/sequential mix is simulated with uniform random writes; drop "
                                 "--skew/--profile or --sequential")
    if 0 < wl.sequential < 1 and wl.block_size % drive.page_size:
        raise _bad("sequential", f"a random/sequential mix needs a --block-size that is a multiple of the "
                                 f"{drive.page_size}-byte page (the simulator's interleaved pattern)")
    confirm_note = None
    if wl.skew == "jesd219" and confirm and not jesd219_available():
        confirm_note = ("the Rust core has no workload type \"jesd219\" yet: the JESD219 profile is screened "
                        "with the analytic models only")
        if targets.latency:
            raise _bad("max_latency", confirm_note + "; a latency target cannot be checked")
        confirm = False

    # every level up to 75% held back (the diagnosis looks beyond the allowed range);
    # the allowed ones are a prefix: capacity falls as the OP rises
    levels = grid(drive, step, DIAGNOSIS_HELD_BACK)
    if not levels:
        raise _bad("native", "no candidate capacity leaves room for garbage collection")
    allowed = [lv for lv in levels if lv.held_back <= max_held_back
               and (targets.min_capacity is None or lv.user_bytes >= targets.min_capacity)]
    relative = targets.min_iops_relative or targets.min_tbw_relative

    # --- analytic screen over the whole fine grid
    screen = [screen_level(drive, wl, targets, lv) for lv in levels]
    for row in screen:
        row["checks"] = check(targets, row, screen[0])
        row["fails"] = failing(row["checks"])
    per_target_model = {}
    for name in targets.names():
        if name in ("iops", "tbw", "dwpd", "lifetime", "capacity"):
            first = next((r for r in screen if r["checks"][name][0]), None)
            per_target_model[name] = None if first is None else first["index"]
    model_pick = next((r["index"] for r in screen[:len(allowed)] if not r["fails"]), None)

    # --- simulator confirmation: from the screen's pick, down or up to the boundary
    sims: dict[int, dict] = {}
    model = plan_model(drive, wl, model_blocks, io_budget) if confirm else None
    latency_rate = None
    lo = hi = None
    if confirm and allowed:
        def run(i: int) -> dict:
            if i not in sims:
                if progress:
                    progress(f"simulating {levels[i].user_bytes / GB:,.1f} GB "
                             f"({100 * float(levels[i].held_back):.1f}% held back)")
                sims[i] = sim_level(drive, wl, targets, levels[i], model, seed)
                if latency_rate is not None:
                    open_loop_latency(drive, wl, sims[i], levels[i], model, seed, latency_rate)
            return sims[i]

        if relative:
            run(0)                                   # the native configuration: the baseline
        if targets.latency and targets.min_iops is not None:
            latency_rate = targets.min_iops * (sims[0]["iops"] if targets.min_iops_relative else 1)
            if 0 in sims:
                open_loop_latency(drive, wl, sims[0], levels[0], model, seed, latency_rate)

        def ok(i: int) -> bool:
            row = run(i)
            row["checks"] = check(targets, row, sims.get(0) if relative else row)
            row["fails"] = failing(row["checks"], skip_unknown=False)
            return not row["fails"]

        start = model_pick if model_pick is not None else len(allowed) - 1
        lo, hi = smallest_passing(len(allowed), start, ok)
        for i in sims:                                # the baseline too, for the table
            ok(i)

    # --- the answer
    pick = hi if confirm else model_pick
    below = lo if confirm else (None if model_pick in (None, 0) else model_pick - 1)
    rows = sims if confirm else {r["index"]: r for r in screen}
    rec = None
    if pick is not None:
        row, lv = rows[pick], levels[pick]
        # what the level one step down misses (measured misses first: a latency not
        # measured because the IOPS fell short is not what binds)
        binding = [] if below is None else (failing(rows[below]["checks"]) or rows[below]["fails"])
        rec = {"index": pick, "user_bytes": lv.user_bytes, "user_sectors": lv.user.sectors, "user_gb": lv.user.gb,
               "held_back": float(lv.held_back), "op": row["op"],
               "figures": {k: row.get(k) for k in ("waf", "iops", "tbw_tb", "dwpd", "lifetime_years",
                                                   "price_per_iops", "price_per_gb", "latency_us")},
               "checks": row["checks"], "source": "simulator" if confirm else "analytic models",
               "binding": binding,
               "below": None if below is None else {
                   "index": below, "user_bytes": levels[below].user_bytes,
                   "held_back": float(levels[below].held_back), "fails": binding,
                   "checks": rows[below]["checks"]},
               "plan_command": plan_command(drive, lv),
               "model_pick": None if model_pick is None else {
                   "index": model_pick, "user_bytes": levels[model_pick].user_bytes,
                   "held_back": float(levels[model_pick].held_back)}}
    reasons = [] if pick is not None else why_not(drive, wl, targets, levels, allowed, rows, per_target_model,
                                                  max_held_back)
    return {
        "drive": drive.to_dict(), "workload": wl.to_dict(), "targets": targets.to_dict(),
        "search": {"step_of_native": float(step), "max_held_back": float(max_held_back),
                   "levels": len(levels), "allowed_levels": len(allowed),
                   "scale_model": None if model is None else model.__dict__, "seed": seed,
                   "simulated_levels": sorted(sims), "confirmed": confirm,
                   "latency_load_iops": latency_rate},
        "feasible": pick is not None, "recommendation": rec, "reasons": reasons,
        "per_target_model": {k: (None if v is None else {"index": v, "held_back": float(levels[v].held_back),
                                                         "user_bytes": levels[v].user_bytes})
                             for k, v in per_target_model.items()},
        "screen": screen, "simulated": [sims[i] for i in sorted(sims)],
        "ceiling": ceiling(drive, wl, targets, allowed[-1] if allowed else levels[0]),
        "assumptions": notes(drive, wl, targets, model, confirm, confirm_note, screen, latency_rate, step),
    }


def plan_command(drive: Drive, lv: Level) -> str:
    nat = f"{drive.native.gb}GB" if drive.native.gb is not None else f"{drive.native.sectors}s"
    user = f"{lv.user.gb}GB" if lv.user.gb is not None else f"{lv.user.sectors}s"
    iface = "nvme" if drive.interface == "nvme" else "sata"
    ss = f" --sector-size {drive.native.sector_size}" if drive.native.sector_size != 512 else ""
    return f"opsim plan --interface {iface} --native {nat} --user {user} --physical {_size_arg(drive.physical_bytes)}{ss}"


def _size_arg(n: int) -> str:
    """A size as the CLI takes it, exact: 262GB, 1024GiB or a byte count."""
    for u, m in (("TiB", 2**40), ("GiB", 2**30), ("TB", 10**12), ("GB", 10**9)):
        if n % m == 0:
            return f"{n // m}{u}"
    return str(n)


def why_not(drive, wl, targets, levels, allowed, rows, per_target_model, max_held_back) -> list[dict]:
    """Why no allowed OP meets the targets: per failing target, what the largest allowed OP
    gives, what the drive gives with no GC at all, and the OP the analytic models say the
    target would need."""
    if not allowed:
        return [{"target": "capacity", "reason": f"no candidate level keeps {targets.min_capacity:,} bytes usable "
                                                 "and leaves room for garbage collection"}]
    last = allowed[-1]
    row = rows[last.index]
    ceil = ceiling(drive, wl, targets, last)
    out = []
    for name in row["fails"]:
        _, val, need = row["checks"][name]
        item = {"target": name, "at_largest_allowed": {
            "held_back": float(last.held_back), "user_bytes": last.user_bytes, "value": val, "required": need,
            "source": row["source"]}}
        idx = per_target_model.get(name)
        if name == "iops" and need > ceil["iops"]:
            item["reason"] = (f"no OP can reach {need:,.0f} IOPS on this workload: even with no garbage "
                              f"collection at all the drive gives {ceil['iops']:,.0f} (limited by the "
                              f"{ceil['bottleneck']}; bottleneck bound)")
        elif name == "tbw" and need > ceil["tbw_tb"]:
            item["reason"] = (f"no OP can reach {need:,.0f} TB: even at WAF {ceil['waf']:.2f} (no GC) the P/E "
                              f"budget gives {ceil['tbw_tb']:,.0f} TB")
        elif name == "lifetime" and need > ceil["lifetime_years"]:
            item["reason"] = (f"no OP can last {need:g} years at this write rate: even with no GC the P/E "
                              f"budget lasts {ceil['lifetime_years']:.2f} years")
        elif idx is not None:
            item["reason"] = (f"needs about {100 * float(levels[idx].held_back):.1f}% of the native capacity held "
                              f"back ({levels[idx].user_bytes / GB:,.1f} GB usable; analytic models), more than "
                              + ("the capacity target allows" if targets.min_capacity is not None
                                 and levels[idx].user_bytes < targets.min_capacity else "--max-held-back allows"))
        elif name.startswith(("latency", "read latency", "write latency")):
            v = "not measured" if val is None else f"{val:,.0f} us"
            item["reason"] = (f"at the largest allowed OP the simulated {name} is {v}, above {need:,g} us")
        else:
            item["reason"] = ("not met anywhere up to 75% of the native capacity held back (analytic models)")
        out.append(item)
    return out


def _timing_note(drive: Drive) -> str:
    if not drive.preset:
        return f"timing parameters: {drive.sources.get('timing')}"
    src = drive.sources.get("timing") or {}
    fitted = sorted(k for k, v in src.items() if str(v).startswith("fitted"))
    est = sorted(k for k, v in src.items() if str(v).startswith("estimate"))
    return (f"timing parameters: preset {drive.preset} (`opsim presets {drive.preset}` gives every source); "
            f"fitted to the seeds: {', '.join(fitted) or 'none'}; estimates: {', '.join(est) or 'none'}")


def notes(drive, wl, targets, model, confirm, confirm_note, screen, latency_rate, step) -> list[str]:
    b = drive.pages_per_block
    out = [
        f"OP levels: every {100 * float(step):g}% of the native capacity held back, as whole marketed GB "
        "(IDEMA LBA1-03 counts)" if drive.native.gb is not None else
        f"OP levels: every {100 * float(step):g}% of the native capacity held back, in whole sectors (floor)",
        f"WAF (screen): {screen[0]['waf_model']}, at the OP garbage collection sees (physical pages outside "
        f"the {drive.gc_low}-block free reserve over user pages); steady state",
        f"WAF is NAND bytes over host bytes: sub-page writes program whole {drive.page_size // 1024} KiB mapping "
        "units (read-modify-write)"
        if any(s % drive.page_size for s, _ in wl.sizes()) else
        "WAF is NAND bytes over host bytes",
        "IOPS (screen): bottleneck bound over controller, host link, NAND dies and channels with the timed "
        "model's cost rules; queueing is not modelled, so it is an upper bound",
        _timing_note(drive),
    ]
    if drive.slc_folds:
        out.insert(2, f"SLC cache (screen): in steady state the cache is its static part "
                      f"({drive.slc_static_blocks:,} blocks, held out of the pool GC works in); every host write is "
                      "programmed in SLC mode and folded (WAF + 1; per page: an SLC read, a native program and the "
                      "controller's per-page GC time)")
    if drive.pe is not None:
        out.append(f"TBW = P/E ({drive.pe:g}) x NAND ({drive.physical_bytes / GB:,.1f} GB) / WAF; "
                   f"DWPD = TBW x 1024 / user GB / ({targets.dwpd_years:g} x 365 days) (the SanDisk X400 note's "
                   "formula); lifetime = TBW / write rate")
    else:
        out.append("no --pe: TBW, DWPD and lifetime are not computed")
    if 0 < wl.sequential < 1:
        seq, rnd = wl.mix_chunks(drive.page_size, drive.pages_per_block)
        out.append(f"random/sequential mix: simulated with the core's interleaved pattern (type \"sk-hynix\"): "
                   f"{seq / 2**20:g} MiB of sequential writes (one FTL block) then {rnd / 2**20:g} MiB of random "
                   f"ones, {100 * seq / (seq + rnd):.1f}% sequential by bytes")
    if wl.skew == "zipf":
        out.append("zipf: the analytic screen ranks the real drive's pages; the scale model ranks its own (fewer) "
                   "pages, so its skew differs slightly")
    if confirm and model is not None:
        out.append(
            f"simulator: timed model on a {model.blocks:,}-block scale model ({b} pages per block, "
            f"1/{max(1, drive.blocks // model.blocks)} of the drive's blocks) with the same OP seen by GC and every "
            f"timing and die count kept; preconditioning: {model.precondition}"
            + (" (the mean-field steady state placed directly)" if model.precondition == "analytic" else
               f" ({model.aging_drive_writes:g} drive writes of the workload after a sequential fill"
               + (", in the timed run)" if model.precondition == "fill + timed aging" else ", functional model)"))
            + f"; then {model.warmup_drive_writes:.3g} drive writes of warm-up and {model.measure_drive_writes:.3g} "
              "measured")
        out += model.notes
        if targets.latency:
            out.append("latency: simulator only (no analytic model); "
                       + (f"open loop at the IOPS target ({latency_rate:,.0f} IOPS, Poisson arrivals)"
                          if latency_rate else f"closed loop at queue depth {drive.queue_depth}")
                       + "; percentiles over the measurement window")
    if confirm_note:
        out.append(confirm_note)
    if not confirm and not confirm_note:
        out.append("--no-simulate: analytic screen only, not confirmed by the simulator")
    return out
