"""Analytic write-amplification models: the oracles the simulator is validated against.

All models assume uniform random single-page writes (or, for the LRW hot/cold model,
uniform within each class) on a page-mapped FTL in steady state, with ``alpha`` =
physical pages in circulation / user pages = 1 + OP (user basis), ``rho`` = 1 / alpha the
load, and ``b`` pages per block.

| function                 | policy          | source                                              |
|--------------------------|-----------------|-----------------------------------------------------|
| ``waf_random``           | random victim   | (1 + OP) / OP; Van Houdt 2013 (d = 1)               |
| ``waf_fifo``             | FIFO / LRW      | Desnoyers 2012, Lambert-W closed form               |
| ``waf_lrw_classes``      | FIFO, hot/cold  | Desnoyers 2012, non-uniform LRW model               |
| ``waf_dchoices``         | d-choices       | Van Houdt 2013 mean-field fixed point               |
| ``waf_greedy``           | greedy          | mean-field limit d -> inf of Van Houdt 2013; the    |
|                          |                 | large-N regime of Bux and Iliadis 2010              |

References:
  P. Desnoyers, "Analytic modeling of SSD write performance", SYSTOR 2012 (ACM TOS 2014).
  B. Van Houdt, "A mean field model for a class of garbage collection algorithms in
  flash-based solid state drives", SIGMETRICS 2013.
  W. Bux and I. Iliadis, "Performance of greedy garbage collection in flash-based
  solid-state drives", Performance Evaluation 67(11), 2010.
  X.-Y. Hu et al., "Write amplification analysis in flash-based solid state drives",
  SYSTOR 2009 (windowed greedy; the IBM Zurich chart in the AnandTech article).

The derivations are in docs/models.md.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import lambertw

from .errors import InputError


def _check_op(op: float) -> float:
    op = float(op)
    if not (op > 0 and math.isfinite(op)):
        raise InputError(f"op: {op} must be a positive fraction (user basis)", key="op")
    return op


def _check_b(b: int) -> int:
    if int(b) != b or b < 2:
        raise InputError(f"pages_per_block: {b} must be an integer >= 2", key="pages_per_block")
    return int(b)


def waf_random(op: float) -> float:
    """Random victim selection: the victim holds the average valid fraction rho."""
    op = _check_op(op)
    return (1 + op) / op


def fifo_victim_fraction(op: float) -> float:
    """FIFO/LRW victim valid fraction x = -W(-alpha e^-alpha) / alpha (principal branch)."""
    alpha = 1 + _check_op(op)
    return float(-lambertw(-alpha * math.exp(-alpha), 0).real / alpha)


def waf_fifo(op: float) -> float:
    """FIFO / least-recently-written (Desnoyers 2012): WA = 1 / (1 - x)."""
    return 1.0 / (1.0 - fifo_victim_fraction(op))


def waf_lrw_classes(op: float, classes: Iterable[tuple[float, float]]) -> float:
    """FIFO/LRW with non-uniform traffic: ``classes`` = [(f_i, r_i)], the fraction of the LBA
    space and the fraction of writes of each class (each summing to 1).

    A page of class i survives one pass of the log with probability exp(-t r_i / f_i), t the
    host writes per pass over user pages; every host write of class i costs 1/(1 - s_i)
    page programs, so  sum_i r_i t / (1 - exp(-t r_i / f_i)) = alpha  and  WA = alpha / t.
    With one class this is the Lambert-W form of :func:`waf_fifo`.
    """
    alpha = 1 + _check_op(op)
    cls = [(float(f), float(r)) for f, r in classes]
    if not cls or any(f <= 0 or r < 0 for f, r in cls):
        raise InputError("classes: each class needs f > 0 and r >= 0", key="classes")
    if abs(sum(f for f, _ in cls) - 1) > 1e-9 or abs(sum(r for _, r in cls) - 1) > 1e-9:
        raise InputError("classes: the f_i and the r_i must each sum to 1", key="classes")

    def writes_per_pass(t):
        tot = 0.0
        for f, r in cls:
            if r == 0:
                continue
            k = t * r / f
            tot += r * t / -math.expm1(-k)
        return tot - alpha

    # writes_per_pass is increasing in t, equals 1 - alpha < 0 as t -> 0
    hi = 1.0
    while writes_per_pass(hi) < 0:
        hi *= 2
    t = brentq(writes_per_pass, 1e-12, hi, xtol=1e-15, rtol=1e-14)
    # every host write programs its page: WA >= 1; a class that takes every write over a
    # sliver of the LBAs has WA 1 + (far below the root's tolerance), which can round below 1
    return max(1.0, alpha / t)


def jesd219_classes() -> list[tuple[float, float]]:
    """JEDEC JESD219 enterprise endurance workload LBA zones: 50% of accesses to the first 5%
    of LBAs, 30% to the next 15%, 20% to the remaining 80%."""
    return [(0.05, 0.50), (0.15, 0.30), (0.80, 0.20)]


@functools.lru_cache(maxsize=8)
def _greedy_terms(b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What the greedy fixed point takes of ``b`` alone, for every candidate j* at once:
    ``j* + 1``, ``b - j* - 1`` and ``H_b - H_{j*+1}`` (H_n harmonic numbers), read-only;
    remembered for the few ``b`` a run sees (a superblock's b is in the hundreds of
    thousands: these are most of a figure's cost)."""
    h = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, b + 1))])  # h[n] = H_n
    jss = np.arange(b)
    terms = (jss + 1, b - jss - 1, h[b] - h[jss + 1])
    for t in terms:
        t.setflags(write=False)
    return terms


