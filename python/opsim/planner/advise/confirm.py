"""The simulator's confirmation: the timed model on a scale model of the drive (every timing
and die count kept, the same OP seen by GC; fewer blocks, or as many superblocks each
smaller: the core's ``scale_model``), and the search for the smallest level that passes in
simulation."""

from __future__ import annotations

from dataclasses import dataclass

from ...sim import Simulator, simulate
from ...workload.spec import Workload
from .drive import Drive
from .screen import Level, endurance, level_ops, rmw_factor
from .targets import Targets

# Sizes of a simulation run (see the "Simulator confirmation" notes in docs/planner.md).
AGING_DRIVE_WRITES = {"uniform": 2.0}  # after a sequential fill, before timing; skewed: aging_drive_writes


#: skewed workloads age until the coldest class has been rewritten this many times ...
AGING_TURNOVERS = 3.0
#: ... within these bounds (drive writes)
AGING_MIN, AGING_MAX = 4.0, 30.0


#: a random/sequential mix also ages 1/s drive writes: the core's interleaved pattern
#: (``sk-hynix``) lets its random writes reach only what its sequential stream has written
AGING_OPS_CAP = 40_000_000  # functional IOs spent on aging, at most


TIMED_OPS_CAP = 4_000_000  # timed IOs spent on aging, at most


MIN_MODEL_BLOCKS = 512
#: blocks of the advisor's scale model unless told (`--model-blocks`)
DEFAULT_MODEL_BLOCKS = 2048


MIN_WINDOW_BLOCKS = 128  # the measured host writes fill this many blocks


def aging_drive_writes(wl: Workload, user_pages: int) -> float:
    """Drive writes of the workload that bring a sequentially filled drive to steady state:
    ``AGING_TURNOVERS`` rewrites of the coldest class's pages (a class holding a share f of
    the LBAs and taking a share r of the writes has each page rewritten r/f times per drive
    write), within ``AGING_MIN`` to ``AGING_MAX``.  Fewer leave the cold pages where the fill
    put them, and the WAF below its steady value (hot/cold 10/90 at 30% held back on the
    P5520: 1.13 after 4 drive writes, 1.59 after 20 or more)."""
    cls = wl.classes(user_pages)
    if not cls:
        return AGING_MIN
    slowest = min(r / f for f, r in cls if r > 0)
    return min(AGING_MAX, max(AGING_MIN, AGING_TURNOVERS / slowest))


@dataclass
class ScaleModel:
    blocks: int  # asked of the core (``scale_blocks``); with superblocks, a budget of 256-page blocks
    precondition: str  # "analytic" or "fill + aging"
    aging_drive_writes: float
    warmup_drive_writes: float
    measure_drive_writes: float
    notes: list
    units: int | None = None  # GC units of the model (the core's); None: ``blocks``
    unit_pages: int | None = None  # pages per unit of the model; None: the drive's
    superblock_scale: int | None = None  # ftl.superblock_scale of the model (superblocks)

    def to_dict(self) -> dict:
        """The JSON of ``opsim advise`` (``search.scale_model``): a block drive's as before,
        a superblock drive's with its ``units``, ``unit_pages`` and ``superblock_scale``."""
        d = dict(self.__dict__)
        if self.superblock_scale is None:
            for k in ("units", "unit_pages", "superblock_scale"):
                d.pop(k)
        return d


def model_blocks_asked(drive: Drive, model_blocks: int) -> int:
    """The blocks to ask the core's scale model for: at most the drive's own FTL blocks; a
    superblock drive's model keeps its superblocks and shrinks each (the core's rule), so the
    whole budget is asked."""
    return model_blocks if drive.superblocks else min(drive.blocks, model_blocks)


def model_geometry(drive: Drive, blocks: int) -> tuple[int, int, int | None]:
    """(units, pages per unit, ftl.superblock_scale) of the core's scale model of ``blocks``
    blocks (the same at every level: only its user pages follow the OP)."""
    g = drive.scale_model(drive.native.bytes, blocks)
    return g["blocks"], g["pages_per_block"], g["superblock_scale"]


