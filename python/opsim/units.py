"""Formatting and parsing of sizes and percentages for the Python side.

:func:`parse_size` keeps its own implementation rather than delegating to the core's
(``opsim._core.parse_size``): it is exact on Python integers (no 64-bit ceiling), its refusals
and messages are the CLI's ("a size cannot be negative", control bytes escaped), and the core's
messages are being reworded separately.  tests/core/test_core_truth_op.py checks that the two give
the same bytes, or both refuse, on the grammar they share."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .errors import InputError

_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "pb": 10**15,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "pib": 2**50,
}
#: a decimal gigabyte (the unit of a write rate per day)
GB = _UNITS["gb"]


def parse_size(text, key: str = "size") -> int:
    """Exact bytes from ``480GB``, ``4GiB``, ``1.5TB`` or an integer.  A bare ``G`` is refused."""
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise InputError(f"{key}: a size cannot be negative ({text})", key=key)
        return text
    s = str(text).strip().replace("_", "")
    if s.startswith("-"):
        raise InputError(f"{key}: a size cannot be negative ({text!r})", key=key)
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)\s*([A-Za-z]*)", s)
    if not m and re.match(r"[0-9]*\.?[0-9]+[eE][+-]?[0-9]", s):
        raise InputError(
            f"{key}: {text!r}: exponent notation is not accepted; write the number in digits with a unit, "
            "such as 480GB or 4TiB",
            key=key,
        )
    if not m:
        raise InputError(f"{key}: {text!r} is not a size (examples: 480GB, 4GiB, 512)", key=key)
    num, unit = m.group(1), m.group(2).lower()
    if unit and unit not in _UNITS:
        raise InputError(
            f"{key}: unknown unit {m.group(2)!r}; use B, KB/MB/GB/TB (powers of 10) or KiB/MiB/GiB/TiB (powers of 2)",
            key=key,
        )
    try:
        v = Decimal(num) * _UNITS.get(unit or "b", 1)
    except InvalidOperation:
        raise InputError(f"{key}: {text!r} is not a size", key=key) from None
    if v != v.to_integral_value():
        raise InputError(f"{key}: {text!r} is not a whole number of bytes", key=key)
    return int(v)


def fmt_bytes(n) -> str:
    """Exact binary units when exact (4GiB), else decimal (480GB, 1.500TB)."""
    if n is None:
        return "-"
    n = int(n)
    for u, m in (("PiB", 2**50), ("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= m and n % m == 0:
            return f"{n // m}{u}"
    for u, m in (("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= m and n % m == 0:
            return f"{n // m}{u}"
    if 1024 <= n < 2**20 and n % 1024 == 0:
        return f"{n // 1024}KiB"
    for u, m in (("PB", 10**15), ("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= m:
            return f"{n / m:.3f}{u}"
    return f"{n}B"


def pct(x, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.{digits}f}%"
