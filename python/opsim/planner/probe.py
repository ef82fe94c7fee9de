"""Read-only probing of a drive, and tolerant parsers for the tools' outputs.

Nothing here writes to a device.  Every tool is optional: a missing tool or a failing command
becomes a note, not an error.  The parsers accept what the tools really print:

* nvme-cli JSON numbers as numbers, strings (``"1920383410176"``), comma-grouped strings
  (``"1,920,383,410,176"``) or hex strings (``"0x1e"``);
* warnings or other non-JSON lines before the JSON document (smartctl, nvme-cli, sudo);
* ``lsblk -J -b`` sizes as numbers (util-linux >= 2.33) or strings (older), and both
  ``mountpoint`` and ``mountpoints`` (util-linux >= 2.37).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

from .. import childproc
from ..errors import InputError
from ..toolio import extract_json, to_int

# ---------------------------------------------------------------------------- helpers


# ---------------------------------------------------------------------------- lsblk


def _object(text, what: str) -> dict:
    """The JSON object in a tool's output (a list or a number is not what the tools print)."""
    doc = extract_json(text, what)
    if not isinstance(doc, dict):
        raise InputError(f"{what}: expected a JSON object, found a {type(doc).__name__}", key=what)
    return doc


def _devices(devs, where: str) -> list[dict]:
    """``blockdevices`` or ``children``: a list of objects, or an InputError saying where not."""
    if not isinstance(devs, list) or not all(isinstance(d, dict) for d in devs):
        raise InputError(f"lsblk: {where} is not a list of devices (is this `lsblk -J -b` output?)", key="lsblk")
    return devs


def parse_lsblk(text) -> list[dict]:
    """``lsblk -J -b [-O]`` -> a flat list of devices (children carry ``parent``)."""
    doc = _object(text, "lsblk")
    if "blockdevices" not in doc:
        raise InputError('lsblk: no "blockdevices" list (is this `lsblk -J -b` output?)', key="lsblk")
    out = []

    def walk(devs, parent=None, where="blockdevices"):
        for d in _devices(devs, where):
            mps = d.get("mountpoints")
            if mps is None:
                mps = [d.get("mountpoint")]
            mps = [m for m in mps if m]
            name = d.get("name") or d.get("kname")
            out.append(
                {
                    "name": name,
                    "path": d.get("path") or (f"/dev/{name}" if name else None),
                    "type": d.get("type"),
                    "size": to_int(d.get("size")),
                    "mountpoints": mps,
                    "fstype": d.get("fstype"),
                    "log_sec": to_int(d.get("log-sec")),
                    "phy_sec": to_int(d.get("phy-sec")),
                    "tran": d.get("tran"),
                    "rota": d.get("rota") in (True, "1", 1),
                    "model": (d.get("model") or "").strip() or None,
                    "serial": d.get("serial"),
                    "disc_gran": to_int(d.get("disc-gran")),
                    "disc_max": to_int(d.get("disc-max")),
                    "parent": parent,
                }
            )
            if d.get("children") is not None:
                walk(d["children"], name, f"the children of {name}")

    walk(doc["blockdevices"])
    return out


# ---------------------------------------------------------------------------- hdparm


def parse_hdparm_N(text: str) -> dict:
    """``hdparm -N`` -> current and native max sectors and the HPA/AMAC state.

    Formats seen: `` max sectors   = 937703088/937703088, HPA is disabled`` (legacy HPA) and
    ``..., accessible max address disabled`` (ACS-3 AMAC drives, newer hdparm)."""
    m = re.search(r"max sectors\s*=\s*([0-9,]+)\s*/\s*([0-9,]+)", text)
    if not m:
        raise InputError("hdparm -N: no 'max sectors = N/M' line", key="hdparm-N")
    cur, nat = to_int(m.group(1)), to_int(m.group(2))
    amac = bool(re.search(r"accessible max address", text, re.I))
    st = re.search(r"(?:HPA is|accessible max address)\s+(enabled|disabled)", text, re.I)
    return {
        "current_sectors": cur,
        "native_sectors": nat,
        "amac": amac,
        "limited": (st.group(1).lower() == "enabled") if st else cur < nat,
    }


