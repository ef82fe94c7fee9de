"""WAF of the zoned workload (``[workload] type = "zoned"``) against zone size and active zones:
the figure of docs/workloads.md.

Each point is a functional (or, with a preset, timed) run on a scale model: preconditioning
fills the drive, then the zones are rewritten for ``warmup`` drive writes and measured over
``measure`` more.  Zone sizes are given in bytes or, by default, as multiples of the drive's
GC unit (``drive.pages_per_block`` pages, as the core describes the drive).

    python -m opsim.validation.zoned -o docs/figures/zoned-waf.svg            # generic scale model
    python -m opsim.validation.zoned --preset micron-7450-pro-960gb --scale 256 \\
        --zone-sizes 64MiB,...,16GiB --set ftl.gc_unit=superblock -o docs/figures/zoned-waf-7450.svg

(``make docs-figures`` runs the first.)  A JSON file beside the figure (same name, ``.json``)
holds every point, so the table in docs/workloads.md can be checked against it.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import sys
from collections.abc import Sequence

from ..errors import ConfigError
from ..units import fmt_bytes, parse_size

#: the generic scale model: 256 MiB user, 12% OP (user basis), 1 MiB blocks of 4 KiB pages, greedy
GENERIC = {
    "drive": {"user_capacity": "256MiB", "op": 0.12, "page_size": "4KiB", "pages_per_block": 256},
    "ftl": {"gc": "greedy"},
}
#: default zone sizes, in GC units, and active zones
UNITS = (0.25, 0.5, 1, 2, 4, 16)
ACTIVE = (1, 4, 16)


def base_config(preset: str | None = None, scale: int = 1, sets: Sequence[str] = ()) -> dict:
    """The drive the sweep runs on: a preset's scale model (with its timing) or the generic
    model, with ``sets`` ("table.key=value", the value parsed as JSON when it is JSON)
    applied."""
    if preset:
        from .. import presets

        cfg = presets.scale_model(preset, scale)
        cfg.setdefault("ftl", {})["gc"] = "greedy"
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
    """The drive's GC unit in bytes, as the core describes the drive (pages per block x page)."""
    from ..sim import describe

    d = describe(cfg)["drive"]
    return int(d["pages_per_block"]) * int(d["page_size"])


def run_point(cfg: dict, zone: int, active: int, warmup: float, measure: float, seed: int) -> dict:
    """One run: WAF and the measured commands of ``active`` open zones of ``zone`` bytes."""
    from ..sim import simulate

    c = copy.deepcopy(cfg)
    c["workload"] = {"type": "zoned", "zone_size": zone, "active_zones": active}
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
) -> list[dict]:
    """Every zone size x active-zone count that fits the drive (more active zones than zones
    is skipped)."""
    from ..sim import describe

    d = describe(cfg)["drive"]
    user = int(d["user_pages"]) * int(d["page_size"])
    rows = []
    for zone in zone_sizes:
        for a in actives:
            if a <= user // zone:
                rows.append(run_point(cfg, zone, a, warmup, measure, seed) | {"zones": user // zone})
    return rows


def figure(rows: Sequence[dict], unit: int, title: str):
    """WAF against zone size (log scale, GC unit marked), one line per active-zone count."""
    from .. import plots

    fig, (ax,) = plots.new_figure(width=6.5, height=4.0)
    actives = sorted({r["active_zones"] for r in rows})
    for a, color in zip(actives, plots._colors(len(actives))):
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


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m opsim.validation.zoned", description=__doc__.split("\n")[0])
    p.add_argument("--preset", help="a preset's scale model (default: the generic 256 MiB model)")
    p.add_argument("--scale", type=int, default=1, help="with --preset: capacities divided by N")
    p.add_argument("--zone-sizes", help="comma-separated sizes (default: 1/4 to 16 GC units)")
    p.add_argument("--active", default=",".join(map(str, ACTIVE)), help="comma-separated active-zone counts")
    p.add_argument("--set", action="append", default=[], help="TABLE.KEY=VALUE added to the config")
    p.add_argument("--warmup", type=float, default=3.0, help="drive writes before the measurement")
    p.add_argument("--measure", type=float, default=2.0, help="drive writes measured")
    p.add_argument("-o", "--output", required=True, help="the figure (.svg, .png or .pdf); data beside it (.json)")
    a = p.parse_args(argv)
    cfg = base_config(a.preset, a.scale, a.set)
    unit = gc_unit_bytes(cfg)
    actives = [int(x) for x in a.active.split(",")]
    rows = sweep(cfg, _zone_sizes(a.zone_sizes, unit), actives, a.warmup, a.measure)
    what = a.preset or "generic scale model"
    title = f"zoned workload, {what}: WAF against zone size (greedy GC)"
    from .. import plots

    plots.save(figure(rows, unit, title), a.output)
    data = {"config": cfg, "gc_unit_bytes": unit, "warmup": a.warmup, "measure": a.measure, "points": rows}
    with open(os.path.splitext(a.output)[0] + ".json", "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for r in rows:
        print(f"{fmt_bytes(r['zone_size']):>8} {r['active_zones']:>3} active  WAF {r['waf']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
