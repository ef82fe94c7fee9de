"""The procedure to set a target OP on a real drive, per mechanism, with exact values.

``make_plan`` only computes and prints; the one thing opsim will do itself is the partition
mechanism (``apply_partition``), guarded by :func:`opsim.devices.guard.guard_destructive`.
"""

from __future__ import annotations

import os
import re
import shutil

from .. import childproc
from ..devices.guard import guard_destructive
from ..devices.nvme import lba_format_index
from ..errors import CommandError, InputError
from .capacity import capacity_from_sectors, plan_capacity

MIB = 2**20
INTERFACES = ("sata", "nvme", "sas")

WARN = {
    "zoned": "this is a host-managed zoned block device (a ZNS namespace; /sys/block/DEV/queue/zoned): it "
    "accepts only sequential writes at each zone's write pointer, Linux does not partition it, and opsim "
    "refuses --apply and measure on it. OP on a ZNS drive is the zone capacity the drive sets itself.",
    "data_loss": "DATA LOSS: every mechanism below starts by purging or discarding the whole drive. Back up first.",
    "hpa_unlock": "Linux unlocks an HPA on demand: if a partition table still describes partitions past "
    "the new max address, the kernel logs 'extends beyond EOD, enabling native capacity' and "
    "raises the limit back to native (volatile, until power cycle). Purge (or wipe the "
    "partition table) before setting the max address, and keep every partition below it.",
    "ignore_hpa": "The kernel parameter libata.ignore_hpa=1 unlocks every HPA at boot: check "
    "/proc/cmdline and /sys/module/libata/parameters/ignore_hpa (must be 0/N).",
    "frozen": "ATA security 'frozen': the BIOS froze the drive at boot, SECURITY ERASE and SET MAX are "
    "refused. Unfreeze by suspend/resume (systemctl suspend) or by hot-unplugging and "
    "re-plugging the SATA data/power cable, then check `hdparm -I` again.",
    "raid": "RAID controllers and HBAs in RAID mode usually do not pass ATA SET MAX / SECURITY or NVMe "
    "namespace management through; attach the drive to a plain AHCI/HBA (IT mode) port or use "
    "the controller vendor's tool.",
    "trim_first": "Unpartitioned space is OP only if the drive knows it is free: discard (TRIM) the whole "
    "device before partitioning, and never write to the tail afterwards.",
}


def _dev(drive) -> str:
    return drive.get("path") or {"sata": "/dev/sdX", "sas": "/dev/sgX", "nvme": "/dev/nvme0n1"}[drive["interface"]]


