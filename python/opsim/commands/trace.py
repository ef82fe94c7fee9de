"""``opsim trace``: summarise a block trace, profile its writes, convert it to a fio iolog, or
synthesise one of a known skew."""

from __future__ import annotations

import argparse
import re
import sys

from .. import trace
from .._output import Output, check_writable_file, kv_table, table
from ..errors import InputError
from ..trace import FORMATS
from ..units import fmt_bytes, parse_size
from ..workload import parse_read_write, parse_skew


def register(sub, common):
    p = sub.add_parser(
        "trace",
        help="summarise a block trace or convert it to a fio iolog",
        description=(
            "Block traces: MSR Cambridge / SNIA IOTTA CSV, blkparse text, fio iolog v2/v3, "
            "DiskSim and MQSim ASCII, SPC (UMass) CSV, or any delimited text with a column map. "
            "Plain, .gz or .zst (detected from the content). Read as a stream."
        ),
    )
    tsub = p.add_subparsers(dest="trace_cmd", required=True, metavar="{info,profile,convert,synth}")
    opts = _reader_options()
    i = tsub.add_parser(
        "info", parents=[common, opts], help="what the trace holds (IOs, bytes, split, footprint, span)"
    )
    i.add_argument("file")
    i.set_defaults(func=run_info)
    pr = tsub.add_parser(
        "profile",
        parents=[common, opts],
        help="the write profile (frequency curve, overwrites, update distances, sizes) and the fitted workload",
        description="Read the trace once (streaming) and profile its writes per 4 KiB block: the write-frequency "
        "curve, footprints, overwrite ratio, update distances, sequential share, size mix and read/write/trim "
        "split; then fit uniform, hot-cold and zipf workloads to it (docs/workloads.md, 'Profiling a trace').",
    )
    pr.add_argument("file")
    pr.add_argument(
        "--max-memory",
        metavar="SIZE",
        help="cap of the per-block state (default 2GiB: 8 bytes per 4 KiB block in the 1 GiB chunks written)",
    )
    pr.add_argument("--no-fit", action="store_true", help="profile only, no fitted workload")
    pr.set_defaults(func=run_profile)
    c = tsub.add_parser(
        "convert",
        parents=[common, opts],
        help="write the trace as a fio iolog (replay on a real drive with fio --read_iolog)",
    )
    c.add_argument("file")
    c.add_argument("-o", "--output", required=True, help="the iolog file to write")
    c.add_argument(
        "--version",
        type=int,
        choices=[2, 3],
        default=3,
        help="iolog version (3: per-request times in microseconds, fio >= 3.31; default 3)",
    )
    c.add_argument(
        "--target",
        default="/dev/sdX",
        help="the file or device the iolog replays on (default /dev/sdX; fio's --replay_redirect can change it)",
    )
    c.set_defaults(func=run_convert)
    _register_synth(tsub, common)


def _register_synth(tsub, common) -> None:
    """``opsim trace synth``: a trace of the core's own generator, with a known skew."""
    s = tsub.add_parser(
        "synth",
        parents=[common],
        help="write a synthetic trace (fio iolog v3) of a known skew: uniform, hot-cold:20/80, zipf:0.9",
        description=(
            "Write COUNT commands of the simulator's own workload generator (the one `opsim simulate` "
            "and `opsim advise --skew` use) over SPAN bytes as a fio iolog v3, atomically. Same seed, "
            "same file. A trace with a known skew: replay it, profile it, advise from it."
        ),
    )
    s.add_argument("-o", "--output", required=True, help="the iolog file to write (.iolog)")
    s.add_argument(
        "--skew",
        default="uniform",
        help="uniform (default), hot-cold:20/80 (20%% of the span takes 80%% of the commands), zipf:0.9, "
        "sequential or jesd219",
    )
    s.add_argument("--span", default="64GiB", help="address span in bytes, a multiple of 4 KiB (default 64GiB)")
    s.add_argument("--count", type=_count, default=1_000_000, metavar="N", help="commands (default 1,000,000)")
    s.add_argument("--block-size", default="4KiB", help="transfer size (default 4KiB; jesd219 has its own mix)")
    s.add_argument("--read-write", default="0:100", metavar="R:W", help="read:write ratio (default 0:100)")
    s.add_argument("--seed", type=_count, default=1, help="generator seed (default 1)")
    s.add_argument("--interval", default="10us", help="time between commands in the trace (default 10us; 0 for none)")
    s.add_argument("--target", default="/dev/sdX", help="the file or device the iolog names (default /dev/sdX)")
    s.set_defaults(func=run_synth)


def _reader_options():
    o = argparse.ArgumentParser(add_help=False)
    add_reader_options(o.add_argument_group("trace reading"))
    return o


