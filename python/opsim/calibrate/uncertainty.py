"""The uncertainty model: a profile likelihood over the NAND capacity GC can use.

The figures of a datasheet pin the NAND only through a chain of the model's own assumptions
(the sequential write sets the program time, the sequential and random reads the read time,
and the random writes then the WAF that leaves, hence the NAND); one IOPS figure cannot tell
"more NAND, slower programs" from "less NAND, faster programs" once the chain is loose.  The
local curvature at the fit ((J^T J)^-1) sees none of that, so the intervals of the NAND and of
everything that follows from it (WAF and IOPS at any span) come from a profile instead:

1. the NAND capacity is held at values on a grid (``STEP`` prior widths apart, outward from the
   fit until the cost rises by more than ``REACH``), and every other fitted parameter is fitted
   again at each (scipy.optimize.least_squares, each point started from its neighbour's);
2. the cost at each point is the sum of the squared residuals of the figures and of every
   prior (the NAND's prior: the population of real drives, :mod:`.population`), where a
   datasheet figure's uncertainty includes ``DISCREPANCY``, what the model's chain cannot
   know of a real drive (a measured figure keeps its own: it is the drive measured);
3. the 95% interval is the set of NAND capacities whose cost is within ``THRESHOLD`` (the
   chi-square 95% point of one degree of freedom) of the least; its two ends are found by
   interpolating the cost between grid points and fitted there too, and kept as points;
4. the interval of any prediction (WAF or IOPS at a span, any workload) is the least and most
   of it over the points inside, with the fit itself; an IOPS reaches on from each point by
   the cost it has left, in the covariance of that point's refit (:class:`Point`), evaluated
   and held to that cost (:meth:`.fit.Fitted.reach`).

The points are what a drive file keeps (:func:`Profile.stored`, ``[preset.calibration.profile]``).
"""

from __future__ import annotations

import math
import statistics
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError
from ..measure.smart_window import EXPECTED_SIGMA
from ..units import fmt_bytes
from .burst import grid as burst_grid
from .burst import native_prog_us
from .fit import Fitted, _solve
from .gc_cost import steady_write_figures
from .inputs import SIGMA_MEASURED, Figure
from .model import STEADY_KINDS, predict, structure_of
from .structure import SLOW_KEYS, Alternative, alternatives, floors_of

#: the chi-square 95% point of one degree of freedom: the profile's interval is where the cost
#: is within this of its least
THRESHOLD = 3.841458820694124
#: the grid's step in prior widths of the NAND capacity
STEP = 0.25
#: the grid reaches out until the cost is this much above its least (or a bound)
REACH = THRESHOLD + 3.0
#: at most this many grid points on each side of the fit
MOST = 24
#: the held-out predictions the discrepancy is made of (written by ``python -m
#: opsim.validation.discrepancy --write``: the real-drives suite, the D7-P5520 and 7450 left out)
DISCREPANCY_DATA = Path(__file__).with_name("discrepancy.toml")


def spread(rows: list[dict]) -> float:
    """The root mean square of log(predicted / measured) over ``rows``."""
    return math.sqrt(statistics.fmean(math.log(r["predicted"] / r["measured"]) ** 2 for r in rows))


#: what the model's chain from a datasheet's figures to the NAND cannot know of a real drive
#: (log), added in quadrature to each datasheet figure's own uncertainty in the profile: the
#: sequential and read figures say how fast the NAND programs and reads only up to the
#: controller's way with them (copies without a transfer, write buffers, power limits,
#: conditions the table does not state).  Computed: the spread of ``opsim calibrate``'s
#: held-out predictions of real drives (:data:`DISCREPANCY_DATA`; docs/calibrate.md, "The
#: discrepancy"), none of them the D7-P5520 or a 7450, whose measured WAFs are then predicted
DISCREPANCY = spread(tomllib.loads(DISCREPANCY_DATA.read_text())["row"])


