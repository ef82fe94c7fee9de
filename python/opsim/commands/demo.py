"""``opsim demo``: the main job.  For now, the OP study of the seeds printed as a table.

The drive is the seeds' "256 GB-class" client SSD: 256 GiB of NAND sold as 256 GB (IDEMA
LBA1-03 count, 7.37% built-in OP).  It is configured at the capacities the seeds discuss
(SanDisk X400 240 GB and 200 GB, Intel's 20% and 40% of the native LBAs held back, AnandTech's
12%, 25% and 50% spare area) and run under 4 KiB uniform random writes to steady state.
The simulation runs on a scale model with the same ratios (WAF does not depend on the drive's
size at this scale); WAF comes from the simulator with the greedy mean-field model beside it,
and endurance follows from WAF at fixed NAND and P/E rating.
"""

from __future__ import annotations

import sys
from fractions import Fraction

from .._output import Output, table
from ..units import pct

NAND = 256 * 2**30  # bytes of NAND in the modelled drive
SECTOR = 512


def levels():
    """(label, user sectors of the 256 GB-class drive, source)."""
    from ..planner.capacity import idema_lba_count

    native = idema_lba_count(256)
    nand_sectors = NAND // SECTOR
    return sorted([
        ("native 256 GB", native, "Micron Table 1 / IDEMA"),
        ("12% spare area", int(nand_sectors * Fraction(88, 100)), "AnandTech (Neutron)"),
        ("240 GB (7% added)", idema_lba_count(240), "SanDisk X400"),
        ("20% of native LBAs held back", int(native * Fraction(8, 10)), "Intel 320 / HDAT2"),
        ("200 GB (28% added)", idema_lba_count(200), "SanDisk X400"),
        ("25% spare area", int(nand_sectors * Fraction(75, 100)), "AnandTech"),
        ("40% of native LBAs held back", int(native * Fraction(6, 10)), "Intel 320"),
        ("50% spare area", int(nand_sectors * Fraction(50, 100)), "AnandTech"),
    ], key=lambda level: -level[1])


def register(sub, common):
    p = sub.add_parser("demo", parents=[common], help="run the default OP study and print the table")
    p.add_argument("--scale", type=int, default=32,
                   help="simulate on a model with 1/SCALE of the NAND (default 32: 8 GiB)")
    p.add_argument("--pages-per-block", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=run)


def run(args) -> Output:
    from .. import models
    from ..errors import InputError
    from ..sim import simulate

    if args.scale < 1 or NAND // args.scale < 64 * 2**20:
        raise InputError("--scale must leave at least 64 MiB of NAND", key="scale")
    page = 4096
    nand_model = NAND // args.scale
    lv = levels()
    native_sectors = lv[0][1]
    data = []
    for i, (label, sectors, source) in enumerate(lv):
        user = sectors * SECTOR
        user_model = user // args.scale // page * page
        cfg = {
            "drive": {"user_capacity": user_model, "physical_capacity": nand_model,
                      "pages_per_block": args.pages_per_block},
            "run": {"seed": args.seed, "warmup_drive_writes": 2, "measure_drive_writes": 2},
        }
        if sys.stderr.isatty():
            sys.stderr.write(f"\r  simulating {i + 1}/{len(lv)}: {label:<32}")
            sys.stderr.flush()
        r = simulate(cfg)
        data.append({
            "configuration": label, "source": source, "user_bytes": user,
            "op_user": (NAND - user) / user, "spare_area": (NAND - user) / NAND,
            "held_back_of_native": (native_sectors - sectors) / native_sectors,
            "model_user_bytes": user_model, "model_op_effective": r.op["effective"],
            "waf": r.waf, "waf_model": models.waf_greedy(r.op["effective"], args.pages_per_block),
            "steady_state": r.steady_state["reached"],
        })
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    base = data[0]
    rows = []
    for d in data:
        # same NAND and P/E rating: host bytes writable scale with 1/WAF,
        # drive writes per day with 1/(WAF x user capacity)
        d["tbw_vs_native"] = base["waf"] / d["waf"]
        d["dwpd_vs_native"] = base["waf"] * base["user_bytes"] / (d["waf"] * d["user_bytes"])
        rows.append([d["configuration"], f"{d['user_bytes'] / 1e9:.1f} GB", pct(d["op_user"], 1),
                     pct(d["spare_area"], 1), pct(d["held_back_of_native"], 1), f"{d['waf']:.3f}",
                     f"{d['waf_model']:.3f}", f"{d['tbw_vs_native']:.2f}x", f"{d['dwpd_vs_native']:.2f}x",
                     "yes" if d["steady_state"] else "no", d["source"]])
    text = table(
        ["configuration", "user capacity", "OP", "spare area", "held back", "WAF", "WAF model",
         "TBW", "DWPD", "steady", "seed"],
        rows, align="lrrrrrrrrll",
        title=(f"OP study of a 256 GB-class SSD (256 GiB of NAND), greedy GC, {args.pages_per_block} pages/block, "
               "4 KiB uniform random writes to steady state\n"
               f"simulated on a 1/{args.scale} scale model; OP = (NAND - user)/user, spare area = (NAND - user)/NAND, "
               "held back = of the native 256 GB LBAs; TBW and DWPD relative to native"),
    )
    return Output(data={"nand_bytes": NAND, "scale": args.scale, "pages_per_block": args.pages_per_block,
                        "levels": data}, text=text)
