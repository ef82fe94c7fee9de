"""WAF of the zoned workload (``[workload] type = "zoned"``) against zone size and active zones:
the figure of docs/workloads.md.

Each point is a functional (or, with a preset, timed) run on the core's scale model of the
drive (``--scale``; zone sizes are the full-size drive's and scale with its GC unit): preconditioning
fills the drive, then the zones are rewritten for ``warmup`` drive writes and measured over
``measure`` more.  Zone sizes are given in bytes or, by default, as multiples of the drive's
GC unit (a block or a superblock, as the core describes the drive).

    python -m opsim.validation.zoned -o docs/figures/zoned-waf.svg            # generic scale model
    python -m opsim.validation.zoned --preset micron-7450-pro-960gb --scale 16 \\
        --zone-sizes 192MiB,...,16GiB -o docs/figures/zoned-waf-7450.svg

(``make docs-figures`` runs both.)  A JSON file beside the figure (same name, ``.json``)
holds every point, so the table in docs/workloads.md can be checked against it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections.abc import Sequence

from .. import plots, presets
from ..errors import ConfigError
from ..sim import describe, simulate
from ..units import fmt_bytes, parse_size

#: the generic scale model: 256 MiB user, 12% OP (user basis), 1 MiB blocks of 4 KiB pages, greedy
GENERIC = {
    "drive": {"user_capacity": "256MiB", "op": 0.12, "page_size": "4KiB", "pages_per_block": 256},
    "ftl": {"gc": "greedy"},
}
#: default zone sizes, in GC units, and active zones
UNITS = (0.25, 0.5, 1, 2, 4, 16)
ACTIVE = (1, 4, 16)


def base_config(preset: str | None = None, sets: Sequence[str] = ()) -> dict:
    """The full-size drive the sweep is about: a preset (with its timing) or the generic model,
    with ``sets`` ("table.key=value", the value parsed as JSON when it is JSON) applied."""
    if preset:
        cfg: dict = {"preset": presets.get(preset).get("path", preset), "ftl": {"gc": "greedy"}}
    else:
        cfg = copy.deepcopy(GENERIC)
    for s in sets:
        path, eq, value = s.partition("=")
        table, dot, key = path.partition(".")
        if not eq or not dot or not key:
            raise ConfigError(f"--set {s}: expected TABLE.KEY=VALUE (e.g. ftl.gc=greedy)", key="set")
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = value
        cfg.setdefault(table, {})[key] = parsed
    return cfg


def gc_unit_bytes(cfg: dict) -> int:
    """The drive's GC unit in bytes, as the core describes the drive (a block or a superblock)."""
    return int(describe(cfg)["drive"]["gc_unit"]["bytes"])


def model_config(cfg: dict, zone: int, active: int, scale: int) -> dict:
    """The config of one point: ``cfg`` with ``active`` open zones of ``zone`` bytes, as the
    core's scale model ``scale`` times smaller (``describe(..., scale=)``: fewer blocks, or as
    many superblocks each smaller, and the zone divided with them)."""
    c = copy.deepcopy(cfg)
    c["workload"] = {"type": "zoned", "zone_size": zone, "active_zones": active}
    if scale == 1:
        return c
    s = describe(c, model_limits=False, scale=scale)["scaled"]
    c["drive"] = {k: v for k, v in c.get("drive", {}).items() if k not in ("op", "native_capacity", "native_op")}
    c["drive"] |= {"user_capacity": s["user_capacity"], "physical_capacity": s["physical_capacity"], "op_basis": "user"}
    if s["superblock_scale"] is not None:
        c["ftl"] = c.get("ftl", {}) | {"superblock_scale": s["superblock_scale"]}
    c["workload"]["zone_size"] = s["zone_size"]
    return c


def run_point(cfg: dict, zone: int, active: int, warmup: float, measure: float, seed: int, scale: int = 1) -> dict:
    """One run on the scale model: WAF and the measured commands of ``active`` open zones of
    ``zone`` bytes (of the full-size drive)."""
    c = model_config(cfg, zone, active, scale)
    c["run"] = c.get("run", {}) | {
        "seed": seed,
        "warmup_drive_writes": warmup,
        "measure_drive_writes": measure,
        "round_drive_writes": measure / 4,
    }
    r = simulate(c)
    m = r.measure_counters
    return {
        "zone_size": zone,
        "model_zone_size": c["workload"]["zone_size"],
        "active_zones": active,
        "waf": r.waf,
        "resets": m["trim_cmds"],
        "gc_copy_pages": m["gc_copy_pages"],
        "host_write_pages": m["host_write_pages"],
    }


