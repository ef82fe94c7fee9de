"""The workload notation: a read:write mix (``70:30``) and a skew (``uniform``,
``hot-cold:20/80``, ``zipf:0.8``) as the advisor's ``--read-write``/``--skew``, ``opsim trace
synth --skew`` and a trace profile's fit write them.  Errors name the option (``--skew: ...``)."""

from __future__ import annotations

import math
import re

from ..errors import option_error as _bad


def parse_read_write(text) -> float:
    """``95:5`` (read:write) -> read fraction 0.95; ``70/30`` and ``R:W`` with any scale."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*[:/]\s*([0-9.]+)\s*", str(text))
    if not m:
        raise _bad("read_write", f"{text!r} is not a read:write ratio (examples: 0:100, 70:30, 95:5)")
    r, w = float(m.group(1)), float(m.group(2))
    if r < 0 or w < 0 or r + w == 0:
        raise _bad("read_write", f"{text!r}: both parts must be >= 0 and not both 0")
    if w == 0:
        raise _bad(
            "read_write",
            f"{text!r} has no writes; over-provisioning only changes how writes "
            "are garbage-collected, so a read-only workload needs none",
        )
    return r / (r + w)


def parse_skew(text) -> dict:
    """``uniform``, ``hot-cold:20/80`` (20% of the LBAs take 80% of the writes) or ``zipf:1.0``."""
    s = str(text).strip().lower()
    if s in ("uniform", "none", "random"):
        return {"skew": "uniform"}
    if s in ("jesd219", "jedec"):
        raise _bad("skew", "JESD219 is a whole profile (sizes and zones): use --profile jesd219")
    m = re.fullmatch(r"hot-?cold:\s*([0-9.]+)%?\s*/\s*([0-9.]+)%?", s)
    if m:
        f, r = float(m.group(1)) / 100, float(m.group(2)) / 100
        if not (0 < f < 1 and 0 < r < 1):
            raise _bad("skew", f"{text!r}: hot-cold:F/R needs 0 < F, R < 100 (percent of LBAs / of writes)")
        return {"skew": "hot-cold", "hot_fraction": f, "hot_write_fraction": r}
    m = re.fullmatch(r"zipf:\s*([0-9.]+)", s)
    if m:
        z = float(m.group(1))
        if not (z > 0 and math.isfinite(z)):
            raise _bad("skew", f"{text!r}: the zipf exponent must be > 0")
        return {"skew": "zipf", "zipf_exponent": z}
    raise _bad("skew", f"{text!r} is not a skew; use uniform, hot-cold:20/80 or zipf:0.9 (JESD219: --profile jesd219)")
