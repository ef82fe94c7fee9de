"""``opsim calibrate``: a model of the user's drive from its datasheet or a measurement, its
parameters with their sources, and its predicted OP curve."""

from __future__ import annotations

import math
import sys

import tomli_w

from .._output import Output, atomic_write_text, check_writable_file, table
from ..errors import InputError
from ..units import fmt_bytes, parse_size


def register(sub, common):
    p = sub.add_parser(
        "calibrate",
        parents=[common],
        help="build a drive model from a datasheet or measurements, and predict its OP curve",
        description=(
            "Fit the parameters nobody gave (the NAND garbage collection can use, NAND program and read "
            "times, the controller's time per command and per GC page) to a datasheet's figures and "
            "measured points with scipy.optimize.least_squares, against the core's own simulator and "
            "cost model; report every parameter with its source and 95%% interval; predict the steady "
            "WAF and 4 KiB random-write IOPS at other spans; write a drive file usable wherever a preset "
            "is (docs/calibrate.md)."
        ),
    )
    p.add_argument("--datasheet", metavar="FILE", help="a datasheet file (TOML: [drive], [datasheet], [source])")
    p.add_argument(
        "--points",
        metavar="FILE",
        help="measured points (CSV, header span,block_size,queue_depth,read_fraction,waf,iops[,p99_us])",
    )
    p.add_argument(
        "--measured",
        metavar="FILE",
        nargs="+",
        help="results of `opsim measure` (result.json) and interval results of `opsim smart waf`",
    )
    p.add_argument("--native", help="the drive's user capacity as sold, e.g. 960GB")
    p.add_argument("--interface", choices=["sata", "nvme", "sas"])
    p.add_argument("--physical", help="the NAND behind the drive, when known (otherwise fitted)")
    p.add_argument("--cell", choices=["slc", "mlc", "tlc", "qlc"])
    p.add_argument("--page-size", help="the mapping unit (indirection unit), e.g. 16KiB for many QLC drives")
    p.add_argument("--pe", help="the NAND's P/E cycle rating (otherwise from the datasheet's endurance)")
    p.add_argument("--predict", metavar="SPAN,...", help="spans to predict: bytes written (745GiB) or shares (80%%)")
    p.add_argument("--held-back", metavar="PCT,...", help="the same as shares held back: 0%%,7%%,20%%")
    p.add_argument(
        "--max-address",
        action="store_true",
        help="predict with the max address lowered to each span (SET MAX ADDRESS) instead of writing only the span",
    )
    p.add_argument("--queue-depth", type=int, help="queue depth of the predictions (default: the datasheet's)")
    p.add_argument("-o", "--output", metavar="FILE", help="write the drive file (TOML, the presets' schema)")
    p.add_argument("--name", help="the drive file's preset name")
    p.add_argument("--title", help="the drive file's title")
    p.add_argument(
        "--bound-only",
        action="store_true",
        help="predict with the cost model's bound and skip the timed simulations (faster, less exact)",
    )
    p.set_defaults(func=run)


def _calibration():
    """:mod:`opsim.calibrate`, imported when the command runs: the fit takes numpy and scipy, which
    `opsim --help` and the other commands do not need."""
    from .. import calibrate  # noqa: PLC0415

    return calibrate


def _pct(text: str, key: str, whole: bool = False) -> float:
    """A share ``text`` (7% or 0.07) from 0% up to 100% (``whole``: 100% included)."""
    t = text.strip()
    try:
        v = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise InputError(f"{key}: {text!r} is not a percentage (e.g. 7%)", key=key) from None
    if whole and not (0 <= v <= 1):
        raise InputError(f"{key}: {text!r} must be from 0% up to 100% (the whole drive)", key=key)
    if not whole and not (0 <= v < 1):
        raise InputError(f"{key}: {text!r} must be from 0% up to (not including) 100%", key=key)
    return v


