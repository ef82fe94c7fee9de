"""The advisor itself: screen, confirm, the binding target, why no OP can meet the targets,
the ``opsim plan`` command for the answer, and the notes on every model used."""

from __future__ import annotations

from fractions import Fraction

from ... import _args
from ..capacity import (
    GB,
)
from ..endurance import DAYS_PER_YEAR, GB_PER_TB, RATING_FORMULA
from . import rated
from .confirm import DEFAULT_MODEL_BLOCKS, ScaleModel, open_loop_latency, plan_model, sim_level, smallest_passing
from .drive import Drive
from .interval import Carried, _rating_workload, absent, carried, how, judged
from .options import _bad
from .screen import (
    Level,
    ceiling,
    check,
    endurance,
    failing,
    grid,
    jesd219_available,
    screen_level,
)
from .skew import skew_model
from .targets import Targets
from .workload import Workload

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
    intervals: bool = True,
) -> dict:
    """Screen, confirm, explain.  Returns the JSON document of ``opsim advise``.  A drive file
    that keeps a profile carries its intervals into every figure (:mod:`.interval`); with
    ``conservative`` the targets are judged on each interval's low end.  ``replay``: the
    ``[workload]`` table the confirmation runs instead of ``wl`` (a trace, on ``scale_model``;
    the screen keeps ``wl``, the trace's fitted workload: :mod:`.trace`); ``intervals=False``
    leaves the drive's profile out (a replay has no interval runs of its own)."""
    seed = _args.uint("seed", seed)  # the core's run.seed: refused before the screen, not after it
    check_request(drive, wl, targets, confirm)
    drive = rated.for_screen(drive, model_blocks)  # a P/E derived from a rating, at the screen's WAF
    band = carried(drive, model_blocks) if intervals else None
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


def _no_band(drive: Drive, intervals: bool) -> str:
    """Why no interval is carried."""
    if not intervals:
        return "not carried: the replay of a trace runs at the drive's best fit only"
    return f"the drive keeps no profile; {how(drive)}"


def check_request(drive: Drive, wl: Workload, targets: Targets, confirm: bool) -> None:
    """Refuse, naming the option, targets the drive or workload cannot be judged on."""
    needs_pe = [
        o
        for o, v in (
            ("min_tbw", targets.min_tbw),
            ("min_dwpd", targets.min_dwpd),
            ("min_lifetime", targets.min_lifetime_years),
        )
        if v is not None
    ]
    if needs_pe and drive.pe is None:
        raise _bad(
            needs_pe[0],
            "an endurance target needs the NAND's P/E cycle rating: give --pe "
            "(host TB writable = P/E x NAND capacity / WAF)",
        )
    if targets.min_lifetime_years is not None and not wl.write_rate:
        raise _bad("min_lifetime", "a lifetime target needs the host writes per day: give --write-rate")
    if not targets.names():
        raise _bad(
            "min_iops",
            "give at least one target: --min-iops, --min-tbw, --min-dwpd, --min-lifetime, "
            "--min-capacity or --max-latency",
        )
    if targets.min_capacity is not None and targets.min_capacity > drive.native.bytes:
        raise _bad(
            "min_capacity",
            f"{targets.min_capacity:,} bytes is more than the drive's native capacity ({drive.native.bytes:,} bytes)",
        )
    if targets.latency and not confirm:
        raise _bad("max_latency", "latency has no analytic model: it needs the simulator (drop --no-simulate)")
    check_mix(drive, wl)


def check_mix(drive: Drive, wl: Workload) -> None:
    """A random/sequential mix: uniform random writes of whole pages."""
    if wl.sequential > 0 and wl.skewed:
        raise _bad(
            "sequential",
            "a random/sequential mix is simulated with uniform random writes; drop --skew/--profile or --sequential",
        )
    if 0 < wl.sequential < 1:
        assert wl.block_size is not None  # a mix is not skewed (refused above), so it has one transfer size
        if wl.block_size % drive.page_size:
            raise _bad(
                "sequential",
                f"a random/sequential mix needs a --block-size that is a multiple of the "
                f"{drive.page_size}-byte page (the simulator's interleaved pattern)",
            )


def jesd219_confirmation(wl: Workload, targets: Targets, confirm: bool) -> tuple[bool, str | None]:
    """Whether the simulator confirms, and why not: a core without the JESD219 workload
    screens that profile with the analytic models only."""
    if not (wl.skew == "jesd219" and confirm and not jesd219_available()):
        return confirm, None
    note = (
        'the Rust core has no workload type "jesd219" yet: the JESD219 profile is screened '
        "with the analytic models only"
    )
    if targets.latency:
        raise _bad("max_latency", note + "; a latency target cannot be checked")
    return False, note


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


