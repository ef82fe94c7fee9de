"""Endurance arithmetic: TBW <-> DWPD, lifetime at a write rate, and the P/E projection.

The TBW/DWPD relation comes in two conventions (:data:`GB_PER_TB`, ``formula``)::

    DWPD = TBW x k / capacity in GB / life in days

``"x400"``, k = 1024: the SanDisk X400 note (seed 001), as printed; it converts TB to GB as if
TB were binary while TBW is decimal (10^12 bytes), and with it all twelve cells of the X400 DWPD
table follow from its TBW table (with 1000 they would not).  ``opsim endurance`` uses it unless
told (``--formula decimal``).  ``"decimal"``, k = 1000: host bytes over (user bytes x days), the
data-center vendors' ratings (Intel's DC P3600: 3 DWPD over 5 years on 2 TB, "10.95 PBW";
docs/planner.md) and the one ``opsim calibrate`` derives a P/E rating from and ``opsim advise``
projects with (:data:`RATING_FORMULA`), so that a drive rated 1 DWPD comes back at 1 DWPD.
``capacity`` is the *configured* user capacity (after OP), and a year is 365 days (3 years =
1,095 days).

Projection from the NAND budget::

    host bytes writable = P/E rating x physical capacity / WAF

with WAF given, or taken from the analytic models in :mod:`opsim.models` for the OP (user basis).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction

from ..errors import CapacityError, InputError

DAYS_PER_YEAR = 365
TB = 10**12
GB = 10**9


def _pos(v, key) -> Fraction:
    try:
        f = Fraction(str(v)) if not isinstance(v, Fraction) else v
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{key}: {v!r} is not a number", key=key) from None
    if f <= 0:
        raise InputError(f"{key}: must be positive (got {v})", key=key)
    return f


#: GB in a TB in DWPD = TBW x k / capacity GB / days, per convention (module docstring)
GB_PER_TB = {"x400": 1024, "decimal": 1000}

#: the convention of a data-center rating: ``opsim calibrate`` derives a P/E rating from a DWPD
#: with it and ``opsim advise`` projects DWPD with it
RATING_FORMULA = "decimal"

#: how the source of a P/E rating ``opsim calibrate`` derived from a datasheet's DWPD or TBW
#: begins (a drive file's ``pe_cycles_source``): ``opsim advise`` knows such a rating by it
RATED_PE_SOURCE = "fitted: the datasheet's endurance"


def _k(formula: str) -> int:
    try:
        return GB_PER_TB[formula]
    except KeyError:
        raise InputError(f"formula: {formula!r} is not one of {', '.join(GB_PER_TB)}", key="formula") from None


def dwpd_from_tbw(tbw_tb, capacity_gb, days, formula: str = "x400") -> Fraction:
    """DWPD = TBW x k / capacity GB / days (k: :data:`GB_PER_TB` of ``formula``; exact)."""
    return _pos(tbw_tb, "tbw") * _k(formula) / _pos(capacity_gb, "capacity") / _pos(days, "days")


def tbw_from_dwpd(dwpd, capacity_gb, days, formula: str = "x400") -> Fraction:
    """The inverse: TBW = DWPD x capacity GB x days / k."""
    return _pos(dwpd, "dwpd") * _pos(capacity_gb, "capacity") * _pos(days, "days") / _k(formula)


def rated_host_bytes(dwpd: float, user_bytes: float, years: float) -> float:
    """Host bytes a DWPD rating allows over ``years`` (:data:`RATING_FORMULA`), as
    ``opsim calibrate`` derives a P/E rating from it."""
    days = _pos(years, "years") * DAYS_PER_YEAR
    return float(tbw_from_dwpd(dwpd, _pos(user_bytes, "user") / GB, days, RATING_FORMULA) * TB)


def dwpd_of(host_bytes: float, user_bytes: float, years: float) -> float:
    """The inverse of :func:`rated_host_bytes`: drive writes per day over ``years``."""
    days = _pos(years, "years") * DAYS_PER_YEAR
    return float(dwpd_from_tbw(_pos(host_bytes, "host") / TB, _pos(user_bytes, "user") / GB, days, RATING_FORMULA))


def round2(x, digits: int = 2) -> Decimal:
    """Half-up rounding to ``digits`` decimals of an exact value (as printed in vendor tables)."""
    f = Fraction(x)
    with localcontext() as ctx:  # enough digits for the whole part (quantize fails past the precision)
        ctx.prec = max(28, len(str(abs(f.numerator // f.denominator))) + digits + 2)
        return (Decimal(f.numerator) / Decimal(f.denominator)).quantize(
            Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP
        )


def lifetime_days(tbw_tb, bytes_per_day) -> Fraction:
    """Days until ``tbw_tb`` (decimal TB) is written at ``bytes_per_day`` host bytes per day."""
    return _pos(tbw_tb, "tbw") * TB / _pos(bytes_per_day, "write_rate")


def waf_from_models(op_user: float, policy: str = "greedy", pages_per_block: int = 256, d: int | None = None) -> float:
    """The analytic steady-state WAF for uniform random writes (:mod:`opsim.models`)."""
    # lazy: the models take numpy and scipy, which `opsim endurance --waf W`, `opsim capacity` and
    # `opsim --help` (this module is on their path) do not need
    from .. import models  # noqa: PLC0415

    if op_user is None or op_user <= 0:
        raise CapacityError("op: the modelled WAF needs a positive OP (user basis)", key="op")
    return float(models.waf(policy, float(op_user), int(pages_per_block), d))


def projection(pe_cycles, physical_bytes, waf) -> dict:
    """Host bytes writable = P/E x physical / WAF."""
    pe = _pos(pe_cycles, "pe")
    phys = _pos(physical_bytes, "physical")
    w = _pos(waf, "waf")
    if w < 1:
        raise InputError(f"waf: {float(w)} is below 1; a WAF is at least 1 without compression", key="waf")
    nand = pe * phys
    host = nand / w
    return {
        "pe_cycles": float(pe),
        "physical_bytes": int(phys),
        "waf": float(w),
        "nand_bytes_writable": int(nand),
        "host_bytes_writable": int(host),
        "host_tb_writable": float(host / TB),
    }


# The SanDisk X400 tables (seed 001): capacity at 0% OP -> ((OP label, configured GB), ...)
X400_CONFIGURED_GB = {128: (128, 120, 100), 256: (256, 240, 200), 512: (512, 480, 400), 1024: (1024, 960, 800)}
X400_TBW = {128: (72, 74, 83), 256: (80, 95, 107), 512: (160, 189, 198), 1024: (320, 378, 396)}
X400_DWPD_3Y = {
    128: ("0.53", "0.58", "0.78"),
    256: ("0.29", "0.37", "0.50"),
    512: ("0.29", "0.37", "0.46"),
    1024: ("0.29", "0.37", "0.46"),
}
X400_OP_LABELS = ("0%", "7%", "28%")
