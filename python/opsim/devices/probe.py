"""Read-only probing of a drive: run the tools (or read their recorded outputs), parse each with
its reader in :mod:`opsim.devices`, and combine them into one drive description.

Nothing here writes to a device.  Every tool is optional: a missing tool or a failing command
becomes a note, not an error.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

from .. import childproc
from ..errors import InputError
from ..toolio import to_int
from .hdparm import parse_hdparm_I, parse_hdparm_N
from .lsblk import parse_lsblk
from .nvme import parse_nvme_id_ctrl, parse_nvme_id_ns
from .smartctl import parse_smartctl

#: fixture/record file names -> parser
RECORD_FILES = {
    "lsblk": ("lsblk.json", parse_lsblk),
    "hdparm_N": ("hdparm-N.txt", parse_hdparm_N),
    "hdparm_I": ("hdparm-I.txt", parse_hdparm_I),
    "nvme_id_ctrl": ("nvme-id-ctrl.json", parse_nvme_id_ctrl),
    "nvme_id_ns": ("nvme-id-ns.json", parse_nvme_id_ns),
    "smartctl": ("smartctl.json", parse_smartctl),
}


def find_tool(name: str) -> str | None:
    """The tool on PATH, else in /usr/sbin or /sbin (not on a user's PATH), else None."""
    return shutil.which(name) or next(
        (p for p in (f"/usr/sbin/{name}", f"/sbin/{name}") if os.access(p, os.X_OK)), None
    )


def _run(cmd: list[str], timeout: float = 20) -> tuple[str | None, str | None]:
    exe = find_tool(cmd[0])
    if exe is None:
        return None, f"{cmd[0]} is not installed"
    try:
        r = childproc.run([exe, *cmd[1:]], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{' '.join(cmd)}: {e}"
    if r.returncode != 0 and not r.stdout.strip():
        return None, f"{' '.join(cmd)} failed (exit {r.returncode}): {r.stderr.strip()[:200]}"
    return r.stdout, None


def _nvme_ctrl(path: str) -> str:
    m = re.match(r"^(/dev/nvme\d+)n\d+$", path)
    return m.group(1) if m else path


def collect(path: str) -> dict:
    """Run the read-only tools on ``path``; return the raw outputs and notes."""
    raw: dict = {}
    notes: list[str] = []
    name = os.path.basename(os.path.realpath(path))
    sysdir = f"/sys/class/block/{name}"
    if os.path.isdir(sysdir):

        def rd(rel):
            try:
                with open(os.path.join(sysdir, rel)) as f:
                    return f.read().strip()
            except OSError:
                return None

        raw["sysfs"] = {
            "size_512": to_int(rd("size")),
            "logical_block_size": to_int(rd("queue/logical_block_size")),
            "model": rd("device/model"),
            "rotational": rd("queue/rotational"),
            "zoned": rd("queue/zoned"),  # none, host-aware or host-managed (a ZNS namespace)
            # an NVMe namespace's NSID: the kernel numbers /dev/nvmeXnY in probe order, not by NSID
            "nsid": to_int(rd("nsid")),
        }
    cmds = {"lsblk": ["lsblk", "-J", "-b", "-O", path]}
    is_nvme = name.startswith("nvme")
    if is_nvme:
        cmds["nvme_id_ctrl"] = ["nvme", "id-ctrl", _nvme_ctrl(path), "-o", "json"]
        cmds["nvme_id_ns"] = ["nvme", "id-ns", path, "-o", "json"]
    else:
        cmds["hdparm_N"] = ["hdparm", "-N", path]
        cmds["hdparm_I"] = ["hdparm", "-I", path]
    cmds["smartctl"] = ["smartctl", "-x", "-j", path]
    for key, cmd in cmds.items():
        out, err = _run(cmd)
        if err:
            notes.append(err)
        elif out is not None:
            raw[key] = out
    return {"raw": raw, "notes": notes}


def load_records(directory: str) -> dict:
    """Recorded tool outputs from a directory (the file names in :data:`RECORD_FILES`)."""
    if not os.path.isdir(directory):
        raise InputError(f"records: {directory} is not a directory", key="records")
    raw, files = {}, {}
    for key, (fname, _) in RECORD_FILES.items():
        p = os.path.join(directory, fname)
        if os.path.exists(p):
            with open(p, encoding="utf-8", errors="replace") as f:
                raw[key] = f.read()
            files[key] = p
    if not raw:
        raise InputError(
            f"records: no recorded outputs in {directory} (expected any of "
            f"{', '.join(v[0] for v in RECORD_FILES.values())})",
            key="records",
        )
    return {"raw": raw, "notes": [], "files": files}


def parse_all(collected: dict) -> dict:
    """Parse every raw output; a parser that fails becomes a note."""
    parsed, notes = {}, list(collected.get("notes", []))
    for key, text in collected["raw"].items():
        if key == "sysfs":
            parsed[key] = text
            continue
        try:
            parsed[key] = RECORD_FILES[key][1](text)
        except InputError as e:
            src = collected.get("files", {}).get(key)
            if src:  # a recorded output the user handed over: refuse it, naming the file
                raise InputError(f"records: {src}: {e}", key="records") from None
            notes.append(f"{key}: could not parse ({e})")
    return {"parsed": parsed, "notes": notes}


def describe_drive(path: str | None, parsed: dict) -> dict:
    """Combine the parsed outputs into one drive description: lsblk first, then hdparm, nvme-cli,
    smartctl and sysfs, each filling what the ones before left open."""
    p = parsed
    drive: dict[str, Any] = {
        "path": path,
        "interface": None,
        "model": None,
        "serial": None,
        "sector_size": None,
        "current_sectors": None,
        "native_sectors": None,
        "partitions": [],
        "mounted": [],
        "ata": None,
        "nvme": None,
        "smartctl": p.get("smartctl"),
    }
    if "lsblk" in p:
        _from_lsblk(drive, p["lsblk"], path)
    if "hdparm_I" in p:
        _from_hdparm_identify(drive, p["hdparm_I"])
    if "hdparm_N" in p:
        _from_hdparm_max(drive, p["hdparm_N"])
    if "nvme_id_ns" in p or "nvme_id_ctrl" in p:
        _from_nvme(drive, p.get("nvme_id_ctrl") or {}, p.get("nvme_id_ns") or {})
    if "smartctl" in p:
        _from_smartctl(drive, p["smartctl"])
    if "sysfs" in p:
        sf = p["sysfs"]
        drive["sector_size"] = drive["sector_size"] or sf.get("logical_block_size")
        if drive["current_sectors"] is None and sf.get("size_512") and drive["sector_size"]:
            drive["current_sectors"] = sf["size_512"] * 512 // drive["sector_size"]
        if sf.get("zoned") and sf["zoned"] != "none":
            drive["zoned"] = sf["zoned"]
        if drive["nvme"] is not None and sf.get("nsid"):
            drive["nvme"]["nsid"] = sf["nsid"]
    if drive["native_sectors"] is None:
        drive["native_sectors"] = drive["current_sectors"]
    return drive


def _from_lsblk(drive: dict, devs: list[dict], path: str | None) -> None:
    """The top device (``path``, else the first): identity, sizes, transport, partitions, mounts."""
    top = next(
        (d for d in devs if d["parent"] is None and (path is None or d["path"] == path)), devs[0] if devs else None
    )
    if not top:
        return
    drive["model"] = top["model"]
    drive["serial"] = top["serial"]
    drive["sector_size"] = top["log_sec"]
    if top["size"] and top["log_sec"]:
        drive["current_sectors"] = top["size"] // top["log_sec"]
    tran = (top["tran"] or "").lower()
    drive["interface"] = {"sata": "sata", "ata": "sata", "nvme": "nvme", "sas": "sas"}.get(tran)
    if path is None:
        drive["path"] = top["path"]
    drive["partitions"] = [{"path": d["path"], "size": d["size"]} for d in devs if d["parent"] == top["name"]]
    drive["mounted"] = [m for d in devs for m in d["mountpoints"]]


def _from_hdparm_identify(drive: dict, a: dict) -> None:
    drive["interface"] = drive["interface"] or "sata"
    drive["model"] = drive["model"] or a["model"]
    drive["sector_size"] = drive["sector_size"] or a["logical_sector_size"]
    drive["ata"] = dict(a)
    drive["ata"].pop("features", None)


def _from_hdparm_max(drive: dict, n: dict) -> None:
    drive["interface"] = drive["interface"] or "sata"
    drive["native_sectors"] = n["native_sectors"]
    drive["current_sectors"] = n["current_sectors"]
    drive["ata"] = {**(drive["ata"] or {}), "max": n}


def _from_nvme(drive: dict, ctrl: dict, ns: dict) -> None:
    drive["interface"] = "nvme"
    drive["nvme"] = {"ctrl": ctrl, "ns": ns}
    drive["model"] = drive["model"] or ctrl.get("model")
    if ns.get("lba_size"):
        drive["sector_size"] = ns["lba_size"]
        drive["current_sectors"] = ns["nsze"]
    if ctrl.get("tnvmcap") and drive["sector_size"]:
        drive["native_sectors"] = ctrl["tnvmcap"] // drive["sector_size"]


def _from_smartctl(drive: dict, s: dict) -> None:
    proto = (s.get("protocol") or "").upper()
    drive["interface"] = drive["interface"] or {"ATA": "sata", "NVME": "nvme", "SCSI": "sas"}.get(proto)
    drive["model"] = drive["model"] or s.get("model")
    drive["sector_size"] = drive["sector_size"] or s.get("logical_block_size")
    if drive["current_sectors"] is None and s.get("user_capacity_blocks"):
        drive["current_sectors"] = s["user_capacity_blocks"]
    if s.get("type") and re.match(r"(megaraid|cciss|aacraid|areca|3ware|hpt)", str(s["type"])):
        drive["behind_raid"] = s["type"]
