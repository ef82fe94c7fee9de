"""``opsim demo``: the main job.  The seeds' OP study on one of their drives, as a table and a report.

The drive is the seeds' "256 GB-class" client SSD: 256 GiB of NAND sold as 256 GB (IDEMA
LBA1-03 count, 7.37% built-in OP), here the Samsung 840 Pro preset (AnandTech's drive in
seed 003).  It is configured at the capacities the seeds discuss (SanDisk X400 240 GB and
200 GB, Intel's 20% and 40% of the native LBAs held back, AnandTech's 12%, 25% and 50% spare
area) and run on the timed model under two workloads: 4 KiB random writes at QD32 after a
sequential fill (AnandTech's IO-consistency method; the write-saturation curve), and a 95:5
read:write mix of 4 KiB random IOs (Micron's read-heavy case) from the analytic steady state.
The simulation runs on a scale model with 1/SCALE of the NAND and every timing, die and block
size of the preset kept; WAF comes from the simulator with the greedy mean-field model beside
it, IOPS and latency from the timed model, endurance from WAF at fixed NAND and P/E rating.

``--drive FILE`` runs the same study on a drive file (a TOML file in the presets' schema): the
same OP levels, as shares of that drive's native capacity and NAND.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from dataclasses import dataclass
from fractions import Fraction

from .._output import Output, table
from ..units import pct

NAND = 256 * 2**30  # bytes of NAND in the modelled drive
SECTOR = 512
PRESET = "samsung-840-pro-256gb"
DEFAULT_REPORT = "opsim-demo-report.html"

#: (key, label, workload table, run table)
WORKLOADS = [
    (
        "random-write",
        "4 KiB random write, QD32",
        {"type": "uniform", "read_fraction": 0.0},
        {"precondition": "fill", "warmup_drive_writes": 2, "measure_drive_writes": 1.5, "round_drive_writes": 0.25},
    ),
    (
        "read-heavy",
        "4 KiB random 95:5 read:write, QD32",
        {"type": "uniform", "read_fraction": 0.95},
        {
            "precondition": "analytic",
            "warmup_drive_writes": 0.1,
            "measure_drive_writes": 0.5,
            "round_drive_writes": 0.1,
        },
    ),
]


def levels():
    """(label, user sectors of the 256 GB-class drive, source)."""
    from ..planner.capacity import idema_lba_count

    native = idema_lba_count(256)
    nand_sectors = NAND // SECTOR
    return sorted(
        [
            ("native 256 GB", native, "Micron Table 1 / IDEMA"),
            ("12% spare area", int(nand_sectors * Fraction(88, 100)), "AnandTech (Neutron)"),
            ("240 GB (7% added)", idema_lba_count(240), "SanDisk X400"),
            ("20% of native LBAs held back", int(native * Fraction(8, 10)), "Intel 320 / HDAT2"),
            ("200 GB (28% added)", idema_lba_count(200), "SanDisk X400"),
            ("25% spare area", int(nand_sectors * Fraction(75, 100)), "AnandTech"),
            ("40% of native LBAs held back", int(native * Fraction(6, 10)), "Intel 320"),
            ("50% spare area", int(nand_sectors * Fraction(50, 100)), "AnandTech"),
        ],
        key=lambda level: -level[1],
    )


def _gb(b: int) -> str:
    """Bytes as marketed GB: whole from 1 GB when within 0.05 GB of a whole number, else one
    decimal from 10 GB, else three significant digits."""
    x = b / 1e9
    if x >= 1 and abs(x - round(x)) < 0.05:
        return f"{x:.0f}"
    return f"{x:.1f}" if x >= 10 else f"{x:.3g}"


def levels_for(native_sectors: int, nand: int) -> list[tuple[str, int, str]]:
    """(label, user sectors, source) of a drive with ``native_sectors`` and ``nand`` bytes of
    NAND at the seeds' OP levels, as shares of its native capacity and NAND (SanDisk X400's
    240 GB and 200 GB of 256 GB as 7% and 28% added), those above native dropped."""
    nand_sectors = nand // SECTOR
    native_gb = _gb(native_sectors * SECTOR)
    added = [(Fraction(107, 100), "7%"), (Fraction(128, 100), "28%")]
    rows = [(f"native {native_gb} GB", native_sectors, "the drive file")]
    rows += [
        (f"{_gb(int(native_sectors / f) * SECTOR)} GB ({t} added)", int(native_sectors / f), "SanDisk X400")
        for f, t in added
    ]
    rows += [
        ("12% spare area", int(nand_sectors * Fraction(88, 100)), "AnandTech (Neutron)"),
        ("20% of native LBAs held back", int(native_sectors * Fraction(8, 10)), "Intel 320 / HDAT2"),
        ("25% spare area", int(nand_sectors * Fraction(75, 100)), "AnandTech"),
        ("40% of native LBAs held back", int(native_sectors * Fraction(6, 10)), "Intel 320"),
        ("50% spare area", int(nand_sectors * Fraction(50, 100)), "AnandTech"),
    ]
    return sorted([r for r in rows if r[1] <= native_sectors], key=lambda level: -level[1])


@dataclass(frozen=True)
class Study:
    """The drive the demo studies: the default (the Samsung 840 Pro preset as the seeds'
    256 GB-class drive) or a drive file."""

    preset: str  #: what the configs' ``preset`` names: a preset, or a drive file's absolute path
    nand: int  #: bytes of NAND
    levels: list  #: (label, user sectors, source), native first
    drive: str  #: the drive in the titles ("a 256 GB-class SSD")
    nand_text: str  #: its NAND ("256 GiB of NAND")
    native_text: str  #: what "held back" is of ("the native 256 GB LBAs")
    default_scale: int  #: --scale when not given
    drive_file: str | None = None


def default_study() -> Study:
    return Study(
        preset=PRESET,
        nand=NAND,
        levels=levels(),
        drive="a 256 GB-class SSD",
        nand_text="256 GiB of NAND",
        native_text="the native 256 GB LBAs",
        default_scale=16,
    )


def drive_study(path: str) -> Study:
    """The study of the drive file at ``path``; errors (exit 2) name ``--drive`` and the file."""
    from .. import presets as P
    from ..errors import InputError, OpsimError

    try:
        p = P.drive_file(path, key="drive")
        user, nand = P.user_bytes(p["path"]), P.physical_bytes(p["path"])
    except OpsimError as e:
        raise InputError(f"--drive: {e.detail}", key="drive", detail=e.detail) from None
    if nand <= user:
        raise InputError(f"--drive: {path}: the NAND ({nand:,} bytes) is not more than the user capacity", key="drive")
    native = user // SECTOR
    return Study(
        preset=p["path"],
        nand=nand,
        levels=levels_for(native, nand),
        drive=P.title(p),
        nand_text=f"{nand / 2**30:g} GiB of NAND",
        native_text=f"the native {_gb(native * SECTOR)} GB LBAs",
        default_scale=max(1, round(nand / (16 * 2**30))),
        drive_file=p["path"],
    )


def register(sub, common):
    p = sub.add_parser(
        "demo", parents=[common], help="run the default OP study: the table, and an HTML report with every figure"
    )
    p.add_argument(
        "--drive",
        metavar="FILE",
        help="study this drive file (a TOML file in the presets' schema) instead of the Samsung 840 Pro preset",
    )
    p.add_argument(
        "--scale",
        type=int,
        default=None,
        help="simulate on a model with 1/SCALE of the NAND (default 16: 16 GiB, 128 of the preset's 128 MiB blocks; "
        "with --drive, the scale that leaves about 16 GiB)",
    )
    p.add_argument(
        "--pages-per-block",
        type=int,
        default=None,
        help="override the preset's FTL block (default: the preset's, 32768 pages)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "-o",
        "--output",
        default=DEFAULT_REPORT,
        metavar="FILE",
        help=f"the HTML report (default {DEFAULT_REPORT} in the current directory)",
    )
    p.add_argument("--jobs", type=int, default=None, help="simulations run at once (default: the number of CPUs)")
    p.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")
    p.set_defaults(func=run)


def configs(args, study: Study | None = None) -> list[tuple[int, str, dict]]:
    """(level index, workload key, config) for every run of the study (default: the
    Samsung 840 Pro preset's)."""
    study = study or default_study()
    page = 4096
    out = []
    for i, (_label, sectors, _source) in enumerate(study.levels):
        user_model = sectors * SECTOR // args.scale // page * page
        drive = {"user_capacity": user_model, "physical_capacity": study.nand // args.scale}
        if args.pages_per_block:
            drive["pages_per_block"] = args.pages_per_block
        for key, _wl_label, wl, run_t in WORKLOADS:
            out.append(
                (
                    i,
                    key,
                    {
                        "preset": study.preset,
                        "drive": dict(drive),
                        "workload": dict(wl),
                        "run": {"seed": args.seed, **run_t},
                    },
                )
            )
    return out


def _progress_bar(total: int, desc: str, enabled: bool, unit: str = "run"):
    import shutil

    from tqdm import tqdm

    # a terminal that reports no size (a bare pty) would get no bar: tqdm hides bars below its last row
    size = shutil.get_terminal_size((80, 24))
    return tqdm(
        total=total,
        desc=desc,
        unit=unit,
        file=sys.stderr,
        disable=not enabled,
        leave=True,
        ncols=min(size.columns or 80, 100),
        nrows=size.lines or 24,
    )


def simulate_all(cfgs, jobs: int, bar) -> dict:
    """Run every config (the Rust core releases the GIL: threads run in parallel)."""
    from concurrent.futures import ThreadPoolExecutor, as_completed

    from ..sim import simulate

    results = {}
    with ThreadPoolExecutor(max_workers=jobs) as ex:
        futs = {ex.submit(simulate, cfg): (i, key) for i, key, cfg in cfgs}
        try:
            for f in as_completed(futs):
                results[futs[f]] = f.result().data
                bar.update(1)
        except BaseException:
            for f in futs:
                f.cancel()
            raise
    return results


def run(args) -> Output:
    from .. import models, report
    from .. import results as R
    from .._output import check_writable_file
    from ..errors import CapacityError, InputError

    study = default_study() if args.drive is None else drive_study(args.drive)
    if args.scale is None:
        args.scale = study.default_scale
    if args.scale < 1:
        raise InputError("--scale must be at least 1", key="scale")
    if args.pages_per_block is not None and args.pages_per_block < 2:
        raise InputError("--pages-per-block must be at least 2", key="pages_per_block")
    jobs = args.jobs or os.cpu_count() or 1
    if jobs < 1:
        raise InputError("--jobs must be at least 1", key="jobs")
    check_writable_file(args.output, key="--output", inputs=[args.drive])
    show = args.progress or sys.stderr.isatty()
    lv = study.levels
    cfgs = configs(args, study)
    # the native level has the least spare: if its model cannot be built, say which option to change
    from ..sim import describe

    try:
        geo = describe(cfgs[0][2])
    except CapacityError as e:
        raise InputError(
            f"--scale {args.scale}: the 1/{args.scale} model cannot hold the native capacity with room "
            f"for garbage collection ({e}); use a smaller --scale or --pages-per-block",
            key="scale",
        ) from None
    t0 = time.monotonic()
    bar = _progress_bar(len(cfgs), "simulating", show)
    try:
        res = simulate_all(cfgs, jobs, bar)
    finally:
        bar.close()
    sim_s = time.monotonic() - t0

    native_sectors = lv[0][1]
    data = []
    for i, (label, sectors, source) in enumerate(lv):
        user = sectors * SECTOR
        rw = res[(i, "random-write")]
        d = {
            "configuration": label,
            "source": source,
            "user_bytes": user,
            "op_user": (study.nand - user) / user,
            "spare_area": (study.nand - user) / study.nand,
            "held_back_of_native": (native_sectors - sectors) / native_sectors,
            "model_user_bytes": rw["drive"]["user_bytes"],
            "model_op_effective": rw["op"]["effective"],
            "waf": rw["waf"],
            "waf_model": models.waf_greedy(rw["op"]["effective"], rw["drive"]["pages_per_block"]),
            "steady_state": rw["steady_state"]["reached"],
            "workloads": {},
        }
        for key, wl_label, _wl, _run in WORKLOADS:
            doc = res[(i, key)]
            ph = R.phases(doc)
            lat = R.latency(doc) or {}
            d["workloads"][key] = {
                "workload": wl_label,
                "waf": doc["waf"],
                "waf_steady": doc["steady_state"]["reached"],
                "steady_iops": ph["steady_iops"],
                "iops_steady": ph["steady_reached"],
                "measured_iops": R.measured_iops(doc),
                "fob_end_s": ph["fob_end_s"],
                "steady_start_s": ph["steady_start_s"],
                "latency_us": {k: lat.get(k) for k in ("p50", "p99", "p99.9")},
                "simulated_seconds": doc["timed"]["simulated_seconds"],
                "wall_seconds": doc["perf"]["wall_seconds"],
            }
        data.append(d)
    base = data[0]
    for d in data:
        # same NAND and P/E rating: host bytes writable scale with 1/WAF,
        # drive writes per day with 1/(WAF x user capacity)
        d["tbw_vs_native"] = base["waf"] / d["waf"]
        d["dwpd_vs_native"] = base["waf"] * base["user_bytes"] / (d["waf"] * d["user_bytes"])

    def iops_cell(w):
        v = w["steady_iops"] if w["iops_steady"] else w["measured_iops"]
        return f"{v:,.0f}" + ("" if w["iops_steady"] else "*")

    headers = [
        "configuration",
        "user capacity",
        "OP",
        "spare area",
        "held back",
        "WAF",
        "WAF model",
        "TBW",
        "DWPD",
        "IOPS 4K write",
        "p99.9 us",
        "IOPS 95:5",
        "WAF 95:5",
        "steady",
        "seed",
    ]
    rows = []
    for d in data:
        w, h = d["workloads"]["random-write"], d["workloads"]["read-heavy"]
        steady = d["steady_state"] and w["iops_steady"] and h["iops_steady"]
        rows.append(
            [
                d["configuration"],
                f"{d['user_bytes'] / 1e9:.1f} GB",
                pct(d["op_user"], 1),
                pct(d["spare_area"], 1),
                pct(d["held_back_of_native"], 1),
                f"{d['waf']:.3f}",
                f"{d['waf_model']:.3f}",
                f"{d['tbw_vs_native']:.2f}x",
                f"{d['dwpd_vs_native']:.2f}x",
                iops_cell(w),
                f"{w['latency_us']['p99.9']:,.0f}" if w["latency_us"]["p99.9"] else "-",
                iops_cell(h),
                f"{h['waf']:.3f}" + ("" if h["waf_steady"] else "*"),
                "yes" if steady else "no",
                d["source"],
            ]
        )
    blocks = geo["drive"]["blocks"]
    ppb = geo["drive"]["pages_per_block"]
    what = f"preset {PRESET}" if study.drive_file is None else f"drive file {study.drive_file}"
    title = (
        f"OP study of {study.drive} ({study.nand_text}; {what}), greedy GC, timed model at QD32\n"
        f"simulated on a 1/{args.scale} scale model ({blocks} blocks of {ppb:,} pages); "
        f"OP = (NAND - user)/user, spare area = (NAND - user)/NAND, held back = of {study.native_text};\n"
        "WAF, TBW and DWPD (relative to native) from 4 KiB random writes; IOPS: mean of the SNIA steady-state "
        "window; * = not steady (IOPS and WAF of the measurement window); p99.9: 4 KiB random-write latency;\n"
        "steady: the SNIA rule held on 4 KiB random-write WAF and on both workloads' IOPS"
    )
    text = table(headers, rows, align="lrrrrrrrrrrrrll", title=title)

    # the report: every run, labelled by its configuration, grouped by workload
    docs, labels = [], []
    for key, _l, _w, _r in WORKLOADS:
        for i, (label, _s, _src) in enumerate(lv):
            docs.append(res[(i, key)])
            labels.append(label)
    op_table = {
        "headers": [
            "configuration",
            "source",
            "user capacity",
            "OP (user)",
            "spare area",
            "held back of native",
            "WAF 4K write",
            "WAF model",
            "TBW",
            "DWPD",
            "steady IOPS 4K write",
            "p99.9 latency 4K write (us)",
            "steady IOPS 95:5",
            "WAF 95:5",
        ],
        "numeric": [False, False] + [True] * 12,
        "caption": "Full-drive capacities; WAF, TBW and DWPD from 4 KiB random writes, TBW and DWPD relative to the "
        "native capacity; IOPS: mean of the SNIA steady-state window; * = not steady (the measurement "
        "window's IOPS or WAF).",
        "rows": [
            [
                d["configuration"],
                d["source"],
                f"{d['user_bytes'] / 1e9:.1f} GB",
                pct(d["op_user"], 1),
                pct(d["spare_area"], 1),
                pct(d["held_back_of_native"], 1),
                f"{d['waf']:.3f}",
                f"{d['waf_model']:.3f}",
                f"{d['tbw_vs_native']:.2f}x",
                f"{d['dwpd_vs_native']:.2f}x",
                iops_cell(d["workloads"]["random-write"]),
                r[10],
                iops_cell(d["workloads"]["read-heavy"]),
                r[12],
            ]
            for d, r in zip(data, rows)
        ],
    }
    context = {
        "command": "opsim demo " + " ".join(shlex.quote(a) for a in sys.argv[2:])
        if sys.argv[1:2] == ["demo"]
        else "opsim demo",
        "intro": [
            (
                "How much of a 256 GB-class client SSD should be held back as spare area, and what does it buy? The "
                f"drive (256 GiB of NAND sold as 256 GB; preset {PRESET}) is configured at the capacities the seeds "
                "discuss "
                if study.drive_file is None
                else f"How much of {study.drive} should be held back as spare area, and what does it buy? The drive "
                f"({study.nand_text}, native {_gb(lv[0][1] * SECTOR)} GB; {what}) is configured at the OP levels the "
                "seeds discuss, as shares of its native capacity and NAND, "
            )
            + "and simulated under 4 KiB random writes at QD32 after a sequential fill (AnandTech's IO-consistency "
            "method, the write-saturation curve) and under a 95:5 read:write mix of 4 KiB random IOs from the "
            "analytic steady state (Micron's read-heavy case).",
            "Every figure below was computed by this run; nothing is copied from the seeds.",
        ],
        "notes": [
            f"Scale model: 1/{args.scale} of the NAND ({blocks} FTL blocks of {ppb:,} pages) with every timing, die "
            "and block size of the preset kept, so IOPS and latency are the full drive's; the time axes are the "
            f"model's (the full drive takes {args.scale}x as long), data written in drive writes is the same. "
            "Greedy GC over this few blocks writes somewhat less than the mean-field model, which assumes "
            "infinitely many: compare the WAF and WAF model columns.",
            "The 95:5 runs keep more blocks free in the background (the timed model's background GC runs while "
            "the NAND idles), which the garbage collector then cannot use as spare: their WAF is higher than "
            "under pure writes.",
        ],
        "op_table": op_table,
    }
    rbar = _progress_bar(len(report.figure_plan(docs, labels)), "report", show, unit="figure")
    try:
        summary = report.write(
            args.output,
            docs,
            labels,
            title=f"opsim demo: over-provisioning study of {study.drive}",
            context=context,
            progress=lambda msg: rbar.update(1),
        )
    finally:
        rbar.close()
    path = os.path.abspath(args.output)
    total_s = time.monotonic() - t0
    text += (
        f"\n\n{len(cfgs)} simulations in {sim_s:.0f} s ({jobs} at a time); report with "
        f"{len(summary['figures'])} figures written to {path}"
    )
    return Output(
        data={
            "preset": study.preset,
            "nand_bytes": study.nand,
            "scale": args.scale,
            "pages_per_block": ppb,
            "blocks": blocks,
            "workloads": [{"key": k, "label": lab, "workload": wl, "run": r} for k, lab, wl, r in WORKLOADS],
            "levels": data,
            "report": path,
            "figures": summary["figures"],
            "simulation_seconds": sim_s,
            "wall_seconds": total_s,
        },
        text=text,
    )
