"""``opsim measure {wsat,iops,consistency}``: SNIA PTS-style tests with fio on a file or a drive."""

from __future__ import annotations

import json
import os
import re
import sys
import time

from .._output import Output, atomic_write_text, kv_table, table
from ..errors import ConfigError, DeviceError
from ..units import fmt_bytes, parse_size


def register(sub, common):
    p = sub.add_parser(
        "measure", parents=[common],
        help="measure a real target with fio: wsat, iops (SNIA PTS) or consistency (AnandTech)",
        description="Run a PTS-style test with fio. Default target: a regular file (safe). Writing to a "
                    "block device needs --destroy-data=DEVICE naming it again. Schema: docs/measure.md.",
    )
    p.add_argument("test", choices=["wsat", "iops", "consistency"])
    t = p.add_mutually_exclusive_group()
    t.add_argument("--file", metavar="PATH", help="target file (created with --size; default opsim-measure.dat "
                                                  "in the output directory)")
    t.add_argument("--device", metavar="DEV", help="target block device (DESTROYS its data)")
    p.add_argument("--destroy-data", metavar="DEV", help="confirmation: name the device again")
    p.add_argument("--force", action="store_true",
                   help="write even if the device holds a signature or is in use (never if mounted)")
    p.add_argument("--purge", nargs="?", const="auto", default=None, metavar="METHOD",
                   choices=["auto", "discard", "nvme-format", "ata-erase", "ata-erase-enhanced"],
                   help="purge the device first: auto (nvme format --ses=1 for NVMe, else blkdiscard), discard, "
                        "nvme-format, ata-erase or ata-erase-enhanced (ATA SECURITY ERASE via hdparm; never "
                        "chosen by auto). Same guard as the test itself")
    p.add_argument("--smart", action="store_true", help="SMART snapshots before and after; report interval WAF")
    p.add_argument("--size", default="1GiB", help="file size for file targets (default 1GiB)")
    p.add_argument("--span", help="active range: bytes (e.g. 8GiB) or a percentage of the target (e.g. 75%%)")
    p.add_argument("--qd", type=int, default=32, help="queue depth per job (default 32)")
    p.add_argument("--threads", type=int, default=1, help="fio numjobs (default 1)")
    p.add_argument("--round", dest="round_s", type=int, default=60, help="round length in seconds (default 60)")
    p.add_argument("--bs", default=None, help="block size(s), comma-separated (default 4k; iops: PTS list)")
    p.add_argument("--rwmix", default=None, help="R/W mixes for iops, e.g. 0/100,65/35,100/0 (default PTS list)")
    p.add_argument("--time-cap", type=float, default=None, help="stop after this many seconds")
    p.add_argument("--max-rounds", type=int, default=25, help="iops: at most this many rounds (default 25)")
    p.add_argument("--capacity-multiple", type=float, default=4.0, help="wsat: stop after N x capacity (default 4)")
    p.add_argument("--ioengine", default="libaio")
    p.add_argument("--buffered", action="store_true", help="buffered I/O (default O_DIRECT)")
    p.add_argument("--fio-steadystate", metavar="SPEC", help="fio's own early stop, e.g. iops_slope:0.3%%")
    p.add_argument("--precondition", type=int, default=None, metavar="PASSES",
                   help="SNIA workload-independent preconditioning before the rounds: PASSES sequential "
                        "128 KiB passes over the span (default 2 for iops, 0 for wsat, which starts fresh out "
                        "of box, and for consistency, which does its own fill)")
    p.add_argument("--write-cache", choices=["on", "off"],
                   help="note the drive's volatile write cache state you set (recorded with the kernel's view "
                        "from /sys/block/DEV/queue/write_cache; opsim never changes it)")
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                   help="progress on stderr: auto (when stderr is a terminal; default), on, off")
    p.add_argument("-o", "--output-dir", help="directory for result.json and fio files")
    p.set_defaults(func=run)


def _positive(v, key):
    if v is None:
        return v
    if v <= 0:
        raise ConfigError(f"{key}: must be positive (got {v})", key=key)
    return v


def _mixes(text):
    out = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", part)
        if not m or int(m.group(1)) + int(m.group(2)) != 100:
            raise ConfigError(f"rwmix: {part!r} is not R/W percentages adding to 100 (e.g. 65/35)", key="rwmix")
        out.append((int(m.group(1)), int(m.group(2))))
    return tuple(out)