def sweep(
    cfg: dict,
    zone_sizes: Sequence[int],
    actives: Sequence[int] = ACTIVE,
    warmup: float = 3.0,
    measure: float = 2.0,
    seed: int = 1,
    scale: int = 1,
) -> list[dict]:
    """Every zone size x active-zone count that fits the full-size drive (more active zones
    than zones is skipped), each run on the scale model."""
    d = describe(cfg, model_limits=False)["drive"]
    user = int(d["user_pages"]) * int(d["page_size"])
    rows = []
    for zone in zone_sizes:
        for a in actives:
            if a <= user // zone:
                rows.append(run_point(cfg, zone, a, warmup, measure, seed, scale) | {"zones": user // zone})
    return rows


def figure(rows: Sequence[dict], unit: int, title: str):
    """WAF against zone size (log scale, GC unit marked), one line per active-zone count."""
    fig, (ax,) = plots.new_figure(width=6.5, height=4.0)
    actives = sorted({r["active_zones"] for r in rows})
    for a, color in zip(actives, plots.palette(len(actives))):
        pts = sorted((r["zone_size"], r["waf"]) for r in rows if r["active_zones"] == a)
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"{a} active")
    ax.axvline(unit, color="grey", linestyle=":", label=f"GC unit ({fmt_bytes(unit)})")
    ax.set_xscale("log", base=2)
    sizes = sorted({r["zone_size"] for r in rows})
    ax.set_xticks(sizes, [fmt_bytes(s) for s in sizes])
    ax.set_xlabel("zone size")
    ax.set_ylabel("WAF")
    ax.set_ylim(bottom=0.9)
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _zone_sizes(text: str | None, unit: int) -> list[int]:
    if not text:
        return [int(unit * u) for u in UNITS]
    return [parse_size(t.strip(), key="zone-sizes") for t in text.split(",")]


def drive_of(cfg: dict) -> dict:
    """The full-size drive a figure is made on, as the core describes it now: kept beside the figure's
    points, so a test can tell when a preset's refit has left the figure behind."""
    d = describe(cfg, model_limits=False)
    keep = ("physical_bytes", "user_bytes", "blocks")
    return {k: d["drive"][k] for k in keep} | {"seen_by_gc": d["op"]["seen_by_gc"]}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m opsim.validation.zoned", description=__doc__.split("\n")[0])
    p.add_argument("--preset", help="a preset's scale model (default: the generic 256 MiB model)")
    p.add_argument("--scale", type=int, default=1, help="run on the core's scale model N times smaller")
    p.add_argument("--zone-sizes", help="comma-separated sizes (default: 1/4 to 16 GC units)")
    p.add_argument("--active", default=",".join(map(str, ACTIVE)), help="comma-separated active-zone counts")
    p.add_argument("--set", action="append", default=[], help="TABLE.KEY=VALUE added to the config")
    p.add_argument("--warmup", type=float, default=3.0, help="drive writes before the measurement")
    p.add_argument("--measure", type=float, default=2.0, help="drive writes measured")
    p.add_argument("-o", "--output", required=True, help="the figure (.svg, .png or .pdf); data beside it (.json)")
    a = p.parse_args(argv)
    cfg = base_config(a.preset, a.set)
    unit = gc_unit_bytes(cfg)
    actives = [int(x) for x in a.active.split(",")]
    rows = sweep(cfg, _zone_sizes(a.zone_sizes, unit), actives, a.warmup, a.measure, scale=a.scale)
    what = a.preset or "generic scale model"
    title = f"zoned workload, {what}: WAF against zone size (greedy GC)"

    plots.save(figure(rows, unit, title), a.output)
    data = {
        "config": cfg,
        "drive": drive_of(cfg),
        "scale": a.scale,
        "gc_unit_bytes": unit,
        "warmup": a.warmup,
        "measure": a.measure,
        "points": rows,
    }
    with open(os.path.splitext(a.output)[0] + ".json", "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for r in rows:
        print(f"{fmt_bytes(r['zone_size']):>8} {r['active_zones']:>3} active  WAF {r['waf']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