def add_reader_options(g) -> None:
    """The trace reader's options (those of a ``[workload.trace]`` table) on a parser or group:
    ``opsim trace`` and ``opsim advise --trace`` share them; :func:`reader_opts` reads them."""
    g.add_argument("--format", choices=FORMATS, default="auto", help="trace layout (default: detect)")
    g.add_argument("--device", help="keep one device / volume (MSR disk or host_disk, blkparse maj,min, ASU...)")
    g.add_argument("--skip-bad", action="store_true", help="skip and count malformed lines instead of stopping")
    g.add_argument("--columns", help="columns format: e.g. time=0:ms,op=3,offset=4:bytes,size=5:bytes,device=2")
    g.add_argument("--delimiter", help="columns format: field delimiter (default: comma if present, else blanks)")
    g.add_argument("--skip-lines", type=_count, metavar="N", help="header lines to skip")
    g.add_argument("--action", help="blkparse: the action replayed (default D)")


def _count(text: str) -> int:
    """A non-negative integer option value (argparse names the option in its error)."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if not 0 <= v < 1 << 64:
        why = "is negative" if v < 0 else "is too large"
        raise argparse.ArgumentTypeError(f"{v} {why}; expected a number of lines (0 to 2^64 - 1)")
    return v


def _opts(args) -> dict:
    return reader_opts(args)


def reader_opts(args) -> dict:
    """The reader options of :func:`add_reader_options` as keyword arguments of :mod:`opsim.trace`."""
    return {
        "format": args.format,
        "device": args.device,
        "skip_bad": args.skip_bad or None,
        "columns": args.columns,
        "delimiter": args.delimiter,
        "skip_lines": args.skip_lines,
        "action": args.action,
    }


def run_info(args) -> Output:
    d = trace.info(args.file, **_opts(args))
    total = d["records"]
    rows = [
        (
            kind,
            d[kind]["ios"],
            f"{100 * d[kind]['ios'] / total:.1f}%",
            fmt_bytes(d[kind]["bytes"]),
            fmt_bytes(d[kind]["bytes"] / d[kind]["ios"]) if d[kind]["ios"] else "-",
        )
        for kind in ("read", "write", "trim")
    ]
    fp = d["footprint_bytes"]
    wfp = d["write_footprint_bytes"]
    summary = kv_table(
        [
            ("file", d["path"]),
            ("format", f"{d['format']} (compression: {d['compression']})"),
            ("device filter", d["device"] or "-"),
            ("lines read", d["lines"]),
            ("requests", total),
            ("duration", f"{d['duration_s']:.3f} s"),
            (
                "span",
                f"{fmt_bytes(d['min_offset'])} .. {fmt_bytes(d['max_end'])} "
                f"({fmt_bytes(d['max_end'] - d['min_offset'])})",
            ),
            ("footprint (4 KiB blocks touched)", fmt_bytes(fp) if fp is not None else "too large to count"),
            ("write footprint", fmt_bytes(wfp) if wfp is not None else "too large to count"),
            ("not 4 KiB aligned", f"{d['unaligned_4k']:,} ({100 * d['unaligned_4k'] / total:.1f}%)"),
            ("bad lines skipped", d["skipped_bad_lines"]),
        ]
    )
    sizes = table(
        ["size", "requests", "share"],
        [(fmt_bytes(s), n, f"{100 * n / total:.1f}%") for s, n in d["top_sizes"]],
        title="most frequent request sizes",
    )
    text = "\n\n".join([summary, table(["kind", "requests", "share", "bytes", "mean size"], rows), sizes])
    if d["first_bad_line"]:
        line, why = d["first_bad_line"]
        text += f"\nfirst bad line skipped: line {line}: {why}"
    return Output(d, text)


def run_convert(args) -> Output:
    check_writable_file(args.output, key="--output", inputs=[args.file])
    n = trace.convert(args.file, args.output, version=args.version, target=args.target, **_opts(args))
    data = {"input": args.file, "output": args.output, "version": args.version, "target": args.target, "requests": n}
    text = (
        f"wrote {n:,} requests to {args.output} (fio iolog v{args.version}, target {args.target})\n"
        f"replay: fio --name=replay --read_iolog={args.output} --ioengine=libaio --direct=1"
        + (" --replay_time_scale=100" if args.version == 3 else "")
    )
    return Output(data, text)


def _progress_printer():
    """A progress callback printing records and records/s on stderr (about once a second),
    and a function ending its line."""
    shown = [False]

    def show(records: int, lines: int, seconds: float) -> None:
        end = "\r" if sys.stderr.isatty() else "\n"
        rate = records / seconds if seconds > 0 else 0.0
        print(
            f"profiled {records:,} requests ({lines:,} lines), {rate / 1e6:.2f} M requests/s", end=end, file=sys.stderr
        )
        sys.stderr.flush()
        shown[0] = True

    def done() -> None:
        if shown[0] and sys.stderr.isatty():
            print(file=sys.stderr)

    return show, done


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def run_profile(args) -> Output:
    # lazy: the fit takes scipy, which `opsim --help` and the other trace commands do not need
    from .. import trace_profile  # noqa: PLC0415

    cap = None if args.max_memory is None else parse_size(args.max_memory, key="--max-memory")
    show, done = _progress_printer()
    try:
        p = trace_profile.profile(args.file, max_memory=cap, progress=show, **_opts(args))
    finally:
        done()
    d = dict(p.data)
    fit = None if args.no_fit else trace_profile.fit(p)
    d = {"schema": trace_profile.SCHEMA, **d, "fit": fit.to_dict() if fit else None}
    total = d["records"]
    kinds = table(
        ["kind", "requests", "share", "bytes", "share of bytes"],
        [
            (
                kind,
                d[kind]["ios"],
                _pct(d[kind]["ios"] / total),
                fmt_bytes(d[kind]["bytes"]),
                _pct(d[kind]["bytes"] / max(1, sum(d[k]["bytes"] for k in ("read", "write", "trim")))),
            )
            for kind in ("read", "write", "trim")
        ],
    )
    med = d["update_distance_median_footprints"]
    summary = kv_table(
        [
            ("file", d["path"]),
            ("format", f"{d['format']} (compression: {d['compression']})"),
            ("requests", f"{total:,}" + ("  (PARTIAL: interrupted)" if d["partial"] else "")),
            ("duration", f"{d['duration_s']:.3f} s"),
            ("span (from offset 0)", fmt_bytes(d["span_blocks"] * 4096)),
            ("footprint touched", fmt_bytes(d["footprint_bytes"])),
            ("footprint written", f"{fmt_bytes(d['write_footprint_bytes'])} ({d['written_blocks']:,} blocks of 4 KiB)"),
            ("4 KiB block writes", f"{d['block_writes']:,}"),
            ("overwrite ratio", _pct(d["overwrite_ratio"])),
            ("sequential writes", _pct(d["sequential_share"])),
            ("median update distance", "-" if med is None else f"{med:.3g} write footprints"),
            ("bad lines skipped", d["skipped_bad_lines"]),
        ]
    )
    curve = table(
        ["hottest blocks", "share of writes"],
        [(_pct(c["blocks"]), _pct(c["writes"])) for c in d["curve_at"]],
        title="write-frequency curve",
    )
    dist = table(
        ["update distance (block writes)", "in footprints", "overwrites", "share"],
        [
            (
                f"{b['lo']:,}..{b['hi']:,}",
                f"{b['lo_footprints']:.3g}..{b['hi_footprints']:.3g}",
                b["count"],
                _pct(b["count"] / max(1, d["overwrites"])),
            )
            for b in d["update_distance"]
        ],
        title="update distance",
    )
    sizes = table(
        ["size up to", "reads", "writes", "trims"],
        [(fmt_bytes(b["upto"]), b["read"], b["write"], b["trim"]) for b in d["size_mix"]],
        title="size mix",
    )
    parts = [summary, kinds, curve, dist, sizes]
    if fit is not None:
        rows = [
            (k + (" *" if k == fit.kind else ""), c["skew"], f"{100 * c['error']:.2f}", f"{c['domain_blocks']:,}")
            for k, c in fit.candidates.items()
        ]
        parts.append(table(["model", "--skew", "error (points)", "domain (blocks)"], rows, title="fitted workload"))
        wl = ", ".join(f"{k} = {v!r}".replace("'", '"') for k, v in fit.workload.items())
        parts.append(f"fit: --skew {fit.skew}  (error {100 * fit.error:.2f} points)\n[workload] {wl}")
    if d["first_bad_line"]:
        line, why = d["first_bad_line"]
        parts.append(f"first bad line skipped: line {line}: {why}")
    return Output(d, "\n\n".join(parts), exit_code=130 if d["partial"] else 0)


def run_synth(args) -> Output:
    check_writable_file(args.output, key="--output", inputs=[])
    name = str(args.skew).strip().lower()
    if name not in ("sequential", "jesd219"):
        parse_skew(name)  # names --skew before any work
    span = parse_size(args.span, key="span")
    bs = parse_size(args.block_size, key="block_size")
    rf = parse_read_write(args.read_write)
    interval_ns = _interval_ns(args.interval)
    n = trace.synth(
        args.output,
        skew=name,
        span=span,
        count=args.count,
        block_size=bs,
        read_fraction=rf,
        seed=args.seed,
        interval_ns=interval_ns,
        target=args.target,
    )
    data = {
        "output": args.output,
        "format": "fio-iolog v3",
        "skew": name,
        "span_bytes": span,
        "requests": n,
        "block_size": bs,
        "read_fraction": rf,
        "seed": args.seed,
        "interval_ns": interval_ns,
    }
    text = f"wrote {n:,} requests of {name} over {fmt_bytes(span)} to {args.output} (fio iolog v3, seed {args.seed})"
    return Output(data, text)


_TIME_NS = {"ns": 1, "us": 1_000, "µs": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def _interval_ns(text) -> int:
    """``10us``, ``1ms``, ``0``: nanoseconds (refused naming --interval)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?)\s*(ns|us|µs|ms|s)?\s*", str(text))
    if not m or (m.group(2) is None and float(m.group(1)) != 0):
        raise InputError(f"--interval: {text!r} is not a time; write it as 10us, 1ms or 0", key="interval")
    v = round(float(m.group(1)) * _TIME_NS[m.group(2) or "ns"])
    if v >= 1 << 40:
        raise InputError(f"--interval: {text!r} is too long (at most about 18 minutes)", key="interval")
    return v