def plan_model(drive: Drive, wl: Workload, model_blocks: int, io_budget: int) -> ScaleModel:
    """The scale model: ``model_blocks`` blocks (fewer if aging would take too long) and the
    run lengths (warm-up and measurement from the IO budget).

    * analytic preconditioning (the mean-field steady state) when the core allows it for the
      workload on this drive (``describe``'s ``analytic_precondition``: uniform random writes
      that each rewrite one page, a whole one or an aligned part of one, under a GC policy the
      model covers), and the model has at least twice as many
      blocks as pages per block (the placement rounds block counts per valid-page level; with
      fewer blocks it starts off steady state);
    * other workloads: a sequential fill, then aging drive writes of the workload in the
      functional model (fast), then the timed rounds;
    * a random/sequential mix: the core's interleaved pattern keeps state (its random writes
      reach only what its sequential stream has written), so it ages in the timed run itself,
      after the core's fill."""
    notes = []
    blocks = model_blocks_asked(drive, model_blocks)
    units, ppb, _ = model_geometry(drive, blocks)
    analytic = drive.analytic_precondition(wl.sim_workload(drive.page_size, ppb))
    analytic = analytic and units >= 2 * ppb
    w = wl.write_fraction
    bpw = wl.bytes_per_io()
    # IOs per drive write per block asked (the model's pages per block asked: a block drive's own)
    per_block_ios = (units * ppb / blocks) * drive.page_size * 0.8 / (w * bpw)
    aging = 0.0
    if analytic:
        kind = "analytic"
    elif 0 < wl.sequential < 1:
        kind = "fill + timed aging"
        seq, rnd = wl.mix_chunks(drive.page_size, ppb)
        aging = AGING_DRIVE_WRITES["uniform"] + (seq + rnd) / seq
        cap = TIMED_OPS_CAP
    else:
        kind = "fill + aging"
        aging = 1.0 if wl.sequential >= 1 else AGING_DRIVE_WRITES["uniform"]
        if wl.skewed and wl.sequential == 0:  # until the coldest class has turned over
            aging = aging_drive_writes(wl, units * ppb)  # the zipf bins barely move with the count
        cap = AGING_OPS_CAP
    if aging and aging * blocks * per_block_ios > cap and blocks > MIN_MODEL_BLOCKS:
        new = max(MIN_MODEL_BLOCKS, int(cap / (aging * per_block_ios)))
        if new < blocks:
            notes.append(f"scale model cut to {new:,} blocks to keep the aging run short")
            blocks = new
            units, ppb, _ = model_geometry(drive, blocks)
    if kind == "fill + aging" and aging > AGING_MIN and aging * blocks * per_block_ios > cap:
        # a skewed workload on a model that cannot shrink further: at most the cap (no less
        # than the old 4 drive writes), said in the notes
        cut = max(AGING_MIN, cap / (blocks * per_block_ios))
        if cut < aging:
            notes.append(f"aging cut to {cut:.3g} drive writes (of {aging:.3g}) to keep the run short")
            aging = cut
    # about io_budget IOs, and at least MIN_WINDOW_BLOCKS blocks of host writes measured
    measure = max(2 / 3 * io_budget / (blocks * per_block_ios), MIN_WINDOW_BLOCKS / (0.8 * blocks))
    measure = min(0.5, measure)
    return ScaleModel(
        blocks=blocks,
        precondition=kind,
        aging_drive_writes=aging,
        warmup_drive_writes=measure / 2,
        measure_drive_writes=measure,
        notes=notes,
        units=units,
        unit_pages=ppb,
        superblock_scale=model_geometry(drive, blocks)[2],
    )


