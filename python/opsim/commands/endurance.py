"""``opsim endurance``: TBW <-> DWPD, lifetime at a write rate, P/E projection."""

from __future__ import annotations

import re
from fractions import Fraction

from .._output import Output, kv_table, table
from ..errors import InputError
from ..planner import endurance
from ..planner.capacity import parse_fraction, plan_capacity
from ..units import fmt_bytes, parse_size


def register(sub, common):
    p = sub.add_parser(
        "endurance",
        parents=[common],
        help="TBW <-> DWPD, lifetime at a write rate, host TB writable from P/E and WAF",
        description=(
            "Endurance arithmetic. DWPD = TBW x 1024 / capacity GB / days (the SanDisk X400 note's "
            "formula; --formula decimal: x 1000, host bytes over user bytes a day, as data-center "
            "ratings and opsim calibrate and advise); capacity is the configured user capacity. "
            "With --pe: host TB writable = P/E x physical / WAF, WAF from --waf or from the "
            "analytic models (--gc, --pages-per-block) at the OP given by --native/--user/--op. "
            "--x400 prints the SanDisk X400 DWPD table recomputed from its TBW table."
        ),
    )
    p.add_argument("--capacity", help="configured user capacity, e.g. 240GB")
    p.add_argument("--tbw", help="rated endurance in TB written (decimal TB)")
    p.add_argument("--dwpd", help="drive writes per day")
    p.add_argument("--years", default="3", help="warranty / life in years (365-day years; default 3)")
    p.add_argument("--days", help="life in days (overrides --years)")
    p.add_argument("--write-rate", help="host writes per day, e.g. 50GB (or 50GB/day) for the lifetime")
    p.add_argument("--pe", help="NAND P/E cycle rating for the projection")
    p.add_argument("--physical", help="physical NAND capacity for the projection (default: from --native, GB as GiB)")
    p.add_argument("--native", help="native capacity (for the OP of the modelled WAF)")
    p.add_argument("--user", help="configured user capacity (for the OP of the modelled WAF)")
    p.add_argument("--op", help="OP in the user basis (e.g. 28%%) for the modelled WAF")
    p.add_argument("--waf", help="write amplification to use (otherwise modelled)")
    p.add_argument(
        "--gc",
        default="greedy",
        choices=["greedy", "fifo", "random", "d-choices"],
        help="GC policy of the modelled WAF (uniform random writes; default greedy)",
    )
    p.add_argument("--pages-per-block", type=int, default=256, help="pages per block for the model (default 256)")
    p.add_argument("--d", type=int, help="d for d-choices")
    p.add_argument("--x400", action="store_true", help="reproduce the SanDisk X400 DWPD table from its TBW table")
    p.add_argument(
        "--formula",
        default="x400",
        choices=["x400", "decimal"],
        help="DWPD = TBW x 1024 (x400, the default: the SanDisk X400 note) or x 1000 (decimal: data-center "
        "ratings, as opsim calibrate and advise) / capacity GB / days",
    )
    p.set_defaults(func=run)


def _formula_text(endurance, formula: str) -> str:
    k = endurance.GB_PER_TB[formula]
    why = "the SanDisk X400 note" if formula == "x400" else "data-center ratings; opsim calibrate and advise"
    return f"DWPD = TBW x {k} / capacity GB / days ({formula}: {why})"


def _num(text, key) -> Fraction:
    s = str(text).strip().replace(",", "").replace("_", "")
    try:
        return Fraction(s)
    except (ValueError, ZeroDivisionError):
        raise InputError(f"{key}: {text!r} is not a number", key=key) from None


def _gb(text, key) -> Fraction:
    return Fraction(parse_size(text, key=key), 10**9)


def x400(days: int | Fraction) -> tuple[dict, str]:
    rows, data = [], []
    for cap, tbws in endurance.X400_TBW.items():
        cells = []
        for label, ugb, tbw, seed in zip(
            endurance.X400_OP_LABELS, endurance.X400_CONFIGURED_GB[cap], tbws, endurance.X400_DWPD_3Y[cap]
        ):
            v = endurance.dwpd_from_tbw(tbw, ugb, days, "x400")
            r = str(endurance.round2(v))
            data.append(
                {
                    "capacity_gb": cap,
                    "op": label,
                    "configured_gb": ugb,
                    "tbw": tbw,
                    "dwpd": float(v),
                    "dwpd_2dp": r,
                    "seed": seed,
                    "match": r == seed,
                }
            )
            cells.append(f"{r} ({'=' if r == seed else 'seed ' + seed})")
        rows.append([f"{cap}GB", *cells])
    text = table(
        ["capacity", *[f"OP {x}" for x in endurance.X400_OP_LABELS]],
        rows,
        title=f"SanDisk X400 DWPD from TBW x 1024 / configured GB / {days} days ('=' marks a cell equal to the seed)",
    )
    return {"days": days, "cells": data, "all_match": all(c["match"] for c in data)}, text


