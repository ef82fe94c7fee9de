"""A P/E rating derived from a datasheet's endurance, applied as it was derived.

``opsim calibrate`` derives a drive's P/E from its endurance rating (``1 DWPD over 5 years``):
the rated host writes at the WAF of the rating's JEDEC workload at the native capacity, over
the NAND.  The rating convention is that the drive, at its native capacity and under that
workload, writes exactly the rated host bytes.  So a judge of the drive's endurance holds to
it only if it takes the P/E at *its own* WAF of that condition: calibrate's WAF (a functional
run on its own scale model), the screen's (the LRW model anchored on the advisor's scale model)
and the simulator's (the timed model on it) differ by a few tenths of a percent, and a P/E
derived at one and judged by another put a 1 DWPD drive at 0.997 DWPD at its native capacity
(issue 36).  Here the rated host bytes are read back from the drive file's P/E source (the
text calibrate writes: ``(1 DWPD over 5 years)`` or ``(3500 TBW)``) over the native capacity
as the advisor counts it, and the P/E is derived again from them at a judge's WAF.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from fractions import Fraction

from ..endurance import rated_host_bytes
from .drive import Drive
from .interval import _rating_waf, _rating_workload
from .skew import skew_model

_RATING = re.compile(r"\((?:(?P<dwpd>[0-9.eE+-]+) DWPD over (?P<years>[0-9.eE+-]+) years|(?P<tbw>[0-9.eE+-]+) TBW)\)")


def rated_host(drive: Drive) -> float | None:
    """The host bytes the drive's endurance rating allows, over its native capacity; None when
    its P/E was not derived from a rating (given with --pe or in the drive file's input)."""
    if not drive.pe_from_rating:
        return None
    m = _RATING.search(str(drive.calibration.get("pe_cycles_source", "")))
    if m is None:
        return None
    try:
        if m.group("tbw") is not None:
            return float(m.group("tbw")) * 1e12
        return rated_host_bytes(float(m.group("dwpd")), drive.native.bytes, float(m.group("years")))
    except (ValueError, ArithmeticError):
        return None


def at_waf(drive: Drive, host: float, waf: float, judge: str) -> Drive:
    """``drive`` with its P/E derived again from ``host`` rated bytes at ``waf`` (the judge's
    WAF of the rating workload at the native capacity), when that is more than the P/E it has:
    a P/E derived from a rating is the least the NAND carries, so the judge that sees a higher
    WAF there needs the higher floor to see the rating met, and one that sees a lower WAF sees
    it met already (the drive is returned as it is)."""
    # exactly as the endurance figures read it back (screen.endurance: the P/E's decimal text,
    # the WAF to 1e-9), rounded up to the next float: the rating holds to the last digit
    exact = Fraction(host) * Fraction(waf).limit_denominator(10**9) / drive.physical_bytes
    pe = float(exact)
    while Fraction(str(pe)) < exact:
        pe = math.nextafter(pe, math.inf)
    if drive.pe is not None and pe <= drive.pe:
        return drive
    src = drive.sources.get("pe", "")
    return replace(
        drive,
        pe=pe,
        sources=drive.sources
        | {"pe": f"{src}; applied at {judge}'s WAF of the rating workload at the native capacity ({waf:.4g})"},
    )


def for_screen(drive: Drive, model_blocks: int) -> Drive:
    """The drive with its rating-derived P/E taken at the screen's WAF of the rating workload at
    the native capacity (as the intervals' points take theirs), unchanged otherwise."""
    host = rated_host(drive)
    rated = _rating_workload(drive) if host is not None else None
    if host is None or rated is None:
        return drive
    sk = skew_model(drive, rated[0], model_blocks) if rated[0].skewed else None
    w = _rating_waf(drive, rated, sk)
    return drive if w is None else at_waf(drive, host, w, "the screen")
