"""``hdparm -N`` and ``hdparm -I`` output: max sectors, HPA/AMAC state, identity, features and the
ATA Security state."""

from __future__ import annotations

import re

from ..errors import InputError
from ..toolio import to_int


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