def run(args) -> Output:
    days = _num(args.days, "days") if args.days else _num(args.years, "years") * endurance.DAYS_PER_YEAR
    if days <= 0:
        raise InputError("days: the life must be positive", key="days")
    if args.x400:
        d, text = x400(int(days) if days.denominator == 1 else days)
        return Output(data={"x400": d}, text=text)

    data: dict = {"days": float(days), "formula": args.formula, "gb_per_tb": endurance.GB_PER_TB[args.formula]}
    pairs = []
    _projection_options_need_pe(args)
    if args.tbw is not None and args.dwpd is not None:
        raise InputError("dwpd: give --tbw or --dwpd, not both", key="dwpd")
    tbw = _num(args.tbw, "tbw") if args.tbw is not None else None
    if args.capacity is not None and (tbw is not None or args.dwpd is not None):
        cap = _gb(args.capacity, "capacity")
        if tbw is not None:
            dw = endurance.dwpd_from_tbw(tbw, cap, days, args.formula)
            data.update({"tbw": float(tbw), "capacity_gb": float(cap), "dwpd": float(dw)})
            pairs += [
                ("TBW", f"{float(tbw):g} TB"),
                ("capacity", f"{float(cap):g} GB"),
                ("life", f"{float(days):g} days"),
                ("DWPD", f"{float(dw):.4f} (2 dp: {endurance.round2(dw)})"),
                ("formula", _formula_text(endurance, args.formula)),
            ]
        else:
            dw = _num(args.dwpd, "dwpd")
            tbw = endurance.tbw_from_dwpd(dw, cap, days, args.formula)
            data.update({"dwpd": float(dw), "capacity_gb": float(cap), "tbw": float(tbw)})
            pairs += [
                ("DWPD", f"{float(dw):g}"),
                ("capacity", f"{float(cap):g} GB"),
                ("life", f"{float(days):g} days"),
                ("TBW", f"{float(tbw):.2f} TB"),
                ("formula", _formula_text(endurance, args.formula)),
            ]
    elif args.dwpd is not None:
        raise InputError("capacity: DWPD -> TBW needs --capacity", key="capacity")

    if args.write_rate is not None:
        if tbw is None:
            raise InputError("tbw: the lifetime needs --tbw (or --dwpd with --capacity)", key="tbw")
        rate = parse_size(re.sub(r"\s*/\s*d(ay)?$", "", str(args.write_rate).strip(), flags=re.I), key="write_rate")
        life = endurance.lifetime_days(tbw, rate)
        data.update(
            {
                "write_rate_bytes_per_day": rate,
                "lifetime_days": float(life),
                "lifetime_years": float(life / endurance.DAYS_PER_YEAR),
            }
        )
        pairs += [
            ("write rate", f"{fmt_bytes(rate)}/day"),
            ("lifetime", f"{float(life):,.0f} days = {float(life / endurance.DAYS_PER_YEAR):.2f} years"),
        ]

    if args.pe is not None:
        proj_pairs, proj = _projection(args, endurance)
        data["projection"] = proj
        pairs += proj_pairs

    if not pairs:
        raise InputError(
            "tbw: nothing to compute; give --tbw/--dwpd with --capacity, --write-rate, --pe, or --x400", key="tbw"
        )
    return Output(data=data, text=kv_table(pairs, title="opsim endurance"))


#: the options only the projection (--pe) reads: given without --pe they were silently ignored
_PROJECTION_ONLY = ("physical", "native", "user", "op", "waf", "d")


def _projection_options_need_pe(args) -> None:
    if args.pe is None:
        for name in _PROJECTION_ONLY:
            if getattr(args, name) is not None:
                opt = "--" + name.replace("_", "-")
                raise InputError(f"pe: {opt} is used only by the projection; give --pe too, or drop {opt}", key="pe")


def _projection(args, endurance):
    op_user = None
    cap = None
    if args.native is not None:
        cap = plan_capacity(args.native, user=args.user, physical=args.physical)
        physical = cap["physical"]["bytes"]
        op_user = cap["op"]["user"]
        phys_note = cap["physical"]["note"]
    elif args.physical is not None:
        physical = parse_size(args.physical, key="physical")
        phys_note = "given with --physical"
        if args.user is not None:
            u = parse_size(args.user, key="user")
            if u <= 0 or u > physical:
                raise InputError("user: must be positive and at most the physical capacity", key="user")
            op_user = (physical - u) / u
    else:
        raise InputError("physical: the projection needs --physical or --native", key="physical")
    if args.op is not None:
        op_user = float(parse_fraction(args.op, "op"))
    if args.waf is not None:
        waf = _num(args.waf, "waf")
        waf_src = "given with --waf"
    else:
        if op_user is None:
            raise InputError(
                "waf: give --waf, or an OP (--native/--user, --physical/--user or --op) for the modelled WAF", key="waf"
            )
        waf = endurance.waf_from_models(op_user, args.gc, args.pages_per_block, args.d)
        waf_src = (
            f"opsim.models {args.gc}, OP {100 * op_user:.2f}% (user basis), "
            f"{args.pages_per_block} pages/block, uniform random writes"
        )
    proj = endurance.projection(_num(args.pe, "pe"), physical, waf)
    proj.update({"op_user": op_user, "waf_source": waf_src, "physical_note": phys_note})
    pairs = [
        ("P/E rating", f"{proj['pe_cycles']:g}"),
        ("physical", f"{physical:,} bytes ({phys_note})"),
        ("WAF", f"{proj['waf']:.4f} ({waf_src})"),
        ("host TB writable", f"{proj['host_tb_writable']:,.1f} TB"),
    ]
    if cap is not None and args.years:
        ugb = Fraction(cap["user"]["bytes"], 10**9)
        dw = endurance.dwpd_from_tbw(
            Fraction(proj["host_bytes_writable"], endurance.TB),
            ugb,
            _num(args.days, "days") if args.days else _num(args.years, "years") * endurance.DAYS_PER_YEAR,
            args.formula,
        )
        proj["dwpd"] = float(dw)
        pairs.append(("DWPD over the life", f"{float(dw):.3f}"))
    return pairs, proj
