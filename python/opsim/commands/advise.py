"""``opsim advise``: the smallest OP that meets a workload's targets, screened with the
analytic models and confirmed with the timed simulator (docs/planner.md, "Advisor")."""

from __future__ import annotations

import re
import sys
from fractions import Fraction

from .._output import Output, kv_table, table
from ..errors import InputError
from ..errors import option_error as _bad
from ..units import parse_size
from ..workload import Workload, parse_read_write, parse_skew
from ..workload.fio import fio_workload
from . import _advise_compare as advise_compare
from . import _advise_trace as advise_trace


def register(sub, common):
    p = sub.add_parser(
        "advise",
        parents=[common],
        help="the smallest OP that meets IOPS, endurance, capacity and latency targets",
        description=(
            "Recommend how much of a drive to hold back as spare area. Candidate OP levels (every "
            "0.5% of the native capacity held back, as whole marketed GB) are screened with the "
            "analytic models (WAF, a bottleneck bound on IOPS, the P/E budget), then the pick is "
            "confirmed with the timed simulator on a scale model of the drive, searching down or up "
            "to the smallest level that meets every target. The table shows the candidates, which "
            "target binds and, when no OP can meet the targets, why. Exit 0 with a recommendation, "
            "1 when no OP meets the targets, 2 on bad input. With --compare FILE: a fleet's need and "
            "candidate drives ranked by cost per usable TB-year, each with its drive count and OP. See docs/planner.md."
        ),
    )
    _drive_options(p)
    _workload_options(p)
    advise_trace.add_options(p)
    _target_options(p)
    _tenant_and_search_options(p)
    advise_compare.add_option(p.add_argument_group("buy or over-provision (a fleet, several drives)"))
    p.set_defaults(func=run)


def _drive_options(p) -> None:
    g = p.add_argument_group("drive (a preset, a drive file, or parameters)")
    which = g.add_mutually_exclusive_group()
    which.add_argument(
        "--preset",
        help="a drive from `opsim presets` (capacity, NAND and timing with sources), or a drive file's path",
    )
    which.add_argument(
        "--drive",
        metavar="FILE",
        help="a drive file: a TOML file in the presets' schema ([preset], [drive], [ftl], [timing]); its "
        "[preset.calibration] pe_cycles is the P/E rating unless --pe is given",
    )
    g.add_argument("--native", help="native user capacity, e.g. 480GB (a drive given by parameters)")
    g.add_argument("--physical", help="NAND capacity, e.g. 512GiB (default: native GB as GiB, 7.37%% OP)")
    g.add_argument("--pages-per-block", type=int, help="pages per erase block (parameters; default 256)")
    g.add_argument("--interface", choices=["sata", "nvme"], help="host interface (parameters; default sata)")
    g.add_argument("--pe", help="NAND P/E cycle rating (needed for TBW, DWPD and lifetime)")
    g.add_argument("--gc", choices=["greedy", "fifo", "random"], help="GC policy (default: the preset's, greedy)")
    g.add_argument("--queue-depth", type=int, help="outstanding commands (default: the preset's, 32)")
    g.add_argument("--sector-size", type=int, default=512, choices=[512, 4096], help="logical sector size")


def _workload_options(p) -> None:
    w = p.add_argument_group("workload")
    w.add_argument(
        "--read-write",
        default="0:100",
        metavar="R:W",
        help="read:write ratio of the commands (default 0:100; the Micron note's CDN case is 95:5)",
    )
    w.add_argument(
        "--block-size",
        help="transfer size (default 4KiB; with --profile jesd219 only 4KiB, "
        "which keeps its zones and drops its size mix)",
    )
    w.add_argument("--sequential", default="0%", help="share of the writes that are sequential (default 0%%)")
    w.add_argument(
        "--skew",
        help="uniform (the default, but see --min-dwpd), hot-cold:20/80 (20%% of the LBAs take 80%% of the "
        "writes) or zipf:0.9",
    )
    w.add_argument(
        "--profile",
        choices=["jesd219"],
        help="JEDEC JESD219 enterprise endurance workload (its size mix and LBA zones)",
    )
    w.add_argument("--write-rate", help="host writes per day, e.g. 200GB (for the lifetime)")
    w.add_argument(
        "--fio",
        metavar="JOBFILE",
        help="a fio job file's job as the workload: screened with its distribution mapped to a skew, "
        "confirmed by simulating the job itself (docs/planner.md, fio jobs)",
    )
    w.add_argument("--section", metavar="NAME", help="with --fio: the job in a file of several")


