"""``opsim smart snapshot DEVICE``, ``opsim smart waf SNAPSHOT [AFTER]`` and ``opsim smart fdp FILE [AFTER]``."""

from __future__ import annotations

import json

from .._output import Output, atomic_write_text, check_writable_file, kv_table
from ..errors import InputError


def register(sub, common):
    p = sub.add_parser(
        "smart",
        parents=[common],
        help="drive counters: take a SMART snapshot, compute WAF (lifetime or between two snapshots)",
        description="Read a drive's own counters. `snapshot` stores smartctl -x -j (plus nvme-cli logs for "
        "NVMe); `waf` computes host writes, NAND writes and WAF from one snapshot (lifetime) or "
        "two (interval). Raw `smartctl -j` files are accepted too. `fdp` reads saved NVMe FDP "
        "statistics (nvme fdp stats) and gives WAF as media bytes over host bytes.",
    )
    ss = p.add_subparsers(dest="smart_command", metavar="ACTION")
    ss.required = True
    s = ss.add_parser("snapshot", parents=[common], help="store the drive's counters as JSON (read-only)")
    s.add_argument("device", help="block device, e.g. /dev/sda or /dev/nvme0n1")
    s.add_argument("-o", "--output", metavar="FILE", help="write the snapshot here (default: print it)")
    s.set_defaults(func=run_snapshot)
    w = ss.add_parser("waf", parents=[common], help="WAF from one snapshot (lifetime) or two (interval)")
    w.add_argument(
        "snapshots",
        nargs="+",
        metavar="SNAPSHOT",
        help="one file: lifetime WAF; two files BEFORE AFTER: WAF over the interval",
    )
    w.add_argument(
        "--allow-no-serial",
        action="store_true",
        help="interval form: accept snapshots without a serial number as one drive's (by default "
        "they are refused: opsim cannot tell that both are the same drive)",
    )
    w.set_defaults(func=run_waf)
    f = ss.add_parser(
        "fdp",
        parents=[common],
        help="WAF from saved NVMe FDP statistics: one file (since FDP was enabled) or two (interval)",
        description="Read the NVMe Flexible Data Placement statistics of an endurance group (log page 22h) "
        "as saved by `nvme fdp stats DEV -e ENDGID [-o json | -b]` or `nvme get-log DEV --log-id=0x22 "
        "--log-len=64 --lsi=ENDGID [-b]` (the format is recognised from the content), and give WAF = "
        "media bytes with metadata written / host bytes with metadata written. One file: since FDP was "
        "last enabled (enabling or changing FDP clears the counters); two files BEFORE AFTER: over the "
        "interval. The files carry no drive identity: both must be the same endurance group's. The "
        "input files are only read. Details: docs/fdp-stats.md.",
    )
    f.add_argument(
        "stats",
        nargs="+",
        metavar="FILE",
        help="one file: WAF since FDP was enabled; two files BEFORE AFTER: WAF over the interval",
    )
    f.set_defaults(func=run_fdp)


def run_snapshot(args) -> Output:
    # lazy: the SMART readers and rules are for this command only, not `opsim --help` (start-up)
    from .. import smart  # noqa: PLC0415

    if args.output:
        check_writable_file(args.output, key="--output", inputs=[args.device])
    snap = smart.take_snapshot(args.device)
    if args.output:
        atomic_write_text(args.output, json.dumps(snap, indent=2))

    ident = smart.rules.identity(snap)
    text = kv_table(
        [
            ("device", args.device),
            ("model", ident.get("model_name")),
            ("family", ident.get("model_family")),
            ("serial", ident.get("serial_number")),
            ("protocol", ident.get("protocol")),
            ("nvme-cli logs", ", ".join(sorted(snap["nvme"])) or "-"),
            ("warnings", "; ".join(snap["warnings"]) or "-"),
            ("written to", args.output or "-"),
        ],
        title="opsim smart snapshot",
    )
    if not args.output and not getattr(args, "json", None):
        text = json.dumps(snap, indent=2)
    return Output(data=snap, text=text)


def run_waf(args) -> Output:
    # lazy: the SMART readers and rules are for this command only, not `opsim --help` (start-up)
    from .. import smart  # noqa: PLC0415

    if len(args.snapshots) > 2:
        raise InputError("smart waf: give one SNAPSHOT (lifetime) or two, BEFORE AFTER (interval)", key="snapshots")
    snaps = [smart.load_document(p) for p in args.snapshots]
    if len(snaps) == 1:
        r = smart.lifetime_waf(snaps[0])
    else:
        r = smart.interval_waf(snaps[0], snaps[1], allow_no_serial=args.allow_no_serial)
    return Output(data=r, text=smart.report.waf_text(r))


def run_fdp(args) -> Output:
    # lazy: the SMART readers and rules are for this command only, not `opsim --help` (start-up)
    from ..smart import fdp  # noqa: PLC0415

    if len(args.stats) > 2:
        raise InputError(
            "smart fdp: give one FILE (since FDP was enabled) or two, BEFORE AFTER (interval)", key="files"
        )
    # the inputs are only read: --json-file naming one of them is refused by the command line
    r = fdp.fdp_waf([fdp.load_fdp_stats(p) for p in args.stats])
    return Output(data=r, text=fdp.fdp_text(r))
