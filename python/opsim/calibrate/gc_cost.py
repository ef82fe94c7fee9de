"""How large the controller's garbage-collection costs can be and still meet a drive's steady
random-write figures: the upper end of each cost's prior interval when the figures do not pin it.

Two controller costs of GC (docs/timed.md): ``timing.gc_fw_us`` per unit GC copies (or an SLC
cache folds) and ``timing.gc_reclaim_us`` per GC unit reclaimed (a block or superblock: victim
choice, its summary, bookkeeping).  No datasheet states either, and at the presets' zero both
vanish from the controller's load.  Each one alone (the other at the calibration's value) is
raised until the drive's steady random-write IOPS, predicted as the calibration predicts every
figure (:func:`.model.predict`: the core's WAF at the figure's span, the core's cost model at
that WAF, the timed model's efficiency at the fitted values), fall to the figure's 95% lower end
(``value x exp(-Z95 x sigma)``, the figure's own uncertainty as :mod:`.fit` weighs it:
:mod:`.inputs`).  scipy.optimize.brentq finds the crossing; the core resolves the costs to whole
nanoseconds, so the bound is that to within ``XTOL``.  Where several steady write figures are
given, the bound is the lowest (each must still be met).

A cost the fit pinned (``gc_fw_us`` "fitted") keeps its fitted value and interval, and the bound
is reported beside it.  The bounds are each alone: both at once would miss the figure.

`opsim calibrate` gives each bounded cost's interval and its source in its parameters (and a
drive file in ``[preset.calibration]``), so every preset written since carries them.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, replace

from ..errors import ConfigError
from ..sim import describe
from .fit import Z95, Fitted
from .inputs import Figure
from .model import Model, predict

#: the costs bounded here: config key -> what it is
COSTS = {
    "timing.gc_fw_us": "controller time per unit GC copies (or an SLC cache folds)",
    "timing.gc_reclaim_us": "controller time per GC unit reclaimed (block or superblock)",
}
#: brentq's absolute tolerance (us): a tenth of the nanosecond the core resolves a cost to
XTOL = 1e-4
#: the first cost (us) tried as the bracket's upper end; doubled until the figure is missed or
#: the core refuses the value (its range: docs/timed.md, "Limits")
FIRST = 1.0


@dataclass(frozen=True)
class CostBound:
    """One cost's interval: ``value`` (the calibration's), ``low`` to ``high`` (95%)."""

    key: str
    what: str
    status: str  # "fitted" (the fit's value and interval) or "bounded" ([0, bound])
    value: float
    low: float
    high: float
    #: the largest value meeting every steady random-write figure (us), the others at their values
    bound: float
    #: the figure that binds, its 95% lower end, and its predicted IOPS at ``value`` and at ``bound``
    figure: str
    lower_end: float
    iops_at_value: float
    iops_at_bound: float
    #: True when even the core's largest value meets the figures (``bound`` is then that value)
    capped: bool

    def source(self) -> str:
        if self.status == "fitted":
            return f"fitted: {self.what} (95% interval); the figures allow up to {_us(self.bound)} us"
        cap = " (the core's range ends there)" if self.capped else ""
        return (
            f"prior: 0 to {_us(self.bound)} us{cap}, the largest {self.what} at which the model still meets "
            f"{self.figure} at its 95% lower end ({self.lower_end:,.0f} IOPS); the figures do not pin it "
            "(opsim.calibrate.gc_cost)"
        )


def _us(x: float) -> str:
    """A time in us to 4 significant digits, never in exponent form (634,900; 4.37)."""
    return f"{float(f'{x:.4g}'):,.{max(0, 3 - math.floor(math.log10(x)))}f}" if x > 0 else "0"


def steady_write_figures(fitted: Fitted) -> list[Figure]:
    """The calibration's steady random-write figures (any mix with writes): what a GC cost slows."""
    return [f for f in fitted.figures if f.kind == "steady_iops" and f.read_fraction < 1.0]


def lower_end(f: Figure) -> float:
    """A figure's 95% lower end given its stated uncertainty (log-normal, as :mod:`.fit` weighs it)."""
    return f.value * math.exp(-Z95 * f.sigma)