def _target_options(p) -> None:
    t = p.add_argument_group("targets (at least one)")
    t.add_argument(
        "--min-iops",
        help="steady-state IOPS, e.g. 25000, or 3x (that many times the native configuration's, same workload)",
    )
    t.add_argument("--min-tbw", help="host TB writable, e.g. 600, or 4x")
    t.add_argument(
        "--min-dwpd",
        help="drive writes per day over --dwpd-years, rated as JEDEC rates data-center drives: under the "
        "JESD219 enterprise workload (the workload then, unless --profile, --skew, --block-size or "
        "--sequential says otherwise)",
    )
    t.add_argument("--dwpd-years", default="5", help="the period of the DWPD figure (default 5 years)")
    t.add_argument("--min-lifetime", help="years the P/E budget must last at --write-rate")
    t.add_argument("--min-capacity", help="usable capacity, e.g. 800GB")
    t.add_argument(
        "--max-latency",
        action="append",
        default=[],
        metavar="[read:|write:]pNN=TIME",
        help="a latency bound, e.g. p99=5ms or read:p99.9=2000us (simulator only; at the IOPS target "
        "when one is given, else at the queue depth); repeatable",
    )
    t.add_argument("--price", help="drive price, for price per IOPS and per usable GB")


def _tenant_and_search_options(p) -> None:
    m = p.add_argument_group("tenants and data placement")
    m.add_argument(
        "--tenants",
        metavar="FILE",
        help="a TOML file of [[namespace]] tables (capacity as a share of the user capacity, workload, share, "
        "placement) and optionally [ftl.placement]: the OP the endurance targets need with and without "
        "placement, side by side (functional simulation of each level)",
    )
    m.add_argument(
        "--placement",
        choices=["none", "streams", "fdp"],
        help="with --tenants: the placement to recommend for (default fdp), compared with none",
    )
    s = p.add_argument_group("search")
    s.add_argument("--step", default="0.5%", help="grid step, share of the native capacity (default 0.5%%)")
    s.add_argument(
        "--max-held-back",
        default="50%",
        help="largest share of the native capacity to hold back (default 50%%, at most 75%%)",
    )
    s.add_argument(
        "--no-simulate", dest="simulate", action="store_false", help="analytic screen only (fast, not confirmed)"
    )
    s.add_argument(
        "--model-blocks",
        type=int,
        default=None,
        help="blocks in the simulator's scale model (default 2048: opsim.planner.advise.DEFAULT_MODEL_BLOCKS)",
    )
    s.add_argument("--seed", type=int, default=1, help="simulator seed")
    s.add_argument(
        "--conservative",
        action="store_true",
        help="judge the targets on the low end of each 95%% interval (lowest IOPS, TBW, DWPD, lifetime over "
        "the drive file's profile) rather than on the best fit; needs a drive file that keeps a profile "
        "(`opsim calibrate -o`)",
    )


MAX_U32, MAX_U64 = 2**32 - 1, 2**64 - 1


def _advisor():
    """:mod:`opsim.planner.advise`, imported when the command runs: it takes numpy and scipy (its
    analytic models), which `opsim --help` and every other command do not need."""
    from ..planner import advise  # noqa: PLC0415

    return advise


def _frac(text, option, lo=0.0, hi=1.0) -> Fraction:
    v = _advisor().parse_fraction_option(text, option)
    if not (lo <= v <= hi):
        raise _bad(option, f"{text} is outside {100 * lo:g}%..{100 * hi:g}%")
    return Fraction(str(v)).limit_denominator(10**6)


