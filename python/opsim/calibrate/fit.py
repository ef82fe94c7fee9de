"""Least-squares calibration (scipy.optimize.least_squares) of a drive model to its figures.

Residuals are in log space, each figure's divided by its relative uncertainty (datasheet
figures 10%, measurements 5%: :mod:`.inputs`), plus one residual per parameter for its prior
(a maximum a posteriori fit; every prior is stated with the parameter).  The covariance of the
parameters is (J^T J)^-1 at the optimum, scaled up by the residual variance when the figures
outnumber the parameters and disagree more than their uncertainty says.

Pass A (every parameter free) starts from a scan of the parameters and restarts its local fit
from each parameter two prior widths either side (:func:`_restarts`, a multi-start).
A parameter is **fitted** when the figures narrow it to less than ``INFORMED`` of its prior's
width or move it more than one width from its prior; otherwise it is a **default**, held at its prior, and the fit is redone without it.
The IOPS figures are then simulated with the timed (event) model at the fitted values, the
ratio to the cost model's bound is kept per figure (:mod:`.timed`), and the fit repeats, so
the final parameters reproduce the event simulator's figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from . import timed
from .inputs import Figure
from .model import Model, Param, condition, fresh_state, parts, predict

#: a parameter counts as fitted when the figures leave less than this share of its prior's width
INFORMED = 0.9
#: ... or when holding the others at their priors raises the figures' cost (sum of squared
#: residuals in figure uncertainties) by more than this: one figure's worth
NEEDED = 1.0
#: timed-simulator corrections of the efficiency (each one a fit and a timed run per condition)
TIMED_ROUNDS = 2
#: then the efficiencies are checked at the fitted values: a figure whose efficiency moved by
#: more than this (log) takes a damped round more, at most EXTRA_ROUNDS; the efficiencies kept
#: are the event model's at the values returned once the check passes
EFF_TOL = 0.05
EXTRA_ROUNDS = 4
#: two-sided 95% normal quantile
Z95 = 1.959963984540054
#: bisections of a reach's ray back to where its cost is within the budget (:meth:`Fitted.reach`):
#: to 1/256 of the ray
REACH_STEPS = 8


@dataclass
class Fitted:
    model: Model
    figures: list[Figure]
    values: dict[str, float]
    status: dict[str, str]
    #: the fitted parameters, in the order of ``cov``'s rows (z units: prior widths)
    free: list[Param]
    cov: np.ndarray
    scale2: float
    sd: dict[str, float]
    timed_runs: dict[tuple, timed.TimedFigure] = field(default_factory=dict)

    def interval(self, p: Param) -> tuple[float, float]:
        if p.name not in self.sd:
            return self.values[p.name], self.values[p.name]
        z = p.z(self.values[p.name])
        lo, hi = z - Z95 * self.sd[p.name], z + Z95 * self.sd[p.name]
        zlo, zhi = p.z_bounds()
        return p.value(max(lo, zlo)), p.value(min(hi, zhi))

    def log_sd(
        self, fn, at: dict[str, Any] | None = None, given: str | None = None, cov: np.ndarray | None = None
    ) -> float:
        """Standard deviation of log(fn(values)) by the delta method over the fitted parameters,
        at the fit or at the values ``at`` (a profile's point: its slope there); ``given``: a
        parameter held where ``at`` has it (the profile's), the others' covariance then ``cov``
        (the refit's at ``at``, in the order of :attr:`free` without ``given``) or, without one,
        the fit's conditional on it."""
        _, cov, _, _, g = self._slope(fn, at, given, cov)
        return float(math.sqrt(max(0.0, g @ cov @ g * self.scale2))) if len(g) else 0.0

    def reach(
        self,
        fn,
        k: float,
        at: dict[str, Any] | None = None,
        given: str | None = None,
        cov: np.ndarray | None = None,
        figures: list[Figure] | None = None,
    ) -> tuple[float, float]:
        """How far log(fn(values)) goes down and up (signed) within ``k`` standard deviations of
        the parameters around ``at`` (``given``, ``cov`` as :meth:`log_sd`): fn evaluated at the two
        points of that ellipsoid where the delta method's line is least and most, each clipped to
        its parameters' bounds and, with ``figures``, drawn back along its ray to where the cost
        (those figures' squared residuals and the priors') has risen by no more than ``k``
        squared: the cost the ellipsoid stands for, which a model that is not linear can exceed
        well inside it (an IOPS bound is the least of its resources' rates, and a rated figure
        of the same condition pins the resource that becomes the busiest).  Where fn and the
        cost are linear and quadratic this is -+ k :meth:`log_sd`."""
        free, cov, z0, base, g = self._slope(fn, at, given, cov)
        var = float(g @ cov @ g) if len(g) else 0.0
        if var <= 0 or k <= 0:
            return 0.0, 0.0
        at = self.values if at is None else at
        dz = k * math.sqrt(self.scale2) * (cov @ g) / math.sqrt(var)
        lo = np.array([p.z_bounds()[0] for p in free])
        hi = np.array([p.z_bounds()[1] for p in free])
        cost = None
        if figures:
            fixed = {n: v for n, v in at.items() if n not in {p.name for p in free}}
            residuals = _residuals(self.model, figures, free, fixed)

            def cost(z: np.ndarray) -> float:
                try:
                    return float(np.sum(residuals(z) ** 2))
                except InputError:  # a point the core does not take is past any budget
                    return math.inf

            allowed = cost(z0) + k * k * self.scale2 + 1e-9
        out = []
        for sign in (-1.0, 1.0):

            def z_at(t: float, sign: float = sign) -> np.ndarray:
                return np.clip(z0 + sign * t * dz, lo, hi)

            t = 1.0
            if cost is not None and cost(z_at(1.0)) > allowed:
                inside, outside = 0.0, 1.0
                for _ in range(REACH_STEPS):
                    mid = (inside + outside) / 2
                    inside, outside = (mid, outside) if cost(z_at(mid)) <= allowed else (inside, mid)
                t = inside
            try:
                v = fn(dict(at) | {p.name: p.value(float(zi)) for p, zi in zip(free, z_at(t))})
            except InputError:
                v = math.nan
            out.append(math.log(v) - base if math.isfinite(v) and v > 0 else 0.0)
        return out[0], out[1]

    def _slope(self, fn, at: dict[str, Any] | None, given: str | None, cov: np.ndarray | None):
        """(free parameters, their covariance, their z at ``at``, log fn there, its gradient in z)."""
        free = [p for p in self.free if p.name != given]
        if cov is None:
            cov = self._cov_given(given)
        at = self.values if at is None else at
        z0 = np.array([p.z(at[p.name]) for p in free])
        if not free:
            return free, cov, z0, 0.0, np.zeros(0)
        base = math.log(fn(at))
        g = np.zeros(len(free))
        for i, p in enumerate(free):
            h = p.step or 1e-3
            v = dict(at)
            v[p.name] = p.value(z0[i] + h)
            g[i] = (math.log(fn(v)) - base) / h
        return free, cov, z0, base, g

    def _cov_given(self, given: str | None) -> np.ndarray:
        """The fit's covariance of the other parameters, conditional on ``given`` (the Schur
        complement; all of it without one)."""
        if given is None or given not in {p.name for p in self.free}:
            return self.cov
        k = next(i for i, p in enumerate(self.free) if p.name == given)
        rest = [i for i in range(len(self.free)) if i != k]
        c = self.cov[np.ix_(rest, [k])]
        if self.cov[k, k] <= 0:
            return self.cov[np.ix_(rest, rest)]
        return self.cov[np.ix_(rest, rest)] - (c @ c.T) / self.cov[k, k]


def _residuals(model: Model, figures: list[Figure], free: list[Param], fixed: dict[str, float]):
    obs = np.log(np.array([f.value for f in figures]))
    sig = np.array([f.sigma for f in figures])

    # the residuals at the last few points: least_squares evaluates a point, then its
    # Jacobian's forward differences start from the same point (and a rejected trial step
    # returns to it); the same z gives the same residuals, so each is computed once
    seen: dict[bytes, np.ndarray] = {}

    def fn(z: np.ndarray) -> np.ndarray:
        key = np.asarray(z, dtype=float).tobytes()
        if key in seen:
            return seen[key].copy()
        values = dict(fixed) | {p.name: p.value(float(zi)) for p, zi in zip(free, z)}
        preds = np.array([p.value for p in predict(model, values, figures)])
        bad = ~np.isfinite(preds) | (preds <= 0)
        r = np.where(bad, 50.0, (np.log(np.where(bad, 1.0, preds)) - obs) / sig)
        out = np.concatenate([r, z])
        if len(seen) >= SEEN_POINTS:
            del seen[next(iter(seen))]
        seen[key] = out
        return out.copy()

    return fn


#: the points whose residuals :func:`_residuals` keeps (oldest dropped first)
SEEN_POINTS = 8


#: the scan of each parameter before the local fit (z: prior widths): the IOPS bound is the
#: busiest resource's, flat in every parameter of the others, so a local method started where
#: a parameter does not bind would never move it.  A grid, then a bounded 1-D minimisation
#: (scipy.optimize.minimize_scalar) between the best grid point's neighbours.
SCAN = tuple(float(z) for z in np.linspace(-3.0, 3.0, 25))
SCAN_SWEEPS = 2


#: a pair's diagonal move is taken only when it lowers the cost (the sum of squared residuals)
#: by more than this: one figure's uncertainty; the local fit finds smaller gains
DIAGONAL_GAIN = 1.0


def _diagonals(fn, z: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Moves of two parameters at once, along (1, 1) and (1, -1) in z, over the scan's grid:
    two resources that bind different figures (the program time the sequential writes, the
    NAND capacity the random writes through WAF) can need to move together, out of a valley
    no single parameter leaves."""
    best = float(np.sum(fn(z) ** 2))
    for i in range(len(z)):
        for j in range(i + 1, len(z)):
            for sign in (1.0, -1.0):
                for d in SCAN:
                    t = z.copy()
                    t[i], t[j] = z[i] + d, z[j] + sign * d
                    if not (lo[i] < t[i] < hi[i] and lo[j] < t[j] < hi[j]):
                        continue
                    c = float(np.sum(fn(t) ** 2))
                    if c < best - DIAGONAL_GAIN:
                        best, z = c, t
    return z


def _scan(fn, z0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Coordinate search (two sweeps over the parameters), then moves of pairs
    (:func:`_diagonals`) and a coordinate sweep after any: the start of the local fit."""
    z = _coordinates(fn, z0, lo, hi)
    moved = _diagonals(fn, z, lo, hi)
    if np.array_equal(moved, z):
        return z
    return _coordinates(fn, moved, lo, hi)


def _coordinates(fn, z0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Coordinate search (two sweeps over the parameters)."""
    optimize = _optimize()
    z = z0.copy()

    def cost_at(i: int, v: float) -> float:
        t = z.copy()
        t[i] = v
        return float(np.sum(fn(t) ** 2))

    best = float(np.sum(fn(z) ** 2))
    step = SCAN[1] - SCAN[0]
    for _ in range(SCAN_SWEEPS):
        for i in range(len(z)):
            grid = [v for v in SCAN if lo[i] < v < hi[i]]
            if not grid:
                continue
            costs_i = [cost_at(i, v) for v in grid]
            k = int(np.argmin(costs_i))
            a, b = max(lo[i] + 1e-9, grid[k] - step), min(hi[i] - 1e-9, grid[k] + step)
            r = optimize.minimize_scalar(
                lambda v, i=i: cost_at(i, v), bounds=(a, b), method="bounded", options={"xatol": 1e-3}
            )
            for v, c in ((grid[k], costs_i[k]), (float(r.x), float(r.fun))):
                if c < best:
                    best = c
                    z[i] = v
    return z


def _optimize():
    """scipy.optimize, imported when a fit starts (`opsim calibrate` refuses bad input before it)."""
    from scipy import optimize  # noqa: PLC0415  (start-up: about 0.4 s of a command's)

    return optimize


#: the finite-difference step in z (prior widths): absolute, because the core resolves times to
#: whole nanoseconds and a step relative to z would vanish near a prior's centre
STEP = 1e-3


def _jacobian(fn, z: np.ndarray, hi: np.ndarray, steps: list[float | None]) -> np.ndarray:
    """Forward differences of ``fn`` at ``z`` (backward where a bound is within a step); each
    parameter's own step, or ``STEP``."""
    f0 = fn(z)
    J = np.empty((len(f0), len(z)))
    for i in range(len(z)):
        step = steps[i] or STEP
        h = step if z[i] + step <= hi[i] else -step
        t = z.copy()
        t[i] += h
        J[:, i] = (fn(t) - f0) / h
    return J


def _solve(
    model: Model,
    figures: list[Figure],
    free: list[Param],
    fixed: dict[str, float],
    start: dict[str, float],
    scan: bool = False,
):
    optimize = _optimize()
    fn = _residuals(model, figures, free, fixed)
    if not free:
        return {}, np.zeros((0, 0)), fn(np.zeros(0))
    lo = np.array([p.z_bounds()[0] for p in free])
    hi = np.array([p.z_bounds()[1] for p in free])
    z0 = np.clip(np.array([p.z(start[p.name]) for p in free]), lo + 1e-9, hi - 1e-9)
    steps = [p.step for p in free]
    if scan:
        z0 = _scan(fn, z0, lo, hi)
    res = optimize.least_squares(
        fn,
        z0,
        jac=lambda z: _jacobian(fn, z, hi, steps),
        bounds=(lo, hi),
        x_scale=1.0,
        xtol=1e-10,
        ftol=1e-12,
        gtol=1e-12,
    )
    J = res.jac
    cov = np.linalg.pinv(J.T @ J)
    return {p.name: p.value(float(z)) for p, z in zip(free, res.x)}, cov, res.fun


def _timed_round(
    model: Model, figures: list[Figure], values: dict[str, float], runs: dict, progress, damp: bool = False
) -> float:
    """Each figure's condition timed at ``values`` (:mod:`.timed`); its efficiency kept (with
    ``damp``, the geometric mean of the one used and the one measured when they differ by more
    than EFF_TOL, else the measured one). Returns the largest |log| change of an efficiency."""
    cfg = model.config(values)
    moved = 0.0
    todo: dict[tuple, Figure] = {}  # a condition runs once a round (shared by a WAF and an IOPS figure)
    for f in (x for fig in figures for x in parts(fig)):
        if f.kind != "waf":
            todo.setdefault(condition(f), f)
    if progress:
        progress(f"timed runs: {', '.join(f.label() for f in todo.values())}")
    # the conditions side by side on the process's cores (independent seeded runs)
    for c, r in zip(todo, timed.run_many(cfg, list(todo.values()), model.user_bytes, fresh=fresh_state(model))):
        runs[c] = r
        new, old = runs[c].efficiency, model.efficiency.get(c, 1.0)
        change = abs(math.log(new / old)) if new > 0 and old > 0 else math.inf
        moved = max(moved, change)
        model.efficiency[c] = math.sqrt(new * old) if damp and EFF_TOL < change < math.inf else new
    return moved


def _needed(
    model: Model, figures: list[Figure], informed: list[Param], start: dict[str, float], cost: float
) -> list[Param]:
    """The parameters to fit: ``informed``, and the others too when holding them all at their
    priors costs the figures more than NEEDED (the figures' cost at pass A was ``cost``).
    Two parameters that trade against each other in one figure (the read time and the
    controller time in a random read at a queue depth; the NAND capacity and the read time in
    the GC copies of random writes) each look uninformed alone, while the figures need the
    pair away from its priors: fitted, their intervals say how little each is pinned."""
    rest = [p for p in model.params if p not in informed]
    if not rest or not informed:
        return informed
    _, _, fun = _solve(model, figures, informed, {p.name: p.prior for p in rest}, start)
    if float(np.sum(fun[: len(figures)] ** 2)) > cost + NEEDED:
        return list(model.params)
    return informed


#: pass A restarts the local fit from each parameter this many prior widths either side of
#: where the scan left it (the others where they were) ...
RESTART_Z = 2.0
#: ... and keeps a restart whose cost (figures and priors) is lower by more than this: one
#: figure's worth, as :data:`DIAGONAL_GAIN`
RESTART_GAIN = 1.0


def _restarts(model: Model, figures: list[Figure], vals: dict[str, float], cov, fun):
    """A multi-start of pass A's local fit: a figure that a resource binds only past a threshold
    (a sequential read the host link caps until the read time is long enough to bind it) is
    flat where the scan looked, while the parameter that would meet it also costs another
    figure (the read time the GC copies of the random writes); the scan, moving one parameter
    or a fixed pair, misses the valley where the others follow.  Returns the best of pass A and
    the restarts (:data:`RESTART_Z`, :data:`RESTART_GAIN`)."""
    best = float(np.sum(fun**2))
    out = (vals, cov, fun)
    for p in model.params:
        lo, hi = p.z_bounds()
        z0 = p.z(vals[p.name])
        for sign in (-1.0, 1.0):
            z = min(max(z0 + sign * RESTART_Z, lo + 1e-6), hi - 1e-6)
            v, c, f = _solve(model, figures, model.params, {}, vals | {p.name: p.value(z)})
            cost = float(np.sum(f**2))
            if cost < best - RESTART_GAIN:
                best, out = cost, (v, c, f)
    return out


def fit(model: Model, figures: list[Figure], *, timed_rounds: int = TIMED_ROUNDS, progress=None) -> Fitted:
    """Fit ``model``'s parameters to ``figures`` (see the module's text)."""
    if not figures:
        raise InputError(
            "too few figures to fit anything: give the datasheet's steady 4 KiB random-write IOPS "
            "(rand_write_iops) and sequential-write bandwidth (seq_write_mbps), or measured points "
            "(--points, --measured); two steady points at different spans pin the spare NAND",
            key="figures",
        )
    priors = {p.name: p.prior for p in model.params}
    # pass A: every parameter free, to see which ones the figures inform
    vals, cov, fun = _solve(model, figures, model.params, {}, priors, scan=True)
    vals, cov, fun = _restarts(model, figures, vals, cov, fun)
    sd = np.sqrt(np.clip(np.diag(cov), 0, None)) if len(model.params) else np.zeros(0)
    # informed: the figures narrow it, or moved it more than a prior width (a resource that
    # binds only away from its prior has no slope at the optimum, yet the figures need it there)
    informed = [p for p, s in zip(model.params, sd) if s < INFORMED or abs(p.z(vals[p.name])) > 1.0]
    informed = _needed(model, figures, informed, priors | vals, float(np.sum(fun[: len(figures)] ** 2)))
    status = {p.name: ("fitted" if p in informed else "default") for p in model.params}
    fixed = {p.name: p.prior for p in model.params if p not in informed}
    start = priors | vals
    runs: dict[tuple, timed.TimedFigure] = {}
    for k in range(timed_rounds + 1):
        vals, cov, fun = _solve(model, figures, informed, fixed, start)
        start = start | vals
        if k == timed_rounds:
            break
        _timed_round(model, figures, fixed | vals, runs, progress)
    # the efficiencies the last fit used, checked at its values: where the event model's
    # figure moved more than EFF_TOL, a damped round more (at most EXTRA_ROUNDS)
    for _ in range(EXTRA_ROUNDS if timed_rounds else 0):
        if _timed_round(model, figures, fixed | vals, runs, progress, damp=True) <= EFF_TOL:
            break
        vals, cov, fun = _solve(model, figures, informed, fixed, start)
        start = start | vals
    values = fixed | vals
    n_fig = len(figures)
    chi2 = float(np.sum(fun[:n_fig] ** 2))
    dof = n_fig - len(informed)
    scale2 = max(1.0, chi2 / dof) if dof > 0 else 1.0
    sds = {p.name: float(math.sqrt(max(0.0, cov[i, i] * scale2))) for i, p in enumerate(informed)}
    return Fitted(model, figures, values, status, informed, cov, scale2, sds, runs)
