"""``opsim validate``: simulated figures beside published models (docs/validation.md)."""

from __future__ import annotations

import itertools
import sys

from .._output import Output, atomic_write_text, check_writable_file, markdown_table, table
from ..errors import ConfigError


def register(sub, common):
    p = sub.add_parser("validate", parents=[common], help="run the validation suite: simulator vs analytic models")
    p.add_argument(
        "--suite",
        choices=["oracles", "seeds", "workloads", "sk-hynix", "real-drives"],
        default="oracles",
        help="oracles: functional simulator vs analytic models; seeds: the timed model on the "
        "seed drives' presets vs their published figures; workloads: endurance against OP "
        "under JEDEC JESD219 beside SanDisk's TBW table; sk-hynix: the SK hynix urgent-state "
        "case studies (seed 004) on the sk-hynix-mobile-64gb preset; real-drives: published "
        "measurements of whole drives at several spans or OP levels, each predicted by opsim "
        "calibrate from the datasheet or from other measured points, never from itself (minutes)",
    )
    p.add_argument(
        "--case",
        action="append",
        metavar="ID",
        help="real-drives: run only this case (repeatable; the ids are in python/opsim/validation/real_drives.toml)",
    )
    p.add_argument(
        "--scale",
        type=int,
        default=1,
        metavar="N",
        help="sk-hynix: run Cases #1 and #2 on a scale model whose blocks are N times smaller "
        "(same 1024-block structure; N divides 16384; default 1: full size). The sensitivity "
        "and Case #3 always use the 1/64 scale model",
    )
    p.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown to FILE")
    p.set_defaults(func=run)


