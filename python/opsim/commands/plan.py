"""``opsim plan``: the exact procedure to set a target OP on a drive (printed, not run).

``--apply`` performs only the partition mechanism, on an image file or an unused block device,
and only with ``--destroy-data=<the same path>``; a refused run changes nothing.
"""

from __future__ import annotations

import os
import re
import stat

from .. import userfile
from .._output import Output, kv_table, table
from ..errors import InputError
from ..planner.capacity import parse_capacity
from ..units import parse_size

#: the largest `nvme fdp configs` JSON read (a few configurations: kilobytes)
FDP_CONFIGS_MAX = 16 << 20


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
    f = p.add_argument_group(
        "placement (NVMe Flexible Data Placement; docs/fdp-real-drives.md)",
        "--placement fdp prints the nvme-cli procedure that enables an FDP configuration on an endurance group "
        "and creates one namespace per tenant with its placement handle list, instead of the OP mechanisms.",
    )
    f.add_argument(
        "--placement",
        choices=["none", "fdp"],
        default="none",
        help="fdp: tenants' namespaces with placement handles (default none: the OP mechanisms)",
    )
    f.add_argument(
        "--namespace",
        action="append",
        metavar="[NAME=]SIZE[:RUH,...]",
        help="with --placement fdp, one tenant's namespace (repeat): a size (400GB, 447GiB, 937703088s, or 25%% of "
        "the native LBAs) and the reclaim unit handles of its placement handle list (default: the lowest unused)",
    )
    f.add_argument(
        "--tenants",
        type=int,
        metavar="N",
        help="with --placement fdp, N equal namespaces sharing the --user/--op/--max-lba target, RUH 0..N-1",
    )
    f.add_argument("--endgrp-id", type=int, metavar="N", help="FDP endurance group identifier (default 1)")
    f.add_argument(
        "--fdp-config",
        type=int,
        metavar="INDEX",
        help="the FDP configuration to enable: its position in `nvme fdp configs` (default 0)",
    )
    f.add_argument(
        "--fdp-configs-json",
        metavar="FILE",
        help="a saved `nvme fdp configs CTRL --endgrp-id=N -o json` (else nvme-fdp-configs.json in --records DIR, "
        "or read from the device)",
    )
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


def fdp_plan_text(d: dict) -> str:
    """The FDP procedure (``--placement fdp``) as the table and numbered steps people read."""
    cap, drv, cfg = d["capacity"], d["drive"], d["fdp_config"]
    n, a, u = cap["native"], cap["allocated"], cap["unallocated"]
    ss = cap["sector_size"]
    cfg_s = f"index {cfg['index']}"
    if cfg.get("nruh") is not None:
        cfg_s += f", {cfg['nruh']} reclaim unit handles, {cfg.get('nrg')} reclaim group(s)"
        if cfg.get("runs"):
            cfg_s += f", reclaim unit {cfg['runs']:,} bytes"
        cfg_s += f" (from {cfg.get('source')})"
    else:
        cfg_s += " (configuration not read: nruh and the reclaim unit size unknown)"
    lines = [
        kv_table(
            [
                (
                    "drive",
                    f"{drv.get('path') or '(described)'}  {drv.get('model') or ''}  interface {drv['interface']}",
                ),
                ("endurance group", d["endurance_group"]),
                ("FDP configuration", cfg_s),
                ("native", f"{n['sectors']:,} LBAs x {ss} B = {n['bytes']:,} bytes"),
                ("namespaces", f"{len(d['namespaces'])}, {a['sectors']:,} LBAs = {a['bytes']:,} bytes"),
                ("unallocated (OP)", f"{u['sectors']:,} LBAs = {u['bytes']:,} bytes"),
                ("OP", "  ".join(f"{b} {100 * v:.2f}%" for b, v in cap["op"].items() if v is not None)),
                ("physical", cap["physical"]["note"]),
            ],
            title="opsim plan --placement fdp",
        ),
        "",
        table(
            ["nsid", "name", "NSZE (LBAs)", "bytes", "RUHs (phndls)", "fio fdp_pli", "fio device"],
            [
                [
                    r["nsid"],
                    r["name"],
                    r["nsze"],
                    r["bytes"],
                    ",".join(map(str, r["phndls"])),
                    r["fio_pli"],
                    r["char_device"],
                ]
                for r in d["namespaces"]
            ],
            align="rlrrlll",
        ),
    ]
    lines += [f"WARNING: {w}" for w in d["warnings"]]
    lines += ["", "== NVMe Flexible Data Placement (nvme-cli) =="]
    for i, s in enumerate(d["steps"], 1):
        lines.append(f"{i}. {s['title']}")
        lines += [f"     {c}" for c in s["commands"]]
    lines += [f"   note: {x}" for x in d["notes"]]
    lines += ["", "traps:"]
    lines += [f"  - {t['text']}" for t in d["traps"]]
    if cap["notes"]:
        lines.append("")
        lines += [f"note: {x}" for x in cap["notes"]]
    lines += ["", "Nothing was changed: opsim prints the FDP procedure, it never runs nvme-cli's writing commands."]
    return "\n".join(lines)


