"""The GC controller costs' intervals of presets (docs/calibrate.md, "The GC controller costs'
bounds"): each preset's drive file keeps them as its input's calibration gives them
(:mod:`opsim.calibrate.gc_cost`).

    python -m opsim.validation.gc_costs [PRESET ...]     # the table in docs/calibrate.md (calibrates each input)
"""

from __future__ import annotations

import sys

from .. import presets
from .._output import markdown_table
from ..calibrate import gc_cost
from ..calibrate import presets as calibrated

#: the presets of the zoned-throughput comparison (docs/validation.md)
DEFAULT = ("micron-7450-pro-960gb", "solidigm-d7-p5520-1920gb")


def preset_bounds(name: str) -> dict[str, tuple[float, float]]:
    """Each GC cost's 95% interval (us) as preset ``name``'s drive file keeps it."""
    stored = presets.get(name)["meta"]["calibration"]["intervals_95"]
    return {k: (float(stored[k][0]), float(stored[k][1])) for k in gc_cost.COSTS if k in stored}


def main(argv: list[str] | None = None) -> int:
    names = (sys.argv[1:] if argv is None else argv) or list(DEFAULT)
    body = []
    for n in names:
        for b in gc_cost.bounds(calibrated.calibration(n).fitted).values():
            body.append(
                [
                    n,
                    f"`{b.key}`",
                    f"{b.low:.4g} - {b.high:.4g} µs",
                    b.figure,
                    f"{b.lower_end:,.0f}",
                    f"{b.iops_at_value:,.0f}",
                    f"{b.iops_at_bound:,.0f}",
                ]
            )
    cols = ["preset", "cost", "95% interval", "binding figure", "its 95% lower end", "IOPS at 0", "IOPS at the bound"]
    print(markdown_table(cols, "llrlrrr", body))
    return 0


if __name__ == "__main__":
    sys.exit(main())
