"""``fit(profile)``: the synthetic workload (uniform, hot-cold or zipf, in opsim's own
``[workload]`` schema and in ``--skew`` notation) that best explains a trace's write counts.

The finite-sample correction: a trace of N block writes over a domain of M blocks does not
show the model's infinite-sample curve.  Under uniform writes with N = M, a third of the
domain is never written and the rest is written 1, 2, 3... times (Poisson), which looks
skewed.  So each candidate is compared through what it is *expected* to produce for the
trace's own N: a block of a class whose share of the writes is p is written Poisson(N p)
times (the binomial's limit), and the expected histogram of write counts (blocks written k
times, k >= 1: the blocks written 0 times are invisible in a trace) and the curve it implies
are what the trace is fitted against.  The domain M is a parameter too, between the blocks
written and the trace's span: it is the number of blocks the workload would write given
time, which the trace shows only through how many blocks it wrote once, twice...

Estimation is by maximum likelihood of the histogram (counts per bucket Poisson around
their expectation; scipy.optimize from several starts); the error of a fit is the largest
gap, in share of writes, between the trace's write-frequency curve and the expected one
(both from the same count buckets).  The kind with the smallest error is chosen, uniform
when it is within :data:`UNIFORM_MARGIN` of the best (the simplest model that fits).
docs/workloads.md, "Profiling a trace", has the definitions and the acceptance tests.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import optimize, special

from ..workload import parse_skew
from .profile import TraceProfile

#: write counts 1..EXACT each have their own bucket; above, BUCKETS_PER_OCTAVE per doubling
EXACT = 32
BUCKETS_PER_OCTAVE = 4
#: uniform is chosen when its error is within this (share of writes) of the best fit's
UNIFORM_MARGIN = 0.005
#: zipf ranks below this are classes of their own; above, ranks are grouped by ZIPF_GROUP
ZIPF_EXACT = 256
ZIPF_GROUP = 1.02
ZIPF_MAX_EXPONENT = 3.0

KINDS = ("uniform", "hot-cold", "zipf")


@dataclass(frozen=True)
class WorkloadFit:
    """The fitted workload.

    ``kind``: uniform, hot-cold or zipf.  ``skew``: ``--skew`` notation (``hot-cold:20/80``,
    ``zipf:0.9``, ``uniform``).  ``workload``: the ``[workload]`` keys (``type``,
    ``hot_fraction``/``hot_write_fraction`` or ``zipf_exponent``, and ``span``: the fitted
    domain as a fraction of the trace's span, which ``remap = "scale"`` maps onto the drive).
    ``error``: the largest gap between the trace's curve and the fitted one, in share of
    writes (0.01 = 1 point).  ``domain_blocks``: the fitted M.  ``candidates``: every kind's
    parameters and error."""

    kind: str
    skew: str
    workload: dict
    error: float
    domain_blocks: int
    candidates: dict = field(default_factory=dict)
    #: the curve the fit is expected to produce for the trace's writes: (share of written
    #: blocks, share of writes) at the count buckets' edges, hottest first
    curve: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "skew": self.skew,
            "workload": self.workload,
            "error": self.error,
            "domain_blocks": self.domain_blocks,
            "candidates": self.candidates,
            "curve": self.curve,
        }


# ---- the histogram in buckets ------------------------------------------------------------


def _edges(kmax: int) -> np.ndarray:
    """Lower bounds of the count buckets; the last bucket is open above."""
    e = list(range(1, EXACT + 1))
    x = EXACT + 1
    step = 2 ** (1 / BUCKETS_PER_OCTAVE)
    while x <= kmax:
        e.append(x)
        x = max(x + 1, math.ceil(x * step))
    return np.array(e, dtype=float)


def _observed(counts: list[tuple[int, int]], lows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Blocks and writes per bucket."""
    k = np.array([c for c, _ in counts], dtype=float)
    b = np.array([n for _, n in counts], dtype=float)
    idx = np.searchsorted(lows, k, side="right") - 1
    blocks = np.bincount(idx, weights=b, minlength=len(lows))
    writes = np.bincount(idx, weights=b * k, minlength=len(lows))
    return blocks, writes


def _expected_blocks(m: np.ndarray, lam: np.ndarray, lows: np.ndarray) -> np.ndarray:
    """Expected blocks per bucket of classes of ``m`` blocks each written Poisson(``lam``)
    times (the likelihood's part of :func:`_expected`)."""
    s1 = np.where(lows - 1 < 0, 1.0, special.pdtrc(np.maximum(lows - 1, 0), lam[:, None]))
    p_blocks = s1 - np.hstack([s1[:, 1:], np.zeros((len(lam), 1))])
    return (m[:, None] * p_blocks).sum(axis=0)


def _expected(m: np.ndarray, lam: np.ndarray, lows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Expected blocks and writes per bucket of classes of ``m`` blocks each written
    Poisson(``lam``) times.  k pmf(k; l) = l pmf(k - 1; l) gives the writes."""
    lam = lam[:, None]

    def sf(k: np.ndarray) -> np.ndarray:  # P(X > k), k = -1, 0, 1, ...
        return np.where(k < 0, 1.0, special.pdtrc(np.maximum(k, 0), lam))

    # P(lo <= X < next lo), the last bucket open above
    s1, s2 = sf(lows - 1), sf(lows - 2)
    zero = np.zeros((lam.shape[0], 1))
    p_blocks = s1 - np.hstack([s1[:, 1:], zero])
    p_writes = s2 - np.hstack([s2[:, 1:], zero])
    blocks = (m[:, None] * p_blocks).sum(axis=0)
    writes = (m[:, None] * lam * p_writes).sum(axis=0)
    return blocks, writes


def _nll(obs: np.ndarray, exp: np.ndarray) -> float:
    e = np.maximum(exp, 1e-300)
    return float(np.sum(e - obs * np.log(e)))


def _curve(blocks: np.ndarray, writes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The curve's vertices (hottest bucket first), linear within a bucket."""
    b, w = blocks[::-1], writes[::-1]
    x = np.concatenate([[0.0], np.cumsum(b)]) / max(b.sum(), 1e-300)
    y = np.concatenate([[0.0], np.cumsum(w)]) / max(w.sum(), 1e-300)
    return x, y


def curve_error(obs: tuple[np.ndarray, np.ndarray], exp: tuple[np.ndarray, np.ndarray]) -> float:
    """The largest vertical gap between the two curves (share of writes)."""
    xo, yo = _curve(*obs)
    xe, ye = _curve(*exp)
    xs = np.union1d(xo, xe)
    return float(np.max(np.abs(np.interp(xs, xo, yo) - np.interp(xs, xe, ye))))


# ---- the candidate models: classes of (blocks, Poisson rate) -------------------------------


def _hot_cold_classes(f: float, r: float, m: float, n: float) -> tuple[np.ndarray, np.ndarray]:
    mh, mc = f * m, (1 - f) * m
    return np.array([mh, mc]), np.array([r * n / mh, (1 - r) * n / mc])


def _zipf_classes(s: float, m: int, n: float) -> tuple[np.ndarray, np.ndarray]:
    """Ranks 1..m with weight rank^-s: the first ZIPF_EXACT alone, then groups of ranks
    growing by ZIPF_GROUP (the weight of a group by the midpoint integral)."""
    k0 = min(m, ZIPF_EXACT)
    ranks = np.arange(1, k0 + 1, dtype=float)
    sizes = [np.ones(k0)]
    mass = [ranks**-s]
    if m > k0:
        g = math.ceil(math.log(m / k0) / math.log(ZIPF_GROUP)) + 1
        bounds = np.unique(np.minimum(np.floor(k0 * ZIPF_GROUP ** np.arange(g + 1)), m)).astype(float) + 1
        a, b = bounds[:-1], bounds[1:]
        if abs(s - 1) < 1e-9:
            integ = np.log((b - 0.5) / (a - 0.5))
        else:
            integ = ((b - 0.5) ** (1 - s) - (a - 0.5) ** (1 - s)) / (1 - s)
        sizes.append(b - a)
        mass.append(integ)
    size, w = np.concatenate(sizes), np.concatenate(mass)
    return size, n * (w / w.sum()) / size


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(min(x, 700), -700)))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def _best(objective, starts) -> optimize.OptimizeResult:
    best = None
    for x0 in starts:
        r = optimize.minimize(
            objective, x0, method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-2, "maxiter": 1000}
        )
        if best is None or r.fun < best.fun:
            best = r
    assert best is not None
    return best


