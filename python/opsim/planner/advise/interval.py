"""The interval a calibrated drive file carries forward into the advisor's figures.

``opsim calibrate`` keeps, in a drive file's ``[preset.calibration.profile]``, the points of the
profile likelihood its 95% intervals came from (docs/calibrate.md, "What a drive file keeps"):
each point is the drive with other values for the profile's keys (the NAND capacity and the
parameters fitted again at it).  The interval of any later prediction is the least and most of
it over the drive as stored and the drive at each point:

* **screen** (analytic, cheap): every level is screened at every point; WAF, IOPS, TBW, DWPD and
  lifetime each get their least and most (``waf_low``, ``waf_high``, ...);
* **simulator**: each simulated level runs again at the two points that give the screen's lowest
  and highest WAF at that level (not at every point: a run costs what the confirmation's does),
  and the simulated interval is the least and most of the three runs.

The P/E rating at a point: when ``opsim calibrate`` derived it from the datasheet's endurance (the
rated host writes at the WAF of the rating's JEDEC workload, over the NAND), it is derived again
at the point (the same rated host writes, that point's NAND and the screen's WAF of the rating
workload at the native capacity), so every point keeps the datasheet's rating; a P/E rating that
was given (``--pe``, or the drive file's input) is held.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from scipy.interpolate import PchipInterpolator

from ...errors import InputError, OpsimError
from ...presets import INPUTS
from ...workload.spec import Workload
from .confirm import DEFAULT_MODEL_BLOCKS, ScaleModel, plan_model, sim_level
from .drive import Drive, load_drive
from .options import _bad
from .screen import Level, SkewRatio, endurance, iops_bound, screen_level, waf_bytes
from .skew import skew_model
from .targets import Targets

#: the figures an interval is carried for: (the row's key, the interval's name)
FIGURES = (("waf", "waf"), ("iops", "iops"), ("tbw_tb", "tbw"), ("dwpd", "dwpd"), ("lifetime_years", "lifetime"))
#: the figures a target is judged on, lower is worse (``--conservative`` judges their low end)
WORSE_LOW = ("iops", "tbw_tb", "dwpd", "lifetime_years")
#: the controller's time per GC copy and the native program time, a structure's keys when the
#: profile ranges over them (a drive file calibrated from a datasheet of bursts: docs/calibrate.md,
#: "A datasheet of bursts"): the highest of each is the least IOPS, which no WAF end gives
SLOW_KEYS = ("timing.gc_fw_us", "timing.t_prog_us")


def how(drive: Drive) -> str:
    """Where intervals would come from for a drive without a profile: the calibrate command
    (of its checked-in input, for a built-in preset made from one); a drive whose NAND was
    given rather than fitted has no profile to keep (the profile is over the NAND capacity)."""
    phys = str(drive.sources.get("physical", ""))
    if drive.preset is not None and not phys.startswith("fitted"):
        return (
            f"its NAND capacity is not fitted ({phys}), and the profile intervals come from is over the NAND "
            "(docs/calibrate.md, 'The uncertainty model'); a drive file written by `opsim calibrate` with the NAND "
            "fitted keeps one ([preset.calibration.profile])"
        )
    given, out = "--datasheet FILE", "drive.toml"
    if drive.preset is not None and (INPUTS / f"{drive.preset}.toml").is_file():
        path = str(INPUTS / f"{drive.preset}.toml")
        rel = os.path.relpath(path)
        given, out = f"--datasheet {rel if not rel.startswith('..') else path}", f"{drive.preset}.toml"
    return (
        f"`opsim calibrate {given} -o {out}` writes a drive file that keeps the profile its intervals come "
        f"from ([preset.calibration.profile]); `opsim advise --drive {out}` then carries them"
    )


def keys() -> list[str]:
    """Every interval key a screen or simulated row carries (null without a profile)."""
    return [f"{name}_{end}" for _, name in FIGURES for end in ("low", "high")]


def absent(row: dict) -> dict:
    """``row`` with every interval key null: the drive has no profile."""
    for k in keys():
        row[k] = None
    return row


def judged(row: dict, conservative: bool) -> dict:
    """The figures a level's targets are judged on: the row's own (the best fit), or with
    ``conservative`` the low end of each interval (lowest IOPS, TBW, DWPD, lifetime)."""
    if not conservative:
        return row
    name = dict(FIGURES)
    return row | {k: row[f"{name[k]}_low"] for k in WORSE_LOW if row.get(f"{name[k]}_low") is not None}


@dataclass
class Point:
    """The drive at one point of the profile (index 0: the drive file as stored)."""

    values: dict[str, Any]
    delta_cost: float
    drive: Drive
    model: ScaleModel | None = field(default=None, repr=False)


@dataclass
class Carried:
    """The profile of a drive file, as drives at each of its points."""

    path: str
    method: str
    keys: list[str]
    points: list[Point]
    pe_rule: str

    def to_dict(self, conservative: bool) -> dict:
        return {
            "from": f"[preset.calibration.profile] of {self.path}",
            "method": self.method,
            "keys": self.keys,
            "points": [
                {
                    "values": p.values,
                    "delta_cost": p.delta_cost,
                    "physical_bytes": p.drive.physical_bytes,
                    "pe_cycles": p.drive.pe,
                }
                for p in self.points
            ],
            "pe_cycles": self.pe_rule,
            "screen": "every level at every point: the least and most of each figure",
            "simulated": "each simulated level also at the two points giving the screen's lowest and highest WAF "
            "there: the least and most of the three runs",
            "decided_on": "the conservative end (lowest IOPS, TBW, DWPD, lifetime)" if conservative else "the best fit",
        }

    def note(self, conservative: bool) -> str:
        return (
            f"intervals (95%): from the profile in {self.path}'s [preset.calibration.profile] ({self.method}; "
            f"{len(self.points) - 1} points and the drive as stored): the screen at every point, the simulator "
            "at the two points giving the screen's lowest and highest WAF at each simulated level; "
            f"P/E at each point: {self.pe_rule}; the recommendation is decided on "
            + (
                "the conservative end of each interval (--conservative)"
                if conservative
                else "the best fit (--conservative decides on the low end)"
            )
        )

    # ------------------------------------------------------------------ the screen

    def screen(
        self, wl: Workload, targets: Targets, levels: list[Level], rows: list[dict], skew: SkewRatio | None = None
    ) -> None:
        """Attach each figure's interval over the points to the screen's rows (the best fit's);
        ``skew``: the skewed workload's anchoring of the best fit (a ratio over the OP GC sees,
        so the same at every point).

        The screen's WAF depends on the OP garbage collection sees alone (for one drive geometry,
        GC policy and workload), and a point that moves only the NAND capacity and ``[timing]``
        keeps all three; so at such a point the WAF at each level is read off the best fit's own
        WAF curve over the fine grid (monotone cubic interpolation in log OP, within 1e-5 of the
        model: tests/planner/test_advise_interval.py), and computed where the point's OP falls outside
        it.  The greedy mean field of a superblock drive costs ~20 ms a level, 3 s for the grid:
        every point would multiply that.  IOPS, TBW, DWPD and lifetime are the screen's own
        rules at the point's WAF, timing and P/E."""
        curve = (
            _Curve(rows) if all(k == "drive.physical_capacity" or k.startswith("timing.") for k in self.keys) else None
        )
        per_point: list[list[dict | None]] = [list(rows)]
        for p in self.points[1:]:
            p.drive.prefetch_ops(lv.user_bytes for lv in levels)
            # a structural alternative keeps the best fit's screened WAF curve when the screen's
            # WAF model sees the same drive (its floor is added by the screen's own rule)
            own = curve if _same_waf_model(p.drive, self.points[0].drive) else None
            per_point.append([_screen(p.drive, wl, targets, lv, own, skew) for lv in levels])
        for i, row in enumerate(rows):
            at = {k: pp[i] for k, pp in enumerate(per_point) if pp[i] is not _NO_FIGURE}
            _spread(row, list(at.values()))
            wafs = [(r["waf"], k) for k, r in at.items() if r is not None]
            row["interval_points"] = [min(wafs)[1], max(wafs)[1]]
            # a profile over the GC copy cost or the native program time (a drive file from a
            # datasheet of bursts): its point of the highest of each too (of them, the most WAF)
            for key in SLOW_KEYS:
                slow = max(wafs, key=lambda wk: (self.points[wk[1]].values.get(key, 0.0), wk[0]))[1]
                if self.points[slow].values.get(key) and slow not in row["interval_points"]:
                    row["interval_points"].append(slow)

    # ------------------------------------------------------------------ the simulator

    def simulate(
        self,
        row: dict,
        screen_row: dict,
        lv: Level,
        wl: Workload,
        targets: Targets,
        seed: int,
        model_blocks: int,
        io_budget: int,
    ) -> None:
        """Run level ``lv`` again at the points ``interval_points`` names (the screen's lowest and
        highest WAF there, and of a profile over the GC copy cost or the native program time the
        slowest point of each: :data:`SLOW_KEYS`), and attach
        each figure's interval over the runs to ``row``."""
        runs: list[tuple[int, dict]] = []
        failed: list[dict] = []
        for k in dict.fromkeys(screen_row["interval_points"]):
            if k == 0:
                continue
            p = self.points[k]
            try:
                if p.model is None:
                    p.model = plan_model(p.drive, wl, model_blocks, io_budget)
                r = sim_level(p.drive, wl, targets, lv, p.model, seed)
            except OpsimError as e:  # the core refuses the point's scale model: left out, and said
                failed.append({"point": k, "error": str(e)})
                continue
            runs.append((k, r))
            row["wall_seconds"] += r["wall_seconds"]
        _spread(row, [row] + [r for _, r in runs])
        row["interval_runs"] = [
            {"point": k, "waf": r["waf"], "iops": r["iops"], "dwpd": r["dwpd"], "steady_state": r["steady_state"]}
            for k, r in runs
        ] + failed


