"""Plots of simulated and measured results (matplotlib, Agg; nothing is shown on a display).

Every function takes a list of results (``SimResult``, a simulation result dict, or an
``opsim measure`` result dict), optional ``labels`` and an optional matplotlib ``ax`` to draw
into, and returns the Figure.  What was drawn (axis labels and scales, every series' x and y,
the phase markers, the model curves, and what was left out and why) is recorded on each Axes
and returned by :func:`drawn`; ``opsim plot --json`` prints it and the tests check it.

    >>> from opsim import plots
    >>> fig = plots.saturation([r1, r2], labels=["7% OP", "28% OP"])
    >>> plots.save(fig, "wsat.png")
    >>> plots.drawn(fig)[0]["series"][0]["y"][:3]

Kinds (:data:`KINDS`): ``saturation`` (per-interval IOPS against time), ``saturation-written``
(against host data written, in drive writes), ``waf-op`` (WAF against OP with the analytic
models), ``steady-iops`` (bars), ``endurance`` (TBW and DWPD bars, relative), ``latency``
(CDF), ``wear`` (erase-count distribution), ``victims`` (valid fraction of GC victims),
``tenants`` (per-namespace WAF bars, with and without placement), ``placement-waf`` (WAF
against OP, one line per placement mode), ``fleet-cost`` (cost per usable TB-year against the
share held back, one line per candidate drive of ``opsim advise --compare``).

One module a kind of figure: ``saturation``, ``waf`` (WAF against OP), ``tenants``, ``bars``
(steady IOPS, endurance), ``latency``, ``wear`` (erase counts, GC victims), ``write_curve``,
``fleet`` (a fleet comparison's costs);
``figure`` holds what they share (the Agg figure, the record of what was drawn).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from .bars import endurance, steady_iops
from .figure import NO_WAF, drawn, new_figure, palette, save, to_bytes
from .fleet import fleet_cost
from .latency import LATENCY_PCTS, latency
from .saturation import saturation, saturation_panels
from .tenants import tenants
from .waf import MODEL_NAMES, placement_waf, waf_op
from .wear import victims, wear
from .write_curve import write_curve

__all__ = [
    "KINDS",
    "LATENCY_PCTS",
    "MODEL_NAMES",
    "NO_WAF",
    "drawn",
    "endurance",
    "fleet_cost",
    "latency",
    "new_figure",
    "palette",
    "placement_waf",
    "plot",
    "saturation",
    "saturation_panels",
    "save",
    "steady_iops",
    "tenants",
    "to_bytes",
    "victims",
    "waf_op",
    "wear",
    "write_curve",
]


def _drawn_by(fn, **fixed):
    """A :data:`KINDS` entry's drawer: ``fn(results, labels, ax=ax, **fixed, **options)``."""
    return lambda res, labels, ax, **kw: fn(res, labels, ax=ax, **fixed, **kw)


def _panels(res, labels, ax, **kw):
    if ax is not None:
        raise InputError("ax: saturation-panels draws its own grid of axes; call it without ax", key="ax")
    return saturation_panels(res, labels, **kw)


#: kind -> (drawer(results, labels, ax, **options), what it draws)
KINDS = {
    "saturation": (
        _drawn_by(saturation, x="time"),
        "per-interval IOPS against time, log y, FOB/transition/steady marked",
    ),
    "saturation-written": (
        _drawn_by(saturation, x="written"),
        "per-interval IOPS against host data written (drive writes), log y, phases marked",
    ),
    "saturation-panels": (_panels, "one write-saturation panel per result (phases shaded), shared axes"),
    "waf-op": (
        _drawn_by(waf_op),
        "WAF against OP: simulated points and the greedy, LRW/FIFO and random models",
    ),
    "steady-iops": (_drawn_by(steady_iops), "steady-state IOPS per configuration (bars)"),
    "endurance": (_drawn_by(endurance), "TBW and DWPD relative to the least-OP configuration (bars)"),
    "latency": (_drawn_by(latency), "latency CDF from the percentiles (log x, logit y)"),
    "wear": (_drawn_by(wear), "erase-count distribution"),
    "victims": (_drawn_by(victims), "GC victims' valid-fraction distribution with the model mean"),
    "tenants": (
        _drawn_by(tenants),
        "per-namespace WAF bars, one group per namespace, one bar per result, the drive's WAF dashed",
    ),
    "write-curve": (
        _drawn_by(write_curve),
        "a trace's write-frequency curve (opsim trace profile --json) with its fitted workload's, log x",
    ),
    "placement-waf": (
        _drawn_by(placement_waf),
        "WAF against OP, one line per placement mode (none, streams, fdp)",
    ),
    "fleet-cost": (
        _drawn_by(fleet_cost),
        "buy or over-provision (opsim advise --compare --json): cost per usable TB-year against the share held "
        "back, one line per candidate drive",
    ),
}


def plot(kind: str, results, labels: Sequence[str] | None = None, ax=None, **options: Any):
    """Draw ``kind`` (one of :data:`KINDS`) for ``results``; returns the Figure."""
    if kind not in KINDS:
        raise InputError(f"kind: {kind!r} is not a plot kind (known: {', '.join(KINDS)})", key="kind")
    return KINDS[kind][0](results, labels, ax, **options)
