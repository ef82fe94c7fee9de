"""Which counters give host writes and NAND writes, per drive family or model.

The same ATA attribute ID means different things on different vendors (233 is NAND writes
on SandForce/Phison/SanDisk but a wear indicator on Intel; 241 counts 512-byte LBAs on
Samsung, 32 MiB units on Intel, GiB on Phison), and smartctl's attribute *names* depend on
the version of its drive database.  So rules are keyed on smartctl's ``model_family`` (from
the drive database) or, when that is absent, on the model name; never on attribute names.

Each counter states its unit.  ``unit_bytes=None`` means the unit is not a known number of
bytes (NAND pages of unknown size, or a "GB" that vendors document inconsistently); such a
counter still gives a WAF when numerator and denominator share the same unit.

When a drive is not in the table, or keeps no NAND-writes total, the result says which
counter is missing and why, instead of guessing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, TypedDict

from ..errors import InputError
from .identify import identify
from .parse import (
    ata_attribute_names,
    ata_attributes,
    device_statistic,
    naming_source,
    nvme_value,
    obj,
    parse_count,
    vendor_value,
)

MiB, GiB = 2**20, 2**30


@dataclass(frozen=True)
class Counter:
    kind: str  # "ata" | "devstat" | "nvme" | "ocp" | "endurance"
    ids: tuple  # ATA attribute IDs (summed) | (page, offset) | log field names
    unit: str  # what one count is
    unit_bytes: int | None

    def describe(self, names: dict | None = None) -> str:
        if self.kind == "ata":
            parts = []
            for i in self.ids:
                n = (names or {}).get(i)
                parts.append(f"{i}" + (f" {n}" if n else ""))
            return "ATA attribute " + " + ".join(parts)
        if self.kind == "devstat":
            return f"ATA Device Statistics page {self.ids[0]} offset {self.ids[1]:#x} ({self.ids[2]})"
        if self.kind == "nvme":
            return f"NVMe SMART log {self.ids[0]}"
        if self.kind == "ocp":
            return f'OCP C0 log "{self.ids[0]}"'
        if self.kind == "endurance":
            return f"NVMe Endurance Group log {self.ids[0]}"
        if self.kind == "vendor":
            return f"nvme {self.ids[0][0]} log (CAh) {self.ids[1]}"
        if self.kind == "scsi":
            return "SCSI write error counter log, gigabytes processed"
        return str(self.ids)

    def read(self, snap: dict, attrs: dict):
        """The counter's value in ``snap``, or None when the drive does not report it."""
        if self.kind == "ata":
            if not all(i in attrs for i in self.ids):
                return None
            return sum(attrs[i] for i in self.ids)
        if self.kind == "devstat":
            return device_statistic(snap, self.ids[0], offset=self.ids[1], name=self.ids[2])
        if self.kind == "nvme":
            return nvme_value(snap, "smart_log", *self.ids)
        if self.kind == "ocp":
            return nvme_value(snap, "ocp_c0", *self.ids)
        if self.kind == "endurance":
            return nvme_value(snap, "endurance_log", *self.ids)
        if self.kind == "vendor":
            return vendor_value(snap, plugins=self.ids[0], name=self.ids[1])
        if self.kind == "scsi":
            return scsi_megabytes_written(snap)
        raise ValueError(self.kind)


def ata(*ids, unit: str, unit_bytes: int | None) -> Counter:
    return Counter("ata", tuple(ids), unit, unit_bytes)


class _Unit(TypedDict):
    """``ata(..., **unit)`` keyword arguments shared by many counters."""

    unit: str
    unit_bytes: int | None