def _size(text, option) -> int:
    try:
        v = parse_size(text, key=option)
    except InputError as e:
        raise _bad(option, str(e).split(": ", 1)[-1]) from None
    if v <= 0:
        raise _bad(option, "must be positive")
    return v


def parse_args(args):
    if args.fio is not None or args.section is not None:
        return _fio_args(args)
    wl = Workload(read_fraction=parse_read_write(args.read_write))
    wl.sequential = _advisor().parse_fraction_option(args.sequential, "sequential")
    rating = dwpd_rating_workload(args)
    if args.profile == "jesd219" or rating:
        if args.skew not in (None, "uniform"):
            raise _bad("skew", "--profile jesd219 has its own LBA zones; drop --skew")
        wl.skew = "jesd219"
        wl.block_size = None
        if args.block_size is not None:
            bs = _size(args.block_size, "block_size")
            if bs != 4096:
                raise _bad("block_size", "with --profile jesd219 only 4KiB (its zones with 4 KiB transfers)")
            wl.block_size = 4096
    else:
        for k, v in parse_skew(args.skew or "uniform").items():
            setattr(wl, k, v)
        wl.block_size = _size(args.block_size, "block_size") if args.block_size else 4096
        if wl.block_size % 512:
            raise _bad("block_size", f"{wl.block_size} bytes is not a whole number of 512-byte sectors")
    if args.write_rate is not None:
        wl.write_rate = _size(re.sub(r"\s*/\s*d(ay)?$", "", str(args.write_rate).strip(), flags=re.I), "write_rate")
    return wl, _targets(args, rating)


def _fio_args(args):
    if args.fio is None:
        raise _bad("section", "needs --fio (the job file)")
    given = [
        ("skew", args.skew is not None),
        ("profile", args.profile is not None),
        ("block_size", args.block_size is not None),
        ("sequential", str(args.sequential).strip() not in ("0", "0%")),
        ("read_write", args.read_write != "0:100"),
        ("tenants", args.tenants is not None),
    ]
    for opt, on in given:
        if on:
            raise _bad(opt, "the fio job sets the workload; drop it or --fio")
    wl = fio_workload(args.fio, args.section)  # errors name the job file's option and line, or --section
    if args.queue_depth is None and wl.job.get("iodepth"):
        args.queue_depth = int(wl.job["iodepth"])
    if args.write_rate is not None:
        wl.write_rate = _size(re.sub(r"\s*/\s*d(ay)?$", "", str(args.write_rate).strip(), flags=re.I), "write_rate")
    return wl, _targets(args, False)


def _targets(args, rating: bool):
    advise = _advisor()
    tg = advise.Targets()
    if args.min_iops is not None:
        tg.min_iops, tg.min_iops_relative = advise.parse_target_number(args.min_iops, "min_iops", allow_relative=True)
    if args.min_tbw is not None:
        tg.min_tbw, tg.min_tbw_relative = advise.parse_target_number(args.min_tbw, "min_tbw", allow_relative=True)
    if args.min_dwpd is not None:
        tg.min_dwpd, _ = advise.parse_target_number(args.min_dwpd, "min_dwpd")
        tg.dwpd_workload = advise.JESD219_RATING if rating else "the workload given"
    tg.dwpd_years, _ = advise.parse_target_number(args.dwpd_years, "dwpd_years")
    if args.min_lifetime is not None:
        tg.min_lifetime_years, _ = advise.parse_target_number(args.min_lifetime, "min_lifetime")
    if args.min_capacity is not None:
        tg.min_capacity = _size(args.min_capacity, "min_capacity")
    tg.latency = [advise.parse_latency(x) for x in args.max_latency]
    if args.price is not None:
        tg.price, _ = advise.parse_target_number(str(args.price).lstrip("$"), "price")
    return tg


def dwpd_rating_workload(args) -> bool:
    """Whether the workload is JESD219's because of --min-dwpd: a DWPD target with no workload
    shape given (--profile, --skew, --block-size, --sequential) is rated as JEDEC rates
    data-center drives (JESD218 with the JESD219 enterprise workload; the P/E rating
    `opsim calibrate` derives from a datasheet's DWPD is taken at that workload too)."""
    return (
        args.min_dwpd is not None
        and args.fio is None
        and getattr(args, "trace", None) is None
        and args.tenants is None
        and args.profile is None
        and args.skew is None
        and args.block_size is None
        and str(args.sequential).strip() in ("0", "0%")
    )


