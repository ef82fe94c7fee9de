"""The SanDisk X400 reserve study (docs/validation.md): which reading of the NAND behind the
X400's user capacity lets one pair of controller times, fitted to the 256 GB drive, meet seed
001's eight IOPS ratios.  For each reading the 256 GB drive is calibrated again by
``opsim calibrate`` (its input, ``crates/opsim-core/presets/inputs/sandisk-x400-256gb.toml``,
with that NAND), then the eight ratios are simulated.

    python -m opsim.validation.x400_reserve        # the table in docs/validation.md (about a minute)
"""

from __future__ import annotations

import sys

from ..calibrate import calibrate, read_inputs
from ..presets import INPUTS
from .seeds import x400_rows


def refit(physical_256: int) -> dict:
    """The family's controller times fitted by ``opsim calibrate`` to the 256 GB drive's two
    published points, with ``physical_256`` bytes of NAND behind it."""
    spec, figures = read_inputs(str(INPUTS / "sandisk-x400-256gb.toml"))
    spec.physical = physical_256
    cal = calibrate(spec, figures)
    return {k: cal.fitted.values[k] for k in ("fw_overhead_us", "gc_fw_us")}


# Readings of the X400's NAND behind its user capacity at 0% OP, (label, physical bytes for a
# capacity in GB).  The presets use "reserve 6 GB".
X400_READINGS = [
    ("seed 001's example: 262 GB of NAND per 256 GB (2.3% spare)", lambda cap: cap * 262 // 256 * 10**9),
    ("binary NAND (cap GiB), nothing reserved", lambda cap: cap * 2**30),
    *[
        (
            f"binary NAND less a fixed {r} GB" + (" (the presets)" if r == 6 else ""),
            (lambda reserve: lambda cap: cap * 2**30 - reserve * 10**9)(r),
        )
        for r in (4, 5, 6, 7, 8)
    ],
]


def x400_reserve(scale: int = 64, readings=None) -> list[dict]:
    """For each reading of the X400's NAND (default: all of ``X400_READINGS``): refit the family's
    two controller times to the 256 GB drive (0% and 28% OP), then the eight IOPS ratios against
    seed 001."""

    out = []
    for label, phys in readings or X400_READINGS:
        timing = refit(phys(256))
        rows = x400_rows(scale, timing, phys)
        out.append(
            {
                "reading": label,
                **timing,
                "spare_at_0": {cap: phys(cap) / (cap * 10**9) - 1 for cap in (128, 256, 512, 1024)},
                "ratios": [
                    {k: r[k] for k in ("drive", "figure", "simulated", "published", "error", "pass")} for r in rows
                ],
                "passing": sum(r["pass"] for r in rows),
                "worst_error": max(abs(r["error"]) for r in rows),
            }
        )
    return out


def x400_reserve_markdown(study: list[dict]) -> str:
    """The reserve study as a markdown table (docs/validation.md)."""
    head = (
        "| reading of the NAND at 0% OP | spare at 0%, 128 / 1024 GB | fw_overhead_us | gc_fw_us | "
        + " | ".join(f"{c} 7%/0% | {c} 28%/0%" for c in (128, 256, 512, 1024))
        + " | within 25% |"
    )
    lines = [head, "|---|---|---:|---:|" + "---:|" * 8 + "---:|"]
    for s in study:
        cells = [f"{r['simulated']:.2f} ({r['error']:+.0%})" for r in s["ratios"]]
        sp = s["spare_at_0"]
        lines.append(
            f"| {s['reading']} | {sp[128]:.1%} / {sp[1024]:.1%} | {s['fw_overhead_us']:.2f} | "
            f"{s['gc_fw_us']:.2f} | " + " | ".join(cells) + f" | {s['passing']}/8 |"
        )
    pub = [f"{r['published']:.2f}" for r in study[0]["ratios"]]
    lines.append("| published (seed 001) | | | | " + " | ".join(pub) + " | |")
    return "\n".join(lines)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        print("usage: python -m opsim.validation.x400_reserve", file=sys.stderr)
        return 2
    print(x400_reserve_markdown(x400_reserve()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