SECTORS: _Unit = dict(unit="512-byte logical sector", unit_bytes=512)
MIB32: _Unit = dict(unit="32 MiB", unit_bytes=32 * MiB)
GIB1: _Unit = dict(unit="1 GiB", unit_bytes=GiB)
DEVSTAT_LSW = Counter("devstat", (1, 0x18, "Logical Sectors Written"), "logical sector", None)  # bytes set per drive
NVME_DUW = Counter("nvme", ("data_units_written",), "data unit of 1000 x 512 bytes = 512,000 bytes", 512_000)
OCP_PMUW = Counter("ocp", ("Physical media units written", "physical_media_units_written"), "byte", 1)
END_DUW = Counter("endurance", ("data_units_written",), "1,000,000,000 bytes (Endurance Group log)", 10**9)
END_MUW = Counter("endurance", ("media_units_written",), "1,000,000,000 bytes (Endurance Group log)", 10**9)
# Intel/Solidigm additional SMART log (CAh): F5h host bytes written and F4h NAND bytes written,
# both counted in 32 MiB units (nvme-cli prints the raw count, labelled "sectors")
_INTEL_PLUGINS = ("intel smart-log-add", "solidigm smart-log-add")
VENDOR_INTEL_HOST = Counter("vendor", (_INTEL_PLUGINS, "host_bytes_written"), "32 MiB", 32 * MiB)
VENDOR_INTEL_NAND = Counter("vendor", (_INTEL_PLUGINS, "nand_bytes_written"), "32 MiB", 32 * MiB)


SCSI_WRITTEN = Counter(
    "scsi",
    ("write", "gigabytes_processed"),
    "1,000,000 bytes (smartctl prints gigabytes processed with 3 decimals)",
    10**6,
)


def scsi_megabytes_written(snap: dict):
    """SCSI write error counter log: smartctl prints "gigabytes_processed" as a decimal string
    (10^9 bytes, 3 decimals); returned as a whole number of 10^6 bytes."""
    log = obj(snap.get("smartctl"), "scsi_error_counter_log")
    write = obj(log, "write", "scsi_error_counter_log.")
    v = write.get("gigabytes_processed")
    if v is None:
        return None
    key = "scsi_error_counter_log.write.gigabytes_processed"
    if isinstance(v, str) and len(v) <= 60:
        try:
            d = Decimal(v.strip().replace(",", ""))
            if d.is_finite() and 0 <= d < Decimal(2) ** 100 and d == d.quantize(Decimal("0.001")):
                return parse_count(int(d * 1000), key=key)
        except InvalidOperation:
            pass
    return parse_count(v, key=key) * 1000  # a whole number of gigabytes, or an error naming the key


@dataclass(frozen=True)
class Pair:
    """One way to get host writes, NAND writes and the WAF from a drive."""

    host: Counter | None
    nand: Counter | None
    # WAF = sum(num) / sum(den); default nand / host
    waf_num: Counter | None = None
    waf_den: Counter | None = None
    formula: str = ""


@functools.cache
def _rx(pattern: str) -> re.Pattern:
    return re.compile(pattern, re.I)


@dataclass(frozen=True)
class Rule:
    name: str
    family: str | None  # regex on smartctl model_family
    model: str | None  # regex on model name
    pairs: tuple = ()  # alternatives, tried in order
    host_only: tuple = ()  # host-write counters when no pair is complete
    no_nand_reason: str | None = None
    note: str = ""
    protocol: str | None = None  # "ATA" | "NVMe" | "SCSI" | None (any)
    media: str | None = None  # "hdd": matches every hard disk, whatever its name
    reported_waf_name: str | None = None  # a name pattern for a drive-reported WAF (cross-check only)
    extra: dict = field(default_factory=dict)

    def matches(self, ident: dict) -> bool:
        if self.media:
            return ident.get("media") == self.media
        if self.protocol and (ident.get("protocol") or "").upper() != self.protocol.upper():
            return False
        fam, mod = ident.get("model_family") or "", ident.get("model_name") or ""
        if self.family and fam and _rx(self.family).search(fam):
            return True
        if self.model and mod and _rx(self.model).search(mod):
            return True
        return self.family is None and self.model is None


HDD_RULE_NAME = "hard disk"

