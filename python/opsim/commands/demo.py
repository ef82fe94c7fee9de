"""``opsim demo``: the main job.  For now, a small OP study printed as a table.

One drive with a fixed amount of NAND is configured at the OP levels the seeds discuss
(7% client default, 12% Corsair Neutron, 28% SanDisk X400 / enterprise, 20% and 40% of the
native capacity held back as in the Intel 320 note, 50% AnandTech) and run under 4 KiB
uniform random writes to steady state.  WAF comes from the simulator, with the greedy
mean-field model beside it; endurance follows from WAF at fixed NAND and P/E rating.
"""

from __future__ import annotations

import sys

from .._output import Output, table
from ..units import fmt_bytes, pct

# (label, OP in the user basis)
LEVELS = [
    ("client default (7%)", 0.07),
    ("Neutron-like 12% spare", 0.12 / 0.88),
    ("Intel 320: 20% of native held back", None),
    ("X400 28%", 0.28),
    ("Intel 320: 40% of native held back", None),
    ("AnandTech 50% spare", 1.0),
]


def register(sub, common):
    p = sub.add_parser("demo", parents=[common], help="run the default OP study and print the table")
    p.add_argument("--nand", default="8GiB", help="NAND (physical) capacity of the modelled drive (default 8GiB)")
    p.add_argument("--pages-per-block", type=int, default=256)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(func=run)


def run(args) -> Output:
    from .. import models
    from ..sim import simulate
    from ..units import parse_size

    nand = parse_size(args.nand, key="--nand")
    page = 4096
    native_op = 0.0737  # GiB of NAND sold as GB: the "level 1" OP of the SK hynix talk
    native_user = int(nand / (1 + native_op)) // page * page
    rows, data = [], []
    for i, (label, op) in enumerate(LEVELS):
        if op is None:
            held = 0.20 if "20%" in label else 0.40
            user = int(native_user * (1 - held)) // page * page
        else:
            user = int(nand / (1 + op)) // page * page
        cfg = {
            "drive": {"user_capacity": user, "physical_capacity": nand, "native_capacity": native_user,
                      "pages_per_block": args.pages_per_block},
            "run": {"seed": args.seed, "warmup_drive_writes": 2, "measure_drive_writes": 2},
        }
        if sys.stderr.isatty():
            sys.stderr.write(f"\r  simulating {i + 1}/{len(LEVELS)}: {label:<40}")
            sys.stderr.flush()
        r = simulate(cfg)
        model = models.waf_greedy(r.op["effective"], args.pages_per_block)
        data.append({"label": label, "user_bytes": user, "op": r.op, "waf": r.waf, "waf_model": model,
                     "steady_state": r.steady_state["reached"]})
    if sys.stderr.isatty():
        sys.stderr.write("\n")
    base = data[0]
    for d in data:
        # same NAND, same P/E rating: host bytes writable scale with 1 / WAF;
        # drive writes per day scale with 1 / (WAF x user capacity)
        d["tbw_vs_default"] = base["waf"] / d["waf"]
        d["dwpd_vs_default"] = (base["waf"] * base["user_bytes"]) / (d["waf"] * d["user_bytes"])
        rows.append([d["label"], fmt_bytes(d["user_bytes"]), pct(d["op"]["user"], 1), pct(d["op"]["physical"], 1),
                     pct(d["op"]["native"], 1), f"{d['waf']:.3f}", f"{d['waf_model']:.3f}",
                     f"{d['tbw_vs_default']:.2f}x", f"{d['dwpd_vs_default']:.2f}x",
                     "yes" if d["steady_state"] else "no"])
    text = table(
        ["configuration", "user capacity", "OP user", "spare area", "held back", "WAF sim", "WAF model",
         "TBW", "DWPD", "steady"],
        rows, align="lrrrrrrrrl",
        title=(f"OP study: {fmt_bytes(nand)} of NAND, {args.pages_per_block} pages/block, greedy GC, "
               "4 KiB uniform random writes to steady state\n"
               "(OP user = (physical-user)/user; spare area = (physical-user)/physical; held back = of the "
               "native capacity; TBW/DWPD relative to the client default)"),
    )
    return Output(data={"nand_bytes": nand, "pages_per_block": args.pages_per_block, "levels": data}, text=text)
