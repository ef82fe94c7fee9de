"""Parsers for smartctl ``-j`` documents, nvme-cli JSON logs and opsim smart snapshots.

Tolerances:

* smartctl's exit status is a bitmask (``smartctl.exit_status`` in the JSON).  Bits 0-1 mean
  the command line or the device open failed (no usable data); bit 2 means some SMART or
  other ATA command failed (data may be partial); bits 3-7 only report the drive's health
  and logs, and the JSON is complete.  :func:`smartctl_status` decodes it.
* nvme-cli prints counters as JSON numbers (1.x), as decimal strings for 128-bit fields
  (2.x), as ``{"hi": .., "lo": ..}`` pairs (OCP plugin) and, in text output, grouped with
  commas and followed by a unit ("1,969,459 (1.01 TB)").  :func:`parse_count` takes them all.
"""

from __future__ import annotations

import os
import re

from ..errors import InputError
from ..toolio import extract_json, parse_count  # noqa: F401  (parse_count is part of this API)

SNAPSHOT_FORMAT = "opsim-smart-snapshot"

SMARTCTL_BITS = {
    0: "command line did not parse",
    1: "device open failed (or device did not return an IDENTIFY)",
    2: "some SMART or other command to the disk failed, or a checksum error in a SMART data structure",
    3: "SMART status check returned 'DISK FAILING'",
    4: "some prefail attributes are at or below threshold",
    5: "some attributes were at or below threshold in the past",
    6: "the device error log contains records of errors",
    7: "the device self-test log contains records of errors",
}


def smartctl_status(code) -> dict:
    """Decode smartctl's exit status bitmask."""
    code = int(code or 0)
    bits = [b for b in range(8) if code & (1 << b)]
    return {
        "exit_status": code,
        "bits": bits,
        "meaning": [SMARTCTL_BITS[b] for b in bits],
        "fatal": bool(code & 0b11),       # no usable data
        "partial": bool(code & 0b100),    # some commands failed
    }


def loads_lenient(text: str, source: str = "input") -> dict:
    """The JSON object in a tool's output, skipping any non-JSON lines printed before it."""
    return extract_json(text, source, accept=lambda obj: isinstance(obj, dict))


def norm_key(k: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(k).lower()).strip("_")


def find_key(d: dict | None, *names):
    """Value of the first key in ``d`` whose normalised name is one of ``names``."""
    if not isinstance(d, dict):
        return None
    wanted = [norm_key(n) for n in names]
    normed = {norm_key(k): v for k, v in d.items()}
    for w in wanted:
        if w in normed:
            return normed[w]
    return None