def _fdp_inputs(args, raw: dict, notes: list, drive: dict) -> dict:
    """The FDP configuration log and the CTRATT bits: from --fdp-configs-json, the records or the device."""
    from ..devices import nvme_fdp  # noqa: PLC0415  (start-up: see LAZY)
    from ..planner import fdp  # noqa: PLC0415

    endgrp = 1 if args.endgrp_id is None else args.endgrp_id
    out: dict = {"support": None, "configs": None, "configs_source": None}
    if raw.get("nvme_id_ctrl"):
        try:
            out["support"] = nvme_fdp.fdp_support(raw["nvme_id_ctrl"])
        except InputError as e:
            notes.append(f"nvme_id_ctrl: CTRATT not read ({e})")
    text, source = None, None
    if args.fdp_configs_json or (args.records and os.path.exists(os.path.join(args.records, "nvme-fdp-configs.json"))):
        source = args.fdp_configs_json or os.path.join(args.records, "nvme-fdp-configs.json")
        # a regular file (a FIFO or device refused unread), capped
        text = userfile.read_bytes(source, what="fdp_configs_json", cap=FDP_CONFIGS_MAX).decode(errors="replace")
    elif args.device and not args.records and fdp.nvme_path_match(args.device):
        ctrl = fdp.controller_of(drive)[0]
        text, why = nvme_fdp.read_fdp_configs(ctrl, endgrp)
        if why:
            notes.append(why)
        source = f"nvme fdp configs {ctrl} --endgrp-id={endgrp}"
    if text is not None:
        try:
            out["configs"] = nvme_fdp.parse_fdp_configs(text)
        except InputError as e:
            if args.fdp_configs_json:
                raise InputError(f"fdp_configs_json: {args.fdp_configs_json}: {e}", key="fdp_configs_json") from None
            notes.append(f"{source}: could not parse ({e})")
        out["configs_source"] = source
    return out


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


# LAZY: the planner's procedures and the device readers are imported when the command runs, not for
# `opsim --help` (start-up)


def run(args) -> Output:
    from ..planner import fdp, plan  # noqa: PLC0415  (start-up: see LAZY)

    if args.apply and args.placement == "fdp":
        raise InputError(
            "apply: --apply does only the partition mechanism; the FDP procedure is printed, never run", key="apply"
        )
    if args.apply:
        return _apply(args)
    if args.destroy_data or args.force:
        raise InputError("apply: --destroy-data/--force only make sense with --apply", key="apply")
    is_fdp = args.placement == "fdp"
    if not is_fdp:
        _check_no_fdp_options(args)
    drive, raw, notes = _drive(args)
    gran = parse_size(args.ns_granularity, key="ns_granularity") if args.ns_granularity else None
    if is_fdp:
        specs = [fdp.parse_namespace_spec(t, i) for i, t in enumerate(args.namespace or [])]
        inputs = _fdp_inputs(args, raw, notes, drive)
        d = fdp.make_fdp_plan(
            drive,
            namespaces=specs or None,
            tenants=args.tenants,
            endgrp=1 if args.endgrp_id is None else args.endgrp_id,
            config_index=0 if args.fdp_config is None else args.fdp_config,
            granularity=gran,
            **inputs,
            **_target(args),
        )
        text = fdp_plan_text(d)
    else:
        d = plan.make_plan(drive, granularity=gran, **_target(args))
        text = plan_text(d)
    d["probe_notes"] = notes
    if notes:
        text += "\n" + "\n".join(f"probe: {x}" for x in notes)
    return Output(data=d, text=text)


