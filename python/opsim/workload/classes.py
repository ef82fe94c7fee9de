"""A skew's LBA classes [(share of the LBAs, share of the writes)] for the non-uniform LRW model
(:func:`opsim.models.waf_lrw_classes`): zipf as log-spaced rank bins, JESD219's zones."""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..models import jesd219_classes

__all__ = ["jesd219_classes", "zipf_classes"]


def _gen_harmonic(n: int, s: float, head) -> float:
    """sum_{i=1}^{n} i^-s: exact from the prefix sums ``head`` (head[k] = sum up to k), the
    Euler-Maclaurin expansion beyond them."""
    m = len(head) - 1
    if n <= m:
        return float(head[n])
    integral = math.log(n / m) if s == 1 else (n ** (1 - s) - m ** (1 - s)) / (1 - s)
    em = (n**-s - m**-s) / 2 - s * (n ** (-s - 1) - m ** (-s - 1)) / 12
    return float(head[m]) + integral + em


def zipf_classes(s: float, n: int, bins: int = 48) -> list[tuple[float, float]]:
    """Zipf(s) over ``n`` pages (rank 1 = hottest) as LBA classes for the non-uniform LRW
    model: log-spaced rank bins, each with its share of the LBAs and of the writes."""
    m = min(n, 100_000)
    head = np.concatenate([[0.0], np.cumsum(np.arange(1, m + 1, dtype=float) ** -s)])
    edges = sorted({0, *(round(n ** (k / bins)) for k in range(1, bins + 1)), n})
    total = _gen_harmonic(n, s, head)
    out = []
    prev_h = 0.0
    for a, b in itertools.pairwise(edges):
        if b <= a:
            continue
        h = _gen_harmonic(b, s, head)
        out.append(((b - a) / n, (h - prev_h) / total))
        prev_h = h
    # normalise rounding.  A bin whose share of the writes underflows to 0 (the coldest ranks
    # of a steep zipf) is kept: its LBAs are static data, and dropping it left the LBA shares
    # summing to less than 1 (zipf:3 was refused by the LRW model)
    fs, rs = sum(f for f, _ in out), sum(r for _, r in out)
    return [(f / fs, r / rs) for f, r in out]