RULES: tuple[Rule, ...] = (
    Rule(
        HDD_RULE_NAME,
        family=None,
        model=None,
        media="hdd",
        pairs=(),
        host_only=(DEVSTAT_LSW, SCSI_WRITTEN),
        no_nand_reason="this is a hard disk ({why}): write amplification (WAF) comes from flash translation "
        "and does not apply to a hard disk, which writes its sectors in place",
        note="Hard disks write sectors in place; host writes are shown where the drive reports them "
        "(ATA Device Statistics, SCSI write error counter log).",
    ),
    Rule(
        "Micron/Crucial (Micron controller)",
        family=r"^(Micron|Crucial)(?!.*Silicon Motion)",
        model=r"^(Micron_|MTFD|Crucial_CT|CT\d+(MX|M5))",
        protocol="ATA",
        pairs=(
            Pair(
                ata(246, **SECTORS),
                ata(247, 248, unit="NAND page (size not reported)", unit_bytes=None),
                waf_num=ata(247, 248, unit="NAND page", unit_bytes=None),
                waf_den=ata(247, unit="NAND page", unit_bytes=None),
                formula="(247 Host_Program_Page_Count + 248 Bckgnd_Program_Page_Cnt) / 247",
            ),
        ),
        host_only=(ata(246, **SECTORS), ata(241, **SECTORS)),
        no_nand_reason="this Micron/Crucial model does not report attributes 247 and 248",
        note="Micron TN-FD-23 'Calculating the Write Amplification Factor': WAF = (host program pages + "
        "background program pages) / host program pages; host bytes from 246 (512-byte sectors). "
        "NAND bytes are not available because the page size is not reported.",
    ),
    Rule(
        "Intel SandForce-based client (320/330/335/520/530)",
        family=r"^Intel (320|330|335|520|530)",
        model=r"^INTEL SSDSC2(CT|BW|BF|KW|BH)",
        protocol="ATA",
        pairs=(
            Pair(
                ata(241, **MIB32), ata(249, **GIB1), formula="249 NAND_Writes_1GiB / 241 Host_Writes_32MiB (in bytes)"
            ),
        ),
        host_only=(ata(241, **MIB32), ata(225, **MIB32)),
        no_nand_reason="this Intel model has no NAND-writes attribute (249); the Intel 320 reports only 225 host writes",
        note="Intel: 241/225 host writes in 32 MiB units, 249 NAND writes in 1 GiB units.",
    ),
    Rule(
        "Intel/Solidigm data center and client SATA",
        family=r"^(Dell Certified |HP |Lenovo )?(Intel|Solidigm)\b",
        model=r"^((INTEL|SOLIDIGM) |SSDS[CA])",
        protocol="ATA",
        pairs=(
            Pair(ata(241, **MIB32), ata(243, **MIB32), formula="243 NAND_Writes_32MiB / 241 Host_Writes_32MiB"),
            Pair(ata(225, **MIB32), ata(243, **MIB32), formula="243 NAND_Writes_32MiB / 225 Host_Writes_32MiB"),
            Pair(
                ata(241, **MIB32), ata(249, **GIB1), formula="249 NAND_Writes_1GiB / 241 Host_Writes_32MiB (in bytes)"
            ),
        ),
        host_only=(ata(241, **MIB32), ata(225, **MIB32)),
        no_nand_reason="this Intel/Solidigm model reports no NAND-writes attribute (243 or 249)",
        note="Intel/Solidigm: 241 (or 225) host writes and 243 NAND writes, both in 32 MiB units "
        "(S3510/S3610/S4500/S4510/S4600/S4610/D3-S4520); 249 NAND writes in 1 GiB on some models.",
    ),
    Rule(
        "Samsung PM871/CM871 (OEM client SATA)",
        family=None,
        model=r"^SAMSUNG MZ[7NY]LN|^SAMSUNG MZNTY|^SAMSUNG MZ7TY",
        protocol="ATA",
        pairs=(
            Pair(
                ata(241, **SECTORS),
                ata(249, **GIB1),
                formula="249 NAND_Writes_1GiB / 241 Total_LBAs_Written (in bytes)",
            ),
        ),
        host_only=(ata(241, **SECTORS),),
        no_nand_reason="this Samsung model does not report attribute 249",
        note="Samsung CM871a/PM871: 241 LBAs written (512 bytes), 249 NAND writes in 1 GiB (smartctl drive database).",
    ),
    Rule(
        "Samsung data center SATA (SM843T/PM853T/PM863/SM863/PM883/SM883/PM893/PM897)",
        family=None,
        model=r"^SAMSUNG MZ7(WD|GE|LM|KM|LH|KH|L3|K3)",
        protocol="ATA",
        pairs=(
            Pair(
                ata(241, **SECTORS),
                ata(251, unit="512-byte sector (assumed, same as 241)", unit_bytes=512),
                formula="251 NAND_Writes / 241 Total_LBAs_Written",
            ),
        ),
        host_only=(ata(241, **SECTORS),),
        no_nand_reason="this Samsung data-center model does not report attribute 251",
        note="Samsung PM863/PM893 report 251 NAND_Writes (smartctl drive database). Samsung does not publish "
        "its unit; opsim assumes 512-byte sectors like 241 -- treat the WAF as indicative.",
        extra={"assumption": "251 counted in 512-byte sectors"},
    ),
    Rule(
        "Samsung client SATA (840/850/860/870 EVO/PRO/QVO)",
        family=r"^Samsung",
        model=r"^Samsung SSD 8[3-8]0",
        protocol="ATA",
        pairs=(),
        host_only=(ata(241, **SECTORS), DEVSTAT_LSW),
        no_nand_reason="Samsung client SATA drives expose no NAND-writes counter (177 Wear_Leveling_Count is an "
        "average P/E-cycle count, not a write total), so neither lifetime nor interval WAF can be "
        "read from SMART",
        note="Samsung: 241 Total_LBAs_Written in 512-byte sectors; NAND writes only on some OEM/data-center "
        "models (249 on PM871/CM871, 251 on PM863/PM893).",
    ),
    Rule(
        "Phison-based (Kingston, Corsair, Patriot, PNY...)",
        family=r"Phison",
        model=r"^KINGSTON SA400|^KINGSTON SUV|^SA400S37",
        protocol="ATA",
        pairs=(Pair(ata(241, **GIB1), ata(233, **GIB1), formula="233 Flash_Writes_GiB / 241 Lifetime_Writes_GiB"),),
        host_only=(ata(241, **GIB1),),
        no_nand_reason="this Phison-based model does not report attribute 233",
        note="Phison: 241 host writes and 233 flash (NAND) writes, both in GiB.",
    ),
    Rule(
        "SandForce-based (OCZ, Kingston HyperX, Corsair Force...)",
        family=r"SandForce",
        model=None,
        protocol="ATA",
        pairs=(Pair(ata(241, **GIB1), ata(233, **GIB1), formula="233 SandForce_Internal / 241 Lifetime_Writes_GiB"),),
        host_only=(ata(241, **GIB1),),
        no_nand_reason="this SandForce-based model does not report attribute 233",
        note="SandForce: 241 host writes in GiB, 233 (SandForce_Internal) NAND writes in GiB.",
    ),
    Rule(
        "Seagate SSD (600/1200/Nytro/IronWolf 110/BarraCuda SSD)",
        family=r"^Seagate.*(SSD|Nytro|IronWolf 110|BarraCuda 1[12]0)",
        model=r"^(Seagate )?(ST\d+(FN|FP|HM)\d|[ZX]A\d+[A-Z]{2}\d)",
        protocol="ATA",
        pairs=(
            Pair(
                ata(241, unit="GB (as named by the drive)", unit_bytes=None),
                ata(233, unit="GB (as named by the drive)", unit_bytes=None),
                formula="233 Lifetime_Wts_To_Flsh_GB / 241 Lifetime_Wts_Frm_Hst_GB",
            ),
        ),
        host_only=(),
        no_nand_reason="this Seagate SSD does not report attributes 233 and 241",
        note="Seagate SSDs: 241 writes from host and 233 writes to flash in the same GB-sized unit "
        "(GB vs GiB not documented, so no byte figures; the ratio is exact).",
    ),
    Rule(
        "WD Blue/Green/Red SSD (SanDisk/WD controller)",
        family=r"^(WD|Western Digital) .*(Blue|Green|Red).*SSD",
        model=r"^WDC? ?WDS\d",
        protocol="ATA",
        pairs=(
            Pair(
                ata(241, **GIB1),
                ata(233, 234, **GIB1),
                formula="(233 NAND_GB_Written_TLC + 234 NAND_GB_Written_SLC) / 241 Host_Writes_GiB",
            ),
            Pair(ata(241, **GIB1), ata(233, **GIB1), formula="233 NAND writes / 241 Host_Writes_GiB"),
        ),
        host_only=(ata(241, **GIB1),),
        no_nand_reason="this WD model does not report attribute 233",
        note="WD Blue/Green 3D: 241 host writes GiB; 233 TLC and 234 SLC NAND writes in GiB (SLC-cache writes "
        "and their later folding to TLC both program NAND).",
    ),
    Rule(
        "SanDisk",
        family=r"^SanDisk",
        model=r"^SanDisk SD|^SanDisk SSD",
        protocol="ATA",
        pairs=(Pair(ata(241, **GIB1), ata(233, **GIB1), formula="233 Total_NAND_Writes_GiB / 241 Total_Writes_GiB"),),
        host_only=(ata(241, **GIB1),),
        no_nand_reason="this SanDisk model does not report attribute 233",
        note="SanDisk: 241 host writes and 233 NAND writes in GiB. Some SanDisk firmwares also report a WAF "
        "of their own; opsim shows it beside the computed value as a cross-check.",
        reported_waf_name=r"write.?amp|\bwaf\b",
    ),
    Rule(
        "SK hynix SATA",
        family=r"^SK hynix",
        model=r"^SK ?hynix|^HFS\d",
        protocol="ATA",
        pairs=(),
        host_only=(ata(241, **GIB1),),
        no_nand_reason="SK hynix SATA drives report 243 Total_Media_Writes, but its unit is not documented, so "
        "opsim does not divide it by 241 (GiB); the raw value is listed",
        note="SK hynix: 241 Total_Writes_GiB; 243 Total_Media_Writes (unit undocumented).",
        extra={"raw_only": (243,)},
    ),
    Rule(
        "Silicon Motion-based (ADATA, Transcend, Crucial BX, Team...)",
        family=r"Silicon Motion",
        model=r"^ADATA SU|^TS\d+GMTS|^CT\d+BX",
        protocol="ATA",
        pairs=(),
        host_only=(),
        no_nand_reason="Silicon Motion-based drives report erase counts, not a NAND-writes total; the unit of "
        "241 (32 MiB on ADATA SU6xx/8xx/9xx, GiB on others) depends on the model",
        note="Silicon Motion: no NAND-writes total.",
        extra={"raw_only": (241,)},
    ),
    Rule(
        "NVMe (SMART log data units; NAND writes from OCP C0 or the Endurance Group log)",
        family=None,
        model=None,
        protocol="NVMe",
        pairs=(
            Pair(
                NVME_DUW,
                OCP_PMUW,
                formula="OCP C0 Physical media units written (bytes) / (data_units_written x 512,000 bytes)",
            ),
            Pair(
                END_DUW,
                END_MUW,
                formula="Endurance Group media_units_written / data_units_written (both in 10^9 bytes)",
            ),
            Pair(
                VENDOR_INTEL_HOST,
                VENDOR_INTEL_NAND,
                formula="Intel/Solidigm additional SMART log: nand_bytes_written / host_bytes_written (both in 32 MiB)",
            ),
        ),
        host_only=(NVME_DUW,),
        no_nand_reason="the drive has no OCP C0 log (Physical media units written), no Endurance Group log "
        "media units and no vendor log with NAND writes that opsim reads (Intel/Solidigm "
        "smart-log-add); the NVMe SMART log counts host data units only",
        note="NVMe data units are 1000 x 512 = 512,000 bytes, rounded up. OCP C0 'Physical media units "
        "written' is in bytes. Intel/Solidigm's additional SMART log (nvme intel|solidigm smart-log-add) "
        "counts host and NAND writes in 32 MiB. Consumer drives (e.g. Samsung 970/980 EVO) usually have "
        "no NAND counter.",
    ),
    Rule(
        "SAS/SCSI drive",
        family=None,
        model=None,
        protocol="SCSI",
        pairs=(),
        host_only=(SCSI_WRITTEN,),
        no_nand_reason="SAS/SCSI drives report host writes (the write error counter log) but no NAND-writes "
        "total in the logs smartctl reads, so no WAF",
        note="SCSI write error counter log: gigabytes processed (10^9 bytes, 3 decimals).",
    ),
    Rule(
        "unknown drive (Device Statistics only)",
        family=None,
        model=None,
        protocol=None,
        pairs=(),
        host_only=(DEVSTAT_LSW,),
        no_nand_reason=None,  # filled in per drive
        note="The ATA Device Statistics log (smartctl -x) gives 'Logical Sectors Written'; NAND-write "
        "attributes are vendor-specific, so opsim does not guess them for a drive it does not know.",
    ),
)