def _apply(args) -> Output:
    """--apply: the partition mechanism, guarded, and what it did."""
    from ..planner.plan import apply_partition  # noqa: PLC0415  (start-up: see LAZY)

    if not args.device:
        raise InputError("device: --apply needs a device or image file", key="device")
    r = apply_partition(args.device, args.destroy_data, sector_size=args.sector_size, force=args.force, **_target(args))
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


def _check_no_fdp_options(args) -> None:
    given = [
        o
        for o, v in (
            ("namespace", args.namespace),
            ("tenants", args.tenants),
            ("endgrp_id", args.endgrp_id),
            ("fdp_config", args.fdp_config),
            ("fdp_configs_json", args.fdp_configs_json),
        )
        if v is not None
    ]
    if given:
        opt = "--" + given[0].replace("_", "-")
        raise InputError(f"{given[0]}: {opt} needs --placement fdp", key=given[0])


def _drive(args) -> tuple[dict, dict, list]:
    """The drive: probed (a device), from recorded outputs (--records) or described (--interface
    with --native), then the options that override the probe; with the raw outputs and notes."""
    from ..devices import probe  # noqa: PLC0415  (start-up: see LAZY)

    notes: list = []
    raw: dict = {}
    device = args.device
    if args.records or args.device:
        if args.records:
            collected = probe.load_records(args.records)
        else:
            device = _namespace_of_controller(args.device, notes)
            _check_device_kind(device)
            collected = probe.collect(device)
        raw = collected["raw"]
        parsed = probe.parse_all(collected)
        drive = probe.describe_drive(device, parsed["parsed"])
        notes += parsed["notes"]
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
        drive["native"] = parse_capacity(args.native, drive.get("sector_size") or 512, "native")
    return drive, raw, notes


def _namespace_of_controller(device: str, notes: list, sys_block: str = "/sys/block") -> str:
    """An NVMe controller's character device (/dev/nvme0) stands for its one namespace's block
    device (/dev/nvme0n1), which the probe reads; a controller with several namespaces is refused
    with their names.  Any other path is returned as it is."""
    m = re.fullmatch(r"/dev/(nvme\d+)", device)
    try:
        is_chr = bool(m) and stat.S_ISCHR(os.stat(device).st_mode)
    except OSError:
        is_chr = False
    if not m or not is_chr:
        return device
    ctrl = m.group(1)
    try:
        names = sorted(n for n in os.listdir(sys_block) if re.fullmatch(rf"{ctrl}n\d+", n))
    except OSError:
        names = []
    if len(names) != 1:
        found = ", ".join(f"/dev/{n}" for n in names) or "no namespace block device"
        raise InputError(
            f"device: {device} is an NVMe controller with {found}; name the namespace to plan (/dev/{ctrl}n1)",
            key="device",
        )
    notes.append(f"{device} is an NVMe controller: its namespace /dev/{names[0]} was probed")
    return f"/dev/{names[0]}"


def _check_device_kind(device: str) -> None:
    """A block device or an image file; anything else is refused before any tool runs."""
    try:
        mode = os.stat(device).st_mode
    except OSError as e:
        raise InputError(f"device: {device}: {e.strerror}", key="device") from None
    if not (stat.S_ISBLK(mode) or stat.S_ISREG(mode)):
        raise InputError(f"device: {device} is neither a block device nor an image file", key="device")
