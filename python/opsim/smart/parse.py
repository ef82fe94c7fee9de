"""Readers for smartctl ``-j`` documents, nvme-cli JSON logs and opsim smart snapshots.

The documents are decoded by :mod:`opsim.devices.jsondoc` (the one tolerant reader, shared with
``opsim plan``) and smartctl's exit status by :mod:`opsim.devices.smartctl`.  Here:

* nvme-cli prints counters as JSON numbers (1.x), as decimal strings for 128-bit fields
  (2.x), as ``{"hi": .., "lo": ..}`` pairs (OCP plugin) and, in text output, grouped with
  commas and followed by a unit ("1,969,459 (1.01 TB)").  :func:`parse_count` takes them all.

Hostile input: a file is read up to :data:`~opsim.devices.jsondoc.MAX_BYTES` (smartctl ``-x -j``
of a drive is well under 1 MiB; a larger regular file is refused unread); counters beyond 128
bits are an :class:`InputError` that says so; a key of the wrong type is an error naming the
key.  ``tests/smart_fuzz.py`` checks this.
"""

from __future__ import annotations

import functools
import math
import os
import re

from ..devices.jsondoc import MAX_BYTES, loads_document, too_large
from ..devices.smartctl import looks_smartctl, smartctl_status
from ..errors import InputError
from ..toolio import parse_count as _parse_count

SNAPSHOT_FORMAT = "opsim-smart-snapshot"
#: NVMe counters are 128-bit; anything larger is not a drive counter
MAX_COUNT = 2**128 - 1


def parse_count(v, key: str = "counter") -> int:
    """An unsigned counter (see :func:`opsim.toolio.parse_count` for the forms it takes), at most
    128 bits; anything else, NaN and infinities included, is an :class:`InputError` naming ``key``."""
    if isinstance(v, float) and not math.isfinite(v):
        raise InputError(f"{key}: {v!r} is not a counter", key=key)
    if isinstance(v, str) and len(v) > 200:
        raise InputError(f"{key}: a {len(v)}-character string is not a counter", key=key)
    try:
        n = _parse_count(v, key=key)
    except InputError:
        raise
    except (ValueError, OverflowError, TypeError, RecursionError):
        raise InputError(f"{key}: {str(v)[:60]!r} is not a counter", key=key) from None
    if n > MAX_COUNT:
        raise InputError(f"{key}: {str(v)[:60]} is larger than any drive counter (128 bits)", key=key)
    return n


def load_document(path) -> dict:
    """Load a snapshot or a raw tool output and return it as a snapshot dict:
    ``{"format", "device", "smartctl", "smartctl_status", "nvme": {"smart_log", "endurance_log",
    "ocp_c0", "vendor_log"}, "warnings"}``."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_BYTES:  # a regular file: refused unread; a pipe or device: read to the limit
                too_large(path, size)
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror}", key="snapshot") from None
    return as_snapshot(loads_document(data, source=path), source=path)


# ---------------------------------------------------------------------------------- structure


def obj(d, key: str, where: str = "") -> dict:
    """``d[key]`` as a dict ({} when absent or null); any other type is an error naming the key."""
    v = d.get(key) if isinstance(d, dict) else None
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise InputError(f"{where}{key}: expected a JSON object, got {type(v).__name__}", key=key)
    return v


def arr(d, key: str, where: str = "") -> list:
    v = d.get(key) if isinstance(d, dict) else None
    if v is None:
        return []
    if not isinstance(v, list):
        raise InputError(f"{where}{key}: expected a JSON array, got {type(v).__name__}", key=key)
    return v


def clean_text(s: str, limit: int = 200) -> str:
    """``s`` fit to print: control characters and lone surrogates (JSON can escape both) become
    "?", and at most ``limit`` characters are kept."""
    if len(s) > limit:
        s = s[:limit] + "..."
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else "?" for c in s)


def text_field(d, key: str, where: str = "") -> str | None:
    """``d[key]`` as printable text (None when absent or null); another type is an error naming the key."""
    v = d.get(key) if isinstance(d, dict) else None
    if v is None:
        return None
    if not isinstance(v, str):
        raise InputError(f"{where}{key}: expected a string, got {type(v).__name__}", key=key)
    return clean_text(v)


def int_field(d, key: str, where: str = "", lo: int = 0, hi: int = MAX_COUNT) -> int | None:
    v = d.get(key) if isinstance(d, dict) else None
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        rng = f"{lo}..{hi}" if hi < 2**32 else f"{lo}..2^{hi.bit_length()}-1"
        raise InputError(f"{where}{key}: {str(v)[:40]!r} is not an integer in {rng}", key=key)
    return v


def naming_source(snap: dict, e: InputError) -> InputError:
    """``e`` with the snapshot's file in front of its message (unless it is there already)."""
    src = snap.get("source")
    if not src or str(e).startswith(f"{src}:"):
        return e
    return type(e)(f"{src}: {e}", key=e.key)