def _ata(drive, cap) -> dict:
    dev = _dev(drive)
    n = cap["user"]["sectors"]
    native = cap["native"]["sectors"]
    ata = drive.get("ata") or {}
    amac = (ata.get("amac") or {}).get("supported") or (ata.get("max") or {}).get("amac")
    hpa = (ata.get("hpa") or {}).get("supported")
    dco = (ata.get("dco") or {}).get("supported")
    frozen = (ata.get("security") or {}).get("frozen")
    if amac:
        proto = "AMAC (ACS-3 Accessible Max Address Configuration: SET ACCESSIBLE MAX ADDRESS EXT)"
    elif hpa:
        proto = "legacy HPA (SET MAX ADDRESS [EXT], Host Protected Area feature set)"
    elif ata:
        proto = "unknown: the drive reports neither AMAC nor HPA; use the vendor tool (DCO)"
    else:
        proto = "AMAC on current drives (ACS-3+), legacy HPA on older ones: check `hdparm -I`"
    notes = [
        f"protocol: {proto}",
        "one permanent max-address change per power cycle: a second SET MAX in the same power cycle is "
        "aborted by the drive (Micron 1100 note)",
        "DCO (DEVICE CONFIGURATION SET) is the oldest mechanism; hdparm only identifies/restores/freezes it "
        "(--dco-identify, --dco-restore); vendor tools use it on legacy drives"
        + (" (this drive supports DCO)" if dco else ""),
        f"to return to native: hdparm -N p{native} --yes-i-know-what-i-am-doing {dev} (then power cycle)",
    ]
    warnings = [WARN["hpa_unlock"], WARN["ignore_hpa"]]
    if "hpa" in ata and not amac and not hpa:
        # QEMU's emulated AHCI disk: no HPA/AMAC in IDENTIFY, SET MAX aborted, hdparm exits 0 all the
        # same (tests/vm/test_vm_sata.py)
        warnings.insert(
            0,
            "this drive reports neither AMAC nor the HPA feature set (hdparm -I): it will abort SET MAX "
            "ADDRESS, and hdparm -N p... can still exit 0; check `hdparm -N` afterwards, or use the "
            "partition mechanism",
        )
    if "security" in ata and not ata["security"]:
        warnings.insert(
            0,
            "this drive reports no ATA Security feature set (hdparm -I): SECURITY ERASE (step 2) is not "
            "available; purge with SANITIZE if supported, else discard (blkdiscard)",
        )
    if frozen:
        warnings.insert(0, "THIS DRIVE IS FROZEN. " + WARN["frozen"])
    else:
        warnings.append(WARN["frozen"])
    gb = cap["user"]["idema_gb"] if cap["user"]["idema_exact"] else None
    vendor = [
        f"Micron Storage Executive: msecli -M -O {gb if gb else '<user GB>'} -n {dev}   "
        f"(-O = user capacity in GB; -o = max LBA {n - 1})",
        f"Intel SSD Toolbox / intelmas / Solidigm sst: MaximumLBA="
        f"{cap['input']['max_lba'].rstrip('%') + '%' if cap['input'].get('max_lba') else n - 1}"
        " (percent of native, or an LBA)",
        f"HDAT2 (DOS): 'Set max (HPA)' menu, user area = {n:,} sectors",
    ]
    return {
        "name": "ata",
        "title": "ATA max address (AMAC / HPA / DCO)",
        "steps": _ata_steps(dev, n, native),
        "notes": notes,
        "warnings": warnings,
        "vendor_tools": vendor,
        "values": {"sectors": n, "max_lba": n - 1, "native_sectors": native, "protocol": proto},
    }


def _ata_steps(dev: str, n: int, native: int) -> list[dict]:
    """Check, purge, set the max address persistently, power cycle and verify."""
    return [
        {
            "title": "check the security state and features (must say 'not frozen')",
            "commands": [f"hdparm -I {dev}", f"hdparm -N {dev}"],
        },
        {
            "title": "purge: ATA SECURITY ERASE (set a temporary password, then erase) ...",
            "commands": [
                f"hdparm --user-master u --security-set-pass opsim {dev}",
                f"hdparm --user-master u --security-erase opsim {dev}",
            ],
        },
        {
            "title": "... or SANITIZE BLOCK ERASE (if supported), then wait for it",
            "commands": [
                f"hdparm --yes-i-know-what-i-am-doing --sanitize-block-erase {dev}",
                f"hdparm --sanitize-status {dev}",
            ],
        },
        {
            "title": f"set the max address permanently to {n:,} sectors (max LBA {n - 1:,} = 0x{n - 1:X}); "
            "'p' makes it persistent, without it the limit is volatile",
            "commands": [f"hdparm -N p{n} --yes-i-know-what-i-am-doing {dev}"],
        },
        {
            "title": "power cycle the drive (full power off, not a reboot), then verify",
            "commands": [f"hdparm -N {dev}   # expect: max sectors = {n}/{native}"],
        },
    ]


