"""Take a snapshot of a drive's counters with smartctl (and nvme-cli for NVMe drives)."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
from typing import Any

from .. import childproc
from ..devices.jsondoc import loads_lenient
from ..devices.smartctl import read_smartctl, smartctl_status
from ..errors import CommandError, DeviceError
from .parse import SNAPSHOT_FORMAT


def _run(argv: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    try:
        return childproc.run(argv, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise CommandError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise CommandError(f"{' '.join(argv)} did not finish within {timeout} s") from None


def _nvme_controller(dev: str) -> str:
    """/dev/nvme0n1 -> /dev/nvme0 (logs are per controller; nvme-cli accepts either)."""
    base = os.path.basename(os.path.realpath(dev))
    if base.startswith("nvme") and "n" in base[4:]:
        ctrl = base[: 4 + base[4:].index("n")]
        return f"/dev/{ctrl}"
    return dev


#: nvme-cli vendor plugins whose additional SMART log (log page CAh) prints JSON, by PCI vendor ID
#: (smartctl's ``nvme_pci_vendor.id``): (vendor, plugin command, options)
VENDOR_LOGS = {
    0x8086: ("Intel", ["intel", "smart-log-add"], ["--json"]),
    0x025E: ("Solidigm", ["solidigm", "smart-log-add"], ["-o", "json"]),
    0x1B96: ("Western Digital", ["wdc", "vs-smart-add-log"], ["-o", "json"]),
    0x15B7: ("SanDisk", ["wdc", "vs-smart-add-log"], ["-o", "json"]),
    0x1BB1: ("Seagate", ["seagate", "vs-smart-add-log"], ["-o", "json"]),
}


def take_snapshot(device: str, smartctl: str | None = None, nvme: str | None = None) -> dict:
    """Run ``smartctl -x -j`` (and, for NVMe, nvme-cli's SMART, Endurance Group and OCP C0 logs
    and the vendor's additional SMART log where nvme-cli has a plugin for the drive's vendor).

    smartctl's exit status is a bitmask: bits 0-1 mean no data (raised as CommandError),
    other bits only describe the drive's health and are recorded as warnings."""
    if not os.path.exists(device):
        raise DeviceError(f"{device}: no such device", key="device")
    smartctl = (
        smartctl or shutil.which("smartctl") or ("/usr/sbin/smartctl" if os.path.exists("/usr/sbin/smartctl") else None)
    )
    if not smartctl:
        raise CommandError("smartctl is not installed (Debian package smartmontools)")
    warnings: list[str] = []
    r = _run([smartctl, "-x", "-j", device])
    status = smartctl_status(r.returncode)
    try:
        sc = read_smartctl(r.stdout, source="smartctl -x -j")
    except Exception:
        raise CommandError(
            f"smartctl -x -j {device} exited {r.returncode} without JSON: {(r.stderr or r.stdout).strip()[:300]}"
        ) from None
    if status["fatal"]:
        msgs = [m.get("string") for m in (sc.get("smartctl") or {}).get("messages", []) if m.get("string")]
        raise CommandError(
            f"smartctl -x -j {device} failed (exit status {r.returncode}: "
            f"{'; '.join(status['meaning'])}){': ' + '; '.join(msgs) if msgs else ''}"
        )
    if r.returncode:
        warnings.append(f"smartctl exit status {r.returncode}: {'; '.join(status['meaning'])}")
    snap: dict[str, Any] = {
        "format": SNAPSHOT_FORMAT,
        "version": 1,
        "device": device,
        "taken_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "smartctl": sc,
        "smartctl_status": status,
        "nvme": {},
        "warnings": warnings,
        "commands": [],
    }
    snap["commands"].append({"argv": [smartctl, "-x", "-j", device], "exit_status": r.returncode})
    protocol = ((sc.get("device") or {}).get("protocol") or "").upper()
    if protocol == "NVME":
        nvme = nvme or shutil.which("nvme") or ("/usr/sbin/nvme" if os.path.exists("/usr/sbin/nvme") else None)
        if not nvme:
            warnings.append("nvme-cli is not installed: no Endurance Group or OCP C0 log (Debian package nvme-cli)")
        else:
            _add_nvme_logs(snap, nvme, _nvme_controller(device), sc)
    return snap


def snapshot_json(snap: dict) -> str:
    return json.dumps(snap, indent=2)


def _add_nvme_logs(snap: dict, nvme: str, ctrl: str, sc: dict) -> None:
    """nvme-cli's SMART, Endurance Group and OCP C0 logs, and the vendor's additional SMART log
    when nvme-cli has a plugin for the drive's vendor, into ``snap``; a log that is not
    available is a warning."""
    warnings = snap["warnings"]
    logs = [
        ("smart_log", [nvme, "smart-log", ctrl, "-o", "json"]),
        ("endurance_log", [nvme, "endurance-log", ctrl, "--group-id=1", "-o", "json"]),
        ("ocp_c0", [nvme, "ocp", "smart-add-log", ctrl, "-o", "json"]),
    ]
    vid = (sc.get("nvme_pci_vendor") or {}).get("id")
    vendor = VENDOR_LOGS.get(vid) if isinstance(vid, int) else None
    if vendor:
        logs.append(("vendor_log", [nvme, *vendor[1], ctrl, *vendor[2]]))
    for key, argv in logs:
        try:
            rr = _run(argv, timeout=60)
        except CommandError as e:
            warnings.append(f"{key}: {e}")
            continue
        snap["commands"].append({"argv": argv, "exit_status": rr.returncode})
        if rr.returncode != 0:
            warnings.append(
                f"{' '.join(argv[1:3])}: not available (exit {rr.returncode}: {(rr.stderr or rr.stdout).strip()[:160]})"
            )
            continue
        try:
            data = loads_lenient(rr.stdout, source=" ".join(argv[:3]))
        except Exception:
            warnings.append(f"{' '.join(argv[1:3])}: output is not JSON")
            continue
        if key == "vendor_log":
            assert vendor is not None  # the vendor log is listed only for a known vendor
            data = {"vendor": vendor[0], "plugin": " ".join(vendor[1]), "data": data}
        snap["nvme"][key] = data
