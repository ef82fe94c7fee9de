"""The advisor's targets (steady IOPS, TBW, DWPD, lifetime, capacity, a latency percentile)
and the parsing of their options."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ..capacity import (
    GB,
)
from .options import _bad

#: the workload a DWPD target is rated under by default: JEDEC's for data-center drives
JESD219_RATING = "the JESD219 enterprise workload (JEDEC's rating workload, the default for --min-dwpd)"

LATENCY_KEYS = ("mean", "p50", "p90", "p99", "p99.9", "p99.99", "max")


@dataclass
class Targets:
    min_iops: float | None = None
    min_iops_relative: bool = False  # "3x": a multiple of the IOPS at the native capacity
    min_tbw: float | None = None  # TB
    min_tbw_relative: bool = False
    min_dwpd: float | None = None
    dwpd_years: float = 5.0
    #: the workload the DWPD target is rated under (JESD219_RATING: the default, JEDEC's)
    dwpd_workload: str | None = None
    min_lifetime_years: float | None = None
    min_capacity: int | None = None  # bytes
    latency: list = field(default_factory=list)  # [(op "all"/"read"/"write", key "p99", max us)]
    price: float | None = None

    def describe(self) -> list[str]:
        out = []
        if self.min_iops is not None:
            out.append(
                f"steady IOPS >= {self.min_iops:g}x the native configuration's"
                if self.min_iops_relative
                else f"steady IOPS >= {self.min_iops:,.0f}"
            )
        if self.min_tbw is not None:
            out.append(
                f"TBW >= {self.min_tbw:g}x the native configuration's"
                if self.min_tbw_relative
                else f"TBW >= {self.min_tbw:,g} TB"
            )
        if self.min_dwpd is not None:
            under = f" under {self.dwpd_workload}" if self.dwpd_workload else ""
            out.append(f"DWPD >= {self.min_dwpd:g} over {self.dwpd_years:g} years{under}")
        if self.min_lifetime_years is not None:
            out.append(f"lifetime >= {self.min_lifetime_years:g} years at the write rate")
        if self.min_capacity is not None:
            out.append(f"usable capacity >= {self.min_capacity / GB:,.3f} GB".replace(".000 GB", " GB"))
        for kind, key, us in self.latency:
            out.append(f"{'' if kind == 'all' else kind + ' '}latency {key} <= {us:,g} us")
        return out

    def names(self) -> list[str]:
        n = []
        if self.min_iops is not None:
            n.append("iops")
        if self.min_tbw is not None:
            n.append("tbw")
        if self.min_dwpd is not None:
            n.append("dwpd")
        if self.min_lifetime_years is not None:
            n.append("lifetime")
        if self.min_capacity is not None:
            n.append("capacity")
        n += [latency_name(k, key) for k, key, _ in self.latency]
        return n

    def to_dict(self) -> dict:
        return {
            "min_iops": self.min_iops,
            "min_iops_relative": self.min_iops_relative,
            "min_tbw_tb": self.min_tbw,
            "min_tbw_relative": self.min_tbw_relative,
            "min_dwpd": self.min_dwpd,
            "dwpd_years": self.dwpd_years,
            "dwpd_workload": self.dwpd_workload,
            "min_lifetime_years": self.min_lifetime_years,
            "min_capacity_bytes": self.min_capacity,
            "max_latency_us": [{"ios": k, "percentile": key, "us": us} for k, key, us in self.latency],
            "price": self.price,
            "described": self.describe(),
        }


def latency_name(kind: str, key: str) -> str:
    return f"latency {key}" if kind == "all" else f"{kind} latency {key}"


def parse_target_number(text, option: str, allow_relative: bool = False) -> tuple[float, bool]:
    s = str(text).strip().replace(",", "").replace("_", "").lower()
    rel = allow_relative and s.endswith("x")
    if rel:
        s = s[:-1]
    try:
        v = float(s)
    except ValueError:
        hint = " (a number, or a multiple of the native configuration's such as 3x)" if allow_relative else ""
        raise _bad(option, f"{text!r} is not a number{hint}") from None
    if not math.isfinite(v):
        raise _bad(option, f"{text!r} is not a finite number")
    if v <= 0:
        raise _bad(option, f"{text} must be positive")
    return v, rel


def parse_fraction_option(text, option: str) -> float:
    s = str(text).strip()
    pct = s.endswith("%")
    try:
        v = float(s[:-1] if pct else s)
    except ValueError:
        raise _bad(option, f"{text!r} is not a percentage (examples: 30%, 0.3)") from None
    v = v / 100 if pct else v
    if not (0 <= v <= 1):
        raise _bad(option, f"{text} is outside 0..100%")
    return v


_TIME_UNITS = {"us": 1.0, "µs": 1.0, "ms": 1000.0, "s": 1e6, "ns": 1e-3}


def parse_latency(text) -> tuple[str, str, float]:
    """``p99=2ms``, ``read:p99.9=5000us``, ``write:mean=1ms`` -> (ios, percentile, us)."""
    m = re.fullmatch(
        r"\s*(?:(read|write|all)\s*:\s*)?(p[0-9.]+|mean|max)\s*[=<]=?\s*([0-9.]+)\s*(us|µs|ms|s|ns)?\s*",
        str(text).lower(),
    )
    if not m:
        raise _bad("max_latency", f"{text!r}: write it as p99=2ms, p99.9=5000us or read:p99=1ms")
    kind, key, val, unit = m.group(1) or "all", m.group(2), float(m.group(3)), m.group(4) or "us"
    if key not in LATENCY_KEYS:
        raise _bad("max_latency", f"{text!r}: the simulator reports {', '.join(LATENCY_KEYS)}")
    us = val * _TIME_UNITS[unit]
    if us <= 0:
        raise _bad("max_latency", f"{text!r}: the bound must be positive")
    return kind, key, us