def _nvme(drive, cap, granularity: int | None) -> dict:
    dev = _dev(drive)
    m = re.match(r"^(/dev/nvme\d+)(n\d+)?$", dev)
    ctrl = m.group(1) if m else "/dev/nvme0"
    nv = drive.get("nvme") or {}
    c = nv.get("ctrl") or {}
    lba = cap["sector_size"]
    fmt = lba_format_index(nv.get("ns") or {}, lba)
    nsze = cap["user"]["sectors"]
    notes = []
    if granularity:
        g = granularity // lba
        if g > 0 and nsze % g:
            nsze = nsze // g * g
            notes.append(f"NSZE rounded down to the {granularity:,}-byte namespace granularity: {nsze:,} LBAs")
    notes += _NVME_NOTES
    cntl = c.get("cntlid")
    cntl_s = str(cntl) if cntl is not None else "<cntlid from id-ctrl>"
    # the namespace's own NSID (sysfs); /dev/nvme0n2 need not be NSID 2
    nsid = nv.get("nsid") or 1
    warnings = []
    if c and not c.get("ns_management"):
        warnings.append(
            "this controller does not support namespace management (OACS bit 3 is 0): "
            "use the partition mechanism or the vendor tool"
        )
    elif c and not c.get("tnvmcap"):
        # NVMe 1.4 (Identify Controller, TNVMCAP): mandatory when namespace management is supported.
        # QEMU's emulated controller (7.2) claims OACS bit 3, reports TNVMCAP 0 and answers
        # delete-ns/create-ns with Invalid Command Opcode (tests/vm/test_vm_plan.py).
        warnings.append(
            "this controller claims namespace management (OACS bit 3) but reports a total NVM capacity "
            "(TNVMCAP) of 0, which a controller with namespace management must report: its namespace "
            "commands are not to be trusted (an emulated controller answers them Invalid Command Opcode); "
            "do not delete the namespace: use the partition mechanism"
        )
    warnings.append(WARN["raid"])
    vendor = [
        "Intel/Solidigm: intelmas / sst 'set ... MaximumLBA' is SATA-only on older tools; for NVMe "
        "use namespace management or the vendor's resize command",
        "Micron NVMe: msecli -N (namespace management) with the same NSZE",
    ]
    return {
        "name": "nvme",
        "title": "NVMe namespace resize",
        "steps": _nvme_steps(dev, ctrl, cntl_s, nsze, lba, fmt, nsid),
        "notes": notes,
        "warnings": warnings,
        "vendor_tools": vendor,
        "values": {"nsze": nsze, "ncap": nsze, "flbas": fmt, "lba_size": lba, "bytes": nsze * lba},
    }


_NVME_NOTES = (
    "NCAP = NSZE. NCAP < NSZE makes a thin-provisioned namespace: the host still sees NSZE LBAs "
    "and the drive can run out of space; that is not OP.",
    "granularity margin: controllers allocate namespaces in their own granularity (NVMe 1.4 "
    "Namespace Granularity List, `nvme id-ns-granularity`), so the NVM consumed (id-ns nvmcap) can be "
    "rounded up; check unvmcap after creating and leave a margin of one granularity unit.",
    "nvme-cli spellings: the long options below work in nvme-cli 1.x, 2.x and 3.x; the short ones "
    "differ (create-ns size is -n in 1.x documentation and -s in 2.x), so opsim prints long options only. "
    "nvme-cli 2.x also accepts --nsze-si/--ncap-si with a size suffix.",
)


def _nvme_steps(dev: str, ctrl: str, cntl_s: str, nsze: int, lba: int, fmt: int, nsid: int = 1) -> list[dict]:
    """Check, purge, delete, create NSZE = NCAP, attach and verify."""
    return [
        {
            "title": "check: OACS bit 3 (namespace management), capacities, LBA formats",
            "commands": [
                f"nvme id-ctrl {ctrl} -o json   # oacs & 0x8, tnvmcap, unvmcap, cntlid",
                f"nvme id-ns {dev} -o json      # flbas, lbafs",
            ],
        },
        {
            "title": "purge the subsystem (sanitize block erase), then wait for it",
            "commands": [f"nvme sanitize {ctrl} --sanact=2", f"nvme sanitize-log {ctrl}"],
        },
        {
            "title": "detach and delete the current namespace",
            "commands": [
                f"nvme detach-ns {ctrl} --namespace-id={nsid} --controllers={cntl_s}",
                f"nvme delete-ns {ctrl} --namespace-id={nsid}",
            ],
        },
        {
            "title": f"create a namespace of {nsze:,} LBAs of {lba} bytes (LBA format {fmt})",
            "commands": [f"nvme create-ns {ctrl} --nsze={nsze} --ncap={nsze} --flbas={fmt}"],
        },
        {
            "title": "attach it (use the nsid create-ns printed) and rescan",
            "commands": [
                f"nvme attach-ns {ctrl} --namespace-id={nsid} --controllers={cntl_s}",
                f"nvme ns-rescan {ctrl}",
                f"nvme id-ns {dev} -o json   # expect nsze = ncap = {nsze}",
            ],
        },
    ]