def identity(snap: dict) -> dict:
    """The drive in a snapshot (:func:`opsim.smart.identify.identify`), with a family or model
    that one of :data:`RULES` names taken for an SSD."""
    return identify(snap, known_ssd=lambda ident: any((r.family or r.model) and r.matches(ident) for r in RULES))


def find_rule(ident: dict) -> Rule:
    for r in RULES:
        if r.matches(ident):
            return r
    return RULES[-1]


def _bytes(c: Counter, value, block_size: int):
    if value is None:
        return None
    if c is DEVSTAT_LSW:
        return value * int(block_size or 512)
    return None if c.unit_bytes is None else value * c.unit_bytes


def _entry(c: Counter, value, names, block_size):
    unit = c.unit if c is not DEVSTAT_LSW else f"logical sector of {block_size} bytes"
    return {"counter": c.describe(names), "raw": value, "unit": unit, "bytes": _bytes(c, value, block_size)}


def _nvme_reason(snap: dict, drive_has_none: str | None) -> str | None:
    """Why an NVMe drive gives no WAF: the *file* may lack the logs that the *drive* has."""
    logs = (
        "the OCP C0 log (Physical media units written), the Endurance Group log and the vendor's additional SMART log"
    )
    fmt = snap.get("format")
    if fmt == "smartctl-json":
        return (
            f"this file is smartctl's output, which lacks {logs} (smartctl does not read them), so opsim "
            "cannot tell whether the drive has a NAND-writes counter; `opsim smart snapshot DEVICE` reads "
            "them with nvme-cli. The NVMe SMART log here counts host data units only"
        )
    if fmt == "nvme-cli-json":
        return (
            f"this file holds a single nvme-cli log and lacks {logs}; `opsim smart snapshot DEVICE` "
            "reads them all. The NVMe SMART log counts host data units only"
        )
    tried = any(
        isinstance(c.get("argv"), list) and len(c["argv"]) > 2 and c["argv"][1] in ("ocp", "endurance-log")
        for c in snap.get("commands") or []
        if isinstance(c, dict)
    )
    if not tried:
        nocli = any("nvme-cli is not installed" in str(w) for w in snap.get("warnings") or [])
        return (
            f"this snapshot lacks {logs}: "
            + ("nvme-cli was not installed when it was taken" if nocli else "it was not taken with nvme-cli")
            + "; install nvme-cli (Debian package nvme-cli) and take it "
            "again with `opsim smart snapshot DEVICE`. The NVMe SMART log counts host data units only"
        )
    return drive_has_none


