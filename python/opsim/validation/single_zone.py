"""Single-zone WAF against zone size, with the interval the priors of what a datasheet never
states put on it: the superblock's size and the WAF floor (``opsim.calibrate.structure``;
docs/validation.md and docs/calibrate.md, "Single zones").

One open zone rewritten whole, each reset by a whole-zone TRIM (``[workload] type = "zoned"``,
``active_zones = 1``), on the core's scale model of a preset (``opsim.validation.zoned``).  The
preset's figure is its own structure (a superblock of one NAND block on every plane of every
die, no floor); the interval is the least and most over the priors' alternatives inside their
95% region: the superblock half and twice the estimate (``structure.SUPERBLOCK``: the NAND
block's word lines halved or doubled), each with no floor and with the highest floor of the
floor prior's grid (``structure.FLOOR_STEPS``).

    python -m opsim.validation.single_zone --preset micron-7450-pro-960gb --scale 64 \\
        --zone-sizes 192MiB,384MiB,768MiB,1GiB,2GiB,4GiB,8GiB,16GiB [--json FILE]
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Sequence

from .._output import markdown_table
from ..calibrate.structure import SUPERBLOCK, floor_grid
from ..calibrate.uncertainty import THRESHOLD
from ..sim import describe
from ..units import fmt_bytes, parse_size
from .zoned import base_config, gc_unit_bytes, run_point


def alternatives(cfg: dict) -> list[tuple[str, dict]]:
    """(what, config) of each structure the interval ranges over, the preset's own first: the
    superblock at each multiple of :data:`SUPERBLOCK` (its NAND block's word lines scaled), with
    no floor and with the highest floor of the prior's grid inside its 95% region."""
    nand_block = int(describe(cfg, model_limits=False)["config"]["timing"]["nand_block_size"])
    # the highest floor of the grid inside the prior's 95% region (its cost below the threshold)
    top = max((f for f, pen in floor_grid() if pen < THRESHOLD), default=0.0)
    out = []
    for mult in sorted(SUPERBLOCK, key=lambda m: m != 1.0):
        for floor in (0.0, top):
            c = copy.deepcopy(cfg)
            if mult != 1.0:
                c.setdefault("timing", {})["nand_block_size"] = int(nand_block * mult)
            if floor > 0:
                c.setdefault("ftl", {})["meta_writes"] = round(floor, 4)
            out.append((f"superblock x{mult:g}" + (f", floor {floor:.3f}" if floor else ""), c))
    return out


def table(cfg: dict, zones: Sequence[int], scale: int, warmup: float, measure: float, seed: int = 1) -> list[dict]:
    """For each zone size: the preset's WAF and the least and most over :func:`alternatives`."""
    alts = alternatives(cfg)
    rows = []
    for zone in zones:
        runs = [(what, run_point(c, zone, 1, warmup, measure, seed, scale)["waf"]) for what, c in alts]
        wafs = [w for _, w in runs]
        rows.append(
            {
                "zone_size": zone,
                "waf": runs[0][1],
                "low": min(wafs),
                "high": max(wafs),
                "runs": [{"structure": what, "waf": w} for what, w in runs],
            }
        )
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m opsim.validation.single_zone", description=__doc__.split("\n")[0])
    p.add_argument("--preset", required=True, help="the preset whose scale model is run")
    p.add_argument("--scale", type=int, default=64, help="the core's scale model N times smaller")
    p.add_argument("--zone-sizes", required=True, help="comma-separated zone sizes of the full-size drive")
    p.add_argument("--warmup", type=float, default=3.0, help="drive writes before the measurement")
    p.add_argument("--measure", type=float, default=2.0, help="drive writes measured")
    p.add_argument("--json", help="also write the rows to this file")
    a = p.parse_args(argv)
    cfg = base_config(a.preset)
    zones = [int(parse_size(t.strip(), key="zone-sizes")) for t in a.zone_sizes.split(",")]
    rows = table(cfg, zones, a.scale, a.warmup, a.measure)
    unit = gc_unit_bytes(cfg)
    body = [
        [
            fmt_bytes(r["zone_size"]),
            f"{r['zone_size'] / unit:.2f}",
            f"{r['waf']:.3f}",
            f"{r['low']:.3f} - {r['high']:.3f}",
        ]
        for r in rows
    ]
    print(
        markdown_table(["zone size", f"superblocks ({fmt_bytes(unit)})", "WAF", "interval (the priors)"], "lrrl", body)
    )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"preset": a.preset, "scale": a.scale, "unit": unit, "rows": rows}, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
