"""The advisor itself: the request checked (:mod:`.checks`), the screen, the confirmation, the
binding target, why no OP can meet the targets (:mod:`.diagnosis`), the ``opsim plan`` command
for the answer, and the notes on every model used (:mod:`.notes`)."""

from __future__ import annotations

from fractions import Fraction

from ... import _args
from ...workload.spec import Workload
from ..capacity import (
    GB,
)
from . import rated
from .checks import check_request, jesd219_confirmation
from .confirm import DEFAULT_MODEL_BLOCKS, ScaleModel, open_loop_latency, plan_model, sim_level, smallest_passing
from .diagnosis import why_not
from .drive import Drive
from .interval import Carried, _rating_workload, absent, carried, how, judged
from .notes import notes
from .options import _bad
from .screen import (
    Level,
    ceiling,
    check,
    endurance,
    failing,
    grid,
    screen_level,
)
from .skew import skew_model
from .targets import Targets

DIAGNOSIS_HELD_BACK = Fraction(3, 4)  # the screen looks this far (max --max-held-back)


def _same_workload(a: Workload, b: Workload) -> bool:
    """Whether the two describe the same writes (the rating's workload and the one simulated)."""
    keys = ("skew", "block_size", "read_fraction", "sequential", "hot_fraction", "hot_write_fraction", "zipf_exponent")
    return type(a) is type(b) and all(getattr(a, k, None) == getattr(b, k, None) for k in keys)


def advise(
    drive: Drive,
    wl: Workload,
    targets: Targets,
    *,
    step: Fraction = Fraction(1, 200),
    max_held_back: Fraction = Fraction(1, 2),
    confirm: bool = True,
    model_blocks: int = DEFAULT_MODEL_BLOCKS,
    io_budget: int = 1_500_000,
    seed: int = 1,
    progress=None,
    conservative: bool = False,
    replay: dict | None = None,
    scale_model: ScaleModel | None = None,
    intervals: bool | str = True,
) -> dict:
    """Screen, confirm, explain.  Returns the JSON document of ``opsim advise``.  A drive file
    that keeps a profile carries its intervals into every figure (:mod:`.interval`); with
    ``conservative`` the targets are judged on each interval's low end.  ``replay``: the
    ``[workload]`` table the confirmation runs instead of ``wl`` (a trace, on ``scale_model``;
    the screen keeps ``wl``, the trace's fitted workload: :mod:`.trace`); ``intervals=False``
    leaves the drive's profile out (a replay has no interval runs of its own), as does a string:
    why (a fleet's judgements, whose ranges come from the screen: :mod:`.fleet`); the
    recommendation is the same either way, decided on the best fit."""
    seed = _args.uint("seed", seed)  # the core's run.seed: refused before the screen, not after it
    check_request(drive, wl, targets, confirm)
    drive = rated.for_screen(drive, model_blocks)  # a P/E derived from a rating, at the screen's WAF
    band = carried(drive, model_blocks) if intervals is True else None
    if conservative and band is None:
        raise _bad(
            "conservative",
            f"the drive has no interval to be conservative with (no [preset.calibration.profile]): {how(drive)}",
        )
    confirm, confirm_note = jesd219_confirmation(wl, targets, confirm)
    # every level up to 75% held back (the diagnosis looks beyond the allowed range);
    # the allowed ones are a prefix: capacity falls as the OP rises
    levels = grid(drive, step, DIAGNOSIS_HELD_BACK)
    if not levels:
        raise _bad("native", "no candidate capacity leaves room for garbage collection")
    allowed = [
        lv
        for lv in levels
        if lv.held_back <= max_held_back and (targets.min_capacity is None or lv.user_bytes >= targets.min_capacity)
    ]
    screen, per_target_model, model_pick = screen_levels(
        drive, wl, targets, levels, len(allowed), model_blocks, band=band, conservative=conservative
    )
    model = (scale_model or plan_model(drive, wl, model_blocks, io_budget)) if confirm else None
    sim = Confirmation(drive, wl, targets, levels, model, seed, progress)
    sim.replay = replay
    sim.band, sim.screen, sim.conservative = band, screen, conservative
    sim.sizes = (model_blocks, io_budget)
    if model is not None and allowed:
        sim.search(len(allowed), model_pick)
    # --- the answer
    pick = sim.hi if confirm else model_pick
    below = sim.lo if confirm else (None if model_pick in (None, 0) else model_pick - 1)
    rows = sim.rows if confirm else {r["index"]: r for r in screen}
    rec = None if pick is None else recommendation(drive, levels, rows, pick, below, model_pick, confirm)
    if rec is not None:
        rec["decided_on"] = "the conservative end of each interval" if conservative else "the best fit"
    reasons = (
        [] if pick is not None else why_not(drive, wl, targets, levels, allowed, rows, per_target_model, max_held_back)
    )
    return {
        "drive": drive.to_dict(),
        "workload": wl.to_dict(),
        "targets": targets.to_dict(),
        "search": {
            "step_of_native": float(step),
            "max_held_back": float(max_held_back),
            "levels": len(levels),
            "allowed_levels": len(allowed),
            "scale_model": None if model is None else model.to_dict(),
            "seed": seed,
            "simulated_levels": sorted(sim.rows),
            "confirmed": confirm,
            "latency_load_iops": sim.latency_rate,
        },
        "feasible": pick is not None,
        "recommendation": rec,
        "reasons": reasons,
        "per_target_model": {
            k: (
                None
                if v is None
                else {"index": v, "held_back": float(levels[v].held_back), "user_bytes": levels[v].user_bytes}
            )
            for k, v in per_target_model.items()
        },
        "screen": screen,
        "simulated": [sim.rows[i] for i in sorted(sim.rows)],
        "ceiling": ceiling(drive, wl, targets, allowed[-1] if allowed else levels[0]),
        "interval": band.to_dict(conservative)
        if band is not None
        else {"from": None, "how": _no_band(drive, intervals)},
        "assumptions": [
            *notes(drive, wl, targets, model, confirm, confirm_note, screen, sim.latency_rate, step),
            band.note(conservative) if band is not None else f"no intervals: {_no_band(drive, intervals)}",
            *(
                [f"the simulator's rows take the P/E at {sim.rated_drive.pe:g}: {sim.rated_drive.sources['pe']}"]
                if sim.rated_drive is not None
                else []
            ),
        ],
    }


