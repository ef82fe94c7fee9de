"""nvme-cli ``id-ctrl`` and ``id-ns`` JSON (``-o json``): numbers as numbers, decimal,
comma-grouped or hex strings."""

from __future__ import annotations

from ..toolio import to_int
from .jsondoc import json_object


def parse_nvme_id_ctrl(text) -> dict:
    d = json_object(text, "nvme id-ctrl")
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
    d = json_object(text, "nvme id-ns")
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


def lba_format_index(ns: dict, size: int) -> int:
    """The index of the LBA format of ``size`` bytes without metadata in a parsed ``id-ns``
    (:func:`parse_nvme_id_ns`), else the namespace's current format (0 when unknown)."""
    for i, f in enumerate(ns.get("lbafs") or []):
        if f.get("size") == size and f.get("ms", 0) == 0:
            return i
    return ns.get("format_index", 0) or 0