def _same_waf_model(a: Drive, b: Drive) -> bool:
    """Whether the screen's WAF of garbage collection is the same function of the OP it sees on
    drives ``a`` and ``b``: the same pages per GC unit and policy, as the screen models it (FIFO
    and random have their own models, every other policy the greedy mean field: :mod:`.screen`)."""

    def policy(d: Drive) -> str:
        return d.gc if d.gc in ("fifo", "random") else "greedy"

    return a.pages_per_block == b.pages_per_block and policy(a) == policy(b) and a.slc_folds == b.slc_folds


class _Curve:
    """The best fit's screened WAF of garbage collection over the OP it sees, interpolated."""

    def __init__(self, rows: list[dict]) -> None:
        pts = sorted({r["op"]["seen_by_gc"]: r["waf_gc"] for r in rows if r["op"]["seen_by_gc"] > 0}.items())
        self.lo: float = pts[0][0] if pts else math.inf
        self.hi: float = pts[-1][0] if pts else -math.inf
        self.f = PchipInterpolator([math.log(o) for o, _ in pts], [w for _, w in pts]) if len(pts) > 2 else None

    def at(self, op: float) -> float | None:
        """The WAF at ``op``, or None outside the curve (compute it)."""
        if self.f is None or not self.lo <= op <= self.hi:
            return None
        return float(self.f(math.log(op)))


