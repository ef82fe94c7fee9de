"""``opsim report RESULT.json... -o report.html``: one self-contained HTML report."""

from __future__ import annotations

import os
import sys

from .. import results
from .._output import Output, check_writable_file, table
from ..errors import InputError
from ..results import load_trace_profile as load_doc
from ..units import pct
from .plot import labels_from


def register(sub, common):
    p = sub.add_parser(
        "report",
        parents=[common],
        help="one self-contained HTML report (drive, workload, OP table, figures, verdicts, configs) from results",
        description="Bundle result files (opsim simulate --json, opsim measure) in one HTML file with the "
        "figures embedded. Docs: docs/reports.md.",
    )
    p.add_argument(
        "results", nargs="*", metavar="RESULT.json", help="result files (none: give --compare, a report of it alone)"
    )
    p.add_argument(
        "-o",
        "--output",
        default="opsim-report.html",
        metavar="FILE",
        help="the report (default opsim-report.html; written atomically)",
    )
    p.add_argument("--labels", help="comma-separated labels, one per result (default: the file names)")
    p.add_argument("--title", default="opsim report")
    p.add_argument("--progress", action="store_true", help="show progress on stderr even when it is not a terminal")
    p.add_argument(
        "--trace-profile",
        action="append",
        default=[],
        metavar="PROFILE.json",
        help="add a 'Trace profiles' section from `opsim trace profile --json` output (repeatable)",
    )
    p.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="COMPARE.json",
        help="add a 'Buy or over-provision' section from `opsim advise --compare FILE --json` output: its "
        "candidates and the figure of cost per usable TB-year against the share held back (repeatable)",
    )
    p.set_defaults(func=run)


def summary_text(summary: dict) -> str:
    rows = []
    for r in summary["op_table"]:
        rows.append(
            [r["label"], r["workload"], pct(r["op_user"], 1), r["waf"], r["waf_model"], r["steady_iops"], r["p99_us"]]
        )
    out = table(
        ["result", "workload", "OP", "WAF", "WAF model", "steady IOPS", "p99 us"],
        rows,
        align="llrrrrr",
        title=summary["title"],
    )
    for c in summary.get("comparisons", []):
        choice = c["choice"]["name"] if c["choice"] else "none (no candidate meets the need)"
        out += f"\nbuy or over-provision, {c['file']}: choice {choice}"
    return out


def run(args) -> Output:
    # lazy: the report draws with matplotlib and the analytic models; `opsim --help` and the other
    # commands do not need them
    from .. import report  # noqa: PLC0415

    check_writable_file(args.output, key="--output", inputs=[*args.results, *args.trace_profile, *args.compare])
    if not args.results and not args.compare:
        raise InputError("give result files, or --compare COMPARE.json (or both)", key="results")
    docs = [results.load(p) for p in args.results]
    comparisons = [results.load_compare(p) for p in args.compare]

    profiles = [load_doc(p) for p in args.trace_profile]
    labels = labels_from(args.labels, args.results)
    show = args.progress or sys.stderr.isatty()

    def progress(msg):
        if show:
            sys.stderr.write(f"\r\033[K{msg}" if sys.stderr.isatty() else msg + "\n")
            sys.stderr.flush()

    summary = report.write(
        args.output,
        docs,
        labels,
        title=args.title,
        progress=progress,
        context={
            "command": "opsim report " + " ".join(args.results + [f"--compare {c}" for c in args.compare]),
            "inputs": list(args.results) + list(args.trace_profile) + list(args.compare),
            "trace_profiles": profiles,
            "comparisons": comparisons,
        },
    )
    if show and sys.stderr.isatty():
        sys.stderr.write("\n")
    text = (
        summary_text(summary) + f"\n\nreport written to {os.path.abspath(args.output)} "
        f"({len(summary['figures'])} figures, {summary['bytes'] / 1e6:.1f} MB)"
    )
    return Output(data=summary, text=text)
