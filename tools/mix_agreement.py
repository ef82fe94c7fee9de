"""The advisor's screen against its simulator on read/write mixes: the table in docs/planner.md
("Read/write mixes").

    .venv/bin/python tools/mix_agreement.py [PRESETS [MIXES [HELD_BACK]]]

PRESETS and MIXES are comma-separated (mixes in ``--read-write`` notation, 70:30); HELD_BACK is
comma-separated fractions of the native capacity.  Each level: the screen's IOPS before issue 38
(the core's cost model without the queue depth: its throughput bound), the screen's (the cost
model at the commands in flight: the mixed network's latency bound), and the simulator's (the
advisor's confirmation run: timed model, 2,048-block scale model, seed 1)."""

from __future__ import annotations

import sys

from agreement import arguments, head, nearest_levels

from opsim.planner import advise as A
from opsim.planner.advise.confirm import run_sim
from opsim.sim import costs

PRESETS = "micron-7450-pro-960gb,solidigm-d7-p5520-1920gb"
MIXES = "90:10,70:30,50:50"
HELD_BACK = "0,1/5,1/2"


def throughput_bound(drive: A.Drive, wl: A.Workload, waf_gc: float) -> float:
    """The screen's IOPS before: the cost model's bound with no commands in flight given."""
    mix = {
        "write_fraction": wl.write_fraction,
        "units_per_io": wl.pages_per_io(drive.page_size),
        "bytes_per_io": wl.bytes_per_io(),
    }
    return costs(drive.cost_model(), mix, waf_gc)["iops"]


def main(argv: list[str]) -> None:
    presets, mixes, held = arguments(argv, PRESETS, MIXES, HELD_BACK)
    columns = ["drive", "read:write", "held back", "WAF (screen)", "screen before", "screen", "simulator"]
    head([*columns, "before vs simulator", "screen vs simulator", "bound by"], "llrrrrrrrl")
    t = A.Targets(min_iops=1)
    for preset in presets:
        drive = A.load_drive(preset=preset)
        for name in mixes:
            wl = A.Workload(read_fraction=A.parse_read_write(name))
            model = A.plan_model(drive, wl, A.DEFAULT_MODEL_BLOCKS, 1_500_000)
            for lv in nearest_levels(drive, held):
                row = A.screen_level(drive, wl, t, lv)
                before = throughput_bound(drive, wl, row["waf_gc"])
                sim = run_sim(A.sim_config(drive, wl, lv, model, 1), model)["timed"]["measured_iops"]
                print(
                    f"| {preset} | {name} | {float(lv.held_back):.1%} | {row['waf']:.2f} | {before:,.0f} "
                    f"| {row['iops']:,.0f} | {sim:,.0f} | {before / sim - 1:+.1%} | {row['iops'] / sim - 1:+.1%} "
                    f"| {row['bottleneck']} |",
                    flush=True,
                )


if __name__ == "__main__":
    main(sys.argv[1:])
