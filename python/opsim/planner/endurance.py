"""Endurance arithmetic: TBW <-> DWPD, lifetime at a write rate, and the P/E projection.

The TBW/DWPD relation is the one in the SanDisk X400 note (seed 001), used as printed::

    DWPD = TBW x 1024 / capacity in GB / life in days

Note the 1024: it converts TB to GB as if TB were binary while TBW is decimal (10^12 bytes).
opsim keeps it because it is the vendors' formula (with it, all twelve cells of the X400 DWPD
table follow from its TBW table; with 1000 they would not).  ``capacity`` is the *configured*
user capacity (after OP), and a year is 365 days (3 years = 1,095 days).

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


def dwpd_from_tbw(tbw_tb, capacity_gb, days) -> Fraction:
    """DWPD = TBW x 1024 / capacity GB / days (the seed's formula, exact)."""
    return _pos(tbw_tb, "tbw") * 1024 / _pos(capacity_gb, "capacity") / _pos(days, "days")


def tbw_from_dwpd(dwpd, capacity_gb, days) -> Fraction:
    """The inverse: TBW = DWPD x capacity GB x days / 1024."""
    return _pos(dwpd, "dwpd") * _pos(capacity_gb, "capacity") * _pos(days, "days") / 1024


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
    """The analytic steady-state WAF for uniform random writes (opsim.models, imported lazily)."""
    try:
        from .. import models
    except ImportError as e:  # the models module is another engineer's; say what to do
        raise InputError("waf: opsim.models is not available; give --waf", key="waf") from e
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