# The Security section of ``hdparm -I`` (hdparm's identify.c): one line per bit 0-5 of IDENTIFY
# word 128, each printed as "\t\tLABEL" when set and "\tnot\tLABEL" when clear (bit 0 clear:
# "\t(?)\tsupported"), then "Security level high|maximum" when enabled, then the erase-time line.
_SECURITY_BITS = (
    ("supported", "supported"),
    ("enabled", "enabled"),
    ("locked", "locked"),
    ("frozen", "frozen"),
    ("expired", "expired: security count"),
    ("enhanced_erase", "supported: enhanced erase"),
)


def parse_hdparm_security(text: str) -> dict:
    """The ATA Security state from ``hdparm -I``: ``supported``, ``enabled``, ``locked``,
    ``frozen``, ``expired``, ``enhanced_erase`` (bools, present when hdparm printed the line),
    ``level`` ("high"/"maximum" when enabled), ``master_password_revision``, and the drive's
    erase-time estimates ``erase_minutes`` / ``enhanced_erase_minutes`` (``*_more_than`` when
    hdparm prints "more than N").  An empty dict when there is no Security section (the drive
    does not support the Security feature set, or is not ATA)."""
    sm = re.search(r"^Security:[ \t]*\n(.*?)(?=^\S|\Z)", text, re.M | re.S)
    if not sm:
        return {}
    body = sm.group(1)
    out: dict = {}
    for key, label in _SECURITY_BITS:
        m = re.search(rf"^[ \t]*(not|\(\?\))?[ \t]+{re.escape(label)}[ \t]*$", body, re.M)
        if m:
            out[key] = m.group(1) is None
    lvl = re.search(r"Security level\s+(high|maximum)", body)
    out["level"] = lvl.group(1) if lvl else None
    mp = re.search(r"Master password revision code\s*=\s*(\d+)", body)
    out["master_password_revision"] = int(mp.group(1)) if mp else None
    for key, label in (
        ("erase_minutes", r"(?<!ENHANCED )SECURITY ERASE UNIT"),
        ("enhanced_erase_minutes", r"ENHANCED SECURITY ERASE UNIT"),
    ):
        m = re.search(rf"(more than )?(\d+)\s*min for {label}", body)
        out[key] = int(m.group(2)) if m else None
        out[key + "_more_than"] = bool(m and m.group(1))
    return out


def parse_hdparm_I(text: str) -> dict:
    """``hdparm -I`` -> identity, sector sizes, the relevant features and the security state."""

    def field(label):
        m = re.search(rf"^\s*{label}:\s*(.+?)\s*$", text, re.M)
        return m.group(1) if m else None

    lba48 = re.search(r"LBA48\s+user addressable sectors:\s*([0-9,]+)", text)
    lba28 = re.search(r"LBA\s+user addressable sectors:\s*([0-9,]+)", text)
    both = re.search(r"Logical/Physical\s+Sector size:\s*(\d+)\s*bytes", text)  # older hdparm
    lss = both or re.search(r"Logical\s+Sector size:\s*(\d+)\s*bytes", text)
    pss = both or re.search(r"Physical\s+Sector size:\s*(\d+)\s*bytes", text)
    features = {}
    sec = re.split(r"^Commands/features:", text, maxsplit=1, flags=re.M)
    if len(sec) == 2:
        body = re.split(r"^\S", sec[1], maxsplit=1, flags=re.M)[0]
        for line in body.splitlines():
            fm = re.match(r"^\s*(\*)?\s+(\S.*?)\s*$", line)
            if fm and not line.strip().startswith("Enabled"):
                features[fm.group(2)] = bool(fm.group(1))

    def has(pattern):
        keys = [k for k in features if re.search(pattern, k, re.I)]
        return (True, any(features[k] for k in keys)) if keys else (False, False)

    security = parse_hdparm_security(text)
    hpa = has(r"Host Protected Area")
    dco = has(r"Device Configuration Overlay")
    amac = has(r"Accessible Max Address")
    sanitize = has(r"SANITIZE feature")
    trim = bool(re.search(r"TRIM supported", text))
    return {
        "model": field("Model Number"),
        "serial": field("Serial Number"),
        "firmware": field("Firmware Revision"),
        "transport": field("Transport"),
        "lba48_sectors": to_int(lba48.group(1)) if lba48 else None,
        "lba28_sectors": to_int(lba28.group(1)) if lba28 else None,
        "logical_sector_size": int(lss.group(1)) if lss else None,
        "physical_sector_size": int(pss.group(1)) if pss else None,
        "hpa": {"supported": hpa[0], "enabled": hpa[1]},
        "dco": {"supported": dco[0], "enabled": dco[1]},
        "amac": {"supported": amac[0], "enabled": amac[1]},
        "sanitize": {"supported": sanitize[0], "block_erase": bool(re.search(r"BLOCK_ERASE_EXT", text))},
        "trim": trim,
        "security": security,
        "features": features,
    }


