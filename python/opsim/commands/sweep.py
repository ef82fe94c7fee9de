"""``opsim sweep GRID.toml``: many simulations from one grid file, on Dask (docs/sweeps.md)."""

from __future__ import annotations

import argparse
import os

from .. import sweep
from .._output import Output, check_output_not_input, check_writable_file, kv_table, table
from ..errors import InputError
from ..stopsignals import INTERRUPT_EXIT
from ..units import pct

#: at most this many rows in the printed table (the file and --json hold them all)
MAX_ROWS = 40


def register(sub, common):
    p = sub.add_parser(
        "sweep",
        parents=[common],
        help="run a grid of simulations (OP x GC x workload x drive x seeds) on Dask; results to Parquet",
        description="Run every point of a grid file (a config plus a [sweep] table; docs/sweeps.md) on a "
        "Dask LocalCluster (default: one worker process per CPU), an existing cluster "
        "(--scheduler) or serially (--workers 0). Results go to a Parquet file, one row per "
        "point; re-running the same command skips the points already there and retries "
        "failed ones.",
    )
    p.add_argument("grid", help="grid file (TOML)")
    p.add_argument(
        "-o",
        "--output",
        metavar="RESULTS.parquet",
        help="results file (default: the grid file's name with .parquet, next to it)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on an existing Dask cluster")
    where.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes of the LocalCluster (default: every CPU); 0 runs the points "
        "one after another in this process",
    )
    p.add_argument(
        "--limit", type=int, metavar="N", help="run at most N of the points still to do (in grid order), then stop"
    )
    p.add_argument("--fresh", action="store_true", help="ignore what the results file holds and run every point again")
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )
    p.set_defaults(func=run)


def default_output(grid_path: str) -> str:
    stem, _ = os.path.splitext(grid_path)
    return stem + ".parquet"


def _fmt_value(v, width: int = 40):
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, str) and len(v) > width:
        return v[: width - 3] + "..."
    return v


def summary_text(outcome) -> str:
    g, s = outcome.grid, outcome.summary
    rows = outcome.table.to_pylist()
    runner = {
        None: "-",
        "serial": "serial, in this process",
        "local-cluster": f"Dask LocalCluster, {s['workers']} worker processes",
        "scheduler": f"Dask cluster at {s['scheduler']}, {s['workers']} workers",
        "client": f"Dask client of {s['scheduler']}, {s['workers']} workers",
    }[s["runner"]]
    shape = f"{g.configs:,} configs" + (f" x {g.replicates} replicates" if g.replicates > 1 else "")
    done = f"{s['computed']:,}" + (f" ({s['failed']:,} failed)" if s["failed"] else "")
    pairs = [
        ("grid", f"{g.name or os.path.basename(g.path or 'grid')}: {len(g.points):,} points ({shape}), seed {g.seed}"),
        ("varied", ", ".join(g.varying) or "-"),
        ("computed now", f"{done} on {runner}" if s["computed"] or s["to_run"] else "nothing to do"),
        ("already done (skipped)", s["skipped"]),
    ]
    if s["stale_dropped"]:
        pairs.append(("dropped", f"{s['stale_dropped']} rows of points no longer in the grid"))
    state = f"{s['ok']:,} of {s['points']:,} points done"
    if s["errors"]:
        state += f", {s['errors']:,} failed (re-run retries them)"
    if s["pending"] - s["errors"] > 0:
        state += f", {s['pending'] - s['errors']:,} not run yet (re-run to continue)"
    pairs += [("state", state), ("results", s["output"] or "-"), ("wall time", f"{s['wall_seconds']:.1f} s")]
    if s["interrupted"]:
        pairs.append(("interrupted", "yes: finished points are saved; re-run the same command to resume"))
    parts = [kv_table(pairs, title="opsim sweep")]

    if rows:
        cols = list(g.varying)
        headers = cols + (["rep"] if g.replicates > 1 else []) + ["status", "WAF", "OP user", "OP spare", "steady"]
        timed = g.timed and any(
            r.get("timed.steady_iops") is not None or r.get("timed.measured_iops") is not None for r in rows
        )
        if timed:
            headers += ["IOPS", "steady IOPS", "p99 us"]
        body = []
        for r in rows[:MAX_ROWS]:
            line = [_fmt_value(r.get(c)) for c in cols]
            if g.replicates > 1:
                line.append(r["replicate"])
            ok = r["status"] == "ok"
            line += [
                r["status"] if ok else r["error_type"],
                r.get("waf"),
                pct(r.get("op.user")) if ok else None,
                pct(r.get("op.physical")) if ok else None,
                r.get("steady_state.reached"),
            ]
            if timed:
                line += [r.get("timed.measured_iops"), r.get("timed.steady_iops"), r.get("timed.latency_us.all.p99")]
            body.append(line)
        parts.append("")
        parts.append(table(headers, body, align="l" * len(cols) + "r" * (len(headers) - len(cols))))
        if len(rows) > MAX_ROWS:
            parts.append(f"({len(rows) - MAX_ROWS:,} more rows in the results file; --json prints them all)")
        failed = [r for r in rows if r["status"] != "ok"]
        if failed:
            parts.append("")
            parts.append("failed points:")
            for r in failed[:10]:
                parts.append(f"  {r['point_id']}: {r['error_type']}: {r['error_message']}")
            if len(failed) > 10:
                parts.append(f"  ... and {len(failed) - 10} more (column error_message)")
    return "\n".join(parts)


def document(outcome) -> dict:
    return {
        "sweep": outcome.grid.describe(),
        "run": outcome.summary,
        "columns": sweep.columns(outcome.grid),
        "rows": outcome.table.to_pylist(),
    }


def run(args) -> Output:
    if args.workers is not None and args.workers < 0:
        raise InputError(f"--workers: must be 0 (serial) or more (got {args.workers})", key="--workers")
    if args.limit is not None and args.limit < 0:
        raise InputError(f"--limit: must be 0 or more (got {args.limit})", key="--limit")
    sweep.run.check_run_options(args.workers, args.scheduler)  # before the grid is read or any cluster starts
    output = args.output or default_output(args.grid)
    check_writable_file(output, key="--output", inputs=[args.grid])
    check_output_not_input(getattr(args, "json_file", None), [output], key="--json-file")  # the default -o too
    grid = sweep.load_grid(args.grid)

    # a batch system's SIGTERM ends the run like Ctrl-C (opsim.cli's main raises Terminated, a
    # KeyboardInterrupt): finished points are saved, and main turns the 130 into 143
    outcome = sweep.run_sweep(  # through the package: tests replace it there
        grid,
        output,
        workers=args.workers,
        scheduler=args.scheduler,
        limit=args.limit,
        fresh=args.fresh,
        progress=args.progress,
        on_interrupt="return",
    )
    s = outcome.summary
    code = INTERRUPT_EXIT if s["interrupted"] else 1 if s["errors"] else 0
    return Output(data=document(outcome), text=summary_text(outcome), exit_code=code)