def load_document(path) -> dict:
    """Load a snapshot or a raw tool output and return it as a snapshot dict:
    ``{"format", "device", "smartctl", "smartctl_status", "nvme": {"smart_log", "endurance_log",
    "ocp_c0"}, "warnings"}``."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}", key="snapshot") from None
    doc = loads_lenient(text, source=path)
    return as_snapshot(doc, source=path)


def as_snapshot(doc: dict, source: str = "input") -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a JSON object", key="snapshot")
    if doc.get("format") == SNAPSHOT_FORMAT:
        snap = dict(doc)
        snap.setdefault("nvme", {})
        snap.setdefault("warnings", [])
        snap["source"] = source
        return snap
    if "smartctl" in doc or "json_format_version" in doc or "ata_smart_attributes" in doc \
            or "nvme_smart_health_information_log" in doc:
        status = smartctl_status((doc.get("smartctl") or {}).get("exit_status", 0))
        has_data = any(k in doc for k in ("ata_smart_attributes", "nvme_smart_health_information_log",
                                          "ata_device_statistics", "scsi_error_counter_log",
                                          "model_name"))
        if status["fatal"] and not has_data:
            raise InputError(f"{source}: smartctl failed (exit status {status['exit_status']}: "
                             f"{'; '.join(status['meaning'])}) and left no device data", key="snapshot")
        return {"format": "smartctl-json", "source": source, "device": (doc.get("device") or {}).get("name"),
                "smartctl": doc, "smartctl_status": status, "nvme": {}, "warnings": []}
    # an nvme-cli smart-log JSON on its own
    if find_key(doc, "data_units_written") is not None:
        return {"format": "nvme-cli-json", "source": source, "device": None, "smartctl": None,
                "nvme": {"smart_log": doc}, "warnings": []}
    if find_key(doc, "Physical media units written") is not None:
        return {"format": "nvme-cli-json", "source": source, "device": None, "smartctl": None,
                "nvme": {"ocp_c0": doc}, "warnings": []}
    raise InputError(f"{source}: not a smartctl -j document, an nvme-cli log or an opsim smart snapshot",
                     key="snapshot")


def identity(snap: dict) -> dict:
    """Model, family, serial, firmware and protocol of the drive in a snapshot."""
    sc = snap.get("smartctl") or {}
    dev = sc.get("device") or {}
    return {
        "model_family": sc.get("model_family"),
        "model_name": sc.get("model_name") or sc.get("scsi_model_name"),
        "serial_number": sc.get("serial_number"),
        "firmware_version": sc.get("firmware_version"),
        "protocol": dev.get("protocol") or ("NVMe" if (snap.get("nvme") or {}).get("smart_log") else None),
        "user_capacity_bytes": (sc.get("user_capacity") or {}).get("bytes"),
        "logical_block_size": sc.get("logical_block_size") or 512,
    }


def ata_attributes(snap: dict) -> dict:
    """{id: raw value} of the ATA SMART attributes."""
    sc = snap.get("smartctl") or {}
    out = {}
    for a in (sc.get("ata_smart_attributes") or {}).get("table", []) or []:
        try:
            out[int(a["id"])] = parse_count(a.get("raw", {}), key=f"attribute {a.get('id')}")
        except (KeyError, InputError, ValueError, TypeError):
            continue
    return out


def ata_attribute_names(snap: dict) -> dict:
    sc = snap.get("smartctl") or {}
    return {int(a["id"]): a.get("name") for a in (sc.get("ata_smart_attributes") or {}).get("table", []) or []
            if "id" in a}


def device_statistic(snap: dict, page: int, offset: int | None = None, name: str | None = None):
    """A value from the ATA Device Statistics log (``smartctl -x``), or None."""
    sc = snap.get("smartctl") or {}
    for p in (sc.get("ata_device_statistics") or {}).get("pages", []) or []:
        if p.get("number") != page:
            continue
        for e in p.get("table", []) or []:
            if (offset is not None and e.get("offset") == offset) or (name and e.get("name") == name):
                flags = e.get("flags") or {}
                if flags.get("valid") is False:
                    return None
                if "value" in e:
                    try:
                        return parse_count(e["value"], key=f"device statistic {e.get('name')}")
                    except InputError:
                        return None
    return None


def nvme_value(snap: dict, log: str, *names):
    """A counter from an NVMe log: nvme-cli's logs first, then smartctl's NVMe health log."""
    nv = snap.get("nvme") or {}
    v = find_key(nv.get(log), *names)
    if v is None and log == "smart_log":
        sc = snap.get("smartctl") or {}
        v = find_key(sc.get("nvme_smart_health_information_log"), *names)
    if v is None:
        return None
    return parse_count(v, key=f"{log}.{names[0]}")


def vendor_value(snap: dict, plugins: tuple, name: str):
    """A counter from the vendor log of a snapshot (``nvme.vendor_log``, taken with one of
    ``plugins``): ``{"Device stats": {name: {"normalized", "raw"}}}`` as nvme-cli prints it."""
    v = (snap.get("nvme") or {}).get("vendor_log") or {}
    if v.get("plugin") not in plugins:
        return None
    entry = find_key(find_key(v.get("data"), "Device stats"), name)
    if isinstance(entry, dict):
        entry = entry.get("raw")
    if entry is None or isinstance(entry, dict):
        return None
    return parse_count(entry, key=f"vendor log {name}")