# ---------------------------------------------------------------------------- nvme-cli


def parse_nvme_id_ctrl(text) -> dict:
    d = _object(text, "nvme id-ctrl")
    oacs = to_int(d.get("oacs"))
    return {
        "model": (str(d.get("mn") or "").strip() or None),
        "serial": (str(d.get("sn") or "").strip() or None),
        "firmware": (str(d.get("fr") or "").strip() or None),
        "tnvmcap": to_int(d.get("tnvmcap")),
        "unvmcap": to_int(d.get("unvmcap")),
        "oacs": oacs,
        "ns_management": bool(oacs is not None and oacs & 0x8),
        "format_nvm": bool(oacs is not None and oacs & 0x2),
        "nn": to_int(d.get("nn")),
        "cntlid": to_int(d.get("cntlid")),
        "sanicap": to_int(d.get("sanicap")),
    }


def parse_nvme_id_ns(text) -> dict:
    d = _object(text, "nvme id-ns")
    flbas = to_int(d.get("flbas")) or 0
    # FLBAS bits 3:0 plus bits 6:5 as the high bits (NVMe 2.0, more than 16 formats)
    index = (flbas & 0xF) | ((flbas >> 5) & 0x3) << 4
    lbafs = []
    for f in d.get("lbafs") or d.get("lbaf") or []:
        ds = to_int(f.get("ds"))
        lbafs.append(
            {"ms": to_int(f.get("ms")) or 0, "ds": ds, "rp": to_int(f.get("rp")) or 0, "size": 2**ds if ds else None}
        )
    cur = lbafs[index] if index < len(lbafs) else None
    return {
        "nsze": to_int(d.get("nsze")),
        "ncap": to_int(d.get("ncap")),
        "nuse": to_int(d.get("nuse")),
        "nvmcap": to_int(d.get("nvmcap")),
        "flbas": flbas,
        "format_index": index,
        "lba_size": cur["size"] if cur else None,
        "metadata_size": cur["ms"] if cur else None,
        "lbafs": lbafs,
        "npwg": to_int(d.get("npwg")),
        "nows": to_int(d.get("nows")),
    }


# ---------------------------------------------------------------------------- smartctl


def parse_smartctl(text) -> dict:
    d = _object(text, "smartctl")
    dev = d.get("device") or {}
    cap = d.get("user_capacity") or {}
    return {
        "model": d.get("model_name") or d.get("scsi_model_name"),
        "serial": d.get("serial_number"),
        "protocol": dev.get("protocol"),  # "ATA", "NVMe", "SCSI"
        "type": dev.get("type"),  # "sat", "nvme", "megaraid,0", ...
        "user_capacity_bytes": to_int(cap.get("bytes")),
        "user_capacity_blocks": to_int(cap.get("blocks")),
        "logical_block_size": to_int(d.get("logical_block_size")),
        "physical_block_size": to_int(d.get("physical_block_size")),
        "rotation_rate": to_int(d.get("rotation_rate")),
        "trim": (d.get("trim") or {}).get("supported"),
    }


