"""``opsim smart snapshot DEVICE`` and ``opsim smart waf SNAPSHOT [AFTER]``."""

from __future__ import annotations

from .._output import Output, atomic_write_text, kv_table


def _human(n) -> str:
    n = float(n)
    for u, m in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= m:
            return f"{n / m:.3f} {u}"
    return f"{n:.0f} B"


def register(sub, common):
    p = sub.add_parser(
        "smart", parents=[common],
        help="drive counters: take a SMART snapshot, compute WAF (lifetime or between two snapshots)",
        description="Read a drive's own counters. `snapshot` stores smartctl -x -j (plus nvme-cli logs for "
                    "NVMe); `waf` computes host writes, NAND writes and WAF from one snapshot (lifetime) or "
                    "two (interval). Raw `smartctl -j` files are accepted too.",
    )
    ss = p.add_subparsers(dest="smart_command", metavar="ACTION")
    ss.required = True
    s = ss.add_parser("snapshot", parents=[common], help="store the drive's counters as JSON (read-only)")
    s.add_argument("device", help="block device, e.g. /dev/sda or /dev/nvme0n1")
    s.add_argument("-o", "--output", metavar="FILE", help="write the snapshot here (default: print it)")
    s.set_defaults(func=run_snapshot)
    w = ss.add_parser("waf", parents=[common], help="WAF from one snapshot (lifetime) or two (interval)")
    w.add_argument("snapshots", nargs="+", metavar="SNAPSHOT",
                   help="one file: lifetime WAF; two files BEFORE AFTER: WAF over the interval")
    w.add_argument("--allow-no-serial", action="store_true",
                   help="interval form: accept snapshots without a serial number as one drive's (by default "
                        "they are refused: opsim cannot tell that both are the same drive)")
    w.set_defaults(func=run_waf)


def run_snapshot(args) -> Output:
    import json

    from ..smart import take_snapshot

    snap = take_snapshot(args.device)
    if args.output:
        atomic_write_text(args.output, json.dumps(snap, indent=2))
    from ..smart.parse import identity
    ident = identity(snap)
    text = kv_table([
        ("device", args.device),
        ("model", ident.get("model_name")),
        ("family", ident.get("model_family")),
        ("serial", ident.get("serial_number")),
        ("protocol", ident.get("protocol")),
        ("nvme-cli logs", ", ".join(sorted(snap["nvme"])) or "-"),
        ("warnings", "; ".join(snap["warnings"]) or "-"),
        ("written to", args.output or "-"),
    ], title="opsim smart snapshot")
    if not args.output and not getattr(args, "json", None):
        text = json.dumps(snap, indent=2)
    return Output(data=snap, text=text)


def _counter_line(c) -> str:
    if not c:
        return "not available"
    raw = c.get("delta", c.get("raw"))
    s = f"{raw:,} x {c['unit']}"
    if c.get("bytes") is not None:
        s += f" = {_human(c['bytes'])}"
    return s + f"  [{c['counter']}]"


def _drive_line(d: dict) -> str:
    name = " / ".join(x for x in (d.get("model_name"), d.get("model_family")) if x) or "-"
    kind = {"hdd": "hard disk", "ssd": "SSD"}.get(d.get("media"), "medium unknown")
    if d.get("media") == "hdd" and d.get("rotation_rate"):
        kind = f"{d['rotation_rate']} rpm hard disk"
    what = ", ".join(x for x in (d.get("vendor"), d.get("transport") or d.get("protocol"), kind) if x)
    return f"{name} ({what})"


def waf_text(r: dict) -> str:
    d = r["drive"]
    rows = [
        ("drive", _drive_line(d)),
        ("serial", d.get("serial_number")),
        ("rule", r["rule"]),
        ("mode", "lifetime (one snapshot)" if r["mode"] == "lifetime" else "interval (AFTER - BEFORE)"),
        ("host writes", _counter_line(r.get("host_writes"))),
        ("NAND writes", _counter_line(r.get("nand_writes"))),
    ]
    if r.get("available"):
        rows.append(("WAF", f"{r['waf']:.4f}"))
        rows.append(("formula", r.get("formula")))
        if r.get("assumption"):
            rows.append(("assumption", r["assumption"]))
        if r.get("resolution_note"):
            rows.append(("note", r["resolution_note"]))
    else:
        rows.append(("WAF", "not available"))
        rows.append(("reason", r.get("reason")))
        if r.get("missing"):
            rows.append(("missing", "; ".join(r["missing"])))
    if r.get("reported_waf"):
        rows.append(("drive-reported WAF", f"{r['reported_waf']['raw']} [{r['reported_waf']['counter']}]"))
    for k, v in (r.get("raw_other") or {}).items():
        rows.append((f"raw {k}", v))
    rows.append(("units", r.get("rule_note")))
    for w in r.get("warnings") or []:
        rows.append(("warning", w))
    return kv_table(rows, title="opsim smart waf")


def run_waf(args) -> Output:
    from ..errors import InputError
    from ..smart import interval_waf, lifetime_waf, load_document

    if len(args.snapshots) > 2:
        raise InputError("smart waf: give one SNAPSHOT (lifetime) or two, BEFORE AFTER (interval)",
                         key="snapshots")
    snaps = [load_document(p) for p in args.snapshots]
    if len(snaps) == 1:
        r = lifetime_waf(snaps[0])
    else:
        r = interval_waf(snaps[0], snaps[1], allow_no_serial=args.allow_no_serial)
    return Output(data=r, text=waf_text(r))
