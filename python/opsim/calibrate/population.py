"""The NAND behind a drive, from a population of real drives: the prior of the NAND capacity
garbage collection can use (``drive.physical_capacity``, the ``physical`` parameter) by the
drive's class.

Each entry of :data:`POPULATION` is one published figure: a drive (or a vendor's rule for a
class of drives), its user capacity and the NAND behind it, and where that came from.  The
ratio NAND / user capacity is what the prior is on (the spare GC works with is ratio - 1).
The prior of a class is log-normal: its centre the geometric mean of the class's ratios, its
width the spread a *new* drive of the class has about that mean (the prediction interval of one
more draw from a normal sample of n: the sample's standard deviation in log times
sqrt(1 + 1/n), with Student's t of n - 1 degrees of freedom in place of the normal's 1.96;
at least :data:`MIN_SIGMA`), both computed here from the table (:func:`class_prior`), never
typed in.  A class of three entries is known to about a factor t(2) / 1.96 = 2.2 less well
than its sample standard deviation says.

Two kinds of entry:

* ``raw``: the NAND on the board (teardowns, vendors' OP tables, application notes).  GC sees
  less than that: part of the NAND is kept for bad blocks, parity (RAIN/RAID across dies) and
  the firmware's own tables.  The hidden part is taken as :data:`RESERVE` of the raw NAND
  (the seeds and a review give 2% to 12.5%; see its sources), so a raw entry counts as
  ``raw x (1 - RESERVE)``.
* ``fitted``: the NAND GC can use as ``opsim calibrate`` fitted it to a drive's own published
  figures (the built-in presets of today's drives at commit :data:`PRESETS_COMMIT`, fitted with
  the earlier +-10% prior around the binary capacity, so these entries lean on that prior as
  well as on the figures; typed in, not read from the preset files, so that refitting the
  presets does not move the priors they are fitted with).

The classes: ``client`` (client and consumer drives, under 0.5 DWPD), ``read-intensive`` (data
center, about 1 DWPD), ``mixed-use`` (data center, about 3 DWPD) and ``qlc`` (QLC data-center
drives, read-intensive by rating: the class holds the QLC entries and the read-intensive
ones, a QLC drive being sold at the same capacity points).  A drive whose class nothing says
(no endurance, no cell) takes every entry.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from ..units import parse_size

#: the share of the raw NAND GC never sees (bad-block spares, parity, firmware tables): the
#: middle of 2.3% (seed 001: a 256 GB X400 keeps 6 GB of its 262 GB 'as the minimum amount
#: of extra memory needed for the drive to function') and 12.5% (Micron P320h: RAIN takes
#: 128 GB of 1 TB, Tom's Hardware, https://www.tomshardware.com/uk/reviews/p320h-ssd-pci-express,3344-3.html);
#: seed 004 (SK hynix) keeps 5% of the blocks as system blocks
RESERVE = 0.05
#: the least width of a class's prior (log): a class of a few alike entries still has
#: vendors outside it
MIN_SIGMA = 0.05

CLASSES = ("client", "read-intensive", "mixed-use", "qlc")


@dataclass(frozen=True)
class Entry:
    drive: str
    cls: str
    user: str
    nand: str
    kind: str  # "raw" or "fitted"
    source: str
    #: the built-in preset a fitted entry is (left out of that drive's own prior)
    preset: str | None = None

    @property
    def ratio(self) -> float:
        """NAND GC can use over the user capacity."""
        r = parse_size(self.nand, key="nand") / parse_size(self.user, key="user")
        return r * (1 - RESERVE) if self.kind == "raw" else r


KINGSTON = "Kingston, 'Understanding SSD Over-provisioning', https://kingston.com/en/ssd/overprovisioning"
ANANDTECH_S3700 = (
    "seed 003 (AnandTech, 'Exploring the Relationship Between Spare Area and Performance Consistency'): "
    "'The S3700 has 264GiB of NAND on-board but only exposes 186GiB of it (200GB advertised capacity)'"
)
SEED003_256 = "seed 003: the 240/256 GB Samsung 840 Pro, OCZ Vector and Corsair Neutron tested carry 256 GiB of NAND"
#: the commit whose built-in presets the fitted entries are (the presets as refitted once GC copies
#: read whole multi-plane pages; a later refit of the presets leaves these as they were)
PRESETS_COMMIT = "8a625e7"
PRESET = (
    "the built-in preset {name} at commit " + PRESETS_COMMIT + ": the NAND GC can use as fitted to its datasheet "
    "(crates/opsim-core/presets/{name}.toml, GC copies reading whole multi-plane pages)"
)

#: every published or fitted NAND figure the priors are made of (see the module's text)
POPULATION: tuple[Entry, ...] = (
    # client: N GB on N GiB (7.4%), a few N x 0.94 on N GiB
    Entry("Samsung SSD 840 Pro 256 GB", "client", "256GB", "256GiB", "raw", SEED003_256),
    Entry("OCZ Vector 256 GB", "client", "256GB", "256GiB", "raw", SEED003_256),
    Entry("Corsair Neutron 240 GB", "client", "240GB", "256GiB", "raw", SEED003_256),
    Entry(
        "SK hynix mobile storage 128 GB",
        "client",
        "128GB",
        "128GiB",
        "raw",
        "seed 004 (SK hynix, 'Over-Provisioning and Performance of Mobile Storage'): '128GiB physical flash "
        "capacity vs. 128GB user capacity'",
    ),
    Entry(
        "Crucial MX500 1 TB",
        "client",
        "1000GB",
        "1024GiB",
        "raw",
        "Guru3D, Crucial MX500 1TB review, p. 5: sixteen NAND packages 'for the entire 1TB (physically 1024GB)', "
        "https://guru3d.com/review/crucial-mx500-1tb-ssd-review/page-5 (1024 GB of NAND read as 1024 GiB: "
        "dies are binary)",
    ),
    Entry(
        "Crucial M500 960 GB",
        "client",
        "960GB",
        "1024GiB",
        "raw",
        "16 packages of four 128 Gbit dies, 'a total capacity of 1024GB (960GB usable)', "
        "https://nanotechnologyandsensors.blogspot.com/2013/04/crucial-m500-presented-first-1tb-ssd.html",
    ),
    # read-intensive (about 1 DWPD): N x 0.96 TB on N TiB (14.5%)
    Entry(
        "Kingston read-intensive 960 GB",
        "read-intensive",
        "960GB",
        "1024GiB",
        "raw",
        f"{KINGSTON}: 1024GB / 960GB, 'Read Intensive'",
    ),
    Entry(
        "Kingston read-intensive 1800 GB",
        "read-intensive",
        "1800GB",
        "2048GiB",
        "raw",
        f"{KINGSTON}: 2048GB / 1800GB, 'Read Intensive'",
    ),
    Entry(
        "1 DWPD data-center drives (survey)",
        "read-intensive",
        "100GB",
        "115GB",
        "raw",
        "ServeTheHome forums, 'Can a 1 DWPD SSD become a 3 DWPD just with overprovisioning?' (hmw, from reading "
        "data sheets): '1 DWPD Enterprise SSDs usually have 15% spare area', https://forums.servethehome.com/"
        "index.php?threads/can-a-1-dwpd-ssd-become-a-3-dwpd-just-with-overprovisioning.45641/page-2",
    ),
    Entry(
        "Samsung PM9A3 960 GB",
        "read-intensive",
        "960GB",
        "1TiB",
        "fitted",
        PRESET.format(name="samsung-pm9a3-960gb"),
        "samsung-pm9a3-960gb",
    ),
    Entry(
        "Micron 7450 PRO 960 GB",
        "read-intensive",
        "960GB",
        "1071360MiB",
        "fitted",
        PRESET.format(name="micron-7450-pro-960gb"),
        "micron-7450-pro-960gb",
    ),
    Entry(
        "Solidigm D7-P5520 1.92 TB",
        "read-intensive",
        "1920GB",
        "2183386056KiB",
        "fitted",
        PRESET.format(name="solidigm-d7-p5520-1920gb"),
        "solidigm-d7-p5520-1920gb",
    ),
    Entry(
        "Kioxia CM7-R 3.84 TB",
        "read-intensive",
        "3840GB",
        "4297109288KiB",
        "fitted",
        PRESET.format(name="kioxia-cm7-r-3840gb"),
        "kioxia-cm7-r-3840gb",
    ),
    # mixed-use (about 3 DWPD): N x 0.8 TB on N TiB (37%)
    Entry(
        "Kingston write-intensive 800 GB",
        "mixed-use",
        "800GB",
        "1024GiB",
        "raw",
        f"{KINGSTON}: 1024GB / 800GB, 'More Write Intensive'",
    ),
    Entry(
        "Kingston write-intensive 1600 GB",
        "mixed-use",
        "1600GB",
        "2048GiB",
        "raw",
        f"{KINGSTON}: 2048GB / 1600GB, 'More Write Intensive'",
    ),
    Entry(
        "3 DWPD data-center drives (survey)",
        "mixed-use",
        "100GB",
        "128GB",
        "raw",
        "ServeTheHome forums (as above): '3 DWPD Enterprise SSDs usually have 28% spare area'",
    ),
    Entry(
        "Micron 7450 MAX 800 GB",
        "mixed-use",
        "800GB",
        "1059876176KiB",
        "fitted",
        PRESET.format(name="micron-7450-max-800gb"),
        "micron-7450-max-800gb",
    ),
    # QLC data-center drives, sold at the read-intensive capacity points (61.44 TB = 0.96 x 64 TB)
    Entry(
        "Solidigm D5-P5336 61.44 TB",
        "qlc",
        "61440GB",
        "64694951616KiB",
        "fitted",
        PRESET.format(name="solidigm-d5-p5336-61440gb"),
        "solidigm-d5-p5336-61440gb",
    ),
)

#: what a class takes besides its own entries
_ALSO = {"qlc": ("read-intensive",)}


def entries(cls: str | None, exclude: str | None = None) -> list[Entry]:
    """The entries a class's prior is made of (every entry for no class), without the fitted
    entry of preset ``exclude`` (a drive's prior never holds its own fit)."""
    take = CLASSES if cls is None else (cls, *_ALSO.get(cls, ()))
    return [e for e in POPULATION if e.cls in take and (exclude is None or e.preset != exclude)]


def class_prior(cls: str | None, exclude: str | None = None) -> tuple[float, float, int]:
    """(centre ratio NAND/user, width in log, entries) of class ``cls`` (None: every drive),
    without preset ``exclude``'s own fit."""
    logs = [math.log(e.ratio) for e in entries(cls, exclude)]
    centre = math.exp(statistics.fmean(logs))
    n = len(logs)
    if n < 2:
        return centre, MIN_SIGMA, n
    return centre, max(MIN_SIGMA, one_more(logs)), n


def one_more(xs: list[float]) -> float:
    """The spread of one more draw about the mean of sample ``xs`` (at least two): the 95%
    prediction interval (Student's t of n - 1 degrees of freedom times the sample's standard
    deviation times sqrt(1 + 1/n)) as a normal's width, a normal prior of the same 95% interval."""
    from scipy import stats  # noqa: PLC0415  (start-up: `opsim calibrate` refuses bad input before scipy)

    n = len(xs)
    t = float(stats.t.ppf(0.975, n - 1)) / float(stats.norm.ppf(0.975))
    return statistics.stdev(xs) * math.sqrt(1 + 1 / n) * t


def drive_class(cell: str | None, dwpd: float | None) -> str | None:
    """The class of a drive from its cell and its endurance in drive writes per day (None when
    nothing says: the prior then takes every drive)."""
    if cell == "qlc":
        return "qlc"
    if dwpd is None:
        return None
    if dwpd < 0.5:
        return "client"
    return "read-intensive" if dwpd < 2 else "mixed-use"