def read_counters(snap: dict) -> dict:
    """Host writes, NAND writes and the WAF counters of one snapshot, with the rule used; an
    error names the snapshot's file."""
    try:
        return _read_counters(snap)
    except InputError as e:
        raise naming_source(snap, e) from None


def _read_counters(snap: dict) -> dict:
    ident = identity(snap)
    rule = find_rule(ident)
    attrs = ata_attributes(snap)
    names = ata_attribute_names(snap)
    bs = ident.get("logical_block_size") or 512
    out: dict[str, Any] = {
        "drive": ident,
        "rule": rule.name,
        "rule_note": rule.note,
        "pair": None,
        "host_writes": None,
        "nand_writes": None,
        "waf_num": None,
        "waf_den": None,
        "formula": None,
        "missing": [],
        "reason": None,
        "raw_other": {},
        "assumption": rule.extra.get("assumption"),
    }
    if not _read_pair(out, rule, snap, attrs, names, bs):
        _read_host_only(out, rule, snap, attrs, names, bs)
    for i in rule.extra.get("raw_only", ()):
        if i in attrs:
            out["raw_other"][f"{i} {names.get(i) or ''}".strip()] = attrs[i]
    if rule.reported_waf_name:
        for i, n in names.items():
            if n and re.search(rule.reported_waf_name, n, re.I) and i in attrs:
                out["reported_waf"] = {"counter": f"ATA attribute {i} {n}", "raw": attrs[i]}
    return out