def run(args) -> Output:
    advise = _advisor()
    if args.model_blocks is None:
        args.model_blocks = advise.DEFAULT_MODEL_BLOCKS
    if args.model_blocks < advise.MIN_MODEL_BLOCKS:
        raise _bad("model_blocks", f"at least {advise.MIN_MODEL_BLOCKS}")
    if args.model_blocks > MAX_U32:  # the core's count of a scale model's blocks
        raise _bad("model_blocks", f"{args.model_blocks:,} is more than the core's {MAX_U32:,}")
    if not 0 <= args.seed <= MAX_U64:  # the core's run.seed, checked before the screen
        raise _bad("seed", f"{args.seed} is not a seed: a whole number from 0 to {MAX_U64:,}")
    step = _frac(args.step, "step", 0.0005, 0.10)
    if step == 0:
        raise _bad("step", "must be positive")
    max_hb = _frac(args.max_held_back, "max_held_back", 0.0, float(advise.DIAGNOSIS_HELD_BACK))
    if args.compare is not None:
        advise_compare.check(args)
        return advise_compare.run(args, advise, step, max_hb)
    advise_trace.check(args)
    wl, tg = parse_args(args)
    drive = advise.load_drive(
        preset=args.drive if args.drive is not None else args.preset,
        preset_option="drive" if args.drive is not None else "preset",
        native=args.native,
        physical=args.physical,
        pages_per_block=args.pages_per_block,
        interface=args.interface,
        pe=args.pe,
        gc=args.gc,
        queue_depth=args.queue_depth,
        sector_size=args.sector_size,
    )
    if args.conservative and args.tenants is not None:
        raise _bad("conservative", "the tenants advisor carries no intervals; drop --conservative or --tenants")
    if args.placement is not None and args.tenants is None:
        raise _bad("placement", "needs --tenants (the namespaces whose writes are placed)")
    tenants = advise.load_tenants(args.tenants) if args.tenants is not None else None
    tty = sys.stderr.isatty()

    def progress(msg):
        if tty:
            sys.stderr.write(f"\r  {msg:<60}")
            sys.stderr.flush()

    if tenants is not None:
        levels = advise.grid(drive, step, max_hb)
        d = advise.advise_tenants(
            drive, tg, levels, tenants, args.placement or "fdp", args.model_blocks, args.seed, progress=progress
        )
        d |= {"drive": drive.to_dict(), "targets": tg.to_dict()}
        if tty:
            sys.stderr.write("\r" + " " * 64 + "\r")
        ok = all(v["recommended"] is not None for v in d["modes"].values())
        return Output(data=d, text=render_tenants(d), exit_code=0 if ok else 1)
    if args.trace is not None:
        d = advise_trace.run(args, drive, tg, step, max_hb, wl.write_rate, progress)
        if tty:
            sys.stderr.write("\r" + " " * 64 + "\r")
        return Output(data=d, text=render(d), exit_code=0 if d["feasible"] else 1)
    d = advise.advise(
        drive,
        wl,
        tg,
        step=step,
        max_held_back=max_hb,
        confirm=args.simulate,
        model_blocks=args.model_blocks,
        seed=args.seed,
        progress=progress,
        conservative=args.conservative,
    )
    if tty:
        sys.stderr.write("\r" + " " * 64 + "\r")
    return Output(data=d, text=render(d), exit_code=0 if d["feasible"] else 1)


# ----------------------------------------------------------------------------- text