def _no_band(drive: Drive, intervals: bool | str) -> str:
    """Why no interval is carried."""
    if isinstance(intervals, str):
        return intervals
    if not intervals:
        return "not carried: the replay of a trace runs at the drive's best fit only"
    return f"the drive keeps no profile; {how(drive)}"


def screen_levels(
    drive: Drive,
    wl: Workload,
    targets: Targets,
    levels: list[Level],
    allowed: int,
    model_blocks: int,
    band: Carried | None = None,
    conservative: bool = False,
) -> tuple[list[dict], dict, int | None]:
    """The analytic screen over the whole fine grid: its rows (with their intervals over the
    profile's points, ``band``), the first level meeting each analytic target, and the smallest
    allowed level meeting them all (judged on the intervals' low ends with ``conservative``).
    A skewed workload's WAF is anchored to the core's functional model on the scale model of
    ``model_blocks`` blocks (``skew.skew_model``), at every point alike."""
    sk = skew_model(drive, wl, model_blocks) if wl.skewed and wl.sequential == 0 else None
    screen = [screen_level(drive, wl, targets, lv, sk) for lv in levels]
    if band is not None:
        band.screen(wl, targets, levels, screen, sk)
    else:
        for row in screen:
            absent(row)
    for row in screen:
        row["checks"] = check(targets, judged(row, conservative), judged(screen[0], conservative))
        row["fails"] = failing(row["checks"])
    per_target_model = {}
    for name in targets.names():
        if name in ("iops", "tbw", "dwpd", "lifetime", "capacity"):
            first = next((r for r in screen if r["checks"][name][0]), None)
            per_target_model[name] = None if first is None else first["index"]
    model_pick = next((r["index"] for r in screen[:allowed] if not r["fails"]), None)
    return screen, per_target_model, model_pick