def _read_pair(out: dict, rule, snap: dict, attrs: dict, names: dict, bs: int) -> bool:
    """The first of the rule's counter pairs the snapshot has in full, into ``out``; False if none."""
    for i, p in enumerate(rule.pairs):
        hv, nv = p.host.read(snap, attrs), p.nand.read(snap, attrs)
        num_c, den_c = p.waf_num or p.nand, p.waf_den or p.host
        numv, denv = num_c.read(snap, attrs), den_c.read(snap, attrs)
        if None in (hv, nv, numv, denv):
            continue
        host_c, hv = _finest_host(rule, p.host, hv, snap, attrs)
        out.update(
            pair=i,
            host_writes=_entry(host_c, hv, names, bs),
            nand_writes=_entry(p.nand, nv, names, bs),
            waf_num=_entry(num_c, numv, names, bs),
            waf_den=_entry(den_c, denv, names, bs),
            formula=p.formula,
        )
        return True
    return False


def _finest_host(rule, host: Counter, value, snap: dict, attrs: dict) -> tuple[Counter, Any]:
    """The host-writes counter to report: the pair's, or one of the rule's host counters when that
    one counts in smaller units (an NVMe SMART log's 512,000-byte data units against the Endurance
    Group log's 10^9 bytes or a vendor log's 32 MiB).  The WAF keeps the pair's own counters."""
    for c in rule.host_only:
        v = c.read(snap, attrs)
        if v is not None and c.unit_bytes and host.unit_bytes and c.unit_bytes < host.unit_bytes:
            return c, v
    return host, value