def render_tenants(d: dict) -> str:
    """The side-by-side table of the tenants advisor."""
    rows = []
    for mode, v in d["modes"].items():
        r = v["recommended"]
        if r is None:
            rows.append([mode, "no level meets the targets", "-", "-", "-", "-", "-"])
            continue
        rows.append(
            [
                mode,
                _pct(r["held_back"]),
                _cap(r),
                _pct(r["op"]["user"]),
                f"{r['waf']:.3f}",
                _num(r["tbw_tb"]),
                _num(r["dwpd"], "{:.2f}"),
            ]
        )
    lines = [
        table(
            ["placement", "held back", "user capacity", "OP (user)", "WAF", "TBW (TB)", "DWPD"],
            rows,
            title=f"opsim advise: {d['drive']['title']}, tenants with and without placement",
            align="lrrrrrr",
        )
    ]
    for mode, v in d["modes"].items():
        r = v["recommended"]
        if r is not None and r["namespaces"]:
            per = ", ".join(f"{n['name']} {n['waf']:.3f}" for n in r["namespaces"] if n["waf"] is not None)
            lines.append(f"  {mode}: per-namespace WAF at the recommendation: {per}")
    s = d.get("op_saved")
    if s is not None:
        lines.append(
            f"OP saved by {s['by']}: {100 * s['held_back']:.1f}% of the native capacity, "
            f"{_gb(s['user_bytes'])} more user capacity for the same targets"
        )
    lines.append(
        f"each level: the functional simulator on a {d['model_blocks']:,}-block scale model with the OP garbage "
        f"collection sees at that level; {d['levels_simulated']} runs"
    )
    return "\n".join(lines)


def _pct(x, digits=1):
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _gb(b):
    return f"{b / 1e9:,.1f} GB"


def _num(x, fmt="{:,.0f}"):
    return "-" if x is None else fmt.format(x)


def _fig(name, v):
    """A target's figure with its unit."""
    if v is None:
        return "not measured"
    if name == "iops":
        return f"{v:,.0f} IOPS"
    if name == "tbw":
        return f"{v:,.0f} TB"
    if name == "dwpd":
        return f"{v:.3f} DWPD"
    if name == "lifetime":
        return f"{v:,.2f} years"
    if name == "capacity":
        return _gb(v)
    return f"{v:,.0f} us"


def _lat(row, targets):
    lat = row.get("latency_us")
    if not lat:
        return "-"
    keys = [(k, key) for k, key, _ in targets["_latency"]] or [("all", "p99")]
    return " / ".join(_num(lat.get(k, {}).get(key)) for k, key in keys)


def _iv(r: dict, key: str, name: str, fmt: str) -> str:
    """A figure and its 95% interval, "2.53 (2.31-2.80)"; the figure alone without one."""
    v = r.get(key)
    if v is None:
        return "-"
    lo, hi = r.get(f"{name}_low"), r.get(f"{name}_high")
    if lo is None and hi is None:
        return fmt.format(v)
    return f"{fmt.format(v)} ({'no limit' if lo is None else fmt.format(lo)}-{'no limit' if hi is None else fmt.format(hi)})"


def _cap(row):
    return f"{row['user_gb']} GB" if row.get("user_gb") is not None else _gb(row["user_bytes"])


def render(d: dict) -> str:
    drv, wl, tg, rec = d["drive"], d["workload"], d["targets"], d["recommendation"]
    tg = dict(tg, _latency=[(x["ios"], x["percentile"], x["us"]) for x in tg["max_latency_us"]])
    lines = [
        f"opsim advise: {drv['title']}",
        f"  native {_gb(drv['native_bytes'])} ({drv['native_sectors']:,} sectors), NAND "
        f"{_gb(drv['physical_bytes'])}, {drv['gc']} GC, {drv['interface'].upper()} QD{drv['queue_depth']}"
        + (f", P/E {drv['pe_cycles']:g}" if drv["pe_cycles"] else ""),
        f"  workload: {wl['description']}",
        "  targets: " + "; ".join(tg["described"]),
        "",
    ]
    lat_hdr = "/".join(f"{'' if k == 'all' else k + ' '}{key}" for k, key, _ in tg["_latency"]) or "p99"
    lines += _recommendation_lines(rec, tg, lat_hdr) if rec is not None else _infeasible_lines(d)
    lines.append("")
    if "trace" in d:
        lines += [*advise_trace.lines(d), ""]
    lines += _interval_lines(d)
    lines.append("")
    extra = _ExtraColumns(drv["pe_cycles"] is not None, bool(wl["write_rate_bytes_per_day"]), tg["price"] is not None)
    lines.append(_screen_table(d, extra))
    if d["simulated"]:
        lines.append("")
        lines.append(_simulated_table(d, tg, lat_hdr, extra))
    lines.append("")
    lines.append(kv_table([(f"[{i + 1}]", a) for i, a in enumerate(d["assumptions"])], title="Sources and assumptions"))
    return "\n".join(lines)