def as_snapshot(doc: dict, source: str = "input") -> dict:
    """``doc`` as a snapshot dict: an opsim smart snapshot, a smartctl ``-j`` document or an
    nvme-cli log on its own; anything else is an :class:`InputError`."""
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a JSON object", key="snapshot")
    if doc.get("format") == SNAPSHOT_FORMAT:
        return _own_snapshot(doc, source)
    if looks_smartctl(doc):
        return _smartctl_snapshot(doc, source)
    # an nvme-cli log JSON on its own
    if find_key(doc, "data_units_written") is not None:
        return _nvme_log_snapshot(source, "smart_log", doc)
    if find_key(doc, "Physical media units written") is not None:
        return _nvme_log_snapshot(source, "ocp_c0", doc)
    raise InputError(
        f"{source}: not a smartctl -j document, an nvme-cli log or an opsim smart snapshot "
        "(none of the keys they have)",
        key="snapshot",
    )


def _own_snapshot(doc: dict, source: str) -> dict:
    """An opsim smart snapshot, its parts checked for type."""
    sc = doc.get("smartctl")
    if sc is not None and not isinstance(sc, dict):
        raise InputError(f"{source}: smartctl: expected a JSON object, got {type(sc).__name__}", key="smartctl")
    nvme = obj(doc, "nvme", f"{source}: ")
    for k, v in nvme.items():
        if v is not None and not isinstance(v, dict):
            raise InputError(f"{source}: nvme.{k}: expected a JSON object, got {type(v).__name__}", key=k)
    warnings = [clean_text(str(w), 500) for w in arr(doc, "warnings", f"{source}: ")]
    commands = [c for c in arr(doc, "commands", f"{source}: ") if isinstance(c, dict)]
    status = smartctl_status(
        int_field(obj(sc, "smartctl", f"{source}: smartctl."), "exit_status", f"{source}: smartctl.smartctl.", hi=255)
    )
    return {
        **doc,
        "smartctl": sc,
        "nvme": nvme,
        "warnings": warnings,
        "commands": commands,
        "smartctl_status": status,
        "source": source,
    }


_DEVICE_DATA = (
    "ata_smart_attributes",
    "nvme_smart_health_information_log",
    "ata_device_statistics",
    "scsi_error_counter_log",
    "model_name",
    "scsi_model_name",
)


def _smartctl_snapshot(doc: dict, source: str) -> dict:
    """A smartctl ``-j`` document; refused when smartctl failed and left no device data."""
    status = smartctl_status(
        int_field(obj(doc, "smartctl", f"{source}: "), "exit_status", f"{source}: smartctl.", hi=255)
    )
    if status["fatal"] and not any(k in doc for k in _DEVICE_DATA):
        raise InputError(
            f"{source}: smartctl failed (exit status {status['exit_status']}: "
            f"{'; '.join(status['meaning'])}) and left no device data",
            key="snapshot",
        )
    device = text_field(obj(doc, "device", f"{source}: "), "name", f"{source}: device.")
    return {
        "format": "smartctl-json",
        "source": source,
        "device": device,
        "smartctl": doc,
        "smartctl_status": status,
        "nvme": {},
        "warnings": [],
    }