def partition_layout(native_sectors: int, user_sectors: int, sector_size: int) -> dict:
    """One GPT partition from 1 MiB to the last 1 MiB boundary at or below the user capacity."""
    per_mib = MIB // sector_size
    start = per_mib
    end_excl = (user_sectors // per_mib) * per_mib
    # GPT keeps a backup header/table in the last 33 (512 B) / 6 (4 KiB) sectors
    backup = 33 if sector_size == 512 else 6
    end_excl = min(end_excl, ((native_sectors - backup) // per_mib) * per_mib)
    if end_excl <= start:
        raise InputError("user: the target capacity is too small for a 1 MiB-aligned partition", key="user")
    last = end_excl - 1
    part = last - start + 1
    return {
        "start": start,
        "end": last,
        "sectors": part,
        "bytes": part * sector_size,
        "unpartitioned_sectors": native_sectors - part,
        "op_native": (native_sectors - part) / native_sectors,
    }


def _partition(drive, cap) -> dict:
    dev = _dev(drive)
    ss = cap["sector_size"]
    lay = partition_layout(cap["native"]["sectors"], cap["user"]["sectors"], ss)
    steps = [
        {
            "title": "discard (TRIM/deallocate) the whole device first: destroys all data",
            "commands": [f"blkdiscard {dev}"],
        },
        {
            "title": f"one GPT partition, sectors {lay['start']:,}..{lay['end']:,} ({lay['bytes']:,} bytes); "
            "the tail stays unpartitioned",
            "commands": [
                f"sgdisk --zap-all {dev}",
                f"sgdisk --new=1:{lay['start']}:{lay['end']} --typecode=1:8300 --change-name=1:opsim-data {dev}",
                f"sgdisk -p {dev}",
            ],
        },
        {
            "title": "or with parted",
            "commands": [
                f"parted -s {dev} mklabel gpt mkpart opsim-data {lay['start']}s {lay['end']}s",
                f"parted -s {dev} unit s print",
            ],
        },
    ]
    notes = [
        f"OP from partitioning: {lay['unpartitioned_sectors']:,} sectors never written "
        f"({100 * lay['op_native']:.2f}% of native, native basis)",
        "opsim can do this itself on an image file or an unused block device: "
        "opsim plan DEVICE ... --apply --destroy-data=DEVICE",
    ]
    return {
        "name": "partition",
        "title": "partition-based OP (any interface)",
        "steps": steps,
        "notes": notes,
        "warnings": [WARN["trim_first"]],
        "vendor_tools": [
            "Micron Storage Executive GUI uses this method",
            "Windows Disk Management: a smaller partition",
        ],
        "values": lay,
    }


def _sas(drive, cap) -> dict:
    dev = _dev(drive)
    n = cap["user"]["sectors"]
    steps = [
        {"title": "read the current capacity", "commands": [f"sg_readcap --long {dev}"]},
        {
            "title": f"resize to {n:,} logical blocks (MODE SELECT block descriptor)",
            "commands": [f"sg_format --resize --count={n} {dev}"],
        },
        {
            "title": "format so the new size takes effect on drives that need it (destroys data), then verify",
            "commands": [f"sg_format --format {dev}", f"sg_readcap --long {dev}   # expect {n} blocks"],
        },
    ]
    return {
        "name": "sas",
        "title": "SAS/SCSI capacity (sg_format --resize)",
        "steps": steps,
        "notes": ["to return to native: sg_format --resize --count=-1 (the device's maximum)"],
        "warnings": [WARN["raid"]],
        "vendor_tools": [],
        "values": {"blocks": n},
    }


def make_plan(
    drive: dict,
    *,
    user=None,
    op=None,
    op_basis=None,
    max_lba=None,
    physical=None,
    round_user=None,
    granularity: int | None = None,
    idema: bool = True,
) -> dict:
    """The capacity solution and the procedure for every mechanism that fits the interface."""
    iface = drive.get("interface")
    if iface not in INTERFACES:
        what = (
            f"{iface!r} is not one of sata, nvme, sas"
            if iface is not None
            else f"the probe of {drive.get('path') or 'the drive'} found no interface (no transport in lsblk, "
            "no ATA, NVMe or SCSI identify data)"
        )
        raise InputError(f"interface: {what}; give --interface sata|nvme|sas", key="interface")
    ss = drive.get("sector_size")
    if ss not in (512, 4096):
        raise InputError(f"sector_size: {ss!r}; give --sector-size 512|4096", key="sector_size")
    native = drive.get("native")
    if native is None:
        if not drive.get("native_sectors"):
            raise InputError("native: unknown native capacity; give --native", key="native")
        native = capacity_from_sectors(drive["native_sectors"], ss)
    if user is None and op is None and max_lba is None:
        raise InputError("user: give the target with --user, --op/--op-basis or --max-lba", key="user")
    cap = plan_capacity(
        native,
        sector_size=ss,
        user=user,
        op=op,
        op_basis=op_basis,
        max_lba=max_lba,
        physical=physical,
        idema=idema,
        round_user=round_user,
    )
    mechs = []
    if iface == "sata":
        mechs.append(_ata(drive, cap))
    elif iface == "nvme":
        mechs.append(_nvme(drive, cap, granularity))
    else:
        mechs.append(_sas(drive, cap))
    mechs.append(_partition(drive, cap))
    warnings = [WARN["data_loss"]]
    if drive.get("mounted"):
        warnings.append(f"the drive is in use: mounted at {', '.join(drive['mounted'])}")
    if drive.get("zoned") == "host-managed":
        warnings.append(WARN["zoned"])
    if drive.get("behind_raid"):
        warnings.append(f"the drive is behind a RAID controller ({drive['behind_raid']}). " + WARN["raid"])
    cur, nat = drive.get("current_sectors"), drive.get("native_sectors")
    if cur and nat and cur < nat:
        warnings.append(
            f"the drive is already limited: {cur:,} of {nat:,} native sectors visible "
            "(HPA/AMAC set); the plan is computed from the native capacity"
        )
    return {
        "drive": {k: v for k, v in drive.items() if k != "native"},
        "capacity": cap,
        "mechanisms": mechs,
        "warnings": warnings,
    }


# ---------------------------------------------------------------------------- --apply


def _sgdisk() -> str:
    exe = shutil.which("sgdisk") or next(
        (p for p in ("/usr/sbin/sgdisk", "/sbin/sgdisk") if os.access(p, os.X_OK)), None
    )
    if exe is None:
        raise CommandError("sgdisk is not installed (Debian package gdisk; `make sysdeps` installs it)")
    return exe


def _run(cmd: list[str]) -> str:
    r = childproc.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise CommandError(f"{' '.join(cmd)} failed (exit {r.returncode}): {(r.stderr or r.stdout).strip()[:300]}")
    return r.stdout


def _punch_file(path: str, size: int) -> str:
    """Discard for an image file: punch a hole over the whole file (keeps its size)."""
    fallocate = shutil.which("fallocate")
    if fallocate:
        r = childproc.run(
            [fallocate, "--punch-hole", "--offset", "0", "--length", str(size), path], capture_output=True, text=True
        )
        if r.returncode == 0:
            return "fallocate --punch-hole"
    # fallback: write zeros (same visible result)
    with open(path, "r+b") as f:
        chunk = b"\0" * MIB
        left = size
        while left > 0:
            f.write(chunk[: min(left, MIB)])
            left -= MIB
        f.flush()
        os.fsync(f.fileno())
    return "zero-fill"


def apply_partition(
    path: str,
    confirm: str | None,
    *,
    sector_size: int | None = None,
    user=None,
    op=None,
    op_basis=None,
    max_lba=None,
    physical=None,
    round_user=None,
    force: bool = False,
) -> dict:
    """Discard ``path`` and write one GPT partition that leaves the OP tail unpartitioned.

    Refused (nothing changed) unless :func:`opsim.devices.guard.guard_destructive` accepts the target.
    ``sector_size`` None: the target's own (a block device's logical block size, 512 for a file).
    """
    if user is None and op is None and max_lba is None:
        raise InputError("user: give the target with --user, --op/--op-basis or --max-lba", key="user")
    t = guard_destructive(path, confirm, force=force)
    size, sector_size = _checked_size(path, t, sector_size)
    native = capacity_from_sectors(size // sector_size, sector_size)
    cap = plan_capacity(
        native,
        sector_size=sector_size,
        user=user,
        op=op,
        op_basis=op_basis,
        max_lba=max_lba,
        physical=physical,
        round_user=round_user,
    )
    lay = partition_layout(native.sectors, cap["user"]["sectors"], sector_size)
    done, got = _write_partition(path, t.kind, size, lay)
    return {"path": path, "kind": t.kind, "capacity": cap, "layout": lay, "done": done, "verified": got}


def _checked_size(path: str, t, sector_size: int | None) -> tuple[int, int]:
    """The target's size in bytes: whole sectors of the size its logical blocks have, at least 4 MiB;
    and that sector size (``sector_size`` None: the device's own; given, it must be the device's)."""
    if t.kind == "file" and sector_size not in (None, 512):
        raise InputError("sector_size: sgdisk treats an image file as 512-byte sectors; use 512", key="sector_size")
    if t.kind == "block" and t.dev_name:
        try:
            with open(f"/sys/class/block/{t.dev_name}/queue/logical_block_size") as f:
                lbs = int(f.read().strip())
        except (OSError, ValueError):
            lbs = None
        if sector_size is None:
            sector_size = lbs or 512
        elif lbs and lbs != sector_size:
            raise InputError(
                f"sector_size: {path} has {lbs}-byte logical blocks, not {sector_size}; pass --sector-size {lbs} "
                "or leave it out",
                key="sector_size",
            )
    sector_size = sector_size or 512
    size = int(t.size_bytes or 0)
    if size % sector_size or size // sector_size < 4 * MIB // sector_size:
        raise InputError(
            f"device: {path} is {size:,} bytes, not a whole number of {sector_size}-byte sectors of at least 4 MiB",
            key="device",
        )
    return size, sector_size


def _write_partition(path: str, kind: str, size: int, lay: dict) -> tuple[list[str], dict]:
    """Discard the target, write the one partition, and read the table back (it must match);
    returns what was done and what ``sgdisk -p`` reads back."""
    sgdisk = _sgdisk()
    done = []
    if kind == "file":
        done.append(_punch_file(path, size))
    else:
        blk = shutil.which("blkdiscard") or "/usr/sbin/blkdiscard"
        _run([blk, path])
        done.append(f"blkdiscard {path}")
    _run([sgdisk, "--zap-all", path])
    cmd = [sgdisk, f"--new=1:{lay['start']}:{lay['end']}", "--typecode=1:8300", "--change-name=1:opsim-data", path]
    _run(cmd)
    done.append(" ".join(["sgdisk", *cmd[1:]]))
    if kind == "block":
        pp = shutil.which("partprobe")
        if pp:
            childproc.run([pp, path], capture_output=True)
    printed = _run([sgdisk, "-p", path])
    got = parse_sgdisk_p(printed)
    ok = (
        len(got["partitions"]) == 1
        and got["partitions"][0]["start"] == lay["start"]
        and got["partitions"][0]["end"] == lay["end"]
    )
    if not ok:
        raise CommandError(f"{path}: the partition table read back does not match the plan:\n{printed}")
    return done, got


def parse_sgdisk_p(text: str) -> dict:
    """``sgdisk -p``: the sector count, sector size and partitions (number, start, end, code, name)."""
    m = re.search(r"Disk .*?:\s*(\d+)\s+sectors", text)
    ss = re.search(r"[Ss]ector size \(logical(?:/physical)?\):\s*(\d+)", text)
    parts = []
    for line in text.splitlines():
        pm = re.match(r"^\s+(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+([0-9A-F]{4})\s*(.*)$", line)
        if pm:
            parts.append(
                {
                    "number": int(pm.group(1)),
                    "start": int(pm.group(2)),
                    "end": int(pm.group(3)),
                    "code": pm.group(4),
                    "name": pm.group(5).strip(),
                }
            )
    return {
        "sectors": int(m.group(1)) if m else None,
        "sector_size": int(ss.group(1)) if ss else None,
        "partitions": parts,
    }