def _read_host_only(out: dict, rule, snap: dict, attrs: dict, names: dict, bs: int) -> None:
    """No full pair: the host writes alone (the rule's, else Device Statistics or NVMe data
    units), what is missing, and why there is no WAF."""
    for c in rule.host_only:
        v = c.read(snap, attrs)
        if v is not None:
            out["host_writes"] = _entry(c, v, names, bs)
            break
    if out["host_writes"] is None:
        # fall back to the Device Statistics log or NVMe data units, whatever the rule
        for c in (DEVSTAT_LSW, NVME_DUW):
            v = c.read(snap, attrs)
            if v is not None:
                out["host_writes"] = _entry(c, v, names, bs)
                break
    missing = []
    for p in rule.pairs:
        for c in dict.fromkeys((p.host, p.nand, p.waf_num or p.nand, p.waf_den or p.host)):
            if c.read(snap, attrs) is None:
                missing.append(c.describe())
    if out["host_writes"] is None:
        missing.append(
            "a host-writes counter (" + ", ".join(c.describe() for c in (rule.host_only or (DEVSTAT_LSW,))) + ")"
        )
    out["missing"] = list(dict.fromkeys(missing))
    out["reason"] = _no_waf_reason(out, rule, snap)


def _no_waf_reason(out: dict, rule, snap: dict) -> str:
    """Why the snapshot gives no WAF (the rule's reason, the NVMe logs missing, or no rule);
    adds the NAND-writes counter to ``out["missing"]`` when none is known."""
    ident = out["drive"]
    reason = rule.no_nand_reason
    if rule.media == "hdd":
        assert reason is not None, "the hard-disk rule always has a reason"
        reason = reason.format(why=ident.get("media_reason"))
        out["missing"] = []
    elif rule.protocol == "NVMe":
        reason = _nvme_reason(snap, reason)
    if reason is None:
        who = ident.get("model_name") or "this drive"
        fam = ident.get("model_family")
        reason = (
            f"no NAND-writes rule for {who}"
            + (f" (family {fam!r})" if fam else " (not in smartctl's drive database)")
            + "; attribute IDs are vendor-specific, so opsim does not guess. "
            "Counters it would need: host writes and NAND (media) writes"
        )
        out["missing"].append("a NAND-writes counter (vendor-specific; none known for this drive)")
    if not rule.pairs and rule.media != "hdd" and "a NAND-writes counter" not in " ".join(out["missing"]):
        out["missing"].append("a NAND-writes counter (this drive family exposes none that opsim can use)")
    if rule.protocol == "NVMe" and ident.get("model_name"):
        reason = f"{ident['model_name']}: {reason}"
    return reason