# ---------------------------------------------------------------------------- collecting

#: fixture/record file names -> parser
RECORD_FILES = {
    "lsblk": ("lsblk.json", parse_lsblk),
    "hdparm_N": ("hdparm-N.txt", parse_hdparm_N),
    "hdparm_I": ("hdparm-I.txt", parse_hdparm_I),
    "nvme_id_ctrl": ("nvme-id-ctrl.json", parse_nvme_id_ctrl),
    "nvme_id_ns": ("nvme-id-ns.json", parse_nvme_id_ns),
    "smartctl": ("smartctl.json", parse_smartctl),
}


def _run(cmd: list[str], timeout: float = 20) -> tuple[str | None, str | None]:
    exe = shutil.which(cmd[0]) or next(
        (p for p in (f"/usr/sbin/{cmd[0]}", f"/sbin/{cmd[0]}") if os.access(p, os.X_OK)), None
    )
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
    """Combine the parsed outputs into one drive description."""
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
        devs = p["lsblk"]
        top = next(
            (d for d in devs if d["parent"] is None and (path is None or d["path"] == path)), devs[0] if devs else None
        )
        if top:
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
    if "hdparm_I" in p:
        a = p["hdparm_I"]
        drive["interface"] = drive["interface"] or "sata"
        drive["model"] = drive["model"] or a["model"]
        drive["sector_size"] = drive["sector_size"] or a["logical_sector_size"]
        drive["ata"] = dict(a)
        drive["ata"].pop("features", None)
    if "hdparm_N" in p:
        n = p["hdparm_N"]
        drive["interface"] = drive["interface"] or "sata"
        drive["native_sectors"] = n["native_sectors"]
        drive["current_sectors"] = n["current_sectors"]
        drive["ata"] = {**(drive["ata"] or {}), "max": n}
    if "nvme_id_ns" in p or "nvme_id_ctrl" in p:
        drive["interface"] = "nvme"
        ns = p.get("nvme_id_ns") or {}
        ctrl = p.get("nvme_id_ctrl") or {}
        drive["nvme"] = {"ctrl": ctrl, "ns": ns}
        drive["model"] = drive["model"] or ctrl.get("model")
        if ns.get("lba_size"):
            drive["sector_size"] = ns["lba_size"]
            drive["current_sectors"] = ns["nsze"]
        if ctrl.get("tnvmcap") and drive["sector_size"]:
            drive["native_sectors"] = ctrl["tnvmcap"] // drive["sector_size"]
    if "smartctl" in p:
        s = p["smartctl"]
        proto = (s.get("protocol") or "").upper()
        drive["interface"] = drive["interface"] or {"ATA": "sata", "NVME": "nvme", "SCSI": "sas"}.get(proto)
        drive["model"] = drive["model"] or s.get("model")
        drive["sector_size"] = drive["sector_size"] or s.get("logical_block_size")
        if drive["current_sectors"] is None and s.get("user_capacity_blocks"):
            drive["current_sectors"] = s["user_capacity_blocks"]
        if s.get("type") and re.match(r"(megaraid|cciss|aacraid|areca|3ware|hpt)", str(s["type"])):
            drive["behind_raid"] = s["type"]
    if "sysfs" in p:
        sf = p["sysfs"]
        drive["sector_size"] = drive["sector_size"] or sf.get("logical_block_size")
        if drive["current_sectors"] is None and sf.get("size_512") and drive["sector_size"]:
            drive["current_sectors"] = sf["size_512"] * 512 // drive["sector_size"]
    if drive["native_sectors"] is None:
        drive["native_sectors"] = drive["current_sectors"]
    return drive
