"""smartctl ``-j`` documents: the exit-status bitmask, what makes a document smartctl's, and the
drive identity the planner uses.  The document itself is read by :func:`read_smartctl`, the one
tolerant reader (:func:`opsim.devices.jsondoc.loads_document`) that ``opsim plan`` and
``opsim smart`` share.

smartctl's exit status is a bitmask (``smartctl.exit_status`` in the JSON).  Bits 0-1 mean the
command line or the device open failed (no usable data); bit 2 means some SMART or other ATA
command failed (data may be partial); bits 3-7 only report the drive's health and logs, and the
JSON is complete.  :func:`smartctl_status` decodes it.
"""

from __future__ import annotations

from ..errors import InputError
from ..toolio import to_int
from .jsondoc import loads_lenient

SMARTCTL_BITS = {  # smartctl(8), "RETURN VALUES"
    0: "command line did not parse",
    1: "device open failed, the device did not return an IDENTIFY, or it is in a low-power mode",
    2: "some SMART or other command to the disk failed, or a SMART data structure had a checksum error "
    "(the data may be partial)",
    3: "SMART status check returned 'DISK FAILING'",
    4: "some prefail attributes are at or below their threshold",
    5: "SMART status is 'DISK OK', but some (usage or prefail) attributes were at or below their threshold in the past",
    6: "the device error log contains records of errors",
    7: "the device self-test log contains records of errors",
}


def smartctl_status(code) -> dict:
    """Decode smartctl's exit status bitmask (0-255)."""
    if code is None:
        code = 0
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code <= 255:
        raise InputError(
            f"smartctl.exit_status: {str(code)[:40]!r} is not an exit status (0-255)", key="smartctl.exit_status"
        )
    bits = [b for b in range(8) if code & (1 << b)]
    return {
        "exit_status": code,
        "bits": bits,
        "meaning": [SMARTCTL_BITS[b] for b in bits],
        "fatal": bool(code & 0b11),  # no usable data
        "partial": bool(code & 0b100),  # some commands failed
    }


def status_warnings(status: dict | None) -> list[str]:
    """One warning per bit set in smartctl's exit status."""
    if not status or not status.get("exit_status"):
        return []
    return [
        f"smartctl exit status {status['exit_status']}, bit {b}: {m}" for b, m in zip(status["bits"], status["meaning"])
    ]


def looks_smartctl(doc: dict) -> bool:
    """Whether ``doc`` has any of the keys only a smartctl ``-j`` document has."""
    return any(
        k in doc
        for k in (
            "smartctl",
            "json_format_version",
            "ata_smart_attributes",
            "nvme_smart_health_information_log",
            "scsi_error_counter_log",
        )
    )


def read_smartctl(data, source: str = "smartctl") -> dict:
    """The JSON object of a ``smartctl -j`` output (banner lines before it skipped); a dict passes
    through unchanged."""
    return loads_lenient(data, source)


def parse_smartctl(text) -> dict:
    """The drive identity and capacity in a ``smartctl -x -j`` output (for the planner)."""
    d = read_smartctl(text)
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
