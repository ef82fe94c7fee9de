"""The NAND read time (tR) by cell, from published figures: the prior of ``timing.t_read_us``
when a calibration fits it (docs/calibrate.md, "The read time's prior").

Each entry of :data:`PUBLISHED` is one published figure or range of a NAND generation's read
time (the time to sense a page into the die's register; for a part whose page types read at
different speeds, their average, which is what the core's ``t_read_us`` is), with where it
came from.  The prior of a cell is log-normal, computed here from its entries
(:func:`prior`), never typed in: its centre the geometric mean of the entries' centres
(a range's centre is its geometric middle), its width the least that puts every entry's
figures inside its 95% interval, and at least the width of the best-sourced cell
(:data:`WIDEST_SOURCED`: a cell of fewer sources is no better known).

Why a prior of its own: with the core's wide default (x/÷ 3 around the core's typical tR),
a datasheet fit could trade the read time against the NAND capacity (a GC copy costs a read)
and settle at a read time no real NAND has (the 7450 MAX at 16.6 µs, docs/calibrate.md).
The core's ``Cell::typical_us`` stays the default of a config that gives no read time; this
is what a *fit* may believe about a real drive's NAND.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

#: two-sided 95% normal quantile (the fit's Z95; computed here: .fit imports the model, which imports this)
Z95 = statistics.NormalDist().inv_cdf(0.975)

#: the cell whose entries set the least width of every cell's prior
WIDEST_SOURCED = "tlc"

ISSCC_2021 = (
    "ISSCC 2021 3D TLC parts as tabulated in 'Samsung, SK Hynix and Kioxia continue with 3D TLC for SSD', "
    "https://bithardware.top/samsung-sk-hynix-and-kioxia-continue-with-3d-tlc-for-ssd/, table row 'Read latency (tR)'"
)
ANANDTECH_ZNAND = (
    "AnandTech, 'The Samsung 983 ZET (Z-NAND) SSD Review', p. 2, table 'Samsung 3D NAND Comparison' "
    "(Samsung's ISSCC 2018 figures), https://www.anandtech.com/show/13951/the-samsung-983-zet-znand-ssd-review/2"
)
HP_WHITE_PAPER = (
    "HP, 'Solid State Drive Technology: Differences between SLC, MLC and TLC NAND' (technical white paper), "
    "p. 3, Table 1, row 'Read Time', https://www.manualshelf.com/manual/hp/p6q45us/"
    "solid-state-drive-technology-differences-between-slc-mlc-and-tlc-nand-english/page-3.html"
)


@dataclass(frozen=True)
class ReadTime:
    cell: str
    part: str
    low_us: float
    high_us: float
    source: str

    @property
    def centre_us(self) -> float:
        return math.sqrt(self.low_us * self.high_us)


#: every published read time the priors are made of
PUBLISHED: tuple[ReadTime, ...] = (
    # TLC: 3D generations of the four NAND makers, and one review's range for today's 3D TLC
    ReadTime("tlc", "Samsung V-NAND TLC, 2021 (ISSCC 2021)", 40.0, 40.0, ISSCC_2021 + ": Samsung 2021, 40 µs"),
    ReadTime("tlc", "Samsung 128-layer V-NAND TLC, 2019", 45.0, 45.0, ISSCC_2021 + ": Samsung 2019, 45 µs"),
    ReadTime("tlc", "SK hynix 176-layer TLC (ISSCC 2021)", 50.0, 50.0, ISSCC_2021 + ": SK Hynix, 50 µs"),
    ReadTime("tlc", "Kioxia/WD 162-layer BiCS TLC (ISSCC 2021)", 50.0, 50.0, ISSCC_2021 + ": Kioxia 2021, 50 µs"),
    ReadTime("tlc", "Kioxia 128-layer BiCS TLC, 2019", 56.0, 56.0, ISSCC_2021 + ": Kioxia 2019, 56 µs"),
    ReadTime("tlc", "Kioxia 96-layer BiCS TLC, 2018", 58.0, 58.0, ISSCC_2021 + ": Kioxia 2018, 58 µs"),
    ReadTime("tlc", "Samsung 48-layer V-NAND TLC, 256 Gbit", 45.0, 45.0, ANANDTECH_ZNAND + ": 48L TLC, 45 µs"),
    ReadTime("tlc", "Samsung 64-layer V-NAND TLC, 512 Gbit", 60.0, 60.0, ANANDTECH_ZNAND + ": 64L TLC, 60 µs"),
    ReadTime("tlc", "Samsung 9x-layer V-NAND TLC, 256 Gbit", 50.0, 50.0, ANANDTECH_ZNAND + ": 9xL TLC, 50 µs"),
    ReadTime(
        "tlc",
        "3D TLC NAND (a review's range)",
        50.0,
        100.0,
        "Tom's Hardware, 'Custom PCIe 5.0 SSD with 3D XL-Flash debuts' (2024): 'the ~50 - 100 µs for 3D TLC NAND', "
        "https://www.tomshardware.com/pc-components/ssds/custom-pcie-5-0-ssd-with-3d-xl-flash-debuts-special-"
        "optane-like-flash-memory-delivers-up-to-3-5-million-random-iops",
    ),
    ReadTime("tlc", "TLC NAND (a vendor's white paper)", 75.0, 75.0, HP_WHITE_PAPER + ": TLC '~75us'"),
    # QLC: one characterised part (its four page types' average) and the white paper's cells below
    ReadTime(
        "qlc",
        "Intel 96-layer 3D QLC (1024Q3D3A), measured",
        47.9,
        228.1,
        "Q. Chen et al., 'PACA: A Page Type Aware Read Cache Scheme in QLC Flash-based SSDs', ICCD 2022, Fig. 2 "
        "and Table I (as quoted in a FEMU nand.h): lower, lower-centre, upper-centre and upper pages 47.9, 76.2, "
        "134.6 and 228.1 µs (their average 121.7 µs; a range here, the page a read lands on being random)",
    ),
    # MLC and SLC (the seeds' drives give their own read times; these are for a drive that does not)
    ReadTime("mlc", "MLC NAND (a vendor's white paper)", 50.0, 50.0, HP_WHITE_PAPER + ": MLC '50us'"),
    ReadTime("slc", "SLC NAND (a vendor's white paper)", 25.0, 25.0, HP_WHITE_PAPER + ": SLC '25us'"),
)


def entries(cell: str) -> list[ReadTime]:
    return [e for e in PUBLISHED if e.cell == cell]


def _own(cell: str) -> tuple[float, float]:
    """(centre µs, width in log) of ``cell``'s entries alone."""
    es = entries(cell)
    centre = math.exp(statistics.fmean(math.log(e.centre_us) for e in es))
    width = max(abs(math.log(x / centre)) for e in es for x in (e.low_us, e.high_us)) / Z95
    return centre, width


def prior(cell: str) -> tuple[float, float, str]:
    """(centre µs, width in log (1 sd), source) of the read time of NAND of ``cell``."""
    if not entries(cell):
        raise ValueError(f"no published read time for {cell!r}")
    centre, width = _own(cell)
    least = _own(WIDEST_SOURCED)[1]
    sigma = max(width, least)
    n = len(entries(cell))
    lo, hi = centre * math.exp(-Z95 * sigma), centre * math.exp(Z95 * sigma)
    why = "its own figures' spread" if width >= least else f"at least {WIDEST_SOURCED.upper()}'s width"
    source = (
        f"published read times of {cell.upper()} NAND (opsim.calibrate.read_time, docs/calibrate.md): {n} "
        f"figure{'s' if n != 1 else ''}, centre {centre:.1f} µs, x/÷ {math.exp(sigma):.3f} (1 sd, {why}; "
        f"95%: {lo:.0f}-{hi:.0f} µs)"
    )
    return centre, sigma, source
