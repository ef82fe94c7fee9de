"""``opsim measure {wsat,iops,consistency}``: SNIA PTS-style tests with fio on a file or a drive."""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
from decimal import Decimal

from .._output import Output, atomic_write_text, check_writable_dir, kv_table, table
from ..errors import ConfigError
from ..results import LATENCY_SUMMARY
from ..units import fmt_bytes, parse_size

#: the size of a file target when --size is not given
DEFAULT_FILE_SIZE = "1GiB"

# LAZY: the measurement (fio, the device guard, SMART) is imported when the command runs: `opsim
# --help` and the other commands do not need it (start-up)


def register(sub, common):
    p = sub.add_parser(
        "measure",
        parents=[common],
        help="measure a real target with fio: wsat, iops (SNIA PTS) or consistency (AnandTech)",
        description="Run a PTS-style test with fio. Default target: a regular file (safe). Writing to a "
        "block device needs --destroy-data=DEVICE naming it again. Schema: docs/measure.md.",
    )
    p.add_argument("test", choices=["wsat", "iops", "consistency"])
    _target_options(p)
    _workload_options(p)
    _fdp_options(p)
    _output_options(p)
    p.set_defaults(func=run)


def _target_options(p) -> None:
    """The target (a file or a device), its confirmation, purge and SMART."""
    t = p.add_mutually_exclusive_group()
    t.add_argument(
        "--file",
        metavar="PATH",
        help="target file (created with --size; default opsim-measure.dat "
        "in the output directory); an existing file is refused "
        "unless it is opsim's scratch file or --force is given",
    )
    t.add_argument("--device", metavar="DEV", help="target block device (DESTROYS its data)")
    p.add_argument("--destroy-data", metavar="DEV", help="confirmation: name the device again")
    p.add_argument(
        "--force",
        action="store_true",
        help="write even if the device holds a signature, is in use or could not be checked "
        "(never if mounted); with --file: overwrite an existing file that is not opsim's "
        "scratch file",
    )
    p.add_argument(
        "--purge",
        default=None,
        metavar="METHOD",
        choices=["auto", "discard", "nvme-format", "ata-erase", "ata-erase-enhanced"],
        help="purge the device first (the method is required, so the option never takes a "
        "positional): auto (nvme format --ses=1 for NVMe, else blkdiscard), discard, "
        "nvme-format, ata-erase or ata-erase-enhanced (ATA SECURITY ERASE via hdparm; never "
        "chosen by auto). Same guard as the test itself",
    )
    p.add_argument("--smart", action="store_true", help="SMART snapshots before and after; report interval WAF")