def _spans(args, native: int) -> tuple[list[int], list[float] | None]:
    spans: list[int] = []
    held: list[float] | None = None
    if args.predict:
        for part in args.predict.split(","):
            part = part.strip()
            if part.endswith("%"):
                frac = _pct(part, "predict", whole=True)
                if frac == 0:
                    raise InputError("predict: a span of 0% writes nothing", key="predict")
                spans.append(int(native * frac) // 4096 * 4096)
            else:
                size = parse_size(part, key="predict")
                if size < 4096:
                    raise InputError(f"predict: {part} is less than one 4 KiB page written", key="predict")
                spans.append(size // 4096 * 4096)  # whole pages, as a share is
    if args.held_back:
        held = []
        for part in args.held_back.split(","):
            h = _pct(part, "held-back")
            held.append(h)
            spans.append(int(native * (1 - h)) // 4096 * 4096)
        if args.predict:
            held = None  # mixed: held back is computed per span
    for s in spans:
        if not 0 < s <= native:
            raise InputError(f"predict: span {fmt_bytes(s)} is outside the drive ({fmt_bytes(native)})", key="predict")
    return spans, held


def _flags(args) -> dict:
    flags: dict = {"interface": args.interface, "cell": args.cell}
    if args.native:
        flags["native"] = parse_size(args.native, key="native")
    if args.physical:
        flags["physical"] = parse_size(args.physical, key="physical")
    if args.page_size:
        flags["page_size"] = parse_size(args.page_size, key="page-size")
    if args.pe:
        try:
            pe = float(args.pe)
        except ValueError:
            raise InputError(f"pe: {args.pe!r} is not a number of P/E cycles", key="pe") from None
        if not (pe > 0 and math.isfinite(pe)):
            raise InputError(f"pe: {args.pe} must be a positive finite number of P/E cycles", key="pe")
        flags["pe"] = pe
    return flags


def run(args) -> Output:
    if not (args.datasheet or args.points or args.measured or args.native):
        raise InputError(
            "nothing to calibrate from: give --datasheet, --points or --measured (and --native when no file says it)",
            key="datasheet",
        )
    inputs = [args.datasheet, args.points, args.measured]
    out = check_writable_file(args.output, key="output", inputs=inputs) if args.output else None
    cal_pkg = _calibration()
    spec, figures = cal_pkg.read_inputs(args.datasheet, args.points, args.measured, _flags(args))
    assert spec.native is not None  # read_inputs refuses a drive without one
    spans, held = _spans(args, spec.native)
    cal_pkg.result.check_queue_depth(args.queue_depth)  # before the fit, as every option

    def progress(msg: str) -> None:
        if not args.json:
            print(f"  {msg}", file=sys.stderr)

    cal = cal_pkg.calibrate(spec, figures, progress=progress)
    preds = cal.predict(
        spans, held_back=held, queue_depth=args.queue_depth, simulate=not args.bound_only, max_address=args.max_address
    )

    asked = spans[0] if spans else None
    narrow = cal_pkg.result.suggestion(cal, asked, args.queue_depth)
    drive = cal.drive_toml(args.name, args.title)
    if out:
        atomic_write_text(out, tomli_w.dumps(drive))
    params = cal.parameters()
    data = {
        "drive": drive,
        "parameters": params,
        "fit": cal.fit_report(),
        "predictions": preds,
        "narrowing": narrow,
        "notes": cal.notes,
        "output": out,
    }
    return Output(data=data, text=_text(cal, params, data, out))


def _num(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def _text(cal, params, data, out) -> str:
    rows = []
    for p in params:
        iv = f"{_num(p['low'])} .. {_num(p['high'])}" if p["low"] is not None else ""
        src = p["source"] if len(p["source"]) <= 90 else p["source"][:87] + "..."
        rows.append([p["name"], _num(p["value"]), iv, src])
    parts = [table(["parameter", "value", "95% interval", "source"], rows, align="lrrl", title="The drive model")]
    fit = data["fit"]
    frows = [
        [r["figure"], f"{r['observed']:.4g}", f"{r['model']:.4g}", f"{r['error']:+.1%}", r["bottleneck"] or "-"]
        for r in fit["figures"]
    ]
    parts.append(
        table(
            ["figure", "given", "model", "error", "bound by"],
            frows,
            align="lrrrl",
            title="The fit (each figure against the calibrated model)",
        )
    )
    if fit["unused"]:
        parts.append("\n".join(f"not used: {k}: {v}" for k, v in fit["unused"].items()))
    if data["predictions"]:
        prow = []
        for r in data["predictions"]:
            prow.append(
                [
                    fmt_bytes(r["span_bytes"]),
                    f"{r['held_back']:.1%}",
                    f"{r['waf']:.2f} ({r['waf_low']:.2f}-{r['waf_high']:.2f})",
                    f"{r['iops']:,.0f} ({r['iops_low']:,.0f}-{r['iops_high']:,.0f})",
                    "-" if r["p99_us"] is None else f"{r['p99_us']:,.0f}",
                    "-" if "dwpd" not in r else f"{r['dwpd']:.2f}",
                ]
            )
        parts.append(
            table(
                ["span", "held back", "WAF (95%)", "4 KiB random-write IOPS (95%)", "p99 us", "DWPD"],
                prow,
                align="rrrrrr",
                title="Predicted steady state",
            )
        )
    if data.get("narrowing"):
        parts.append(_narrowing_text(data["narrowing"]))
    parts += [f"note: {n}" for n in cal.notes]
    if out:
        parts.append(f'drive file: {out} (use: preset = "{out}" in a config, opsim advise --drive {out})')
    return "\n\n".join(parts)


def _narrowing_text(n: dict) -> str:
    """In words: whether the figures pin WAF at the span asked, and the one measurement that
    would narrow it most (computed: :func:`opsim.calibrate.result.suggestion`)."""
    b = n["best"]
    span = fmt_bytes(n["span_bytes"])
    lo, hi, mid = b["waf_low"], b["waf_high"], b["waf"]
    pinned = hi / lo <= _calibration().uncertainty.PINNED
    head = (
        f"WAF over {span} is pinned by the figures: {mid:.2f} ({lo:.2f}-{hi:.2f})."
        if pinned
        else f"WAF over {span} is not pinned by the figures: {mid:.2f}, anywhere from {lo:.2f} to {hi:.2f} "
        "(95%): the figures cannot tell more NAND with slower programs from less NAND with faster ones."
    )
    new = f"{b['new_low']:.2f}-{b['new_high']:.2f}, about +-{b['new_half_width']:.0%}"
    sigma = b.get("assumed_sigma") or {}
    known = ", ".join(f"its {k.upper()} to +-{v:.0%}" for k, v in sorted(sigma.items()))
    return (
        f"{head}\nThe one measurement that would narrow it most: {b['what']} (`{b['command']}`): "
        f"the WAF interval {lo:.2f}-{hi:.2f} becomes {new} (the model's profile refitted with that "
        f"measurement at its own prediction, {known} (one standard deviation) as such a measurement is "
        "expected to give; a real run reports its own; every candidate in --json, narrowing.candidates)."
    )
