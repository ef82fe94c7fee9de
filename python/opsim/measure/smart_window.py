"""The steady WAF of a measurement from SMART snapshots around each round's tracked run
(``opsim measure ... --smart``), with the uncertainty the run itself shows.

The snapshots before and after the whole run (``smart-before.json``, ``smart-after.json``) give
the WAF of everything the run wrote: the preconditioning's sequential passes (WAF near 1) and the
rounds before steady state included, which is not the drive's steady WAF.  So a snapshot is also
taken before the first tracked run and after each round's tracked run (``smart-after-NNN.json``;
``smart-before-NNN.json`` where another run came between, as in the iops test's other block
sizes and mixes), and the steady WAF is taken over the run's measurement window (the
steady-state window; docs/measure.md):

* ``waf``: the NAND writes over the host writes of the window's tracked runs, summed;
* ``spread``: the standard error of the window's per-round WAFs relative to ``waf`` (the rounds'
  sample standard deviation over the square root of their number; rounds taken as independent);
* ``resolution``: what the counters' whole units leave open, at most one unit at each end of
  each round's two counters (relative; a bound);
* ``sigma``: the relative (log) uncertainty of ``waf`` as a figure: the two above in
  quadrature, and at least :data:`MIN_SIGMA`.

A calibration (``opsim calibrate --measured``) fits ``waf`` with ``sigma``
(python/opsim/calibrate/measured.py).
"""

from __future__ import annotations

import json
import math
import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from .._output import atomic_write_text
from ..errors import OpsimError
from ..smart import interval_waf
from ..smart.parse import as_snapshot

#: the least relative uncertainty of a steady window's WAF: background work of the drive (read
#: refresh, wear levelling, its own metadata) writes NAND on its own schedule, which no window
#: of host writes averages away; an estimate (docs/measure.md, "The steady WAF")
MIN_SIGMA = 0.01
#: the fewest rounds whose spread says anything
MIN_ROUNDS = 2
#: the uncertainty a steady window's WAF is expected to have before the run says its own (what
#: ``opsim calibrate`` assumes of a measurement not yet taken): an estimate, twice
#: :data:`MIN_SIGMA`; five 60-second rounds whose WAFs scatter by 4% (one standard deviation)
#: give 1.8%
EXPECTED_SIGMA = 0.02


@dataclass
class Checkpoints:
    """The ``Plan.checkpoint`` of a run with ``--smart``: a SMART snapshot of ``device`` at each
    checkpoint, kept in memory and written to ``outdir``.  A snapshot that fails is recorded in
    ``errors`` and never stops the measurement."""

    device: str
    outdir: str
    take: Callable[[str], dict]
    snaps: dict[tuple[str, int], dict] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def __call__(self, event: str, index: int) -> None:
        try:
            snap = self.take(self.device)
        except (OpsimError, OSError) as e:
            self.errors.append(f"the SMART snapshot {event} round {index} failed: {e}")
            return
        self.snaps[(event, index)] = snap
        atomic_write_text(os.path.join(self.outdir, f"smart-{event}-{index:03d}.json"), json.dumps(snap, indent=2))

    def around(self, index: int) -> tuple[dict | None, dict | None]:
        """The snapshots before and after round ``index``'s tracked run."""
        before = self.snaps.get(("before", index)) or self.snaps.get(("after", index - 1))
        return before, self.snaps.get(("after", index))


def _counts(w: dict) -> tuple[float, float, int, int]:
    """An interval's WAF numerator and denominator in one unit, and their counts of units."""
    num, den = w["waf_counters"]["numerator"], w["waf_counters"]["denominator"]
    if num["unit"] == den["unit"] or num["bytes"] is None or den["bytes"] is None:
        return float(num["delta"]), float(den["delta"]), num["delta"], den["delta"]
    return float(num["bytes"]), float(den["bytes"]), num["delta"], den["delta"]


def _unavailable(reason: str, window: list | None = None) -> dict:
    return {
        "available": False,
        "reason": reason,
        "waf": None,
        "sigma": None,
        "spread": None,
        "resolution": None,
        "rounds": window,
        "per_round": [],
    }


def steady(result: dict, cps: Checkpoints) -> dict:
    """The steady window's WAF (the module's text) of ``result``; each round's ``waf`` field is
    filled where its snapshots give one.  ``available`` false with a ``reason`` when the run has
    no window, a snapshot is missing or the drive has no NAND counters."""
    per: dict[int, tuple[float, float, int, int]] = {}
    reasons: dict[int, str] = {}
    for rnd in result.get("rounds") or []:
        i = rnd["index"]
        before, after = cps.around(i)
        if before is None or after is None:
            reasons[i] = f"no SMART snapshot {'before' if before is None else 'after'} round {i}"
            continue
        b, a = as_snapshot(before, f"before round {i}"), as_snapshot(after, f"after round {i}")
        w = interval_waf(b, a, allow_no_serial=True)
        if not w["available"]:
            reasons[i] = w["reason"]
            continue
        per[i] = _counts(w)
        rnd["waf"] = per[i][0] / per[i][1]
    window = (result.get("measurement_window") or {}).get("rounds")
    if not window:
        return _unavailable("the run has no measurement window (no round finished)")
    idx = list(range(window[0], window[1] + 1))
    missing = [i for i in idx if i not in per]
    if missing:
        return _unavailable(reasons.get(missing[0], f"no SMART WAF for round {missing[0]}"), window)
    x = sum(per[i][0] for i in idx)
    y = sum(per[i][1] for i in idx)
    waf = x / y
    wafs = [per[i][0] / per[i][1] for i in idx]
    resolution = sum(1 / per[i][2] + 1 / per[i][3] for i in idx)
    spread = statistics.stdev(wafs) / waf / math.sqrt(len(wafs)) if len(wafs) >= MIN_ROUNDS else None
    sigma = None if spread is None else max(MIN_SIGMA, math.hypot(spread, resolution))
    return {
        "available": True,
        "reason": None
        if spread is not None
        else f"one round in the window: no spread to judge its uncertainty by (at least {MIN_ROUNDS} rounds)",
        "waf": waf,
        "sigma": sigma,
        "spread": spread,
        "resolution": resolution,
        "rounds": window,
        "per_round": wafs,
    }
