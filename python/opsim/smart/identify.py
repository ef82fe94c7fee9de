"""What drive a snapshot is of: model, vendor, serial, protocol and transport, and whether it
is a hard disk (WAF does not apply) or an SSD.

The medium comes from smartctl's ``rotation_rate`` where it printed one (0 = solid state,
otherwise the spindle speed in rpm; ATA and SCSI); NVMe drives are SSDs.  Where smartctl
printed no rotation rate (old smartctl, some USB bridges), the family name from smartctl's
drive database or the model number decides, with the patterns below; a drive neither names
is left unknown (``media: None``), never guessed.
"""

from __future__ import annotations

import re
from typing import Any

from .parse import arr, int_field, obj, text_field

# smartctl drive-database families of hard disks (a family naming SSDs is never one)
_HDD_FAMILY = re.compile(
    r"\bHDDs?\b|Barracuda|Constellation|\bExos\b|Ultrastar|Deskstar|Travelstar|Endurastar|Caviar|IronWolf|"
    r"SkyHawk|Momentus|Spinpoint|Cheetah|Savvio|Raptor|Scorpio|Pipeline|SV35|Desktop HDD|NAS HDD|"
    r"^Western Digital (RE\d?|Re|Red|Purple|Gold|Black|Blue|Green|AV|Se|Ultrastar)\b|^Toshiba .*\b(MG|MD|MK|DT|MQ)\d|"
    r"^Toshiba (X300|N300|P300|S300)|^Hitachi|^HGST|^Fujitsu|^Maxtor|^Quantum|^Samsung SpinPoint|"
    r"^Seagate (Enterprise|Desktop|Laptop|Video|Archive|NAS|Surveillance)",
    re.I,
)
_SSD_WORDS = re.compile(r"\bSSDs?\b|Solid State|\bNVMe\b|Flash", re.I)
# model numbers of hard disks (Seagate ST...: every two-letter product code but the SSD ones
# FN/FP/FM/HM; WD WD<digits> and WUH/WUS; HGST/Hitachi H?S/H?A/H?H; Toshiba MG/MD/MK/DT/MQ/HDW/AL)
_HDD_MODEL = re.compile(
    r"^(SEAGATE +)?ST\d+(?!FN|FP|FM|HM)[A-Z]{2}|^(WDC +)?WD\d|^(WDC +)?WU[HS]\d|"
    r"^((HGST|HITACHI) +)?H[UDTCE][ASTCHEU]\d{3}|^TOSHIBA +(MG|MD|MK|DT|MQ|HDW|AL|MN)\d?|^MB\d+[A-Z]{4}\b|"
    r"^(SAMSUNG +)?H[DEMN]\d{3}[A-Z]{2}|^MAXTOR|^(HP|HITACHI|FUJITSU) .*\bMA[SUWX]\d",
    re.I,
)

# (vendor, pattern on family or model); the first match wins ("Dell Certified Intel..." is Intel)
VENDORS = (
    ("Intel", r"\bIntel\b|^INTEL[ _]|^SSDS[CA]|^SSDPE"),
    ("Solidigm", r"Solidigm"),
    ("Micron", r"\bMicron\b|^MTFD"),
    ("Crucial", r"\bCrucial\b|^CT\d"),
    ("Samsung", r"\bSamsung\b|^MZ[0-9A-Z]{3}"),
    ("Seagate", r"\bSeagate\b|^ST\d|^ZA\d|^XA\d"),
    ("Western Digital", r"Western Digital|^WDC\b|^WDS?\d|^WU[HS]\d|^WD[ A-Z]"),
    ("HGST", r"\bHGST\b"),
    ("Hitachi", r"\bHitachi\b"),
    ("Toshiba", r"\bToshiba\b"),
    ("Kioxia", r"\bKIOXIA\b"),
    ("SK hynix", r"SK ?hynix|^HFS\d"),
    ("SanDisk", r"\bSanDisk\b"),
    ("Kingston", r"\bKingston\b"),
    ("Transcend", r"\bTranscend\b|^TS\d+G"),
    ("ADATA", r"\bADATA\b"),
    ("HP", r"^HP\b"),
)
_VENDOR_RX = tuple((name, re.compile(pat, re.I)) for name, pat in VENDORS)
# PCI vendor IDs of NVMe controllers (smartctl's nvme_pci_vendor.id)
PCI_VENDORS = {
    0x8086: "Intel",
    0x025E: "Solidigm",
    0x144D: "Samsung",
    0x1344: "Micron",
    0xC0A9: "Crucial",
    0x1179: "Toshiba",
    0x1E0F: "Kioxia",
    0x1C5C: "SK hynix",
    0x15B7: "SanDisk",
    0x1B96: "Western Digital",
    0x1BB1: "Seagate",
    0x1CC1: "ADATA",
    0x1987: "Phison",
    0x126F: "Silicon Motion",
}