def _progress(i, n):
    if sys.stderr.isatty():
        sys.stderr.write(f"\r  {i}/{n} cases")
        if i == n:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _progress_line(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def run(args) -> Output:
    # lazy: the suites take numpy and scipy (models, calibrate), which `opsim --help` does not need
    from ..validation import markdown, real_drives_report, run_oracles  # noqa: PLC0415

    if args.scale != 1 and args.suite != "sk-hynix":
        raise ConfigError(f"--scale is used only with --suite sk-hynix (not {args.suite})", key="scale")
    if getattr(args, "case", None) and args.suite != "real-drives":
        raise ConfigError(f"--case is used only with --suite real-drives (not {args.suite})", key="case")
    if args.markdown:
        check_writable_file(args.markdown, key="--markdown")
    if args.suite == "real-drives":
        return real_drives_report.real_drives_output(args.case, args.markdown, _progress_line)
    if args.suite == "seeds":
        return run_seeds(args)
    if args.suite == "workloads":
        return run_workloads(args)
    if args.suite == "sk-hynix":
        return run_sk_hynix(args)

    rows = run_oracles(_progress)
    if args.markdown:
        atomic_write_text(args.markdown, markdown(rows))
    text = table(
        ["case", "OP", "OP seen by GC", "WAF sim", "WAF model", "error"],
        [
            [
                r["case"],
                f"{100 * r['op_user']:.0f}%",
                f"{100 * r['op_effective']:.3f}%",
                f"{r['waf_sim']:.4f}",
                f"{r['waf_model']:.4f}",
                f"{100 * r['error']:+.2f}%",
            ]
            for r in rows
        ],
        title="Simulator vs analytic models (uniform random 4 KiB writes, >= 16,000 blocks)",
    )
    worst = max(abs(r["error"]) for r in rows)
    text += f"\nworst error {100 * worst:.2f}% over {len(rows)} cases"
    return Output(data={"suite": args.suite, "cases": rows, "worst_error": worst}, text=text)


def run_seeds(args) -> Output:
    # lazy: the suites take numpy and scipy (models, calibrate), which `opsim --help` does not need
    from ..validation.seeds import (  # noqa: PLC0415
        io_consistency,
        micron_dwa,
        micron_dwa_markdown,
        seeds_cells,
        seeds_markdown,
        write_saturation,
    )
    from ..validation.seeds import run_seeds as seeds  # noqa: PLC0415

    rows = seeds(progress=_progress)
    ws = write_saturation()
    dwa = micron_dwa()
    md = seeds_markdown(rows)
    if args.markdown:
        atomic_write_text(args.markdown, md + "\n\n" + micron_dwa_markdown(dwa))
    text = table(
        ["drive", "figure", "simulated", "published", "error", "tol.", "", ""],
        seeds_cells(rows),
        title="Seed drives: steady-state 4 KiB random-write IOPS ratios, timed model on the presets",
    )
    text += (
        f"\n\nWrite saturation, {ws['preset']} from fresh-out-of-box: FOB {ws['fob_iops']:,.0f} IOPS, "
        f"FOB ends at {ws['fob_end_s']:.0f} s, steady state from {ws['steady_start_s'] or 0:.0f} s at "
        f"{(ws['steady_iops'] or 0):,.0f} IOPS (cliff {ws['cliff_ratio'] or 0:.1f}x)"
    )
    text += "\n\nMicron 1100 write saturation (seed 000, Figure 1), with and without Dynamic Write Acceleration\n"
    text += micron_dwa_markdown(dwa)
    ioc = io_consistency()
    text += "\n\n" + table(
        ["840 Pro config", "spare area", "WAF", "median IOPS", "p99.9/p50", "CV", "0-IOPS s"],
        [
            [
                c["configuration"],
                f"{100 * c['spare_area']:.1f}%",
                f"{c['waf']:.2f}",
                f"{c['median_iops']:,.0f}",
                f"{c['p99_9_over_p50']:.2f}",
                f"{c['cv']:.3f}",
                c["zero_iops_seconds"],
            ]
            for c in ioc
        ],
        title="IO consistency (AnandTech, seed 003): per-second IOPS in steady state",
    )
    data = {
        "suite": "seeds",
        "cases": rows,
        "io_consistency": ioc,
        "write_saturation": {k: v for k, v in ws.items() if k != "series"},
        "micron_dwa": {
            "published": dwa["published"],
            "scale": dwa["scale"],
            "runs": {n: {k: v for k, v in r.items() if k != "series"} for n, r in dwa["runs"].items()},
        },
        "passed": sum(r["pass"] for r in rows),
        "failed": sum(not r["pass"] for r in rows),
    }
    return Output(data=data, text=text)


def run_workloads(args) -> Output:
    # lazy: the suites take numpy and scipy (models, calibrate), which `opsim --help` does not need
    from ..validation.seeds import x400_tbw_trend  # noqa: PLC0415

    rows = x400_tbw_trend()
    head = ["drive", "OP", "OP (user basis)", "WAF (JESD219)", "TBW vs 0% simulated", "TBW vs 0% SanDisk"]
    cells = [
        [
            r["drive"],
            r["op"],
            f"{100 * r['op_user']:.1f}%",
            f"{r['waf']:.2f}",
            f"{r['simulated_vs_0']:.2f}x",
            f"{r['published_vs_0']:.2f}x",
        ]
        for r in rows
    ]
    if args.markdown:
        atomic_write_text(args.markdown, markdown_table(head, "llrrrr", cells))
    rising = all(
        a["host_bytes_per_pe"] < b["host_bytes_per_pe"] for a, b in itertools.pairwise(rows) if a["drive"] == b["drive"]
    )
    text = table(head, cells, title="Endurance against OP, JEDEC JESD219 enterprise workload (functional model)")
    text += f"\nTBW rises with OP on every drive: {'yes' if rising else 'NO'}"
    return Output(data={"suite": "workloads", "x400_tbw": rows, "tbw_rises_with_op": rising}, text=text)


def run_sk_hynix(args) -> Output:
    # lazy: the suites take numpy and scipy (models, calibrate), which `opsim --help` does not need
    from ..validation.sk_hynix import SKH_PRESET, skh_markdown, skh_suite, skh_tables  # noqa: PLC0415

    ppb = 16384
    if args.scale < 1 or ppb % args.scale or ppb // args.scale < 16:
        raise ConfigError(
            f"--scale {args.scale}: must divide the preset's {ppb} pages per block and leave at "
            "least 16 pages per block (1, 2, 4, ... 1024)",
            key="scale",
        )
    doc = skh_suite(args.scale, progress=_progress)
    if args.markdown:
        atomic_write_text(args.markdown, skh_markdown(doc))
    g, h = doc["geometry"], doc["headline"]
    size = "full size" if g["scale"] == 1 else f"1/{g['scale']} scale model"
    head = (
        f"SK hynix urgent-state case studies (seed 004) on {SKH_PRESET}, {size}: {g['main_blocks']} main "
        f"blocks = {g['user_blocks']} user + {g['free_blocks']} free + {g['system_blocks']} system (not "
        f"simulated), external OP 0-60 blocks; {g['pages_per_block']} pages of {g['page_size']} B per block; "
        f"workload repeat(sequential {g['seq_chunk'] / 2**20:g} MiB, random {g['rand_chunk'] / 2**20:g} MiB) "
        f"until the user area is full; urgent state (the core's): free blocks under {doc['talk']['n_pct']:g}% "
        f"of the {g['main_blocks']} main blocks, GC takes over, host writes at {doc['talk']['k_pct']:g}% of the "
        f"sustained rate"
    )
    parts = [head]
    for title, headers, align, rows in skh_tables(doc):
        parts.append(table(headers, rows, title=title, align=align))
    c = doc["checks"]
    fits = doc["study"]["fits"]
    ins = fits.get("in_state")
    parts.append(
        f"Gain per 1% of external OP in the urgent state: {h['gain_pct_per_pct']:.1f}% (R^2 {h['r2']:.3f}; "
        f"{h['gain_points_of_sustain_per_pct']:.2f} points of the sustain-state performance"
        + (f"; {ins['gain_pct_per_pct']:.1f}% over the time in the state only" if ins else "")
        + f") against the talk's {doc['talk']['gain_pct_per_pct']:g}%: predicted, not fitted.\n"
        f"Performance rises with OP at every step: {'yes' if c['monotone_common'] else 'no'}; sustain-state "
        f"performance the same at every level: {'yes' if c['sustain_fixed'] else 'no'}; the core's urgent state "
        f"(timing.urgent_*) entered at {len(c['core_urgent_entered'])} of 16 levels. The slope depends on K% of "
        f"the sustain state against what garbage collection sustains (sensitivity table; docs/validation.md)."
    )
    return Output(data=doc, text="\n\n".join(parts))
