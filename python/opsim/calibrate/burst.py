"""A client datasheet's writes are bursts into an SLC cache: the native array's own write rate,
which no burst pins, as a share of the burst rate, from published drives (docs/calibrate.md,
"A datasheet of bursts").

A client TLC drive writes its bursts in SLC mode (Samsung's TurboWrite, SanDisk's nCache, every
"pseudo-SLC cache"): its datasheet's sequential and fresh-out-of-box random writes are the SLC
cache's rates.  Its steady state is not: once the cache is full the drive writes "directly to
TLC flash" (TechPowerUp's reviews, below), at the native array's rate.  So a calibration from such
a datasheet fits the SLC-mode program time (``timing.t_prog_slc_us``) to the bursts, and the
native program time (``timing.t_prog_us``) is the burst rate times a share no figure of the
datasheet pins: the prior here.

Each entry of :data:`SHARES` is one published pair of a TLC drive's write rate in its SLC cache
and after it (the vendor's own pair, or a reviewer's measurement of a sequential write past the
cache).  The prior is log-normal on the share: its centre the geometric mean of the entries, its
width the spread of one more drive about it (:func:`.population.one_more`), computed here, never
typed in.  QLC drives are left out (two entries, 0.03 and 0.30, make no prior): a QLC datasheet of
bursts keeps its bursts as the array's rate.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from functools import cache

from .population import one_more

TPU = (
    "TechPowerUp review, 'pSLC Cache / Write Intensive Usage' (a sequential write of 1 MB blocks over the whole drive)"
)
SAMSUNG_SUMMIT = (
    "Samsung SSD Global Summit 2013 as reported by The SSD Review, 'Samsung TurboWrite Adds Up To 3X Speed to 840 "
    "EVO SSDs', https://www.thessdreview.com/daily-news/latest-buzz/samsung-turbowrite-increases-low-capacity-840-"
    "evo-performance-by-3x/"
)


@dataclass(frozen=True)
class Share:
    """One TLC drive's write rate in its SLC cache (``burst``) and past it (``native``), MB/s."""

    drive: str
    burst: float
    native: float
    source: str

    @property
    def share(self) -> float:
        return self.native / self.burst


#: every published pair found: a client TLC drive's write rate in and past its SLC cache
SHARES: tuple[Share, ...] = (
    Share(
        "Samsung 840 EVO 120 GB",
        410,
        140,
        f"{SAMSUNG_SUMMIT}: 'up to 140MB/s ... the new EVO will increase to 410MB/s'",
    ),
    Share("Samsung 840 EVO 250 GB", 520, 270, f"{SAMSUNG_SUMMIT}: 'the 250GB jumps from 270MB/s to 520MB/s'"),
    Share(
        "SanDisk Ultra II 240 GB",
        400,
        230,
        "AnandTech, 'SanDisk Ultra II (240GB) SSD Review' (Kristian Vättö, 2014), https://www.anandtech.com/show/"
        "8520/sandisk-ultra-ii-240gb-ssd-review, the nCache 2.0 page (as copied at http://www.technorevealer.com/"
        "sandisk-nand/): 'after that the performance drops from 400MB to ~230MB/s' (HD Tach, sequential)",
    ),
    Share(
        "ADATA XPG Atom 50 1 TB",
        4500,
        2000,
        f"{TPU}, https://techpowerup.com/review/adata-xpg-atom-50-1-tb/6.html: 'starts out at over 4.5 GB/s' ... "
        "'write directly to TLC flash, which makes write rates drop to roughly 2 GB/s'",
    ),
    Share(
        "MSI Spatium M480 Play 2 TB",
        5000,
        3500,
        f"{TPU}, https://techpowerup.com/review/msi-spatium-m480-play-2-tb/6.html: 'starts out at above 5 GB/s' ... "
        "'still getting well over 3.5 GB/s'",
    ),
    Share(
        "Lexar NM800 Pro 2 TB",
        3500,
        2200,
        f"{TPU}, https://techpowerup.com/review/lexar-nm800-pro-heatsink-2-tb/6.html: 'starts at well over 3.5 GB/s' "
        "... 'write speeds drop to around 2200 MB/s'",
    ),
    Share(
        "Kingston A2000 1 TB",
        2000,
        500,
        f"{TPU}, https://techpowerup.com/review/kingston-a2000-1-tb-m-2-nvme-ssd/6.html: 'start out at an impressive "
        "2 GB/s' ... 'With 500 MB/s in that state'",
    ),
)

#: the shares (in prior widths from the centre) the profile ranges over besides the centre (the
#: model's own): one, one and a half and 1.9 widths below it, one and one and a half above (a
#: share is at most 1: the native array no faster than its bursts); cost k^2
STEPS = (-1.9, -1.5, -1.0, 1.0, 1.5)
#: the config's SLC cache of a drive rated by bursts: dynamic (no static part), and a drive whose
#: cache is full writes native blocks (TechPowerUp: 'the drive will have to write data directly
#: to flash')
SLC_CACHE = {"when_full": "direct"}
SLC_CACHE_SOURCE = (
    "estimate: a client TLC drive rated by bursts writes them to an SLC cache, dynamic, past it directly to the "
    "native blocks (opsim.calibrate.burst, docs/calibrate.md)"
)


@cache
def prior() -> tuple[float, float, int]:
    """(centre, width in log, entries) of the native array's write rate as a share of the burst rate."""
    logs = [math.log(s.share) for s in SHARES]
    return math.exp(statistics.fmean(logs)), one_more(logs), len(logs)


def grid() -> list[tuple[float, float]]:
    """(share, the cost its prior puts on it) at each of :data:`STEPS`, a share above 1 taken as 1."""
    centre, width, _ = prior()
    out: list[tuple[float, float]] = []
    for k in STEPS:
        share = min(1.0, centre * math.exp(k * width))
        if all(s != share for s, _ in out):
            out.append((share, k * k))
    return out


def native_prog_us(t_prog_slc_us: float, units_ratio: float, share: float) -> float:
    """The native program time whose write rate is ``share`` of the SLC mode's: a native program
    carries ``units_ratio`` times the mapping units of an SLC-mode one (the core's resolved units)."""
    return t_prog_slc_us * units_ratio / share


def centre_text() -> str:
    """In words: the native program time a fit to bursts takes (the prior's centre)."""
    centre, _, n = prior()
    return (
        f"the native array's write rate at {centre:.2f} of the SLC mode's, the prior's centre "
        f"({n} client TLC drives: opsim.calibrate.burst)"
    )


def prior_text() -> str:
    """In words: what the profile takes of the native array's rate (:func:`grid`)."""
    centre, width, n = prior()
    shares = [share for share, _ in grid()]
    lo, hi = min(shares), max(shares)
    return (
        f"the native array's write rate is only its prior, {centre:.2f} of the bursts' (x/÷ {math.exp(width):.2f}, "
        f"{n} client TLC drives), and every steady-state interval ranges over {lo:.2f} to {hi:.2f} of them "
        "(opsim.calibrate.burst)"
    )
