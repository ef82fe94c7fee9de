"""The timed (event) simulator's figure for one condition, on a scale model of the drive.

The cost model's bound (``costs``) is what the busiest resource allows; the event simulator
gives what the drive achieves with its queue depth (queueing, dies idle while others work,
read-modify-write of a mapping unit larger than the request).  Their ratio at the same WAF
is the efficiency :mod:`.fit` applies to the bound, so the fitted parameters reproduce the
event simulator's figures, not only the bound's.

The scale model keeps the drive's NAND array and timing and divides its capacities (steady
IOPS depend on WAF and on the resources, not on the capacity), with at least
``MIN_MODEL_BYTES`` of NAND and twice as many blocks as pages per block.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from ..sim import SimResult, costs, describe, simulate_many
from .inputs import Figure
from .model import _queue, mix_of
from .scale import scaled, superblock_pages, unit_scale

#: NAND of the scale model a timed figure is simulated on, at least
MIN_MODEL_BYTES = 2 << 30
#: host commands a steady run measures at most, and warms up at most after the analytic precondition (a
#: steady state already: the warm-up settles the queues and the open units).  Past a few million the
#: window's IOPS and WAF are as steady: the D5-P5336's 89 GiB model took 11.7 M commands for 0.5 drive
#: writes, and 4 M moved its fitted ``t_prog_us`` by under 0.02% (docs/calibrate.md, "Cost")
STEADY_COMMANDS = 4_000_000
#: runs on a fresh drive: figure kind -> (workload type, warm-up and measured drive writes)
FRESH = {"fob_iops": ("uniform", 0.0, 0.1), "seq_write": ("sequential", 0.05, 0.3)}
#: the same on a drive with an SLC cache: a burst stays inside the cache (a dynamic one holds a third
#: of a fresh TLC drive's NAND; a datasheet's sequential write is of a small file, CrystalDiskMark's
#: 1 GiB), which 0.35 drive writes would outrun
FRESH_IN_CACHE = FRESH | {"seq_write": ("sequential", 0.02, 0.1)}
#: host commands of a read run
READ_IOS = 200_000
#: read figures: kind -> the workload type of their run
READS = {"rand_read": "uniform", "seq_read": "sequential"}
#: the core's workloads need some writes (a read fraction below 1): a read figure is simulated
#: at this read share, 20 writes in READ_IOS commands (its efficiency, timed IOPS over the bound
#: at the same mix, carries to pure reads).  Datasheets rate reads alone: at 0.99 the reads of a
#: fast drive wait behind the programs and GC copies of the 1% writes (the P5336 reached 268K
#: IOPS at 0.99, 1.33M at 0.9999: the reads engineer's runs, issue 25)
READ_SHARE = 0.9999


@dataclass(frozen=True)
class TimedFigure:
    iops: float
    waf: float
    waf_gc: float
    bound: float
    p99_us: float | None
    scale: int

    @property
    def efficiency(self) -> float:
        return self.iops / self.bound if self.bound > 0 else 1.0


def scale_for(cfg: dict) -> int:
    d = describe(cfg, model_limits=False)["drive"]
    page, ppb, physical = d["page_size"], d["pages_per_block"], d["physical_bytes"]
    want = max(MIN_MODEL_BYTES, 2 * ppb * ppb * page + 64 * ppb * page)
    return max(1, physical // want)


def scale_model(cfg: dict, user_bytes: int) -> tuple[dict, int]:
    """The scale model a figure is timed on, and its scale: the NAND array and timing kept, the
    capacities divided (FTL blocks: fewer of them; superblocks: as many, each smaller, by the
    core's rule, :mod:`.scale`)."""
    pages = superblock_pages(cfg)
    model = copy.deepcopy(cfg)
    if pages is not None:
        physical = describe(cfg, model_limits=False)["drive"]["physical_bytes"]
        scale = unit_scale(pages, max(1, physical // MIN_MODEL_BYTES))
        return scaled(model, scale, user_bytes), scale
    scale = scale_for(cfg)
    d = describe(cfg, model_limits=False)["drive"]
    model["drive"]["physical_capacity"] = d["physical_bytes"] // scale
    model["drive"]["user_capacity"] = user_bytes // scale // d["page_size"] * d["page_size"]
    return model, scale


def run(cfg: dict, f: Figure, user_bytes: int, seed: int = 1) -> TimedFigure:
    """The timed simulator's IOPS (and WAF, p99) for figure ``f``'s condition on ``cfg``."""
    (out,) = run_many(cfg, [f], user_bytes, seed)
    return out


def run_many(
    cfg: dict, figures: list[Figure], user_bytes: int, seed: int = 1, fresh: dict | None = None
) -> list[TimedFigure]:
    """:func:`run` of each of ``figures``, the runs side by side on the process's cores
    (independent seeded runs: the same results as one by one); ``fresh``: the cost model's state
    of a fresh drive, as the model predicts it (:func:`.model.fresh_state`; default: nothing folded)."""
    return run_each([(cfg, f) for f in figures], user_bytes, seed, fresh)


def run_each(
    runs: list[tuple[dict, Figure]], user_bytes: int, seed: int = 1, fresh: dict | None = None
) -> list[TimedFigure]:
    """:func:`run_many` of each (config, figure) pair: a figure on configs of its own (the
    points of a profile, :meth:`.result.Calibration.predict`)."""
    setups = [_setup(cfg, f, user_bytes, seed) for cfg, f in runs]
    results = simulate_many([model for model, _ in setups])
    state = fresh or {"slc_folds": False}
    return [_outcome(cfg, f, model, scale, r, state) for (cfg, f), (model, scale), r in zip(runs, setups, results)]


def _setup(cfg: dict, f: Figure, user_bytes: int, seed: int) -> tuple[dict, int]:
    """The scale model and run of figure ``f``'s condition, and the scale."""
    if f.user:
        user_bytes = f.user  # the max address lowered: the rest is spare, not free user capacity
    model, scale = scale_model(cfg, user_bytes)
    if f.queue_depth:
        qd, queues = _queue(f.queue_depth, model["timing"].get("interface", "sata"))
        model["timing"] |= {"queue_depth": qd, "nvme_queues": queues}
    span = (f.span or user_bytes) / user_bytes
    if f.kind in ("steady_iops", "waf"):
        model["workload"] = {
            "type": "uniform",
            "request_size": f.block_size,
            "read_fraction": f.read_fraction,
            "span": span,
        }
        analytic = describe(model, model_limits=False)["analytic_precondition"]
        measure = min(0.5, STEADY_COMMANDS * f.block_size / (model["drive"]["user_capacity"] * span))
        model["run"] = {
            "seed": seed,
            "precondition": "analytic" if analytic else "fill",
            "warmup_drive_writes": min(0.25, measure) if analytic else 2.0,
            "measure_drive_writes": measure,
            "round_drive_writes": measure / 5,
        }
    elif f.kind in FRESH:
        # a fresh drive (nothing written yet): the burst, or the sequential fill
        kind, warmup, measure = (FRESH_IN_CACHE if "slc_cache" in cfg.get("ftl", {}) else FRESH)[f.kind]
        model["workload"] = {"type": kind, "request_size": f.block_size}
        model["run"] = {
            "seed": seed,
            "precondition": "none",
            "warmup_drive_writes": warmup,
            "measure_drive_writes": measure,
            "round_drive_writes": measure / 5,
        }
    elif f.kind in READS:
        # the drive filled sequentially, then read (random or sequential) at READ_SHARE
        model["run"] = {"seed": seed, "precondition": "fill", "warmup_drive_writes": 0.0}
        model["phase"] = [
            {
                "name": "read",
                "ios": READ_IOS,
                "measure": True,
                "workload": {"type": READS[f.kind], "request_size": f.block_size, "read_fraction": READ_SHARE},
            }
        ]
    else:  # pragma: no cover - Figure kinds are closed
        raise ValueError(f.kind)
    return model, scale


def _outcome(cfg: dict, f: Figure, model: dict, scale: int, r: SimResult, fresh: dict) -> TimedFigure:
    """What the run ``r`` of figure ``f``'s condition measured, beside the cost model's bound."""
    page = describe(cfg, model_limits=False)["drive"]["page_size"]
    m = r.measure_counters
    host = max(1, m["host_write_pages"])
    waf_gc = 1.0 + m["gc_copy_pages"] / host if m["host_write_pages"] else 1.0
    iops = float(r.timed["measured_iops"])
    d = describe(model, model_limits=False)
    mix = mix_of(f, page, d["config"]["timing"]["interface"], READ_SHARE if f.kind in READS else None)
    cm = d["cost_model"]
    if f.kind not in ("steady_iops", "waf"):
        cm |= fresh  # as model.predict costs a fresh drive
    bound = costs(cm, mix, waf_gc)["iops"]
    lat = (r.timed.get("latency_us") or {}).get("all") or {}
    return TimedFigure(iops, float(r.waf or 1.0), waf_gc, bound, lat.get("p99"), scale)