def sim_config(
    drive: Drive,
    wl: Workload,
    lv: Level,
    model: ScaleModel,
    seed: int,
    arrival_iops: float | None = None,
    replay: dict | None = None,
) -> dict:
    """The scale model of ``lv``: ``model.blocks`` blocks holding the user pages that give
    the same OP seen by GC as the real drive at this capacity (the core's scale model: its
    reserve, GC groups and SLC cache as the core keeps them).  ``replay``: a ``[workload]``
    table run instead of ``wl``'s (a trace: :mod:`.trace`)."""
    page = drive.page_size
    scale = drive.scale_model(lv.user_bytes, model.blocks)
    cfg: dict = {}
    if drive.preset:
        cfg["preset"] = drive.preset
    cfg["drive"] = dict(drive.drive_overrides) | {
        "user_capacity": scale["user_bytes"],
        "physical_capacity": scale["physical_bytes"],
        "sector_size": drive.native.sector_size,
    }
    cfg["ftl"] = dict(drive.ftl_overrides) | {"gc": drive.gc}  # a profile point's [ftl] keys too
    if scale["superblock_scale"] is not None:  # superblocks: as many, each that many times smaller
        cfg["ftl"]["superblock_scale"] = scale["superblock_scale"]
    cfg["workload"] = dict(replay) if replay is not None else wl.sim_workload(page, scale["pages_per_block"])
    t = dict(drive.timing_overrides)
    if arrival_iops is not None:
        t["arrival_iops"] = arrival_iops
    if t:
        cfg["timing"] = t
    m = model.measure_drive_writes
    pre = {"analytic": "analytic", "fill + timed aging": "fill"}.get(model.precondition, "none")
    warm = model.warmup_drive_writes + (model.aging_drive_writes if pre == "fill" else 0)
    cfg["run"] = {
        "seed": seed,
        "precondition": pre,
        "warmup_drive_writes": warm,
        "measure_drive_writes": m,
        "round_drive_writes": m / 5,
    }
    return cfg


def run_sim(cfg: dict, model: ScaleModel) -> dict:
    """One timed run.  "fill + aging": a sequential fill in 128 KiB commands and
    ``aging_drive_writes`` of the workload in the functional model, then the timed rounds;
    otherwise the core does it all (analytic preconditioning, or fill and timed warm-up)."""
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


def sim_level(
    drive: Drive, wl: Workload, targets: Targets, lv: Level, model: ScaleModel, seed: int, replay: dict | None = None
) -> dict:
    """One OP level in the timed model, closed loop at the queue depth (``replay``: the
    workload table run instead of ``wl``'s)."""
    r = run_sim(sim_config(drive, wl, lv, model, seed, replay=replay), model)
    t = r["timed"]
    k = rmw_factor(wl, drive.page_size)
    waf_sim = r["waf"]
    wg, wb = waf_sim / k, waf_sim
    iops, bott = t["measured_iops"], None
    iops_src = "timed model, measurement window"
    row = {
        "index": lv.index,
        "user_bytes": lv.user_bytes,
        "user_sectors": lv.user.sectors,
        "user_gb": lv.user.gb,
        "held_back": float(lv.held_back),
        "op": level_ops(drive, lv),
        "waf_gc": wg,
        "waf": wb,
        "iops": iops,
        "bottleneck": bott,
        "iops_source": iops_src,
        "latency_us": t["latency_us"],
        "latency_source": f"timed model, closed loop at queue depth {drive.queue_depth}",
        "source": "simulator",
        "steady_state": t["steady_state"]["reached"],
        "model_op_seen": r["op"]["effective"],
        "model_blocks": r["drive"]["blocks"],
        "simulated_seconds": t["simulated_seconds"],
        "wall_seconds": r["perf"]["wall_seconds"],
    }
    row |= endurance(drive, wl, targets, wb, lv.user_bytes, iops)
    return row


def open_loop_latency(
    drive: Drive,
    wl: Workload,
    row: dict,
    lv: Level,
    model: ScaleModel,
    seed: int,
    rate: float,
    replay: dict | None = None,
) -> None:
    """Replace ``row``'s latency by an open-loop run at ``rate`` IOPS (Poisson arrivals), the
    load the IOPS target asks for; a level that does not reach that rate is not run."""
    if row["iops"] < rate:
        row["latency_us"] = None
        row["latency_source"] = f"not run: the level does not reach {rate:,.0f} IOPS"
        return
    r = run_sim(sim_config(drive, wl, lv, model, seed, arrival_iops=rate, replay=replay), model)
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