#: a point the screen's model gives no figure at (left out at that level)
_NO_FIGURE: dict = {}


def _screen(
    drive: Drive, wl: Workload, targets: Targets, lv: Level, curve: _Curve | None = None, skew: SkewRatio | None = None
) -> dict | None:
    """The screen's figures at a point (the screen's own rules: :func:`.screen.screen_level`, its
    WAF read off ``curve`` where it covers the point's OP), or None where the point leaves
    garbage collection no spare."""
    op = drive.op_seen(lv.user_bytes)
    if op <= 0:
        return None
    wg = None if curve is None else curve.at(op)
    if wg is None:
        try:
            return screen_level(drive, wl, targets, lv, skew)
        except InputError:  # the model has no figure there (greedy's mean field at a very large OP)
            return _NO_FIGURE
    wb = waf_bytes(wg, wl, drive.page_size, drive.slc_folds, drive.meta_writes)
    iops, _, _ = iops_bound(drive, wl, wg)
    return {"waf_gc": wg, "waf": wb, "iops": iops} | endurance(drive, wl, targets, wb, lv.user_bytes, iops)


def _spread(row: dict, at: Sequence[dict | None]) -> None:
    """Each figure's least and most over ``at`` (a None: a point where the level has no spare
    for GC, so WAF has no upper end and IOPS, TBW, DWPD and lifetime no lower one: null)."""
    unbounded = any(r is None for r in at)
    for key, name in FIGURES:
        vals = [r[key] for r in at if r is not None and r.get(key) is not None]
        if not vals or row.get(key) is None:
            row[f"{name}_low"] = row[f"{name}_high"] = None
            continue
        lo, hi = min(vals), max(vals)
        if unbounded:
            lo, hi = (lo, None) if key == "waf" else (None, hi)
        row[f"{name}_low"], row[f"{name}_high"] = lo, hi


# ---------------------------------------------------------------------- reading the profile