def _greedy_root(op: float, b: int) -> tuple[int, float, float]:
    """(j*, q, rho) of greedy's mean-field fixed point (:func:`greedy_occupancy`)."""
    op, b = _check_op(op), _check_b(b)
    rho = 1.0 / (1.0 + op)
    j1, bj, tail = _greedy_terms(b)
    # the smallest j* whose q is in (0, 1], all candidates at once (the same arithmetic per j*)
    dens = rho * b / j1 - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        qs = (bj - rho * b * tail) / dens
    ok = np.flatnonzero((dens != 0) & (qs > 0) & (qs <= 1 + 1e-12))
    for js in ok[:1].tolist():
        q = float(qs[js])
        if 0 < q <= 1 + 1e-12:
            return js, q, rho
    raise InputError(f"no greedy mean-field solution for op={op}, b={b}", key="op")


def greedy_occupancy(op: float, b: int) -> tuple[np.ndarray, float]:
    """Mean-field steady state of greedy GC: (x, WA) with x[j] the fraction of blocks holding
    j valid pages.

    With c = (b - E[V]) / (rho b), the fixed point of the mean-field model is
    c j x_j = P(V < j).  Greedy takes its victims from a single level j*+1 except for a
    fraction q that it takes at j* the moment a block drops there, so
    x_j = 1 / (c j) for j >= j*+2, x_{j*+1} = q / (c (j*+1)), and normalisation and the
    mass sum_j j x_j = rho b fix j*, q and c.  WA = b / (b - (j* + 1 - q)).
    """
    js, q, rho = _greedy_root(op, b)
    b = _check_b(b)
    c = (q + b - js - 1) / (rho * b)
    x = np.zeros(b + 1)
    x[js + 1] = q / (c * (js + 1))
    j = np.arange(js + 2, b + 1)
    x[js + 2 :] = 1.0 / (c * j)
    return x, b / (b - (js + 1 - q))


@functools.lru_cache(maxsize=4096)
def waf_greedy(op: float, b: int) -> float:
    """Greedy GC, mean-field (N -> infinity) write amplification.  Remembered per (op, b): a
    superblock drive's b is in the hundreds of thousands and one figure costs ~20 ms, and the
    advisor asks for the same grid again for each fleet size it weighs (``opsim advise
    --compare``); the occupancy itself is not built."""
    js, q, _ = _greedy_root(op, b)
    b = _check_b(b)
    return b / (b - (js + 1 - q))


def dchoices_occupancy(op: float, b: int, d: int) -> tuple[np.ndarray, float]:
    """Mean-field fixed point of d-choices GC (Van Houdt 2013).

    P(V >= j) = S_j^d with S_j = sum_{k >= j} x_k.  From c j x_j = 1 - S_j^d, going down from
    j = b, each S_j solves  S_j + S_j^d / (c j) = S_{j+1} + 1 / (c j);  c is then fixed by the
    mass  sum_{j >= 1} S_j = rho b.  WA = b / (b - sum_j S_j^d).
    """
    op, b = _check_op(op), _check_b(b)
    if int(d) != d or d < 1:
        raise InputError(f"d: {d} must be an integer >= 1", key="d")
    d = int(d)
    rho = 1.0 / (1.0 + op)

    def tails(c):
        s = np.zeros(b + 2)
        for j in range(b, 0, -1):
            k = 1.0 / (c * j)
            rhs = s[j + 1] + k
            g = lambda v, k=k, rhs=rhs: v + k * v**d - rhs  # noqa: E731
            lo = s[j + 1]
            s[j] = lo if g(lo) >= 0 else brentq(g, lo, 1.0, xtol=1e-15, rtol=1e-15)
        return s

    mass = lambda c: tails(c)[1 : b + 1].sum() - rho * b  # noqa: E731  decreasing in c
    c = brentq(mass, 1e-9, 1.0 / rho, xtol=1e-14, rtol=1e-13)
    s = tails(c)
    x = np.empty(b + 1)
    x[0] = 1.0 - s[1]
    x[1:] = s[1 : b + 1] - s[2 : b + 2]
    ev = float(np.sum(s[1 : b + 1] ** d))
    return x, b / (b - ev)


def waf_dchoices(op: float, b: int, d: int) -> float:
    return dchoices_occupancy(op, b, d)[1]


def waf(
    policy: str, op: float, b: int = 256, d: int | None = None, classes: Sequence[tuple[float, float]] | None = None
) -> float:
    """The analytic WA of ``policy`` ('greedy', 'fifo', 'random', 'd-choices')."""
    if policy == "greedy":
        return waf_greedy(op, b)
    if policy == "fifo":
        return waf_lrw_classes(op, classes) if classes else waf_fifo(op)
    if policy == "random":
        return waf_random(op)
    if policy == "d-choices":
        if d is None:
            raise InputError("d: required for d-choices", key="d")
        return waf_dchoices(op, b, d)
    raise InputError(f"policy: no analytic model for {policy!r}", key="policy")