def why_not(drive, wl, targets, levels, allowed, rows, per_target_model, max_held_back) -> list[dict]:
    """Why no allowed OP meets the targets: per failing target, what the largest allowed OP
    gives, what the drive gives with no GC at all, and the OP the analytic models say the
    target would need."""
    if not allowed:
        return [
            {
                "target": "capacity",
                "reason": f"no candidate level keeps {targets.min_capacity:,} bytes usable "
                "and leaves room for garbage collection",
            }
        ]
    last = allowed[-1]
    row = rows[last.index]
    ceil = ceiling(drive, wl, targets, last)
    out = []
    for name in row["fails"]:
        _, val, need = row["checks"][name]
        item = {
            "target": name,
            "at_largest_allowed": {
                "held_back": float(last.held_back),
                "user_bytes": last.user_bytes,
                "value": val,
                "required": need,
                "source": row["source"],
            },
        }
        idx = per_target_model.get(name)
        if name == "iops" and need > ceil["iops"]:
            item["reason"] = (
                f"no OP can reach {need:,.0f} IOPS on this workload: even with no garbage "
                f"collection at all the drive gives {ceil['iops']:,.0f} (limited by the "
                f"{ceil['bottleneck']}; bottleneck bound)"
            )
        elif name == "tbw" and need > ceil["tbw_tb"]:
            item["reason"] = (
                f"no OP can reach {need:,.0f} TB: even at WAF {ceil['waf']:.2f} (no GC) the P/E "
                f"budget gives {ceil['tbw_tb']:,.0f} TB"
            )
        elif name == "lifetime" and need > ceil["lifetime_years"]:
            item["reason"] = (
                f"no OP can last {need:g} years at this write rate: even with no GC the P/E "
                f"budget lasts {ceil['lifetime_years']:.2f} years"
            )
        elif idx is not None:
            item["reason"] = (
                f"needs about {100 * float(levels[idx].held_back):.1f}% of the native capacity held "
                f"back ({levels[idx].user_bytes / GB:,.1f} GB usable; analytic models), more than "
                + (
                    "the capacity target allows"
                    if targets.min_capacity is not None and levels[idx].user_bytes < targets.min_capacity
                    else "--max-held-back allows"
                )
            )
        elif name.startswith(("latency", "read latency", "write latency")):
            v = "not measured" if val is None else f"{val:,.0f} us"
            item["reason"] = f"at the largest allowed OP the simulated {name} is {v}, above {need:,g} us"
        else:
            item["reason"] = "not met anywhere up to 75% of the native capacity held back (analytic models)"
        out.append(item)
    return out


def _timing_note(drive: Drive) -> str:
    if not drive.preset:
        return f"timing parameters: {drive.sources.get('timing')}"
    from ...presets import is_path

    src = drive.sources.get("timing") or {}
    fitted = sorted(k for k, v in src.items() if str(v).startswith("fitted"))
    est = sorted(k for k, v in src.items() if str(v).startswith("estimate"))
    what = "drive file" if is_path(drive.preset) else "preset"
    origins = sorted({o for k in fitted for o in _fitted_to(str(src[k]))})
    return (
        f"timing parameters: {what} {drive.preset} (`opsim presets {drive.preset}` gives every source); "
        f"fitted to {' and '.join(origins) or 'its figures'}: {', '.join(fitted) or 'none'}; "
        f"estimates: {', '.join(est) or 'none'}"
    )


def _fitted_to(source: str) -> list[str]:
    """What a fitted key's source says it was fitted to: the drive's datasheet, a seed, a
    measurement (the text after "to " in "fitted: WHAT, to FIGURES (95%: ...)")."""
    import re

    figures = source.split(", to ", 1)[1] if ", to " in source else ""
    out = ["its datasheet"] if re.search(r"(^|; )datasheet", figures) else []
    out += sorted(set(re.findall(r"seed \d{3}", figures)))
    if re.search(r"(^|; )(measured|points|measure)", figures):
        out.append("measurements")
    return out


def _superblock_model(drive, model) -> str:
    """The scale model of a superblock drive, as the core's scale rule made it."""
    b, units, pages = drive.pages_per_block, model.units, model.unit_pages
    which = (
        f"the drive's {units:,} superblocks"
        if units == drive.blocks
        else f"{units:,} of the drive's {drive.blocks:,} superblocks"
    )
    return (
        f"a scale model of {units:,} superblocks of {pages:,} pages ({which}, each 1/{b // pages} of its {b:,} pages)"
    )