def _workload_options(p) -> None:
    """The fio workload: size, span, queue depth, rounds, block sizes, mixes, stop rules."""
    p.add_argument("--size", help=f"file size for file targets (default {DEFAULT_FILE_SIZE})")
    p.add_argument("--span", help="active range: bytes (e.g. 8GiB) or a percentage of the target (e.g. 75%%)")
    p.add_argument("--qd", type=int, default=32, help="queue depth per job (default 32)")
    p.add_argument("--threads", type=int, default=1, help="fio numjobs (default 1)")
    p.add_argument("--round", dest="round_s", type=int, default=60, help="round length in seconds (default 60)")
    p.add_argument(
        "--bs", default=None, help="block size (default 4k); iops: a comma-separated list (default the PTS list)"
    )
    p.add_argument("--rwmix", default=None, help="iops only: R/W mixes, e.g. 0/100,65/35,100/0 (default PTS list)")
    p.add_argument("--time-cap", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--max-rounds", type=int, default=None, help="iops only: at most this many rounds (default 25)")
    p.add_argument(
        "--capacity-multiple", type=float, default=None, help="wsat only: stop after N x capacity (default 4)"
    )
    p.add_argument(
        "--ioengine",
        default=None,
        help="fio engine (default libaio; io_uring_cmd with --fdp, which selects it)",
    )
    p.add_argument("--buffered", action="store_true", help="buffered I/O (default O_DIRECT)")
    p.add_argument("--fio-steadystate", metavar="SPEC", help="fio's own early stop, e.g. iops_slope:0.3%%")
    p.add_argument(
        "--precondition",
        type=int,
        default=None,
        metavar="PASSES",
        help="SNIA workload-independent preconditioning before the rounds: PASSES sequential "
        "128 KiB passes over the span (default 2 for iops, 0 for wsat, which starts fresh out "
        "of box, and for consistency, which does its own fill)",
    )


def _fdp_options(p) -> None:
    f = p.add_argument_group(
        "placement (NVMe Flexible Data Placement; docs/fdp-real-drives.md)",
        "--fdp writes with fio's fdp=1 through the namespace's generic device /dev/ngXnY (io_uring_cmd, "
        "cmd_type=nvme); --device names the namespace's block device /dev/nvmeXnY, which opsim checks.",
    )
    f.add_argument("--fdp", action="store_true", help="write with FDP placement (fio fdp=1; needs --device)")
    f.add_argument(
        "--fdp-pli",
        metavar="LIST",
        help="placement ID indices this run writes to (fio fdp_pli=, e.g. 0 or 0,2-3): indices into the "
        "namespace's placement handle list, as `nvme fdp status` orders it (default: all of them)",
    )
    f.add_argument(
        "--fdp-pli-select",
        choices=["roundrobin", "random"],
        help="how fio picks the next placement ID (fio fdp_pli_select=; default fio's roundrobin)",
    )


def _output_options(p) -> None:
    """The write-cache note, progress and the output directory."""
    p.add_argument(
        "--write-cache",
        choices=["on", "off"],
        help="note the drive's volatile write cache state you set (recorded with the kernel's view "
        "from /sys/block/DEV/queue/write_cache; opsim never changes it)",
    )
    p.add_argument(
        "--progress",
        choices=["auto", "on", "off"],
        default="auto",
        help="progress on stderr: auto (when stderr is a terminal; default), on, off",
    )
    p.add_argument(
        "-o",
        "--output-dir",
        help="directory for result.json and fio files (default opsim-measure-TEST-DATE-TIME; its parent must "
        "exist); one that holds a measurement's results already is refused unless --replace is given",
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="the output directory holds results of an earlier measurement: delete them (result.json, the "
        "round files, SMART snapshots) and measure again",
    )


#: fio's own limit on jobs (FIO_MAX_JOBS); a queue depth beyond 65536 exceeds every engine's queue
MAX_THREADS = 4096
MAX_QD = 65536


def _int_range(v, key, lo, hi=None):
    """An integer option (argparse has made it an int) within [lo, hi]."""
    if v is None:
        return v
    if v < lo or (hi is not None and v > hi):
        rng = f"from {lo} to {hi}" if hi is not None else f"{lo} or more"
        raise ConfigError(f"--{key}: {v} is out of range; give {rng}", key=key)
    return v


def _finite_positive(v, key):
    """A float option: finite and > 0 (nan and inf pass argparse's ``float``)."""
    if v is None:
        return v
    if not math.isfinite(v) or v <= 0:
        raise ConfigError(f"--{key}: {v} is not a positive finite number", key=key)
    return v


_PCT = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*%\s*")


def _span(text: str, total: int) -> int:
    """``--span``: bytes (``8GiB``) or a percentage of the target (``75%``), rounded down to
    4 KiB; refused when it is not a number, not finite, not in (0, 100] % or outside the target."""
    s = str(text).strip()
    if s.endswith("%"):
        m = _PCT.fullmatch(s)
        if not m:
            raise ConfigError(f"--span: {text!r} is not a percentage (e.g. 75%)", key="span")
        pct = Decimal(m.group(1))
        if not 0 < pct <= 100:
            raise ConfigError(f"--span: {text} is outside (0, 100]%", key="span")
        span = int(total * pct / 100)
    else:
        span = parse_size(s, key="span")
        if not 0 < span <= total:
            raise ConfigError(f"--span: {text} is outside the target ({fmt_bytes(total)})", key="span")
    span -= span % 4096
    if span <= 0:
        raise ConfigError(f"--span: {text} is less than 4KiB of the target ({fmt_bytes(total)})", key="span")
    return span


_FIO_SS = re.compile(r"(iops|bw)(_slope)?:([0-9]+(?:\.[0-9]+)?)(%?)")


def _fio_steadystate(text):
    """fio's ``--steadystate`` spec: ``iops|bw[_slope]:NUMBER[%]``."""
    if text is None:
        return None
    m = _FIO_SS.fullmatch(text.strip())
    if not m or float(m.group(3)) <= 0:
        raise ConfigError(
            f"--fio-steadystate: {text!r} is not fio's steady-state spec "
            "(iops|bw[_slope]:NUMBER[%], e.g. iops_slope:0.3%)",
            key="fio-steadystate",
        )
    return text.strip()


def _mixes(text):
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", part)
        if not m or int(m.group(1)) + int(m.group(2)) != 100:
            raise ConfigError(f"--rwmix: {part!r} is not R/W percentages adding to 100 (e.g. 65/35)", key="rwmix")
        out.append((int(m.group(1)), int(m.group(2))))
    return tuple(out)


def _bs_list(text):
    out = []
    for b in text.split(","):
        b = b.strip()
        n = parse_size(
            b
            if re.search(r"[a-zA-Z]", b) is None or b[-1:].lower() == "b"
            else b + ("iB" if b[-1].lower() in "kmg" else ""),
            key="bs",
        )
        if n <= 0 or n % 512:
            raise ConfigError(f"--bs: {b!r} must be a positive multiple of 512 bytes", key="bs")
        out.append(b)
    return tuple(out)


#: the options that apply to some tests only: option (argparse dest) -> the tests it applies to.
#: Every other option applies to every test.  Given for another test, an option is refused.
TEST_OPTIONS = {
    "max_rounds": ("iops",),
    "rwmix": ("iops",),
    "capacity_multiple": ("wsat",),
}


def _check_test_options(args) -> None:
    """Refuse an option that does not apply to the chosen test (it would be ignored)."""
    for dest, tests in TEST_OPTIONS.items():
        if getattr(args, dest) is not None and args.test not in tests:
            opt = "--" + dest.replace("_", "-")
            raise ConfigError(
                f"{opt} applies to the {' and '.join(tests)} test only, not to {args.test}; leave it out",
                key=opt[2:],
            )
    if args.test != "iops" and args.bs and len(_bs_list(args.bs)) > 1:
        raise ConfigError(f"--bs: {args.test} runs one block size; a list ({args.bs}) is for iops only", key="bs")


def _check_options(args) -> None:
    """Every numeric option, before anything else (nothing probed, created or run yet)."""
    _check_test_options(args)
    _int_range(args.qd, "qd", 1, MAX_QD)
    _int_range(args.threads, "threads", 1, MAX_THREADS)
    _int_range(args.round_s, "round", 1)
    _int_range(args.max_rounds, "max-rounds", 1, 25)
    _int_range(args.precondition, "precondition", 0)
    _finite_positive(args.time_cap, "time-cap")
    _finite_positive(args.capacity_multiple, "capacity-multiple")
    _fio_steadystate(args.fio_steadystate)
    from .. import measure  # noqa: PLC0415  (start-up: see LAZY)

    measure.fdp.check_options(args.fdp, args.fdp_pli, args.fdp_pli_select, args.ioengine, args.buffered)
    if args.rwmix:
        _mixes(args.rwmix)
    if args.bs:
        _bs_list(args.bs)


def run(args) -> Output:
    from .. import measure, smart  # noqa: PLC0415  (start-up: see LAZY)

    # 1. every check, before anything is created, purged or run
    _check_options(args)
    if args.fdp and not args.device:
        measure.fdp.refuse_file_target()
    outdir = args.output_dir or f"opsim-measure-{args.test}-{time.strftime('%Y%m%d-%H%M%S')}"
    check_writable_dir(outdir, key="output-dir")
    previous = measure.outdir.previous_results(outdir, args.replace)
    if args.device:
        if args.size is not None:  # it would be ignored: a device's size is its own
            raise ConfigError("--size applies to file targets only; limit a device's range with --span", key="size")
        tgt, placement = measure.target.device_target(
            args.device, args.destroy_data, args.force, args.fdp, args.fdp_pli, args.fdp_pli_select
        )
        target, kind, total, create = args.device, "block", tgt.size_bytes or 0, False
    else:
        if args.destroy_data or args.purge or args.smart:
            raise ConfigError("--destroy-data, --purge and --smart apply to --device targets only", key="device")
        target, total, create = measure.target.file_target(
            args.file, args.size or DEFAULT_FILE_SIZE, outdir, args.force
        )
        tgt, placement, kind = None, None, "file"
    plan, warnings = _measure_plan(args, target, kind, total, outdir, tgt, placement)

    # 2. the work: the output directory, the scratch file, purge, SMART, fio
    pre, smart_before = measure.steps.before_the_run(
        args.device, args.purge, args.destroy_data, args.force, args.smart, outdir, previous
    )
    checkpoints = None
    if args.smart:  # a snapshot around each round's tracked run: the steady window's WAF
        checkpoints = measure.smart_window.Checkpoints(args.device, outdir, lambda dev: smart.take_snapshot(dev))
        plan.checkpoint = checkpoints
    if create:
        measure.scratch.claim_new(target)
    with measure.signals.StopSignals() as stop:
        try:
            result = measure.run(plan, measure.runner.Progress(args.progress), stop=stop)
        finally:
            sealed = measure.target.seal(target) if kind == "file" else None
        if sealed:
            warnings.append(sealed)
        result.update(pre)
        if warnings:
            result["warnings"] = warnings
        result["output_dir"] = os.path.abspath(outdir)
        if args.smart:
            measure.steps.smart_after(args.device, outdir, smart_before, stop, result)
            measure.steps.smart_steady(result, checkpoints)
        atomic_write_text(os.path.join(outdir, "result.json"), json.dumps(result, indent=2))
    # A stop signal: the finished rounds are printed and kept, exit 128 + the signal (130 for
    # SIGINT, 143 SIGTERM, 129 SIGHUP).  fio failed: the same, and exit 1 with the reason.
    if result.get("error"):
        sys.stderr.write(
            f"opsim: failed: {result['error']} (the {len(result['rounds'])} round(s) completed "
            f"before are kept in {os.path.join(outdir, 'result.json')})\n"
        )
    if result.get("interrupted"):
        code = stop.exit_code or 130
    else:
        code = 1 if result.get("error") else 0
    return Output(data=result, text=summary_text(result), exit_code=code)


def _measure_plan(args, target: str, kind: str, total: int, outdir: str, tgt, placement):
    """The measurement plan (span, block sizes, mixes, write cache, preconditioning, fio), every
    option checked against the target; with the warnings so far."""
    from .. import measure  # noqa: PLC0415  (start-up: see LAZY)

    span = _span(args.span, total) if args.span is not None else total - total % 4096
    default_bs = "512,4k,8k,16k,32k,64k,128k,1m" if args.test == "iops" else "4k"
    bs = _bs_list(args.bs or default_bs)
    too_big = [b for b in bs if measure.fio.size_bytes(b) > span]
    if too_big:
        raise ConfigError(f"--bs: {', '.join(too_big)} is larger than the span ({fmt_bytes(span)})", key="bs")
    if placement is not None:
        measure.fdp.check_block_sizes(
            {b: measure.fio.size_bytes(b) for b in bs}, measure.fdp.logical_block_size(tgt.dev_name)
        )
    mixes = _mixes(args.rwmix) if args.rwmix else ((0, 100), (5, 95), (35, 65), (50, 50), (65, 35), (95, 5), (100, 0))
    cache, warnings = measure.target.write_cache(args.write_cache, tgt)
    passes = args.precondition if args.precondition is not None else (2 if args.test == "iops" else 0)
    fio = measure.fio.fio_binary()  # installed?
    if placement is not None:
        names = ["fdp"] + (["fdp_pli"] if placement.pli else []) + (["fdp_pli_select"] if placement.select else [])
        measure.fdp.check_fio(fio, measure.fio.fio_version(fio), names)
    plan = measure.Plan(
        test=args.test,
        target=target,
        target_kind=kind,
        capacity_bytes=span,
        outdir=outdir,
        iodepth=args.qd,
        numjobs=args.threads,
        round_s=args.round_s,
        bs=bs,
        mixes=mixes if args.test == "iops" else ((0, 100),),
        time_cap_s=args.time_cap,
        max_rounds=args.max_rounds if args.max_rounds is not None else 25,
        capacity_multiple=args.capacity_multiple if args.capacity_multiple is not None else 4.0,
        ioengine=args.ioengine or "libaio",
        direct=not args.buffered,
        fio_steadystate=_fio_steadystate(args.fio_steadystate),
        precondition_passes=passes,
        extra={"target_bytes": total, "write_cache": cache, "precondition_passes": passes},
        fdp=placement,
    )
    return plan, warnings


def summary_text(r: dict) -> str:
    ss = r.get("steady_state") or {}
    lat = (r.get("latency_us") or {}).get("all") or {}
    win = r.get("measurement_window") or {}
    cache = (r.get("parameters") or {}).get("write_cache") or {}
    rows = [
        ("test", r["test"]),
        ("target", f"{r['target']['path']} ({r['target']['kind']}, span {fmt_bytes(r['target']['span_bytes'])})"),
        ("fio", r["fio_version"]),
        ("rounds", len(r["rounds"])),
        ("stopped", r.get("stop_reason")),
        (
            "steady state (SNIA rule)",
            (f"reached, window rounds {ss.get('window')}" if ss.get("reached") else "not reached") if ss else "-",
        ),
        ("steady IOPS", r.get("steady_iops")),
        ("measured IOPS", r.get("measured_iops")),
        (
            "measurement window",
            f"rounds {win['rounds'][0]}-{win['rounds'][1]} ({win['rule']})" if win.get("rounds") else "-",
        ),
        (
            "latency us " + "/".join(LATENCY_SUMMARY),
            " / ".join(f"{lat.get(k):,.0f}" if lat.get(k) is not None else "-" for k in LATENCY_SUMMARY),
        ),
        (
            "write cache",
            " / ".join(
                x
                for x in (
                    f"stated {cache['stated']}" if cache.get("stated") else None,
                    f"kernel: {cache['detected']}" if cache.get("detected") else None,
                )
                if x
            )
            or "-",
        ),
        ("output", r.get("output_dir")),
    ]
    pl = r.get("placement") or {}
    if pl.get("mode") == "fdp":
        pli = ",".join(map(str, pl["pli"])) if pl.get("pli") is not None else "all"
        rows.insert(2, ("placement", f"FDP via {pl['device']}: fdp_pli {pli} ({pl['pli_select']})"))
    if r.get("purge"):
        rows.insert(2, ("purge", f"{r['purge']['method']} ({len(r['purge']['commands'])} commands)"))
    if r.get("interrupted"):
        rows.append(("interrupted", f"by {r.get('interrupted_by') or 'a signal'} (rounds so far kept)"))
    if r.get("error"):
        rows.append(("FAILED", r["error"]))
    if "smart" in r:
        s = r["smart"]
        rows.append(
            (
                "SMART WAF (whole run)",
                f"{s['waf']:.3f} (preconditioning included)" if s["available"] else f"not available: {s['reason']}",
            )
        )
        st = s.get("steady")
        if st is not None:
            if st["available"] and st["sigma"] is not None:
                lo, hi = st["rounds"]
                text = f"{st['waf']:.3f} +-{1.96 * st['sigma']:.1%} (95%), rounds {lo}-{hi}"
            elif st["available"]:
                text = f"{st['waf']:.3f} ({st['reason']})"
            else:
                text = f"not available: {st['reason']}"
            rows.append(("SMART WAF (steady window)", text))
    for w in r.get("warnings") or []:
        rows.append(("warning", w))
    out = [kv_table(rows, title=f"opsim measure {r['test']}")]
    out.append("")
    out.append(
        table(
            ["round", "workload", "IOPS", "MB/s", "p50 us", "p99 us", "max us"],
            [
                [
                    x["index"],
                    x["label"],
                    x["iops"],
                    x["mbps"],
                    x["latency_us"].get("p50"),
                    x["latency_us"].get("p99"),
                    x["latency_us"].get("max"),
                ]
                for x in r["rounds"]
            ],
            align="rlrrrrr",
        )
    )
    return "\n".join(out)
