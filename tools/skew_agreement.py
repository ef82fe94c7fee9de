"""The advisor's screen against its simulator under skewed workloads: the table in
docs/planner.md ("WAF under skew").

    .venv/bin/python tools/skew_agreement.py [PRESETS [WORKLOADS [HELD_BACK]]]

PRESETS and WORKLOADS are comma-separated (workloads: hot-cold:F/R, zipf:S, jesd219);
HELD_BACK is comma-separated fractions of the native capacity (off the anchors' 2.5% grid but
0).  Each level: the bare non-uniform LRW model (the screen before issue 26), the screen, the
simulator (the advisor's confirmation run: timed model, 2,048-block scale model, seed 1), and
for zipf the screen with the real drive's pages.  Host-byte WAF throughout."""

from __future__ import annotations

import sys

from agreement import arguments, head, nearest_levels

from opsim.errors import InputError
from opsim.planner import advise as A
from opsim.planner.advise import skew as K

PRESETS = "solidigm-d7-p5520-1920gb,micron-7450-pro-960gb,samsung-pm9a3-960gb"
WORKLOADS = "hot-cold:20/80,hot-cold:10/90,zipf:0.6,zipf:0.8,zipf:0.99,jesd219"
HELD_BACK = "0,7/200,27/200,77/200,123/200"
MODEL_BLOCKS = A.DEFAULT_MODEL_BLOCKS


def workload(name: str) -> A.Workload:
    """``--skew`` notation (the advisor's own parser), or ``jesd219``: its zones and its size mix."""
    if name == "jesd219":
        return A.Workload(skew="jesd219", block_size=None)
    try:
        return A.Workload(**A.parse_skew(name))
    except InputError as e:
        raise SystemExit(f"workload: {e} (or jesd219)") from None


def main(argv: list[str]) -> None:
    presets, names, held = arguments(argv, PRESETS, WORKLOADS, HELD_BACK)
    columns = ["drive", "workload", "held back", "OP seen by GC", "LRW (before)", "screen", "simulator"]
    head([*columns, "screen vs simulator", "LRW vs simulator", "screen, the drive's pages"], "llrrrrrrrr")
    t = A.Targets(min_iops=1)
    for preset in presets:
        drive = A.load_drive(preset=preset)
        for name in names:
            wl = workload(name)
            sk = K.skew_model(drive, wl, MODEL_BLOCKS)
            model = A.plan_model(drive, wl, MODEL_BLOCKS, 1_500_000)
            for lv in nearest_levels(drive, held):
                lrw = A.screen_level(drive, wl, t, lv)["waf"]
                row = A.screen_level(drive, wl, t, lv, sk)
                sim = A.sim_level(drive, wl, t, lv, model, 1)["waf"]
                dp = row["waf_drive_pages"]
                print(
                    f"| {preset} | {name} | {100 * float(lv.held_back):.1f}% | {row['op']['seen_by_gc']:.3f} "
                    f"| {lrw:.3f} | {row['waf']:.3f} | {sim:.3f} | {100 * (row['waf'] / sim - 1):+.1f}% "
                    f"| {100 * (lrw / sim - 1):+.1f}% | {'' if dp is None else f'{dp:.3f}'} |",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
