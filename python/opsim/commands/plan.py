"""``opsim plan``: the exact procedure to set a target OP on a drive (printed, not run).

``--apply`` performs only the partition mechanism, on an image file or an unused block device,
and only with ``--destroy-data=<the same path>``; a refused run changes nothing.
"""

from __future__ import annotations

from .._output import Output, kv_table
from ..errors import InputError
from ..units import parse_size


def register(sub, common):
    p = sub.add_parser(
        "plan",
        parents=[common],
        help="the procedure (ATA max address, NVMe namespace, partition, SAS resize) for a target OP",
        description=(
            "Print the full procedure to set a target OP on a drive, with exact values. The drive is "
            "probed read-only (sysfs, lsblk, hdparm -N/-I, nvme id-ctrl/id-ns, smartctl), read from "
            "recorded outputs (--records DIR), or described (--interface, --native, --sector-size). "
            "Nothing is changed unless --apply is given, which only does the partition mechanism and "
            "requires --destroy-data=<the same path>."
        ),
    )
    p.add_argument("device", nargs="?", help="block device or image file (probed read-only)")
    p.add_argument(
        "--records",
        metavar="DIR",
        help="recorded tool outputs instead of probing "
        "(lsblk.json, hdparm-N.txt, hdparm-I.txt, nvme-id-ctrl.json, nvme-id-ns.json, smartctl.json)",
    )
    p.add_argument("--interface", choices=["sata", "nvme", "sas"], help="describe the drive instead of probing")
    p.add_argument("--native", help="native capacity (480GB, 937703088s); overrides the probe")
    p.add_argument("--sector-size", type=int, choices=[512, 4096], help="logical sector / LBA size")
    p.add_argument("--user", help="target user capacity")
    p.add_argument("--op", help="target OP (needs --op-basis)")
    p.add_argument("--op-basis", choices=["user", "physical", "native", "added"])
    p.add_argument("--max-lba", help="share of the native LBAs kept, e.g. 80%%")
    p.add_argument("--physical", help="physical NAND capacity (default: assumed native GB as GiB)")
    p.add_argument("--round-user", metavar="STEP", help="round a user capacity from --op to the nearest STEP")
    p.add_argument("--ns-granularity", metavar="SIZE", help="NVMe namespace allocation granularity (e.g. 1GiB)")
    p.add_argument(
        "--apply", action="store_true", help="do the partition mechanism now (image file or unused block device only)"
    )
    p.add_argument("--destroy-data", metavar="PATH", help="confirmation for --apply: the same path again")
    p.add_argument(
        "--force",
        action="store_true",
        help="with --apply: overwrite a target that holds a signature (never a mounted one)",
    )
    p.set_defaults(func=run)


def _target(args) -> dict:
    return {
        "user": args.user,
        "op": args.op,
        "op_basis": args.op_basis,
        "max_lba": args.max_lba,
        "physical": args.physical,
        "round_user": args.round_user,
    }


def plan_text(d: dict) -> str:
    cap, drv = d["capacity"], d["drive"]
    u, n = cap["user"], cap["native"]
    lines = [
        kv_table(
            [
                (
                    "drive",
                    f"{drv.get('path') or '(described)'}  {drv.get('model') or ''}  interface {drv['interface']}",
                ),
                ("native", f"{n['sectors']:,} sectors x {cap['sector_size']} B = {n['bytes']:,} bytes"),
                (
                    "target user",
                    f"{u['sectors']:,} sectors (max LBA {u['max_lba']:,} = 0x{u['max_lba_hex']}) = "
                    f"{u['bytes']:,} bytes ({u['bytes'] / 1e9:.3f} GB)",
                ),
                ("OP", "  ".join(f"{b} {100 * v:.2f}%" for b, v in cap["op"].items() if v is not None)),
                ("physical", cap["physical"]["note"]),
            ],
            title="opsim plan",
        )
    ]
    for w in d["warnings"]:
        lines.append(f"WARNING: {w}")
    for m in d["mechanisms"]:
        lines += ["", f"== {m['title']} =="]
        for i, s in enumerate(m["steps"], 1):
            lines.append(f"{i}. {s['title']}")
            lines += [f"     {c}" for c in s["commands"]]
        lines += [f"   note: {x}" for x in m["notes"]]
        lines += [f"   WARNING: {x}" for x in m["warnings"]]
        lines += [f"   vendor tool: {x}" for x in m["vendor_tools"]]
    if cap["notes"]:
        lines.append("")
        lines += [f"note: {x}" for x in cap["notes"]]
    lines += ["", "Nothing was changed. (Only the partition mechanism can be applied by opsim: --apply.)"]
    return "\n".join(lines)


def run(args) -> Output:
    from ..planner import probe as P
    from ..planner.plan import apply_partition, make_plan

    if args.apply:
        if not args.device:
            raise InputError("device: --apply needs a device or image file", key="device")
        r = apply_partition(
            args.device, args.destroy_data, sector_size=args.sector_size or 512, force=args.force, **_target(args)
        )
        lay = r["layout"]
        text = kv_table(
            [
                ("applied to", f"{r['path']} ({r['kind']})"),
                ("done", "; ".join(r["done"])),
                ("partition 1", f"sectors {lay['start']:,}..{lay['end']:,} = {lay['bytes']:,} bytes"),
                (
                    "unpartitioned (OP)",
                    f"{lay['unpartitioned_sectors']:,} sectors = {100 * lay['op_native']:.2f}% of native",
                ),
                ("verified", "sgdisk -p reads back the same partition"),
            ],
            title="opsim plan --apply (partition mechanism)",
        )
        return Output(data={"applied": r}, text=text)
    if args.destroy_data or args.force:
        raise InputError("apply: --destroy-data/--force only make sense with --apply", key="apply")

    notes = []
    if args.records:
        parsed = P.parse_all(P.load_records(args.records))
        drive = P.describe_drive(args.device, parsed["parsed"])
        notes = parsed["notes"]
    elif args.device:
        import os
        import stat

        try:
            mode = os.stat(args.device).st_mode
        except OSError as e:
            raise InputError(f"device: {args.device}: {e.strerror}", key="device") from None
        if not (stat.S_ISBLK(mode) or stat.S_ISREG(mode)):
            raise InputError(f"device: {args.device} is neither a block device nor an image file", key="device")
        parsed = P.parse_all(P.collect(args.device))
        drive = P.describe_drive(args.device, parsed["parsed"])
        notes = parsed["notes"]
    else:
        if not args.interface or not args.native:
            raise InputError("interface: give a device, --records DIR, or --interface with --native", key="interface")
        drive = {
            "path": args.device,
            "interface": args.interface,
            "sector_size": args.sector_size or 512,
            "native_sectors": None,
            "current_sectors": None,
        }
    if args.interface:
        drive["interface"] = args.interface
    if args.sector_size:
        drive["sector_size"] = args.sector_size
    if args.native:
        from ..planner.capacity import parse_capacity

        drive["native"] = parse_capacity(args.native, drive.get("sector_size") or 512, "native")
    gran = parse_size(args.ns_granularity, key="ns_granularity") if args.ns_granularity else None
    d = make_plan(drive, granularity=gran, **_target(args))
    d["probe_notes"] = notes
    text = plan_text(d)
    if notes:
        text += "\n" + "\n".join(f"probe: {x}" for x in notes)
    return Output(data=d, text=text)