def _bs_list(text):
    out = []
    for b in text.split(","):
        b = b.strip()
        n = parse_size(b if re.search(r"[a-zA-Z]", b) is None or b[-1:].lower() == "b"
                       else b + ("iB" if b[-1].lower() in "kmg" else ""), key="bs")
        if n <= 0 or n % 512:
            raise ConfigError(f"bs: {b!r} must be a positive multiple of 512 bytes", key="bs")
        out.append(b)
    return tuple(out)


SYS_BLOCK = "/sys/block"


def _write_cache(stated: str | None, tgt) -> tuple[dict, list]:
    """The write-cache note: what the user stated and what the kernel reports for the device
    (``queue/write_cache``: "write back" = a volatile cache the kernel flushes, "write through" =
    none or disabled).  Read-only."""
    out = {"stated": stated, "detected": None, "source": None}
    warnings = []
    if tgt is None:
        out["note"] = "file target: a filesystem and the page cache sit between fio and the drive"
        return out, warnings
    disk = tgt.partition_of or tgt.dev_name
    path = f"{SYS_BLOCK}/{disk}/queue/write_cache" if disk else None
    try:
        with open(path) as f:
            out["detected"], out["source"] = f.read().strip(), path
    except (OSError, TypeError):
        pass
    kernel = {"write back": "on", "write through": "off"}.get(out["detected"] or "")
    if stated and kernel and stated != kernel:
        warnings.append(f"--write-cache {stated} but the kernel reports {out['detected']!r} for {disk} ({path})")
    return out, warnings


def run(args) -> Output:
    from ..devices import guard_destructive, probe_target
    from ..measure import Plan
    from ..measure import run as run_plan
    from ..measure.runner import Progress

    for k in ("qd", "threads", "round_s", "max_rounds", "capacity_multiple", "time_cap"):
        _positive(getattr(args, k), k.replace("_s", ""))
    if args.max_rounds > 25 and args.test == "iops":
        raise ConfigError("max-rounds: the PTS IOPS test stops after at most 25 rounds", key="max-rounds")
    outdir = args.output_dir or f"opsim-measure-{args.test}-{time.strftime('%Y%m%d-%H%M%S')}"
    if args.device:
        tgt = guard_destructive(args.device, args.destroy_data, force=args.force)
        if tgt.kind != "block":
            raise DeviceError(f"{args.device}: --device needs a block device; use --file for files", key="device")
        target, kind, total = args.device, "block", tgt.size_bytes or 0
    else:
        if args.destroy_data or args.purge or args.smart:
            raise ConfigError("--destroy-data, --purge and --smart apply to --device targets only", key="device")
        os.makedirs(outdir, exist_ok=True)
        target = args.file or os.path.join(outdir, "opsim-measure.dat")
        total = parse_size(args.size, key="size")
        if total < 2**20:
            raise ConfigError("size: at least 1MiB", key="size")
        t = probe_target(target)
        if t.kind == "other":
            raise DeviceError(f"{target}: {t.notes[0] if t.notes else 'not a regular file'}", key="file")
        if t.kind == "block":
            raise DeviceError(f"{target} is a block device: use --device {target} --destroy-data={target}",
                              key="file")
        if t.kind == "file" and (t.fs_signature or t.in_use) and not args.force:
            raise DeviceError(f"{target}: refusing to overwrite a file that holds a "
                              f"{t.fs_signature or ''} signature or is in use ({t.in_use_reason or '-'}); "
                              "add --force if it is disposable", key="file")
        kind = "file"
    if args.span:
        s = args.span.strip()
        span = int(total * float(s[:-1]) / 100) if s.endswith("%") else parse_size(s, key="span")
        if not 0 < span <= total:
            raise ConfigError(f"span: {args.span} is outside the target ({fmt_bytes(total)})", key="span")
    else:
        span = total
    span -= span % 4096
    default_bs = "512,4k,8k,16k,32k,64k,128k,1m" if args.test == "iops" else "4k"
    bs = _bs_list(args.bs or default_bs)
    mixes = _mixes(args.rwmix) if args.rwmix else ((0, 100), (5, 95), (35, 65), (50, 50), (65, 35), (95, 5), (100, 0))
    cache, warnings = _write_cache(args.write_cache, tgt if args.device else None)
    passes = args.precondition if args.precondition is not None else (2 if args.test == "iops" else 0)
    if passes < 0:
        raise ConfigError(f"precondition: {passes} passes; give 0 or more", key="precondition")
    plan = Plan(test=args.test, target=target, target_kind=kind, capacity_bytes=span, outdir=outdir,
                iodepth=args.qd, numjobs=args.threads, round_s=args.round_s, bs=bs,
                mixes=mixes if args.test == "iops" else ((0, 100),), time_cap_s=args.time_cap,
                max_rounds=args.max_rounds, capacity_multiple=args.capacity_multiple, ioengine=args.ioengine,
                direct=not args.buffered, fio_steadystate=args.fio_steadystate, precondition_passes=passes,
                extra={"target_bytes": total, "write_cache": cache, "precondition_passes": passes})
    os.makedirs(outdir, exist_ok=True)
    pre = {}
    smart_before = None
    if args.device and args.purge:
        from ..measure.purge import purge
        pre["purge"] = purge(args.device, args.purge, confirm=args.destroy_data, force=args.force,
                             notify=lambda msg: sys.stderr.write(msg + "\n"))
    if args.smart:
        from ..smart import take_snapshot
        smart_before = take_snapshot(args.device)
        atomic_write_text(os.path.join(outdir, "smart-before.json"), json.dumps(smart_before, indent=2))
    result = run_plan(plan, Progress(args.progress))
    result.update(pre)
    if warnings:
        result["warnings"] = warnings
    result["output_dir"] = os.path.abspath(outdir)
    if args.smart:
        from ..smart import interval_waf, take_snapshot
        from ..smart.parse import as_snapshot
        after = take_snapshot(args.device)
        atomic_write_text(os.path.join(outdir, "smart-after.json"), json.dumps(after, indent=2))
        w = interval_waf(as_snapshot(smart_before, "smart-before.json"), as_snapshot(after, "smart-after.json"))
        result["smart"] = {"waf": w["waf"], "available": w["available"], "reason": w["reason"],
                           "host_writes": w["host_writes"], "nand_writes": w["nand_writes"], "rule": w["rule"]}
    atomic_write_text(os.path.join(outdir, "result.json"), json.dumps(result, indent=2))
    # Ctrl-C: the rounds done so far are printed and kept, and the exit code says so.
    return Output(data=result, text=summary_text(result), exit_code=130 if result.get("interrupted") else 0)