def _recommendation_lines(rec: dict, tg: dict, lat_hdr: str) -> list[str]:
    f = rec["figures"]
    src = rec["source"]
    op = rec["op"]
    lines = [
        f"Recommendation: hold back {_pct(rec['held_back'])} of the native capacity: "
        f"{_cap(rec)} usable ({rec['user_sectors']:,} sectors)",
        f"  OP {_pct(op['added'])} added over native (SanDisk/SK hynix basis), {_pct(op['user'])} of user "
        f"capacity (user basis), spare area {_pct(op['physical'])} of the NAND",
    ]
    figs = [f"WAF {_iv(f, 'waf', 'waf', '{:.2f}')}", f"{_iv(f, 'iops', 'iops', '{:,.0f}')} IOPS"]
    if f["tbw_tb"] is not None:
        under = f" under {tg['dwpd_workload']}" if tg.get("dwpd_workload") else ""
        figs += [
            f"{_iv(f, 'tbw_tb', 'tbw', '{:,.0f}')} TBW",
            f"{_iv(f, 'dwpd', 'dwpd', '{:.2f}')} DWPD over {tg['dwpd_years']:g} years{under}",
        ]
    if f["lifetime_years"] is not None:
        figs.append(f"{_iv(f, 'lifetime_years', 'lifetime', '{:,.1f}')} years at the write rate")
    if f["price_per_iops"] is not None:
        figs.append(f"{f['price_per_iops']:.4f} per IOPS")
    if tg["_latency"] and f["latency_us"]:
        figs.append(f"{lat_hdr} {_lat(f, tg)} us")
    lines.append(f"  {src}: " + ", ".join(figs))
    if rec["binding"]:
        b = rec["below"]
        parts = [
            f"{name} {_fig(name, b['checks'][name][1])} against {_fig(name, b['checks'][name][2])}"
            for name in rec["binding"]
        ]
        low = (
            " (at the low end of its interval: --conservative)"
            if rec.get("decided_on", "").endswith("interval")
            else ""
        )
        lines.append(
            f"  binding target: {', '.join(rec['binding'])} (one step less OP, {_pct(b['held_back'])} "
            f"held back, misses it{low}: {'; '.join(parts)})"
        )
    else:
        lines.append("  binding target: none: the native configuration already meets every target")
    mp = rec["model_pick"]
    if src == "simulator" and mp is not None:
        lines.append(f"  the analytic screen picked {_pct(mp['held_back'])} held back ({_gb(mp['user_bytes'])})")
    lines.append(f"  to set it: {rec['plan_command']}")
    return lines


def _interval_lines(d: dict) -> list[str]:
    """Where the intervals (in parentheses) come from, or where they would."""
    iv = d["interval"]
    if iv["from"] is None:
        return [f"Intervals: none: {iv['how']}"]
    n = len(iv["points"]) - 1
    return [
        f"Intervals (in parentheses, 95%): {iv['from']}, {n} points and the drive as stored; "
        f"decided on {iv['decided_on']}",
        "  the screen at every point; "
        + (
            "the simulator also at the two points giving the screen's lowest and highest WAF at each simulated level"
            if d["simulated"]
            else "nothing simulated"
        )
        + f"; P/E at each point: {iv['pe_cycles']}",
    ]


def _infeasible_lines(d: dict) -> list[str]:
    lines = ["No OP level meets every target:"]
    for r in d["reasons"]:
        lines.append(f"  {r['target']}: {r['reason']}")
    c = d["ceiling"]
    if not any(r["reason"].startswith("no OP can") for r in d["reasons"]):
        lines.append(
            f"  (with no garbage collection at all this workload would run at {c['iops']:,.0f} IOPS, "
            f"limited by the {c['bottleneck']})"
        )
    return lines