class Point(NamedTuple):
    """A profile point: its values (parameters, and its structure's config keys) and the
    covariance of its free parameters (z units, the fit's order, the NAND held) from the refit
    there: what the figures pin around that point, not around the fit."""

    values: dict[str, Any]
    cov: np.ndarray


#: a structure's point function: the NAND's z and a start -> (cost, point)
At = Callable[[float, dict[str, Any]], tuple[float, Point]]


@dataclass
class Profile:
    """The profile over the NAND capacity: each point's parameter values and cost above the
    least (``delta``); the points with ``delta <= THRESHOLD`` make the intervals."""

    param: str
    key: str
    points: list[dict[str, float]]
    delta: list[float]
    discrepancy: float
    #: the fit's own values (always inside)
    best: dict[str, float]
    #: each point's covariance (:class:`Point`), in the order of ``points``
    covs: list[np.ndarray]
    #: the figures the costs are of (a datasheet's widened by the discrepancy, and any extra)
    figures: list[Figure]

    def inside(self) -> list[dict[str, float]]:
        return [p for p, _, _ in self.budgets()]

    def interval(self, fn: Callable[[dict[str, float]], float]) -> tuple[float, float]:
        """The least and most of ``fn(values)`` over the points inside."""
        vals = [v for v in (fn(p) for p in self.inside()) if math.isfinite(v)]
        return min(vals), max(vals)

    def budgets(self) -> list[tuple[dict[str, float], float, np.ndarray | None]]:
        """Each point inside (the fit first) with the cost left to it below the threshold: how
        far the parameters the profile does not hold may still move there (``THRESHOLD - delta``),
        and their covariance there (None at the fit: the fit's own, given the NAND)."""
        inside = [(p, d, c) for p, d, c in zip(self.points, self.delta, self.covs) if d <= THRESHOLD + 1e-9]
        return [(self.best, THRESHOLD, None)] + [(p, max(0.0, THRESHOLD - d), c) for p, d, c in inside]

    def nand_interval(self) -> tuple[float, float]:
        return self.interval(lambda v: v[self.param])

    def convention(self) -> Profile:
        """The profile of the model's own structure alone (no alternative of :mod:`.structure`):
        the intervals of a drive whose floor, GC policy, unit and array are known to be the
        model's convention; its points' costs are above their own least already."""
        own = [i for i, p in enumerate(self.points) if not structure_of(p)]
        return replace(
            self,
            points=[self.points[i] for i in own],
            delta=[self.delta[i] for i in own],
            covs=[self.covs[i] for i in own],
        )

    def likeliest(self) -> dict[str, Any]:
        """The structural alternative (its config keys, :mod:`.structure`) of the least cost."""
        return structure_of(self.points[int(np.argmin(self.delta))])

    def stored(
        self,
        keys: dict[str, str],
        waf: Callable[[dict[str, Any]], float] | None = None,
        derived: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> dict:
        """The profile as a drive file keeps it (docs/calibrate.md, "What a drive file keeps"):
        the config key of every parameter, each point's values in that order, each point's cost
        above the least; the points inside the 95% interval only, in the order of the NAND.
        ``derived``: the config keys the model derives from a point's values (a datasheet of
        bursts: the native program time), kept with its structure's so the point runs as fitted."""
        names = sorted(self.best, key=lambda n: (n != self.param, n))
        pts = sorted(
            ((p, d) for p, d in zip(self.points, self.delta) if d <= THRESHOLD + 1e-9),
            key=lambda pd: (pd[0][self.param], sorted(structure_of(pd[0]).items())),
        )
        out = {
            "method": "profile likelihood over the NAND capacity (docs/calibrate.md, 'The uncertainty model')",
            "keys": [keys[n] for n in names],
            "points": [[_round(p[n]) for n in names] for p, _ in pts],
            "delta_cost": [round(d, 3) for _, d in pts],
            "threshold": round(THRESHOLD, 3),
            "discrepancy": self.discrepancy,
        }
        structures = [((derived(p) if derived else {}) | structure_of(p)) for p, _ in pts]
        if any(structures):
            # each point's structural alternative: the [ftl] keys of its prior's (docs/calibrate.md,
            # "What a datasheet never states"), {} for the model's own; and what it derives
            out["structure"] = structures
            if waf is not None:
                # the points of least and most WAF (``waf``: over the whole drive): with
                # structures the NAND's ends are not WAF's (a floor lifts WAF at more NAND);
                # `opsim simulate --interval` runs these two; and, of a profile over the GC copy cost
                # or the native program time (a datasheet of bursts), the point of the highest of
                # each (of them, the most WAF): the least IOPS, which no WAF end gives
                w = [waf(p) for p, _ in pts]
                named = [int(np.argmin(w)), int(np.argmax(w))]
                for key in SLOW_KEYS:
                    slow = max(range(len(pts)), key=lambda i: (structure_of(pts[i][0]).get(key, 0.0), w[i]))
                    if structure_of(pts[slow][0]).get(key) and slow not in named:
                        named.append(slow)  # a prior's point (a derived key is no prior's)
                out["ends"] = named
        return out


def _round(v: float) -> float:
    return float(f"{v:.6g}")


def _loose(figures: list[Figure], discrepancy: float) -> list[Figure]:
    """The figures with each datasheet figure's uncertainty widened by ``discrepancy``."""
    return [
        replace(f, sigma=math.hypot(f.sigma, discrepancy)) if f.source.startswith("datasheet") else f for f in figures
    ]


def profile(
    fitted: Fitted,
    extra: list[Figure] | None = None,
    discrepancy: float = DISCREPANCY,
    alts: list[Alternative] | None = None,
    exact: bool = True,
) -> Profile | None:
    """The profile of ``fitted`` over its NAND capacity (None when the NAND was given), with the
    figures ``extra`` added (a measurement not yet taken, :func:`narrowing`), and over the
    structural alternatives of its priors (:mod:`.structure`), each alternative's points costing
    what its prior puts on it: ``alts`` (default: every one of :func:`.structure.alternatives`;
    ``[Alternative()]``: the NAND alone), the model's own first.  Not ``exact``: the first's ends
    by one secant step too, as the alternatives' (the narrowing's candidates, :func:`narrowing`)."""
    model = fitted.model
    p = next((q for q in model.params if q.name == "physical"), None)
    if p is None:
        return None
    figures = _loose(list(fitted.figures) + list(extra or []), discrepancy)
    free = [q for q in fitted.free if q.name != "physical"]
    fixed = {k: v for k, v in fitted.values.items() if k not in {q.name for q in free}}
    zlo, zhi = p.z_bounds()
    z0 = p.z(fitted.values["physical"])
    alts = alts or alternatives(
        model.tables, _floor_fitted(fitted), gc_unpinned(fitted), native_unpinned(fitted), model.unit_given
    )

    def point(alt: Alternative) -> At:
        def at(z: float, start: dict[str, Any]) -> tuple[float, Point]:
            fx = dict(fixed) | alt.keys
            fx["physical"] = p.value(z)
            vals, cov, fun = _solve(model, figures, free, fx, start)
            return float(np.sum(fun**2)) + z * z + alt.penalty, Point(fx | vals, cov)

        return at

    # the model's own structure first, as without priors; then each alternative, walked only
    # as far as it can be inside: until its cost is THRESHOLD above the least seen so far
    own = point(alts[0])
    walks = [(own, *_walk(own, z0, (zlo, zhi), fitted.values, STEP))]
    # a prior of what only a steady state sees (the GC copy cost, the native array's rate) when no
    # figure is of one: no figure depends on it, so its profile is the model's own and the
    # likeliest structure's, costing its prior more (walked on its own, from the fit's point on a
    # coarser grid, it lost what the likeliest structure fits better)
    steady_unseen = not any(f.kind in STEADY_KINDS for f in figures)
    slow = [a for a in alts[1:] if steady_unseen and a.keys and set(a.keys) <= set(SLOW_KEYS)]
    for a in alts[1:]:
        if a in slow:
            continue
        seen = min(walks[0][2])
        at = point(a)
        try:
            walks.append((at, *_walk(at, z0, (zlo, zhi), fitted.values, ALT_STEP, seen)))
        except InputError:  # the core refuses this structure on this drive (no whole superblock)
            continue
    # the model's own points are inside as without priors (within THRESHOLD of its own least:
    # what the user did not give widens an interval, never narrows it), and so are its points
    # with such a prior, costing the prior more; an alternative's within THRESHOLD of the least
    # over every structure
    own_judged = [True] + [False] * (len(walks) - 1)
    if slow:
        likeliest = min(range(len(walks)), key=lambda i: min(walks[i][2]))
        for k in dict.fromkeys((0, likeliest)):
            at0, wz, wc, wp = walks[k]
            for a in slow:
                shifted = [Point(v.values | a.keys, v.cov) for v in wp]
                walks.append((_shifted(at0, a), wz, [c + a.penalty for c in wc], shifted))
                own_judged.append(k == 0)
    least = min(min(w[2]) for w in walks)
    own_least = min(walks[0][2])
    pts: list[Point] = []
    delta: list[float] = []
    for i, (at, wz, wc, wp) in enumerate(walks):
        base = own_least if own_judged[i] else least
        if min(wc) - base > THRESHOLD:  # no point of this structure is inside
            continue
        ends = _ends(at, base, wz, wc, wp, STEP / 100 if i == 0 and exact else None)
        cs = wc + [c for _, c, _ in ends]
        base = min(cs) if i == 0 else base
        d = [c - base for c in cs]
        # an end refit a little above the threshold (the cost is not linear between points)
        # still marks the interval's end
        for j in range(len(wc), len(cs)):
            d[j] = min(d[j], THRESHOLD)
        pts += wp + [v for _, _, v in ends]
        delta += d
    values, covs = [v.values for v in pts], [v.cov for v in pts]
    return Profile("physical", p.key, values, delta, discrepancy, dict(fitted.values), covs, figures)


def _shifted(own: At, alt: Alternative) -> At:
    """The profile's point function of ``alt`` where no figure depends on its keys: ``own`` (a
    structure's), its cost raised by the alternative's prior and its keys set."""

    def at(z: float, start: dict[str, Any]) -> tuple[float, Point]:
        c, v = own(z, start)
        return c + alt.penalty, Point(v.values | alt.keys, v.cov)

    return at


def _floor_fitted(fitted: Fitted) -> bool:
    """Whether the fit has the WAF floor (``ftl.meta_writes``) as a parameter: its prior is then not ranged over."""
    return any(q.name == "meta_writes" for q in fitted.model.params)


def gc_unpinned(fitted: Fitted) -> float | None:
    """The prior width of the controller's time per GC copy (``timing.gc_fw_us``) when the fit
    holds it at its prior and no steady random-write figure could pin it (a datasheet of bursts
    alone: :mod:`.structure`); None otherwise (fitted, given, or bounded by a steady figure,
    :mod:`.gc_cost`)."""
    p = next((q for q in fitted.model.params if q.name == "gc_fw_us"), None)
    if p is None or fitted.status.get(p.name) != "default" or steady_write_figures(fitted):
        return None
    return p.sigma


def native_unpinned(fitted: Fitted) -> list[tuple[float, float, float]] | None:
    """A datasheet of bursts (:mod:`.burst`): (native program time, the cost its prior puts on it,
    its share of the bursts' rate) at each share of :func:`.burst.grid`, from the fitted SLC-mode
    program time; None when the native program time is the model's own."""
    m = fitted.model
    if m.native_share is None:
        return None
    slc = fitted.values["t_prog_slc_us"]
    return [(round(native_prog_us(slc, m.units_ratio, s), 3), pen, s) for s, pen in burst_grid()]


#: the grid step of a structural alternative's walk over the NAND (prior widths): coarser than
#: the model's own (its ends are found by root-finding all the same)
ALT_STEP = 4 * STEP


def _walk(
    at: At,
    z0: float,
    bounds: tuple[float, float],
    start0: dict[str, Any],
    step: float,
    inside: float | None = None,
) -> tuple[list[float], list[float], list[Point]]:
    """The NAND held at ``z0`` and every ``step`` outward (each point fitted from its
    neighbour's values) until the cost is REACH above the walk's least (or, given ``inside``,
    THRESHOLD above the lower of it and ``inside``: nothing past that can be inside), a bound or
    MOST steps: (z, cost, point) in the order of z."""
    zlo, zhi = bounds
    c0, v0 = at(z0, start0)
    zs, costs, pts = [z0], [c0], [v0]
    for sign in (-1.0, 1.0):
        start, z = v0.values, z0
        for _ in range(MOST):
            z += sign * step
            if not zlo < z < zhi:
                break
            try:
                c, v = at(z, start)
            except InputError:  # past where the core takes the structure (a superblock's NAND)
                if inside is None:
                    raise
                break
            zs.append(z)
            costs.append(c)
            pts.append(v)
            start = v.values
            if c - min(costs) > REACH or (inside is not None and c - min(min(costs), inside) > THRESHOLD):
                break
    order = np.argsort(zs)
    return [zs[i] for i in order], [costs[i] for i in order], [pts[i] for i in order]


def _ends(
    at: At,
    least: float,
    zs: list[float],
    costs: list[float],
    pts: list[Point],
    xtol: float | None,
) -> list[tuple[float, float, Point]]:
    """The interval's ends on one walk: where the cost crosses the threshold above ``least``
    between two grid points, found by root-finding on the square root of the cost above the
    least (linear in z where the cost is quadratic, so a narrow profile whose crossing lies well
    inside one grid step is not cut short, as interpolating the cost itself would)."""
    ends = []
    for i in range(len(zs) - 1):
        a, b = costs[i] - least - THRESHOLD, costs[i + 1] - least - THRESHOLD
        if (a > 0) != (b > 0):
            lo, hi = (zs[i], costs[i]), (zs[i + 1], costs[i + 1])
            ends.append(_crossing(at, least, lo, hi, pts[i if a <= 0 else i + 1], xtol))
    return ends


def _crossing(
    at: At,
    least: float,
    lo: tuple[float, float],
    hi: tuple[float, float],
    start: Point,
    xtol: float | None = STEP / 100,
) -> tuple[float, float, Point]:
    """The point between grid points ``lo`` and ``hi`` (z, cost) where the profile's cost is
    ``THRESHOLD`` above ``least``: (z, cost, point), refitted there (scipy's brentq on the cost's
    square root, to ``xtol``: a hundredth of the model's own grid step; None: one secant step,
    the square root taken as linear between the two, for a structural alternative's ends)."""
    known = {lo[0]: (lo[1], start), hi[0]: (hi[1], start)}
    if xtol is None:
        a, b = (math.sqrt(max(0.0, c - least)) - math.sqrt(THRESHOLD) for c in (lo[1], hi[1]))
        z = lo[0] + (hi[0] - lo[0]) * a / (a - b)
        c, v = at(z, start.values)
        return z, c, v

    def g(z: float) -> float:
        if z not in known:
            known[z] = at(z, start.values)
        return math.sqrt(max(0.0, known[z][0] - least)) - math.sqrt(THRESHOLD)

    from scipy.optimize import brentq  # noqa: PLC0415  (start-up: scipy only when fitting)

    z = float(brentq(g, lo[0], hi[0], xtol=xtol))
    if z not in known:
        known[z] = at(z, start.values)
    c, v = known[z]
    return z, c, v


#: a WAF interval wider than this (high / low) is "not pinned by the figures"
PINNED = 1.2


@dataclass(frozen=True)
class Candidate:
    """A measurement the user could take, as the figures it would add."""

    what: str
    command: str
    figures: tuple[Figure, ...]


def candidates(fitted: Fitted, queue_depth: int | None) -> list[Candidate]:
    """The measurements the tool can take of a drive (``opsim measure``, ``opsim smart waf``),
    each as the figures it gives, at the model's own prediction (a measurement not yet taken)."""
    user = fitted.model.user_bytes
    half = user // 2 // 4096 * 4096
    whole_iops = Figure("steady_iops", 1.0, "measured (not yet)", queue_depth=queue_depth, sigma=SIGMA_MEASURED)
    # `opsim smart waf` over an interval the user chose: a WAF of unknown steadiness
    interval_waf = replace(whole_iops, kind="waf")
    # `opsim measure --smart`: the steady window's WAF (measure/smart_window.py), as steady as
    # such a window is expected to be; the run reports its own
    whole_waf = replace(interval_waf, sigma=EXPECTED_SIGMA)
    half_iops = replace(whole_iops, span=half)
    half_waf = replace(whole_waf, span=half)
    dev = "--device DEV --destroy-data DEV"
    out = [
        Candidate(
            "measure steady 4 KiB random writes over the whole drive with SMART counters",
            f"opsim measure iops {dev} --smart",
            (whole_iops, whole_waf),
        ),
        Candidate(
            "measure the WAF of steady 4 KiB random writes over the whole drive from SMART counters over an interval",
            "opsim smart waf BEFORE AFTER",
            (interval_waf,),
        ),
        Candidate(
            "measure steady 4 KiB random-write IOPS over the whole drive",
            f"opsim measure iops {dev}",
            (whole_iops,),
        ),
        Candidate(
            f"measure steady 4 KiB random-write IOPS at a second span, {fmt_bytes(half)} (half the drive)",
            f"opsim measure iops {dev} --span {fmt_bytes(half)}",
            (half_iops,),
        ),
        Candidate(
            f"measure steady 4 KiB random writes over {fmt_bytes(half)} (half the drive) with SMART counters",
            f"opsim measure iops {dev} --span {fmt_bytes(half)} --smart",
            (half_iops, half_waf),
        ),
    ]
    # each figure at the model's own prediction: what the measurement would say if the fit were right
    return [
        replace(
            c,
            figures=tuple(replace(f, value=predict(fitted.model, fitted.values, [f])[0].value) for f in c.figures),
        )
        for c in out
    ]


def narrowing(fitted: Fitted, span: int | None, queue_depth: int | None, base: Profile | None = None) -> list[dict]:
    """For each measurement the tool could take (:func:`candidates`), the WAF interval at
    ``span`` (None: the whole drive) the profile would give with its figures added at the
    model's prediction with their measurement uncertainty; best (narrowest) first.  The
    candidates' profiles range over the NAND and the floors of the likeliest structure of
    ``base`` (:func:`.structure.floors_of`: a measured WAF pins the floor; the GC policies, the
    GC unit and the array move the envelope less and would multiply the cost), each end by one
    secant step."""
    base = base or profile(fitted)
    if base is None:
        return []
    wfig = Figure("waf", 1.0, "prediction", span=span, queue_depth=queue_depth)

    def waf(values: dict[str, float]) -> float:
        return predict(fitted.model, values, [wfig])[0].value

    lo0, hi0 = base.interval(waf)
    mid = waf(fitted.values)
    out = []
    alts = floors_of(base.likeliest(), fitted.model.tables, _floor_fitted(fitted))
    for c in candidates(fitted, queue_depth):
        p = profile(fitted, extra=list(c.figures), discrepancy=base.discrepancy, alts=alts, exact=False)
        assert p is not None
        lo, hi = p.interval(waf)
        out.append(
            {
                "what": c.what,
                "command": c.command,
                "waf": mid,
                "waf_low": lo0,
                "waf_high": hi0,
                "new_low": lo,
                "new_high": hi,
                "new_half_width": (hi - lo) / 2 / mid,
                # the uncertainty each figure of the measurement is taken to have (one standard
                # deviation, relative): "waf", "iops"
                "assumed_sigma": {("waf" if f.kind == "waf" else "iops"): f.sigma for f in c.figures},
                "shrinks_by": 1 - (hi - lo) / (hi0 - lo0) if hi0 > lo0 else 0.0,
            }
        )
    return sorted(out, key=lambda r: r["new_high"] - r["new_low"])