def _vendor(sc: dict, protocol: str | None, family: str | None, model: str | None) -> str | None:
    if (protocol or "").upper() == "SCSI":
        v = text_field(sc, "scsi_vendor")
        if v and v.strip():
            return v.strip()
    for name, rx in _VENDOR_RX:
        for s in (family, model):
            if s and rx.search(s):
                return name
    pci = int_field(obj(sc, "nvme_pci_vendor"), "id", "nvme_pci_vendor.", hi=0xFFFF)
    return PCI_VENDORS.get(pci) if pci is not None else None


def media(protocol: str | None, rotation_rate: int | None, family: str | None, model: str | None, known_ssd=None):
    """("hdd" | "ssd" | None, why)."""
    if (protocol or "").upper() == "NVME":
        return "ssd", "an NVMe drive"
    if rotation_rate is not None:
        if rotation_rate > 0:
            return "hdd", f"rotation rate {rotation_rate} rpm"
        return "ssd", "rotation rate 0 (solid state)"
    if family and _SSD_WORDS.search(family):
        return "ssd", f"the family {family!r} is an SSD line"
    if family and _HDD_FAMILY.search(family):
        return "hdd", f"the family {family!r} is a hard-disk line"
    if model and _HDD_MODEL.search(model):
        return "hdd", f"the model number {model!r} is a hard disk's"
    if (
        (family or model)
        and known_ssd is not None
        and known_ssd({"protocol": protocol, "model_family": family, "model_name": model})
    ):
        return "ssd", "an SSD family or model opsim has a rule for"
    return None, "smartctl printed no rotation rate and neither the family nor the model tells"


def identify(snap: dict, known_ssd=None) -> dict:
    """Model, vendor, serial, WWN, protocol, transport and medium (SSD or hard disk) of the
    drive in a snapshot.  ``known_ssd(ident)`` says whether a family or model is an SSD that a
    WAF rule names (:func:`opsim.smart.rules.identity` passes the rules); without it, a drive
    that neither its rotation rate nor its names place is "unknown"."""
    sc = s if isinstance(s := snap.get("smartctl"), dict) else {}
    nvme = n if isinstance(n := snap.get("nvme"), dict) else {}
    dev = obj(sc, "device")
    protocol = text_field(dev, "protocol", "device.") or ("NVMe" if nvme.get("smart_log") else None)
    family = text_field(sc, "model_family")
    model = text_field(sc, "model_name") or text_field(sc, "scsi_model_name")
    rr = int_field(sc, "rotation_rate", hi=10**6)
    med, why = media(protocol, rr, family, model, known_ssd)
    transport = text_field(obj(sc, "scsi_transport_protocol"), "name", "scsi_transport_protocol.")
    if transport is None and (protocol or "").upper() == "ATA":
        sata = text_field(obj(sc, "sata_version"), "string", "sata_version.")
        transport = sata or ("SATA" if text_field(dev, "type", "device.") == "sat" else None)
    bs = int_field(sc, "logical_block_size", hi=2**20)
    arr(sc, "messages")  # type check only
    return {
        "model_family": family,
        "model_name": model,
        "vendor": _vendor(sc, protocol, family, model),
        "serial_number": text_field(sc, "serial_number"),
        "wwn": _wwn(sc),
        "firmware_version": text_field(sc, "firmware_version") or text_field(sc, "scsi_revision"),
        "protocol": protocol,
        "transport": transport,
        "rotation_rate": rr,
        "media": med,
        "media_reason": why,
        "user_capacity_bytes": int_field(obj(sc, "user_capacity"), "bytes", "user_capacity."),
        "logical_block_size": bs or 512,
    }


def _wwn(sc: dict) -> str | None:
    w = obj(sc, "wwn")
    parts: list[Any] = [w.get(k) for k in ("naa", "oui", "id")]
    if all(isinstance(p, int) and not isinstance(p, bool) for p in parts):
        return "{:x}-{:x}-{:x}".format(*parts)
    return None