class _ExtraColumns:
    """The endurance and price columns, when known."""

    def __init__(self, endurance: bool, years: bool, price: bool) -> None:
        self.endurance, self.years, self.price = endurance, endurance and years, price

    def header(self) -> list[str]:
        e = ["TBW", "DWPD"] if self.endurance else []
        return e + (["years"] if self.years else []) + (["$/IOPS"] if self.price else [])

    def cells(self, r: dict) -> list[str]:
        return (
            ([_num(r["tbw_tb"]), _iv(r, "dwpd", "dwpd", "{:.2f}")] if self.endurance else [])
            + ([_num(r["lifetime_years"], "{:,.1f}")] if self.years else [])
            + ([_num(r["price_per_iops"], "{:.4f}")] if self.price else [])
        )


def _screen_rows_shown(d: dict) -> set[int]:
    """The screen's rows shown: every 5% of native plus the levels around the pick."""
    screen, rec = d["screen"], d["recommendation"]
    allowed = d["search"]["allowed_levels"]
    show = set()
    nxt = 0.0
    for r in screen[:allowed]:
        if r["held_back"] + 1e-9 >= nxt:
            show.add(r["index"])
            nxt = r["held_back"] + 0.05 - 1e-9
    show.add(screen[allowed - 1]["index"] if allowed else 0)
    for k in ([rec["index"], rec["index"] - 1] if rec else []) + [
        (rec["model_pick"]["index"] if rec and rec["model_pick"] else -1)
    ]:
        if 0 <= k < len(screen):
            show.add(k)
    return show


def _screen_table(d: dict, extra: _ExtraColumns) -> str:
    screen = d["screen"]
    hdr = ["held back", "usable", "OP added", "OP user", "WAF", "IOPS", "limited by", *extra.header(), "misses"]
    rows = []
    for i in sorted(_screen_rows_shown(d)):
        r = screen[i]
        rows.append(
            [
                _pct(r["held_back"]),
                _cap(r),
                _pct(r["op"]["added"]),
                _pct(r["op"]["user"]),
                _iv(r, "waf", "waf", "{:.2f}"),
                _iv(r, "iops", "iops", "{:,.0f}"),
                r["bottleneck"],
                *extra.cells(r),
                ", ".join(r["fails"]) or "-",
            ]
        )
    return table(
        hdr,
        rows,
        align="lrrrrrl" + "r" * (len(hdr) - 8) + "l",
        title=f"Analytic screen (every {100 * d['search']['step_of_native']:g}% step is evaluated; "
        "every 5% and the levels around the pick shown)",
    )


def _model_shape(sm: dict) -> str:
    """The scale model's GC units: "2,048-block", or its superblocks and their pages."""
    if sm.get("superblock_scale") is None:
        return f"{sm['blocks']:,}-block"
    return f"{sm['units']:,}-superblock ({sm['unit_pages']:,} pages each)"


def _simulated_table(d: dict, tg: dict, lat_hdr: str, extra: _ExtraColumns) -> str:
    sm = d["search"]["scale_model"]
    hdr = ["held back", "usable", "WAF", "IOPS", f"{lat_hdr} us", *extra.header(), "steady", "misses"]
    rows = [
        [
            _pct(r["held_back"]),
            _cap(r),
            _iv(r, "waf", "waf", "{:.2f}"),
            _iv(r, "iops", "iops", "{:,.0f}"),
            _lat(r, tg),
            *extra.cells(r),
            "yes" if r["steady_state"] else "no",
            ", ".join(r["fails"]) or "-",
        ]
        for r in d["simulated"]
    ]
    return table(
        hdr,
        rows,
        align="l" + "r" * (len(hdr) - 2) + "l",
        title=f"Simulator confirmation (timed model, {_model_shape(sm)} scale model, "
        f"seed {d['search']['seed']}; 'steady': SNIA rule on per-round IOPS)",
    )
