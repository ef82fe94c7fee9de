"""The precision a drive file stores a fitted figure at, and the tolerance two calibrations of
the same input agree to.

A fit runs through linear algebra (scipy's least squares, numpy's ``pinv``) on OpenBLAS, whose
kernels differ by CPU (``OPENBLAS_CORETYPE`` Haswell, SkylakeX, ...) and thread count: the
last bits of a fitted figure are the machine's, not the fit's.  So a drive file (``opsim
calibrate -o`` and the built-in presets, one writer: :meth:`.Calibration.drive_toml`) stores
each fitted figure at the precision it carries, by one rule:

* a fitted value the simulator runs (a time in µs, a rate in MB/s) to 0.01 (10 ns: the core
  resolves whole nanoseconds); the NAND capacity floored to whole 4 KiB sectors (a capacity
  stays an exact integer of bytes); the P/E rating to 0.1 cycle.  These are 4 to 7
  significant digits, far inside the fit's own 95% interval (typically +-20% or wider);
* a bound of a 95% interval to 4 significant digits, or finer where the interval is narrow so
  that its width keeps 3: the bounds come from a forward-difference Jacobian (a step of 1e-3
  prior widths) and a residual scale over a handful of figures, so their numerical error is of
  the order of 1e-3 of the width already.

Two machines can still round a figure that falls on a rounding boundary (x.xx5) either way, so
the presets are compared to a fresh calibration (:func:`differences`) with a tolerance: one
unit of the stored quantum plus :data:`REL` of the value, for fitted figures and the numbers
in their source texts only; every other value (counts, the given capacities, geometry, text)
must be equal.
"""

from __future__ import annotations

import math
import re
from typing import Any

from ..units import parse_size

#: the sector a fitted capacity is floored to (bytes)
SECTOR = 4096
#: significant digits of an interval's bound
BOUND_DIGITS = 4
#: significant digits an interval's width keeps at least
WIDTH_DIGITS = 3
#: relative tolerance on top of one stored quantum, for a fit that moved by its last bits
REL = 1e-6


def value(name: str, v: float) -> float:
    """A fitted value (parameter ``name``) as a drive file stores it: the capacity floored to
    4 KiB, a time or rate to 0.01."""
    return float(int(v) // SECTOR * SECTOR) if name == "physical" else round(v, 2)


def pe_cycles(v: float) -> float:
    """The P/E rating as stored: to 0.1 cycle."""
    return round(v, 1)


def _exponent(v: float, lo: float, hi: float) -> int:
    """Decimal exponent of the last digit of bound ``v`` of the interval ``lo..hi``."""
    e = math.floor(math.log10(abs(v))) - (BOUND_DIGITS - 1) if v else -BOUND_DIGITS
    if hi > lo:
        e = min(e, math.floor(math.log10(hi - lo)) - (WIDTH_DIGITS - 1))
    return e


def interval(lo: float, hi: float) -> list[float]:
    """A 95% interval as stored (see the module's text)."""
    return [round(v, -_exponent(v, lo, hi)) for v in (lo, hi)]


def interval_text(lo: float, hi: float) -> str:
    """``lo..hi`` as a source text quotes it, at the stored precision, never in exponent form."""
    return "..".join(f"{round(v, -e):.{max(0, -e)}f}" for v, e in ((x, _exponent(x, lo, hi)) for x in (lo, hi)))


# ----------------------------------------------------------------------------- comparison

#: a number in a text: not part of a word, a version or a longer number (``19.49..28.31``)
_NUMBER = re.compile(r"(?<!\w)(?<!\d\.)(\d+(?:\.\d+)?)(?!\w|\.\d)")


def _quantum(path: str) -> float:
    """One unit of the precision fitted value ``path`` (or the P/E rating) is stored at."""
    if path == "drive.physical_capacity":
        return SECTOR
    if path == "preset.calibration.pe_cycles":
        return 0.1
    return 0.01


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _close(a: float, b: float, quantum: float) -> bool:
    return abs(a - b) <= quantum + REL * max(abs(a), abs(b))


def _text_close(a: str, b: str) -> bool:
    """Equal text, numbers within one unit of their last written digit."""
    pa, pb = _NUMBER.split(a), _NUMBER.split(b)
    if len(pa) != len(pb):
        return False
    for i, (x, y) in enumerate(zip(pa, pb)):
        if i % 2 == 0 and x != y:
            return False
        if i % 2 == 1 and x != y:
            unit = max(10.0 ** -len(s.partition(".")[2]) for s in (x, y))
            if not _close(float(x), float(y), unit):
                return False
    return True


def _bound_close(a: list, b: list) -> bool:
    if not all(isinstance(x, list) and len(x) == 2 and all(_is_number(v) for v in x) for x in (a, b)):
        return False
    width = max(a[1] - a[0], b[1] - b[0], 0.0)
    return all(_close(x, y, 10.0 ** _exponent(max(abs(x), abs(y)), 0.0, width)) for x, y in zip(a, b))


#: the profile's stored points (6 significant digits) and costs (0.001) agree to this share of
#: the value, or of one cost unit: a fit's last bits move a point's refitted values that much
PROFILE_REL = 1e-3


def _profile_close(a: Any, b: Any) -> bool:
    """Two stored profile entries (:mod:`.uncertainty`): equal text, numbers (nested in lists of
    the same shape) within PROFILE_REL."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_profile_close(x, y) for x, y in zip(a, b))
    if _is_number(a) and _is_number(b):
        return abs(a - b) <= PROFILE_REL * max(1.0, abs(a), abs(b))
    return a == b


def _fitted_keys(doc: dict) -> set[str]:
    sources = doc.get("preset", {}).get("sources", {})
    return {k for k, s in sources.items() if isinstance(s, str) and s.startswith("fitted")}


def _leaf_close(path: str, a: Any, b: Any, fitted: set[str]) -> bool:
    if a == b:
        return True
    key = path.removeprefix("preset.sources.")
    if path.startswith("preset.calibration.intervals_95."):
        return _bound_close(a, b)
    if path.startswith("preset.calibration.profile."):
        return _profile_close(a, b)
    if (key in fitted and path.startswith("preset.sources.")) or path == "preset.calibration.pe_cycles_source":
        return isinstance(a, str) and isinstance(b, str) and _text_close(a, b)
    if path in fitted or path == "preset.calibration.pe_cycles":
        if path == "drive.physical_capacity":
            a, b = parse_size(a, path), parse_size(b, path)
        return _is_number(a) and _is_number(b) and _close(float(a), float(b), _quantum(path))
    return False


def differences(new: dict, old: dict, fitted: set[str] | None = None, path: str = "") -> list[str]:
    """The keys where drive file ``new`` (a fresh calibration) and ``old`` (a checked-in one)
    disagree beyond the stored precision (see the module's text); [] when they agree."""
    fitted = _fitted_keys(old) | _fitted_keys(new) if fitted is None else fitted
    if isinstance(new, dict) and isinstance(old, dict):
        out = [f"{path}{k}" for k in sorted(set(new) ^ set(old))]
        for k in sorted(set(new) & set(old)):
            out += differences(new[k], old[k], fitted, f"{path}{k}.")
        return out
    p = path.removesuffix(".")
    return [] if _leaf_close(p, new, old, fitted) else [p]