class Confirmation:
    """The simulator's confirmation: levels simulated on the scale model (``rows``, by
    index), from the screen's pick down or up to the boundary (``lo`` fails, ``hi`` passes)."""

    def __init__(self, drive, wl, targets, levels, model, seed, progress) -> None:
        self.drive, self.wl, self.targets, self.levels = drive, wl, targets, levels
        self.model, self.seed, self.progress = model, seed, progress
        self.rows: dict[int, dict] = {}
        self.latency_rate: float | None = None
        self.lo: int | None = None
        self.hi: int | None = None
        self.relative = targets.min_iops_relative or targets.min_tbw_relative
        #: the profile's points (None: no intervals), the screen's rows (their extreme points)
        self.band: Carried | None = None
        self.screen: list[dict] = []
        self.conservative = False
        self.sizes = (2048, 1_500_000)  # the scale model's blocks and IO budget, for the points' own models
        self.replay: dict | None = None  # the workload table simulated instead of ``wl``'s (a trace)
        #: the drive with its rating-derived P/E at the simulator's WAF (:mod:`.rated`), once known
        self.rated_drive: Drive | None = None

    def run(self, i: int) -> dict:
        if i not in self.rows:
            lv = self.levels[i]
            if self.progress:
                self.progress(f"simulating {lv.user_bytes / GB:,.1f} GB ({100 * float(lv.held_back):.1f}% held back)")
            row = sim_level(self.drive, self.wl, self.targets, lv, self.model, self.seed, replay=self.replay)
            if self.band is not None:
                if self.progress:
                    self.progress(f"simulating {lv.user_bytes / GB:,.1f} GB at the interval's ends")
                self.band.simulate(row, self.screen[i], lv, self.wl, self.targets, self.seed, *self.sizes)
            else:
                absent(row)
            if self.rated_drive is not None:
                row |= endurance(self.rated_drive, self.wl, self.targets, row["waf"], lv.user_bytes, row["iops"])
            self.rows[i] = row
            if self.latency_rate is not None:
                self.latency(i)
        return self.rows[i]

    def rate_at_native(self) -> None:
        """A P/E derived from a rating, judged by the simulator at the simulator's own WAF of the
        rating workload at the native capacity (:mod:`.rated`), when the workload simulated is
        the rating's and an endurance target is set: the native level is simulated first."""
        t = self.targets
        host = rated.rated_host(self.drive)
        if host is None or self.replay is not None or not (t.min_dwpd or t.min_tbw or t.min_lifetime_years):
            return
        rw = _rating_workload(self.drive)
        if rw is None or not _same_workload(rw[0], self.wl):
            return
        row = self.run(0)
        again = rated.at_waf(self.drive, host, row["waf"], "the simulator")
        if again is self.drive:  # the simulator sees the rating met with the P/E as it is
            return
        self.rated_drive = again
        for i, r in self.rows.items():
            r |= endurance(self.rated_drive, self.wl, t, r["waf"], self.levels[i].user_bytes, r["iops"])

    def latency(self, i: int) -> None:
        assert self.latency_rate is not None
        open_loop_latency(
            self.drive, self.wl, self.rows[i], self.levels[i], self.model, self.seed, self.latency_rate, self.replay
        )

    def ok(self, i: int) -> bool:
        row = self.run(i)
        base = self.rows.get(0) if self.relative else row
        row["checks"] = check(
            self.targets, judged(row, self.conservative), None if base is None else judged(base, self.conservative)
        )
        row["fails"] = failing(row["checks"], skip_unknown=False)
        return not row["fails"]

    def search(self, allowed: int, model_pick: int | None) -> None:
        """The smallest allowed level that passes in simulation, from the screen's pick."""
        t = self.targets
        if self.relative:
            self.run(0)  # the native configuration: the baseline
        self.rate_at_native()
        if t.latency and t.min_iops is not None:
            self.latency_rate = t.min_iops * (self.rows[0]["iops"] if t.min_iops_relative else 1)
            if 0 in self.rows:
                self.latency(0)
        start = model_pick if model_pick is not None else allowed - 1
        self.lo, self.hi = smallest_passing(allowed, start, self.ok)
        for i in list(self.rows):  # the baseline too, for the table
            self.ok(i)


def recommendation(drive, levels, rows, pick, below, model_pick, confirm) -> dict:
    """The recommended level: its figures and checks, what the level one step down misses
    (measured misses first: a latency not measured because the IOPS fell short is not what
    binds), the ``opsim plan`` command and the screen's own pick."""
    row, lv = rows[pick], levels[pick]
    binding = [] if below is None else (failing(rows[below]["checks"]) or rows[below]["fails"])
    figures = (
        "waf",
        "waf_low",
        "waf_high",
        "iops",
        "iops_low",
        "iops_high",
        "tbw_tb",
        "tbw_low",
        "tbw_high",
        "dwpd",
        "dwpd_low",
        "dwpd_high",
        "lifetime_years",
        "lifetime_low",
        "lifetime_high",
        "price_per_iops",
        "price_per_gb",
        "latency_us",
    )
    return {
        "index": pick,
        "user_bytes": lv.user_bytes,
        "user_sectors": lv.user.sectors,
        "user_gb": lv.user.gb,
        "held_back": float(lv.held_back),
        "op": row["op"],
        "figures": {k: row.get(k) for k in figures},
        "checks": row["checks"],
        "source": "simulator" if confirm else "analytic models",
        "binding": binding,
        "below": None
        if below is None
        else {
            "index": below,
            "user_bytes": levels[below].user_bytes,
            "held_back": float(levels[below].held_back),
            "fails": binding,
            "checks": rows[below]["checks"],
        },
        "plan_command": plan_command(drive, lv),
        "model_pick": None
        if model_pick is None
        else {
            "index": model_pick,
            "user_bytes": levels[model_pick].user_bytes,
            "held_back": float(levels[model_pick].held_back),
        },
    }


def plan_command(drive: Drive, lv: Level) -> str:
    nat = f"{drive.native.gb}GB" if drive.native.gb is not None else f"{drive.native.sectors}s"
    user = f"{lv.user.gb}GB" if lv.user.gb is not None else f"{lv.user.sectors}s"
    iface = "nvme" if drive.interface == "nvme" else "sata"
    ss = f" --sector-size {drive.native.sector_size}" if drive.native.sector_size != 512 else ""
    return (
        f"opsim plan --interface {iface} --native {nat} --user {user} --physical {_size_arg(drive.physical_bytes)}{ss}"
    )


def _size_arg(n: int) -> str:
    """A size as the CLI takes it, exact: 262GB, 1024GiB or a byte count."""
    for u, m in (("TiB", 2**40), ("GiB", 2**30), ("TB", 10**12), ("GB", 10**9)):
        if n % m == 0:
            return f"{n // m}{u}"
    return str(n)