def _fit_kinds(p: TraceProfile) -> dict:
    counts = p.write_counts
    n = float(sum(k * b for k, b in counts))
    w = float(p.written_blocks)
    top = float(max(p.span_blocks, p.written_blocks))
    lows = _edges(max(k for k, _ in counts))
    obs = _observed(counts, lows)

    def domain(c: float) -> float:  # W .. span
        return w + (top - w) * _sigmoid(c)

    def c_of(m: float) -> float:
        if top <= w:
            return 0.0
        return _logit(min(max((m - w) / (top - w), 1e-9), 1 - 1e-9))

    # a start for the domain: the uniform M whose expected blocks written equal W.  When the
    # writes are many per block (N / W above ~28), M = W already expects W blocks written to
    # within rounding (1 - e^(-N/W) rounds to 1): there is no root above W to bracket, M = W.
    m0 = w

    def written(m: float) -> float:
        return m * -math.expm1(-n / m) - w

    if n > w and written(w * (1 + 1e-12)) < 0:
        m0 = optimize.brentq(written, w * (1 + 1e-12), max(w * 1e6, n * 10))
    m0 = min(m0, top)
    out: dict = {}

    def uni(c):
        m, lam = np.array([domain(c[0])]), np.array([n / domain(c[0])])
        return _nll(obs[0], _expected_blocks(m, lam, lows))

    r = _best(uni, [[c_of(m0)], [c_of(min(top, 2 * m0))]])
    m = domain(r.x[0])
    out["uniform"] = {
        "params": {},
        "domain_blocks": m,
        "nll": r.fun,
        "exp": _expected(np.array([m]), np.array([n / m]), lows),
    }

    def hc(x):
        f, rr = _sigmoid(x[0]), _sigmoid(x[1])
        return _nll(obs[0], _expected_blocks(*_hot_cold_classes(f, rr, domain(x[2]), n), lows))

    starts = [[_logit(f), _logit(rr), c_of(m0)] for f, rr in ((0.05, 0.5), (0.2, 0.8), (0.4, 0.6))]
    r = _best(hc, starts)
    f, rr, m = _sigmoid(r.x[0]), _sigmoid(r.x[1]), domain(r.x[2])
    if rr < f:  # the hotter class is the "hot" one
        f, rr = 1 - f, 1 - rr
    out["hot-cold"] = {
        "params": {"hot_fraction": f, "hot_write_fraction": rr},
        "domain_blocks": m,
        "nll": r.fun,
        "exp": _expected(*_hot_cold_classes(f, rr, m, n), lows),
    }

    def zf(x):
        s = ZIPF_MAX_EXPONENT * _sigmoid(x[0])
        return _nll(obs[0], _expected_blocks(*_zipf_classes(s, round(domain(x[1])), n), lows))

    s_of = lambda s: _logit(s / ZIPF_MAX_EXPONENT)  # noqa: E731
    r = _best(zf, [[s_of(s), c_of(m0)] for s in (0.5, 1.1)])
    s, m = ZIPF_MAX_EXPONENT * _sigmoid(r.x[0]), domain(r.x[1])
    out["zipf"] = {
        "params": {"zipf_exponent": s},
        "domain_blocks": m,
        "nll": r.fun,
        "exp": _expected(*_zipf_classes(s, round(m), n), lows),
    }
    for v in out.values():
        exp = v.pop("exp")
        v["error"] = curve_error(obs, exp)
        x, y = _curve(*exp)
        v["curve"] = [(float(a), float(b)) for a, b in zip(x, y)]
    return out


