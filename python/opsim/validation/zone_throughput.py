"""Zone-write throughput against open zones, with its interval over the GC controller costs a
datasheet leaves open: the table in docs/validation.md, "Zone writes: throughput against open
zones".

A preset's scale model under the zoned workload (docs/workloads.md, ``type = "zoned"``:
sequential 512 KiB writes interleaved over the open zones, each zone reset by one whole-zone
TRIM), timed, at 1 to 32 open zones of whole GC units (superblocks), as
``opsim.validation.zoned`` runs it (greedy GC, the core's scale model; zone sizes are the
full-size drive's).  Each point runs at three GC controller costs: none (the preset), and each of
``timing.gc_fw_us`` and ``timing.gc_reclaim_us`` alone at its upper bound, the largest that
still meets the drive's steady random-write figure (:mod:`opsim.calibrate.gc_cost`); the
throughput's interval is their envelope.  A scale model's superblock is ``superblock_scale``
times smaller and reclaimed that much more often, so it is given the full-size bound of
``gc_reclaim_us`` over the scale (docs/timed.md).  WAF does not depend on the timing.

    python -m opsim.validation.zone_throughput [PRESET] [SCALE] [--json FILE]    # both presets: minutes
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from .. import presets
from .._output import markdown_table
from ..sim import simulate
from ..units import fmt_bytes
from . import gc_costs
from .zoned import base_config, gc_unit_bytes, model_config

#: the drives and the scale each is run at (superblocks of 6,144 pages each: 24 MiB)
PRESETS = {"micron-7450-pro-960gb": 32, "solidigm-d7-p5520-1920gb": 64}
#: open zones, and zone sizes in GC units (as docs/workloads.md's tables give them)
ACTIVE = (1, 2, 4, 8, 16, 32)
ZONE_UNITS = (1, 4)
#: the host's writes: sequential in each zone, 512 KiB commands
REQUEST = 512 << 10
RUN = {"seed": 1, "warmup_drive_writes": 2.0, "measure_drive_writes": 1.0, "round_drive_writes": 0.25}
#: the GC cost settings: none (the preset), and each cost alone at its bound
SETTINGS = ("none", "timing.gc_fw_us", "timing.gc_reclaim_us")


def point_config(preset: str, zone: int, active: int, scale: int, cost: tuple[str, float] | None = None) -> dict:
    """The config of one point: ``active`` open zones of ``zone`` bytes (full-size) on the scale
    model, with ``cost`` = (key, full-size value) in ``[timing]`` (None: the preset's, no key)."""
    c = model_config(base_config(preset), zone, active, scale)
    c["workload"]["request_size"] = REQUEST
    c["run"] = dict(RUN)
    if cost is not None:
        key, value = cost
        name = key.split(".", 1)[1]
        if name == "gc_reclaim_us":
            value /= c.get("ftl", {}).get("superblock_scale", 1)  # the scaled unit's time
        c["timing"] = c.get("timing", {}) | {name: value}
    return c


def run_point(preset: str, zone: int, active: int, scale: int, cost: tuple[str, float] | None = None) -> dict:
    """One timed run: WAF and the host's write throughput (MB/s, 10^6 bytes a second)."""
    r = simulate(point_config(preset, zone, active, scale, cost))
    return {"waf": r.waf, "mbps": r.timed["measured_iops"] * REQUEST / 1e6}


def bounds_of(preset: str) -> dict[str, float]:
    """The upper bounds of the GC costs (us, full-size drive) as the preset's drive file keeps
    them (its input's calibration: :mod:`opsim.calibrate.gc_cost`)."""
    return {k: hi for k, (_, hi) in gc_costs.preset_bounds(preset).items()}


def rows(
    preset: str,
    scale: int,
    zone_units: Sequence[float] = ZONE_UNITS,
    actives: Sequence[int] = ACTIVE,
    costs: dict[str, float] | None = None,
) -> list[dict]:
    """Every zone size x open-zone count on ``preset``'s scale model, at each cost setting
    (``costs``: the bounds, default :func:`bounds_of`)."""
    costs = bounds_of(preset) if costs is None else costs
    unit = gc_unit_bytes(base_config(preset))
    out = []
    for units in zone_units:
        zone = int(unit * units)
        for a in actives:
            runs = {s: run_point(preset, zone, a, scale, None if s == "none" else (s, costs[s])) for s in SETTINGS}
            out.append(
                {"preset": preset, "zone_size": zone, "zone_units": units, "active_zones": a, "scale": scale}
                | {"waf": runs["none"]["waf"], "waf_by_setting": {s: r["waf"] for s, r in runs.items()}}
                | {"mbps": {s: r["mbps"] for s, r in runs.items()}}
            )
    return with_ratios(out)


def with_ratios(points: list[dict]) -> list[dict]:
    """Each point's throughput relative to one open zone of its size and setting, and the same
    times its WAF over one zone's (1: the loss is what WAF explains; below 1: more)."""
    one = {(p["preset"], p["zone_size"]): p for p in points if p["active_zones"] == 1}
    for p in points:
        base = one[p["preset"], p["zone_size"]]
        p["relative"] = {s: v / base["mbps"][s] for s, v in p["mbps"].items()}
        p["beyond_waf"] = {s: r * p["waf"] / base["waf"] for s, r in p["relative"].items()}
    return points


def _span(d: dict[str, float], fmt: str) -> str:
    """The value without GC costs, and the envelope over the settings."""
    lo, hi = min(d.values()), max(d.values())
    return f"{format(d['none'], fmt)} ({format(lo, fmt)}-{format(hi, fmt)})"


def table(points: Sequence[dict]) -> str:
    cols = [
        "drive",
        "zone size",
        "open zones",
        "WAF",
        "MB/s (interval)",
        "vs 1 zone (interval)",
        "x WAF / 1 zone's (interval)",
    ]
    body = [
        [
            p["preset"],
            f"{fmt_bytes(p['zone_size'])} ({p['zone_units']:g})",
            str(p["active_zones"]),
            f"{p['waf']:.3f}",
            _span(p["mbps"], ",.0f"),
            _span(p["relative"], ".2f"),
            _span(p["beyond_waf"], ".2f"),
        ]
        for p in points
    ]
    return markdown_table(cols, "llrrrrr", body)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m opsim.validation.zone_throughput", description=__doc__.split("\n")[0])
    p.add_argument("preset", nargs="?", help=f"one preset (default: {', '.join(PRESETS)})")
    p.add_argument("scale", nargs="?", type=int, help="the scale model's divisor (default: the preset's in PRESETS)")
    p.add_argument("--json", metavar="FILE", help="write every point and the cost bounds to FILE")
    a = p.parse_args(argv)
    if a.scale is not None and a.scale < 1:
        p.error("SCALE must be 1 or more")
    if a.preset and a.preset not in presets.names():  # before the long work
        p.error(f"PRESET {a.preset!r}: no such preset; the presets are {', '.join(presets.names())}")
    names = {a.preset: a.scale or PRESETS.get(a.preset, 32)} if a.preset else PRESETS
    points, costs = [], {}
    for name, scale in names.items():
        costs[name] = bounds_of(name)
        points += rows(name, scale, costs=costs[name])
    print(table(points))
    if a.json:
        doc = {"run": RUN, "request_size": REQUEST, "settings": list(SETTINGS), "bounds_us": costs, "points": points}
        with open(a.json, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
