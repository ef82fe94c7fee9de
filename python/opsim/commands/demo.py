"""``opsim demo``: the main job.  The seeds' OP study on one of their drives (:mod:`opsim.demo`),
as a table and a report.

This module reads the options, checks them before any long work, runs the study with a
progress bar and renders it: the table on the terminal, the HTML report, the JSON document.
``--drive FILE`` runs the same study on a drive file (a TOML file in the presets' schema).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import time

from .._output import Output, check_writable_file, table
from ..demo.runs import simulate_all
from ..demo.study import WORKLOADS, Study, configs, default_study, drive_study
from ..demo.table import ALIGN, HEADERS, level_rows, text_rows, title
from ..errors import CapacityError, InputError
from ..sim import describe

DEFAULT_REPORT = "opsim-demo-report.html"


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


def _progress_bar(total: int, desc: str, enabled: bool, unit: str = "run"):
    from tqdm import tqdm  # noqa: PLC0415  (start-up: the progress bar only, not `opsim --help`)

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


def _checked_options(args) -> tuple[Study, int]:
    """(the study, jobs) with ``args.scale`` set; every option checked (exit 2) before any work."""
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
    return study, jobs


def _model_geometry(cfgs, scale: int) -> dict:
    """The scale model's geometry; the native level has the least spare: if its model cannot be
    built, say which option to change."""
    try:
        return describe(cfgs[0][2])
    except CapacityError as e:
        raise InputError(
            f"--scale {scale}: the 1/{scale} model cannot hold the native capacity with room "
            f"for garbage collection ({e}); use a smaller --scale or --pages-per-block",
            key="scale",
        ) from None


def _command_line() -> str:
    if sys.argv[1:2] == ["demo"]:
        return "opsim demo " + " ".join(shlex.quote(a) for a in sys.argv[2:])
    return "opsim demo"


def _write_report(args, study: Study, rows: list[dict], res: dict, geo: dict, show: bool) -> dict:
    """The HTML report of every run, with a progress bar per figure; returns its summary."""
    # lazy: the report draws with matplotlib and the analytic models; `opsim --help` and the other
    # commands do not need them
    from .. import report  # noqa: PLC0415
    from ..demo.context import report_context, report_results, report_title  # noqa: PLC0415

    docs, labels = report_results(study, res)
    drive = geo["drive"]
    context = report_context(study, rows, _command_line(), args.scale, drive["blocks"], drive["pages_per_block"])
    rbar = _progress_bar(len(report.figure_plan(docs, labels)), "report", show, unit="figure")
    try:
        return report.write(
            args.output,
            docs,
            labels,
            title=report_title(study),
            context=context,
            progress=lambda msg: rbar.update(1),
        )
    finally:
        rbar.close()


def run(args) -> Output:
    study, jobs = _checked_options(args)
    show = args.progress or sys.stderr.isatty()
    cfgs = configs(study, args.scale, args.seed, args.pages_per_block)
    geo = _model_geometry(cfgs, args.scale)
    blocks, ppb = geo["drive"]["blocks"], geo["drive"]["pages_per_block"]
    t0 = time.monotonic()
    bar = _progress_bar(len(cfgs), "simulating", show)
    try:
        res = simulate_all(cfgs, jobs, bar)
    finally:
        bar.close()
    sim_s = time.monotonic() - t0
    rows = level_rows(study, res)
    text = table(HEADERS, text_rows(rows), align=ALIGN, title=title(study, args.scale, blocks, ppb))
    summary = _write_report(args, study, rows, res, geo, show)
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
            "levels": rows,
            "report": path,
            "figures": summary["figures"],
            "simulation_seconds": sim_s,
            "wall_seconds": total_s,
        },
        text=text,
    )