def _pct(x: float) -> str:
    return format(round(min(max(100 * x, 0.1), 99.9), 1), "g")


def skew_notation(kind: str, params: dict) -> str:
    """``--skew`` text of a fit (what ``opsim advise --skew`` parses)."""
    if kind == "hot-cold":
        return f"hot-cold:{_pct(params['hot_fraction'])}/{_pct(params['hot_write_fraction'])}"
    if kind == "zipf":
        return f"zipf:{max(round(params['zipf_exponent'], 2), 0.01):g}"
    return "uniform"


def fit(profile: TraceProfile) -> WorkloadFit:
    """Fit uniform, hot-cold and zipf to ``profile``'s write counts (see the module's doc)
    and return the best, with every candidate in ``candidates``."""
    cands = _fit_kinds(profile)
    best = min(KINDS, key=lambda k: cands[k]["error"])
    if cands["uniform"]["error"] <= cands[best]["error"] + UNIFORM_MARGIN:
        best = "uniform"
    c = cands[best]
    skew = skew_notation(best, c["params"])
    parsed = parse_skew(skew)  # the notation must read back as this fit
    assert parsed["skew"] == best, (skew, parsed)
    span = min(1.0, c["domain_blocks"] / max(profile.span_blocks, 1))
    workload = {"type": best, **{k: round(v, 4) for k, v in c["params"].items()}, "span": round(span, 6)}
    return WorkloadFit(
        kind=best,
        skew=skew,
        workload=workload,
        error=c["error"],
        domain_blocks=round(c["domain_blocks"]),
        curve=c["curve"],
        candidates={
            k: {
                "skew": skew_notation(k, v["params"]),
                **v["params"],
                "domain_blocks": round(v["domain_blocks"]),
                "error": v["error"],
            }
            for k, v in cands.items()
        },
    )