def at_cost(fitted: Fitted, key: str, cost: float) -> tuple[Model, dict[str, float]]:
    """The calibration's model and values with ``key`` at ``cost``: a fitted parameter's value
    replaced, or the config's key set (the others as the calibration has them)."""
    f = fitted
    name = key.split(".", 1)[1]
    if any(p.key == key for p in f.model.params):
        return f.model, f.values | {name: cost}
    tables = copy.deepcopy(f.model.tables)
    tables.setdefault("timing", {})[name] = cost
    return replace(f.model, tables=tables), dict(f.values)


def iops_at(fitted: Fitted, key: str, cost: float, figure: Figure) -> float:
    """``figure``'s predicted IOPS with ``key`` at ``cost`` (:func:`.model.predict`: the core's)."""
    model, values = at_cost(fitted, key, cost)
    return predict(model, values, [figure])[0].value


def current(fitted: Fitted, key: str) -> float:
    """The calibration's value of ``key`` (0, the core's default, when it has none)."""
    name = key.split(".", 1)[1]
    return float(fitted.model.config(fitted.values).get("timing", {}).get(name, 0.0))


def _accepts(fitted: Fitted, key: str, cost: float) -> bool:
    """Whether the core takes ``key`` at ``cost`` (its range: the config parser's)."""
    model, values = at_cost(fitted, key, cost)
    try:
        describe(model.config(values), model_limits=False)
    except ConfigError:
        return False
    return True


def _bracket(fitted: Fitted, key: str, f: Figure, low: float, start: float) -> tuple[float, bool]:
    """A cost at which ``f``'s predicted IOPS fall below ``low`` (doubling from ``start``), or,
    when none does within the core's range, the largest value the core accepts (capped: True;
    bisected between the last value it took and the first it refused)."""
    hi, last = max(start, FIRST), start
    while _accepts(fitted, key, hi):
        if iops_at(fitted, key, hi, f) < low:
            return hi, False
        last, hi = hi, 2 * hi
    while hi - last > XTOL:
        mid = (last + hi) / 2
        last, hi = (mid, hi) if _accepts(fitted, key, mid) else (last, mid)
    return (last, True) if iops_at(fitted, key, last, f) >= low else (last, False)


def bound_for(fitted: Fitted, key: str, f: Figure) -> tuple[float, bool]:
    """The largest ``key`` at which ``f``'s predicted IOPS stay at or above its 95% lower end
    (brentq on log IOPS; 0 when the model misses it already at 0), and whether the core's range
    capped it."""
    from scipy.optimize import brentq  # noqa: PLC0415  (start-up: scipy only when bounding)

    low = lower_end(f)
    if iops_at(fitted, key, 0.0, f) < low:
        return 0.0, False
    hi, capped = _bracket(fitted, key, f, low, current(fitted, key))
    if capped:
        return hi, True
    g = lambda x: math.log(iops_at(fitted, key, x, f)) - math.log(low)  # noqa: E731
    # the predicted IOPS step at whole nanoseconds: brentq ends on the step's near side
    x = brentq(g, 0.0, hi, xtol=XTOL)
    while x > 0 and g(x) < 0:
        x = max(0.0, x - XTOL)
    return x, False


def bound(fitted: Fitted, key: str) -> CostBound:
    """``key``'s interval on calibration ``fitted`` (see the module's text)."""
    if key not in COSTS:
        raise ValueError(f"{key}: one of {', '.join(COSTS)}")
    figs = steady_write_figures(fitted)
    if not figs:
        raise ValueError("the calibration has no steady random-write figure to bound a GC cost by")
    found = [(bound_for(fitted, key, f), f) for f in figs]
    (b, capped), f = min(found, key=lambda t: t[0][0])
    value = current(fitted, key)
    name = key.split(".", 1)[1]
    p = next((q for q in fitted.model.params if q.key == key), None)
    if p is not None and fitted.status.get(name) == "fitted":
        lo, hi = fitted.interval(p)
        status = "fitted"
    else:
        lo, hi, status = 0.0, b, "bounded"
    return CostBound(
        key,
        COSTS[key],
        status,
        value,
        lo,
        hi,
        b,
        f.label(),
        lower_end(f),
        iops_at(fitted, key, value, f),
        iops_at(fitted, key, b, f),
        capped,
    )


def bounds(fitted: Fitted) -> dict[str, CostBound]:
    """Every GC cost's interval on ``fitted``."""
    return {k: bound(fitted, k) for k in COSTS}
