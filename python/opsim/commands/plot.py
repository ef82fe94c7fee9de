"""``opsim plot KIND RESULT.json... -o FILE.png``: draw simulated and measured results."""

from __future__ import annotations

import os

from .. import plots, results
from .._output import Output, check_writable_file, table
from ..errors import InputError
from ..plots import KINDS
from ..results import load_trace_profile as load_doc


def register(sub, common):
    kinds = "; ".join(f"{k}: {v[1]}" for k, v in KINDS.items())
    p = sub.add_parser(
        "plot",
        parents=[common],
        help="draw results of opsim simulate --json / opsim measure (saturation, WAF vs OP, bars, CDFs)",
        description=f"Draw one figure from result files (opsim simulate --json, opsim measure). Kinds: {kinds}. "
        "Simulated and measured results can be drawn on the same axes. Docs: docs/reports.md.",
    )
    p.add_argument("kind", choices=list(KINDS), metavar="KIND", help=f"one of: {', '.join(KINDS)}")
    p.add_argument("results", nargs="+", metavar="RESULT.json", help="result files")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="FILE",
        help="the figure: FILE.png, FILE.svg or FILE.pdf (written atomically)",
    )
    p.add_argument("--labels", help="comma-separated labels, one per result (default: the file names)")
    p.add_argument("--title", help="figure title")
    p.add_argument("--direction", choices=["all", "read", "write"], help="latency: which IOs (default all)")
    p.add_argument(
        "--smooth",
        type=int,
        metavar="N",
        help="saturation kinds: draw a running median over N intervals over faint per-interval dots",
    )
    p.set_defaults(func=run)


def file_labels(paths) -> list[str]:
    """The file names without .json; the relative paths when two names collide."""
    names = [os.path.splitext(os.path.basename(p))[0] for p in paths]
    if len(set(names)) == len(names):
        return names
    return [os.path.relpath(p) for p in paths]


def labels_from(arg: str | None, paths) -> list[str]:
    if arg is None:
        return file_labels(paths)
    labels = [x.strip() for x in arg.split(",")]
    if len(labels) != len(paths):
        raise InputError(f"--labels: {len(labels)} labels for {len(paths)} result files", key="labels")
    return labels


def _range(values) -> str:
    vals = [v for v in values if isinstance(v, (int, float))]
    if not vals:
        return "-"
    lo, hi = min(vals), max(vals)
    fmt = (lambda v: f"{v:,.0f}") if max(abs(lo), abs(hi)) >= 100 else (lambda v: f"{v:.3g}")
    return f"{fmt(lo)} .. {fmt(hi)}"


def drawn_text(axes_records: list[dict]) -> str:
    rows = []
    for rec in axes_records:
        for s in rec["series"]:
            xs = s["x"] if s["x"] and isinstance(s["x"][0], (int, float)) else []
            phases = ", ".join(f"{m['phase']} {m['x']:.4g}" for m in rec["markers"] if m["label"] == s["label"])
            rows.append(
                [
                    rec["title"],
                    s["label"],
                    s.get("source", "-"),
                    len(s["y"]),
                    _range(xs) if xs else ", ".join(map(str, s["x"][:4])) + ("..." if len(s["x"]) > 4 else ""),
                    _range(s["y"]),
                    phases or "-",
                ]
            )
        for m in rec["models"]:
            rows.append([rec["title"], m["name"], "model", len(m["y"]), _range(m["x"]), _range(m["y"]), "-"])
    out = [table(["axes", "series", "source", "points", "x", "y", "phase markers"], rows, align="lllrlll")]
    skipped = [(rec["title"], s) for rec in axes_records for s in rec["skipped"]]
    if skipped:
        out.append("")
        out.append(table(["axes", "not drawn", "why"], [[t, s["label"], s["reason"]] for t, s in skipped], align="lll"))
    return "\n".join(out)


def run(args) -> Output:
    check_writable_file(args.output, key="--output", inputs=args.results)
    if args.kind == "write-curve":  # trace profiles, not simulation results
        docs = [load_doc(p) for p in args.results]
    elif args.kind == "fleet-cost":  # fleet comparisons (opsim advise --compare --json)
        docs = [results.load_compare(p) for p in args.results]
    else:
        docs = [results.load(p) for p in args.results]
    labels = labels_from(args.labels, args.results)
    opts = {}
    if args.title:
        opts["title"] = args.title
    if args.direction:
        if args.kind != "latency":
            raise InputError("--direction applies to the latency plot only", key="direction")
        opts["direction"] = args.direction
    if args.smooth is not None:
        if not args.kind.startswith("saturation") or args.kind == "saturation-panels":
            raise InputError("--smooth applies to saturation and saturation-written only", key="smooth")
        if args.smooth < 1:
            raise InputError("--smooth: N must be at least 1", key="smooth")
        opts["smooth"] = args.smooth
    fig = plots.plot(args.kind, docs, labels, **opts)
    recs = plots.drawn(fig)
    assert isinstance(recs, list)  # a figure's records, one per axes
    if not any(rec["series"] for rec in recs):
        why = "; ".join(f"{s['label']}: {s['reason']}" for rec in recs[:1] for s in rec["skipped"])
        raise InputError(f"nothing to draw for {args.kind}: {why}", key="results")
    path = plots.save(fig, args.output)
    text = drawn_text(recs) + f"\n\n{args.kind} figure written to {path}"
    return Output(
        data={"kind": args.kind, "output": path, "results": list(args.results), "labels": labels, "axes": recs},
        text=text,
    )