def carried(drive: Drive, model_blocks: int = DEFAULT_MODEL_BLOCKS) -> Carried | None:
    """The drive's profile as drives at each point; None when the drive file keeps none (a
    built-in preset without one, or a drive given by parameters).  A rating workload with
    skew is anchored as the screen anchors it (``skew.skew_model`` on the scale model of
    ``model_blocks`` blocks, the best fit's, as a ratio over the OP GC sees)."""
    prof = drive.calibration.get("profile")
    if prof is None or drive.preset is None:
        return None
    opt = drive.load_args.get("preset_option", "preset")
    where = f"[preset.calibration.profile] of {drive.preset}"
    ks, pts = _parse(prof, where, opt)
    rated = _rating_workload(drive)
    sk = skew_model(drive, rated[0], model_blocks) if rated and rated[0].skewed else None
    base_rate = _rating_waf(drive, rated, sk) if rated else None
    if rated is not None and base_rate is None:
        rated = None
    out = [Point(_own_values(drive, ks), 0.0, drive)]
    for vals, delta, structure in pts:
        values = dict(zip(ks, vals)) | structure
        d = load_drive(**(drive.load_args | {"values": values}))
        if rated is not None and drive.pe is not None:
            w = _rating_waf(d, rated, sk)
            if w is not None and base_rate is not None:
                d = replace(d, pe=drive.pe * drive.physical_bytes / d.physical_bytes * w / base_rate)
        out.append(Point(values, delta, d))
    if drive.pe is None:
        rule = "no P/E rating"
    elif rated is None:
        rule = f"{drive.pe:g} at every point (the rating as given)"
    else:
        rule = (
            "derived again from the datasheet's endurance at each point (the same rated host writes, the point's "
            f"NAND and the screen's WAF of {rated[1]} at the native capacity)"
        )
    return Carried(str(drive.preset), str(prof.get("method", "profile")), ks, out, rule)


def _parse(prof, where: str, opt: str) -> tuple[list[str], list[tuple[list[float], float, dict]]]:
    """The profile's keys and its points inside the 95% interval, each with its structural
    alternative (``structure``: one table of ``ftl.``/``timing.`` keys a point, docs/calibrate.md
    "What a datasheet never states"; none: every point the drive's own), checked: errors name
    the drive's option and the table."""
    if not isinstance(prof, dict):
        raise _bad(opt, f"{where}: not a table")
    ks = prof.get("keys")
    if not isinstance(ks, list) or not ks or not all(isinstance(k, str) for k in ks):
        raise _bad(opt, f"{where}: keys must be a non-empty list of config keys")
    pts = prof.get("points")
    if not isinstance(pts, list) or not pts:
        raise _bad(opt, f"{where}: points must be a non-empty list (each a list of values in the order of keys)")
    deltas = prof.get("delta_cost", [0.0] * len(pts))
    if not isinstance(deltas, list) or len(deltas) != len(pts) or not all(_number(d) for d in deltas):
        raise _bad(opt, f"{where}: delta_cost must be a list of numbers, one per point")
    threshold = prof.get("threshold", math.inf)
    if not _number(threshold):
        raise _bad(opt, f"{where}: threshold must be a number")
    structures = prof.get("structure", [{}] * len(pts))
    if not isinstance(structures, list) or len(structures) != len(pts):
        raise _bad(opt, f"{where}: structure must be a list of tables, one per point")
    out = []
    for i, (p, d, st) in enumerate(zip(pts, deltas, structures)):
        if not isinstance(p, list) or len(p) != len(ks) or not all(_number(v) and math.isfinite(v) for v in p):
            raise _bad(opt, f"{where}: point {i + 1} must be a list of {len(ks)} finite numbers (one per key)")
        if not isinstance(st, dict) or not all(str(k).startswith(("ftl.", "timing.")) for k in st):
            raise _bad(opt, f"{where}: structure {i + 1} must be a table of ftl. and timing. keys")
        if d <= threshold + 1e-9:
            out.append(([float(v) for v in p], float(d), dict(st)))
    return ks, out


def _own_values(drive: Drive, ks: list[str]) -> dict[str, float]:
    """The drive's own values of the profile's keys (as the core resolved them)."""
    cfg = drive.description["config"]
    out = {}
    for k in ks:
        table, _, name = k.partition(".")
        v = drive.physical_bytes if k == "drive.physical_capacity" else cfg.get(table, {}).get(name)
        if _number(v):
            out[k] = float(v)
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _rating_workload(drive: Drive) -> tuple[Workload, str] | None:
    """The workload a P/E rating derived from the datasheet's endurance was rated at (the
    drive file's ``pe_cycles_source`` names its JESD218 class), or None when the rating is
    held at every point (given with --pe, or given in the drive file's input)."""
    if not drive.pe_from_rating:
        return None
    m = re.search(r"JESD218 (enterprise|client) class", str(drive.calibration["pe_cycles_source"]))
    if m is None:
        return None
    if m.group(1) == "enterprise":
        return Workload(block_size=None, skew="jesd219"), "the JESD219 enterprise workload"
    return Workload(), "4 KiB random writes over the whole drive (the client rating's stand-in)"


def _rating_waf(drive: Drive, rated: tuple[Workload, str], skew: SkewRatio | None) -> float | None:
    """The screen's WAF of the rating workload at the native capacity, anchored by ``skew``
    (None: no spare there)."""
    lv = Level(0, drive.native, Fraction(0))
    r = _screen(drive, rated[0], Targets(), lv, None, skew)
    return None if not r else float(r["waf"])
