"""``opsim advise --trace FILE``: the options, their checks, the run and the table's trace lines
(the logic is :mod:`opsim.planner.advise.trace`; docs/planner.md, "Advising from a trace")."""

from __future__ import annotations

from .._output import table
from ..errors import option_error as _bad
from .trace import add_reader_options, reader_opts

#: options that describe a workload the trace already gives: refused with --trace
_SHAPE_OPTIONS = (
    ("skew", "--skew"),
    ("profile", "--profile"),
    ("block_size", "--block-size"),
    ("tenants", "--tenants"),
    ("fio", "--fio"),
    ("section", "--section"),
)


def add_options(p) -> None:
    """``--trace`` and the trace reader's options (``opsim trace info``'s)."""
    g = p.add_argument_group(
        "trace (--trace FILE: the workload is the trace's; the screen uses its fitted workload, the "
        "simulator replays the trace itself)"
    )
    g.add_argument(
        "--trace",
        metavar="FILE",
        help="a block trace (MSR, SPC, blkparse, fio iolog, ...; plain, .gz or .zst): advise the OP it needs",
    )
    add_reader_options(g)
    g.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="cap of the trace profile's per-block state (default 2GiB; `opsim trace profile --max-memory`)",
    )


def check(args) -> None:
    """Refuse, naming the option, what --trace cannot be combined with (before any work)."""
    if args.trace is None:
        given = [
            opt
            for opt, v in (
                ("format", args.format != "auto"),
                ("device", args.device is not None),
                ("skip_bad", args.skip_bad),
                ("columns", args.columns is not None),
                ("delimiter", args.delimiter is not None),
                ("skip_lines", args.skip_lines is not None),
                ("action", args.action is not None),
                ("max_memory", args.max_memory is not None),
            )
            if v
        ]
        if given:
            raise _bad(given[0], "reads a trace: give --trace FILE")
        return
    for attr, opt in _SHAPE_OPTIONS:
        if getattr(args, attr, None) is not None:
            raise _bad(attr, f"the trace gives the workload; drop {opt} or --trace")
    if str(args.sequential).strip() not in ("0", "0%"):
        raise _bad("sequential", "the trace gives the workload; drop --sequential or --trace")
    if str(args.read_write).strip() != "0:100":
        raise _bad("read_write", "the trace gives its read/write split; drop --read-write or --trace")
    if args.conservative:
        raise _bad("conservative", "the intervals are carried for synthetic workloads only; drop --conservative")


def run(args, drive, targets, step, max_held_back, write_rate, progress) -> dict:
    """Load, check and fit the trace, then screen and replay."""
    # lazy: the advisor takes numpy and scipy (its analytic models), which `opsim --help` and the
    # other commands do not need
    from ..planner.advise.trace import advise_trace, load_trace  # noqa: PLC0415

    src = load_trace(args.trace, reader_opts(args), drive, args.max_memory)
    return advise_trace(
        drive,
        targets,
        src,
        write_rate=write_rate,
        step=step,
        max_held_back=max_held_back,
        confirm=args.simulate,
        model_blocks=args.model_blocks,
        seed=args.seed,
        progress=progress,
    )


def lines(d: dict) -> list[str]:
    """The trace's lines of the table: what it holds, its fit, and the screen against the replay."""
    t = d["trace"]
    c = t["comparison"]
    fit = t["fit"]
    fp = t["write_footprint_bytes"]
    out = [
        f"Trace: {t['path']} ({t['format']}): {t['records']:,} requests, {t['write_ios']:,} writes, span "
        f"{t['span_bytes'] / 2**30:,.2f} GiB" + (f", write footprint {fp / 2**30:,.2f} GiB" if fp is not None else ""),
        f"  fitted workload: {fit['skew']} (fit error {100 * fit['error']:.2f} points of the write share"
        + (
            f"; its domain is {100 * fit['workload']['span']:.3g}% of the span, the screen spreads it over every LBA)"
            if fit["workload"].get("span", 1) < 0.999
            else ")"
        ),
    ]
    w = c["waf_at_advised"]

    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    def f2(x):
        return "-" if x is None else f"{x:.3f}"

    rows = [
        [
            "screen (fitted workload)",
            pct(c["screen"]["advised_held_back"]),
            f2(c["screen"].get("waf_at_its_pick")),
            f2(w["screen"]),
        ],
        ["replay (the trace)", pct(c["replay"]["advised_held_back"]), f2(w["replay"]), f2(w["replay"])],
    ]
    out.append(
        table(
            ["from", "advised held back", "WAF at its pick", f"WAF at the advice ({pct(w['held_back'])})"],
            rows,
            align="lrrr",
            title="Screen against replay",
        )
    )
    if w["difference"] is not None:
        out.append(
            f"  replay - screen WAF at the advice: {w['difference']:+.3f} ({100 * w['relative']:+.1f}% of the screen's)"
        )
    out.append(f"  scaling: {t['rule']}")
    out += [f"  note: {n}" for n in t["notes"]]
    return out