def _nvme_log_snapshot(source: str, log: str, doc: dict) -> dict:
    return {
        "format": "nvme-cli-json",
        "source": source,
        "device": None,
        "smartctl": None,
        "nvme": {log: doc},
        "warnings": [],
    }


_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@functools.lru_cache(maxsize=4096)
def _norm(k: str) -> str:
    return _NON_ALNUM.sub("_", k.lower()).strip("_")


def norm_key(k) -> str:
    return _norm(k if isinstance(k, str) else str(k))


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


def ata_attributes(snap: dict) -> dict:
    """{id: raw value} of the ATA SMART attributes (entries whose raw value is unreadable are left out)."""
    out = {}
    for a in arr(obj(snap.get("smartctl"), "ata_smart_attributes"), "table", "ata_smart_attributes."):
        if not isinstance(a, dict):
            continue
        i = a.get("id")
        if isinstance(i, bool) or not isinstance(i, int) or not 0 < i < 256:
            continue
        try:
            out[i] = parse_count(a.get("raw"), key=f"attribute {i}")
        except InputError:
            continue
    return out


def ata_attribute_names(snap: dict) -> dict:
    out = {}
    for a in arr(obj(snap.get("smartctl"), "ata_smart_attributes"), "table", "ata_smart_attributes."):
        if isinstance(a, dict) and isinstance(a.get("id"), int) and not isinstance(a.get("id"), bool):
            n = a.get("name")
            out[a["id"]] = clean_text(n, 80) if isinstance(n, str) else None
    return out


def device_statistic(snap: dict, page: int, offset: int | None = None, name: str | None = None):
    """A value from the ATA Device Statistics log (``smartctl -x``), or None."""
    for p in arr(obj(snap.get("smartctl"), "ata_device_statistics"), "pages", "ata_device_statistics."):
        if not isinstance(p, dict) or p.get("number") != page:
            continue
        for e in table if isinstance(table := p.get("table"), list) else []:
            if not isinstance(e, dict):
                continue
            if (offset is not None and e.get("offset") == offset) or (name and e.get("name") == name):
                flags = fl if isinstance(fl := e.get("flags"), dict) else {}
                if flags.get("valid") is False:
                    return None
                if "value" in e:
                    try:
                        return parse_count(e["value"], key=f"device statistic {name}")
                    except InputError:
                        return None
    return None


def nvme_value(snap: dict, log: str, *names):
    """A counter from an NVMe log: nvme-cli's logs first, then smartctl's NVMe health log."""
    nv = n if isinstance(n := snap.get("nvme"), dict) else {}
    v = find_key(nv.get(log), *names)
    if v is None and log == "smart_log":
        v = find_key(obj(snap.get("smartctl"), "nvme_smart_health_information_log"), *names)
    if v is None:
        return None
    return parse_count(v, key=f"{log}.{names[0]}")


def vendor_value(snap: dict, plugins: tuple, name: str):
    """A counter from the vendor log of a snapshot (``nvme.vendor_log``, taken with one of
    ``plugins``): ``{"Device stats": {name: {"normalized", "raw"}}}`` as nvme-cli prints it."""
    nv = n if isinstance(n := snap.get("nvme"), dict) else {}
    v = vl if isinstance(vl := nv.get("vendor_log"), dict) else {}
    if v.get("plugin") not in plugins:
        return None
    entry = find_key(find_key(v.get("data"), "Device stats"), name)
    if isinstance(entry, dict):
        entry = entry.get("raw")
    if entry is None or isinstance(entry, dict):
        return None
    return parse_count(entry, key=f"vendor log {name}")
