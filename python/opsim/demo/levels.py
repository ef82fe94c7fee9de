"""The demo's drive and the OP levels the seeds discuss, as user capacities in sectors."""

from __future__ import annotations

from fractions import Fraction

from ..planner.capacity import idema_lba_count

NAND = 256 * 2**30  # bytes of NAND in the modelled drive
SECTOR = 512
PRESET = "samsung-840-pro-256gb"


def levels():
    """(label, user sectors of the 256 GB-class drive, source)."""
    native = idema_lba_count(256)
    nand_sectors = NAND // SECTOR
    return sorted(
        [
            ("native 256 GB", native, "Micron Table 1 / IDEMA"),
            ("12% spare area", int(nand_sectors * Fraction(88, 100)), "AnandTech (Neutron)"),
            ("240 GB (7% added)", idema_lba_count(240), "SanDisk X400"),
            ("20% of native LBAs held back", int(native * Fraction(8, 10)), "Intel 320 / HDAT2"),
            ("200 GB (28% added)", idema_lba_count(200), "SanDisk X400"),
            ("25% spare area", int(nand_sectors * Fraction(75, 100)), "AnandTech"),
            ("40% of native LBAs held back", int(native * Fraction(6, 10)), "Intel 320"),
            ("50% spare area", int(nand_sectors * Fraction(50, 100)), "AnandTech"),
        ],
        key=lambda level: -level[1],
    )


def marketed_gb(b: int) -> str:
    """Bytes as marketed GB: whole from 1 GB when within 0.05 GB of a whole number, else one
    decimal from 10 GB, else three significant digits."""
    x = b / 1e9
    if x >= 1 and abs(x - round(x)) < 0.05:
        return f"{x:.0f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.3g}"


def levels_for(native_sectors: int, nand: int) -> list[tuple[str, int, str]]:
    """(label, user sectors, source) of a drive with ``native_sectors`` and ``nand`` bytes of
    NAND at the seeds' OP levels, as shares of its native capacity and NAND (SanDisk X400's
    240 GB and 200 GB of 256 GB as 7% and 28% added), those above native dropped."""
    nand_sectors = nand // SECTOR
    native_gb = marketed_gb(native_sectors * SECTOR)
    added = [(Fraction(107, 100), "7%"), (Fraction(128, 100), "28%")]
    rows = [(f"native {native_gb} GB", native_sectors, "the drive file")]
    rows += [
        (f"{marketed_gb(int(native_sectors / f) * SECTOR)} GB ({t} added)", int(native_sectors / f), "SanDisk X400")
        for f, t in added
    ]
    rows += [
        ("12% spare area", int(nand_sectors * Fraction(88, 100)), "AnandTech (Neutron)"),
        ("20% of native LBAs held back", int(native_sectors * Fraction(8, 10)), "Intel 320 / HDAT2"),
        ("25% spare area", int(nand_sectors * Fraction(75, 100)), "AnandTech"),
        ("40% of native LBAs held back", int(native_sectors * Fraction(6, 10)), "Intel 320"),
        ("50% spare area", int(nand_sectors * Fraction(50, 100)), "AnandTech"),
    ]
    return sorted([r for r in rows if r[1] <= native_sectors], key=lambda level: -level[1])
