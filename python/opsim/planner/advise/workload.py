"""The workload the advisor plans for: read/write mix, transfer size (or JESD219's sizes),
random/sequential mix, skew, host writes per day; and the zipf skew's page classes."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from ..capacity import (
    GB,
)

#: JEDEC JESD219 enterprise endurance workload: transfer sizes and their share of IOs
#: (JESD219, Sept. 2010, as summarised by Tom's Hardware/Seagate, "SSD Endurance: Endurance
#: Workloads"; the LBA zones are :func:`opsim.models.jesd219_classes`).
JESD219_SIZES = (
    (512, 0.04),
    (1024, 0.01),
    (1536, 0.01),
    (2048, 0.01),
    (2560, 0.01),
    (3072, 0.01),
    (3584, 0.01),
    (4096, 0.67),
    (8192, 0.10),
    (16384, 0.07),
    (32768, 0.03),
    (65536, 0.03),
)


@dataclass
class Workload:
    read_fraction: float = 0.0
    block_size: int | None = 4096  # None: the JESD219 size mix
    sequential: float = 0.0  # share of the writes that are sequential
    skew: str = "uniform"  # uniform | hot-cold | zipf | jesd219
    hot_fraction: float | None = None
    hot_write_fraction: float | None = None
    zipf_exponent: float | None = None
    write_rate: int | None = None  # host bytes per day
    _classes: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def write_fraction(self) -> float:
        return 1.0 - self.read_fraction

    @property
    def skewed(self) -> bool:
        return self.skew != "uniform"

    def sizes(self) -> list[tuple[int, float]]:
        if self.block_size is None:
            return list(JESD219_SIZES)
        return [(self.block_size, 1.0)]

    def describe(self) -> str:
        rw = f"{100 * self.read_fraction:g}:{100 * self.write_fraction:g} read:write"
        size = "JESD219 transfer sizes (0.5-64 KiB)" if self.block_size is None else _fmt_size(self.block_size)
        if self.skew == "uniform":
            sk = "uniform over the LBAs"
        elif self.skew == "hot-cold":
            assert self.hot_fraction is not None and self.hot_write_fraction is not None  # set with the skew
            sk = f"hot/cold: {100 * self.hot_write_fraction:g}% of writes to {100 * self.hot_fraction:g}% of the LBAs"
        elif self.skew == "zipf":
            sk = f"zipf s = {self.zipf_exponent:g}"
        else:
            sk = "JESD219 zones (50% of IOs to 5% of the LBAs, 30% to 15%, 20% to 80%)"
        seq = (
            "random"
            if self.sequential == 0
            else "sequential"
            if self.sequential == 1
            else f"{100 * self.sequential:g}% of writes sequential, the rest random"
        )
        s = f"{size} {seq}, {rw}, {sk}"
        if self.write_rate:
            s += f", {self.write_rate / GB:g} GB written per day"
        return s

    def classes(self, user_pages: int) -> list[tuple[float, float]] | None:
        """The LBA classes [(share of LBAs, share of writes)] of the random writes, or None
        for uniform."""
        from ... import models

        if self.skew == "uniform":
            return None
        if self.skew == "hot-cold":
            f, r = self.hot_fraction, self.hot_write_fraction
            assert f is not None and r is not None  # set with the skew
            return [(f, r), (1 - f, 1 - r)] if 0 < f < 1 else None
        if self.skew == "jesd219":
            return models.jesd219_classes()
        if user_pages not in self._classes:
            assert self.zipf_exponent is not None  # the remaining skew, zipf, sets it
            self._classes[user_pages] = zipf_classes(self.zipf_exponent, user_pages)
        return self._classes[user_pages]

    def pages_per_io(self, page: int) -> float:
        """Mapping units a command touches (reads and writes alike), with the simulator's
        alignment: a single transfer size is aligned to min(size, page) (its default
        ``align``); in the JESD219 mix, transfers of 4 KiB and up are 4 KiB-aligned and
        smaller ones start on any 512-byte sector (as the core's jesd219 type)."""
        if self.block_size is None:
            return sum(p * _units_touched(s, page, 4096 if s >= 4096 else 512) for s, p in JESD219_SIZES)
        return _units_touched(self.block_size, page, min(self.block_size, page))

    def bytes_per_io(self) -> float:
        return sum(s * p for s, p in self.sizes())

    def mix_chunks(self, page: int, ppb: int) -> tuple[int, int]:
        """The core's interleaved random/sequential pattern (``type = "sk-hynix"``): one FTL
        block of sequential writes, then the random bytes that keep the asked share."""
        seq = ppb * page
        bs = self.block_size
        assert bs is not None  # a random/sequential mix has one transfer size (the advisor checks)
        rnd = max(bs, round(seq * (1 - self.sequential) / self.sequential / bs) * bs)
        return seq, rnd

    def sim_workload(self, page: int, ppb: int) -> dict:
        w: dict = {"read_fraction": self.read_fraction}
        if self.sequential >= 1:
            w["type"] = "sequential"
        elif self.sequential > 0:
            seq, rnd = self.mix_chunks(page, ppb)
            w.update(type="sk-hynix", sequential_chunk=seq, random_chunk=rnd, sequential_request_size=self.block_size)
        elif self.skew == "jesd219":
            w["type"] = "jesd219"
        elif self.skew == "hot-cold":
            w.update(type="hot-cold", hot_fraction=self.hot_fraction, hot_write_fraction=self.hot_write_fraction)
        elif self.skew == "zipf":
            w.update(type="zipf", zipf_exponent=self.zipf_exponent)
        else:
            w["type"] = "uniform"
        if self.block_size is not None:
            w["request_size"] = self.block_size
        return w

    def to_dict(self) -> dict:
        return {
            "read_fraction": self.read_fraction,
            "write_fraction": self.write_fraction,
            "block_size": self.block_size,
            "sizes": self.sizes(),
            "sequential_fraction": self.sequential,
            "skew": self.skew,
            "hot_fraction": self.hot_fraction,
            "hot_write_fraction": self.hot_write_fraction,
            "zipf_exponent": self.zipf_exponent,
            "write_rate_bytes_per_day": self.write_rate,
            "description": self.describe(),
        }


def _units_touched(size: int, page: int, align: int) -> float:
    """Mean mapping units spanned by a ``size``-byte transfer at a random ``align``-aligned
    offset (every offset modulo the page equally likely)."""
    step = math.gcd(align, page)
    offs = range(0, page, step)
    return sum((o + size - 1) // page + 1 for o in offs) / len(offs)


def _fmt_size(n: int) -> str:
    for u, m in (("MiB", 2**20), ("KiB", 1024)):
        if n % m == 0:
            return f"{n // m} {u}"
    return f"{n} B"


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
    import numpy as np

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