def summary_text(r: dict) -> str:
    ss = r.get("steady_state") or {}
    lat = (r.get("latency_us") or {}).get("all") or {}
    win = (r.get("measurement_window") or {})
    cache = (r.get("parameters") or {}).get("write_cache") or {}
    rows = [
        ("test", r["test"]), ("target", f"{r['target']['path']} ({r['target']['kind']}, span "
                                          f"{fmt_bytes(r['target']['span_bytes'])})"),
        ("fio", r["fio_version"]), ("rounds", len(r["rounds"])), ("stopped", r.get("stop_reason")),
        ("steady state (SNIA rule)", (f"reached, window rounds {ss.get('window')}" if ss.get("reached")
                                      else "not reached") if ss else "-"),
        ("steady IOPS", r.get("steady_iops")),
        ("measured IOPS", r.get("measured_iops")),
        ("measurement window", f"rounds {win['rounds'][0]}-{win['rounds'][1]} ({win['rule']})"
         if win.get("rounds") else "-"),
        ("latency us p50/p99/p99.9/max", " / ".join(f"{lat.get(k):,.0f}" if lat.get(k) is not None else "-"
                                                     for k in ("p50", "p99", "p99.9", "max"))),
        ("write cache", " / ".join(x for x in (f"stated {cache['stated']}" if cache.get("stated") else None,
                                               f"kernel: {cache['detected']}" if cache.get("detected") else None)
                                   if x) or "-"),
        ("output", r.get("output_dir")),
    ]
    if r.get("purge"):
        rows.insert(2, ("purge", f"{r['purge']['method']} ({len(r['purge']['commands'])} commands)"))
    if r.get("interrupted"):
        rows.append(("interrupted", "yes (rounds so far kept)"))
    if "smart" in r:
        s = r["smart"]
        rows.append(("SMART WAF (interval)", f"{s['waf']:.3f}" if s["available"] else f"not available: {s['reason']}"))
    for w in r.get("warnings") or []:
        rows.append(("warning", w))
    out = [kv_table(rows, title=f"opsim measure {r['test']}")]
    out.append("")
    out.append(table(["round", "workload", "IOPS", "MB/s", "p50 us", "p99 us", "max us"],
                     [[x["index"], x["label"], x["iops"], x["mbps"], x["latency_us"].get("p50"),
                       x["latency_us"].get("p99"), x["latency_us"].get("max")] for x in r["rounds"]],
                     align="rlrrrrr"))
    return "\n".join(out)