def notes(drive, wl, targets, model, confirm, confirm_note, screen, latency_rate, step) -> list[str]:
    b = drive.pages_per_block
    out = [
        f"OP levels: every {100 * float(step):g}% of the native capacity held back, as whole marketed GB "
        "(IDEMA LBA1-03 counts)"
        if drive.native.gb is not None
        else f"OP levels: every {100 * float(step):g}% of the native capacity held back, in whole sectors (floor)",
        f"WAF (screen): {screen[0]['waf_model']}, at the OP garbage collection sees (physical pages outside "
        f"the {drive.description['op']['reserved_blocks']}-block free reserve over user pages); steady state",
        f"WAF is NAND bytes over host bytes: sub-page writes program whole {drive.page_size // 1024} KiB mapping "
        "units (read-modify-write)"
        if any(s % drive.page_size for s, _ in wl.sizes())
        else "WAF is NAND bytes over host bytes",
        "IOPS (screen): bottleneck bound over controller, host link, NAND dies and channels with the timed "
        "model's cost rules; queueing is not modelled, so it is an upper bound",
        _timing_note(drive),
    ]
    if drive.slc_folds:
        out.insert(
            2,
            f"SLC cache (screen): in steady state the cache is its static part "
            f"({drive.slc_static_blocks:,} blocks, held out of the pool GC works in); every host write is "
            "programmed in SLC mode and folded (WAF + 1; per page: an SLC read, a native program and the "
            "controller's per-page GC time)",
        )
    if drive.pe is not None:
        pe_src = drive.sources.get("pe")
        pe_note = "" if pe_src in (None, "given with --pe") else f", {pe_src}"
        out.append(
            f"TBW = P/E ({drive.pe:g}{pe_note}) x NAND ({drive.physical_bytes / GB:,.1f} GB) / WAF; "
            f"DWPD = TBW x {GB_PER_TB[RATING_FORMULA]} / user GB / ({targets.dwpd_years:g} x {DAYS_PER_YEAR} days) "
            "(host bytes over user bytes a day: the data-center vendors' ratings, and the one `opsim calibrate` "
            "derives a P/E rating from; "
            "`opsim endurance` gives the SanDisk X400 note's 1024 too); lifetime = TBW / write rate"
            + (
                "; a rating is the floor its vendor warrants, so a P/E derived from one is the least the NAND "
                "carries and these TBW and DWPD are conservative (docs/calibrate.md, 'The endurance prediction "
                "is low')"
                if drive.pe_from_rating
                else ""
            )
        )
        if targets.min_dwpd is not None and targets.dwpd_workload:
            out.append(
                f"the DWPD target is rated under {targets.dwpd_workload}"
                + (
                    ": JEDEC JESD218 rates a data-center drive's endurance under the JESD219 enterprise workload "
                    "(random writes over the whole drive, 50% to the first 5% of the LBAs, 30% to the next 15%, 20% "
                    "to the rest; 0.5-64 KiB transfers, 67% of 4 KiB), and `opsim calibrate` derives a datasheet's "
                    "P/E rating at that workload's WAF; --profile, --skew, --block-size or --sequential rate it "
                    "under another"
                    if targets.dwpd_workload.startswith("the JESD219")
                    else ""
                )
            )
    else:
        out.append("no --pe: TBW, DWPD and lifetime are not computed")
    if 0 < wl.sequential < 1:
        seq, rnd = wl.mix_chunks(drive.page_size, drive.pages_per_block)
        out.append(
            f'random/sequential mix: simulated with the core\'s interleaved pattern (type "sk-hynix"): '
            f"{seq / 2**20:g} MiB of sequential writes (one FTL block) then {rnd / 2**20:g} MiB of random "
            f"ones, {100 * seq / (seq + rnd):.1f}% sequential by bytes"
        )
    if wl.skew == "zipf":
        out.append(
            "zipf: the analytic screen ranks the real drive's pages; the scale model ranks its own (fewer) "
            "pages, so its skew differs slightly"
        )
    if confirm and model is not None:
        shape = (
            _superblock_model(drive, model)
            if drive.superblocks
            else f"a {model.blocks:,}-block scale model ({b} pages per block, "
            f"1/{max(1, drive.blocks // model.blocks)} of the drive's blocks)"
        )
        out.append(
            f"simulator: timed model on {shape} with the same OP seen by GC and every "
            f"timing and die count kept; preconditioning: {model.precondition}"
            + (
                " (the mean-field steady state placed directly)"
                if model.precondition == "analytic"
                else f" ({model.aging_drive_writes:g} drive writes of the workload after a sequential fill"
                + (", in the timed run)" if model.precondition == "fill + timed aging" else ", functional model)")
            )
            + f"; then {model.warmup_drive_writes:.3g} drive writes of warm-up and {model.measure_drive_writes:.3g} "
            "measured"
        )
        out += model.notes
        if targets.latency:
            out.append(
                "latency: simulator only (no analytic model); "
                + (
                    f"open loop at the IOPS target ({latency_rate:,.0f} IOPS, Poisson arrivals)"
                    if latency_rate
                    else f"closed loop at queue depth {drive.queue_depth}"
                )
                + "; percentiles over the measurement window"
            )
    if confirm_note:
        out.append(confirm_note)
    if not confirm and not confirm_note:
        out.append("--no-simulate: analytic screen only, not confirmed by the simulator")
    return out
