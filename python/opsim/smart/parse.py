"""Parsers for smartctl ``-j`` documents, nvme-cli JSON logs and opsim smart snapshots.

Tolerances:

* smartctl's exit status is a bitmask (``smartctl.exit_status`` in the JSON).  Bits 0-1 mean
  the command line or the device open failed (no usable data); bit 2 means some SMART or
  other ATA command failed (data may be partial); bits 3-7 only report the drive's health
  and logs, and the JSON is complete.  :func:`smartctl_status` decodes it.
* nvme-cli prints counters as JSON numbers (1.x), as decimal strings for 128-bit fields
  (2.x), as ``{"hi": .., "lo": ..}`` pairs (OCP plugin) and, in text output, grouped with
  commas and followed by a unit ("1,969,459 (1.01 TB)").  :func:`parse_count` takes them all.

Hostile input: a file is read up to :data:`MAX_BYTES` (smartctl ``-x -j`` of a drive is well
under 1 MiB; a larger regular file is refused unread); binary data, non-UTF-8 text, a truncated document, ``NaN``, nesting deeper than
the decoder's limit and counters beyond 128 bits are each an :class:`InputError` that says so;
a key of the wrong type is an error naming the key.  :mod:`opsim.smart.fuzz` checks this.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re

from ..errors import InputError
from ..toolio import parse_count as _parse_count

SNAPSHOT_FORMAT = "opsim-smart-snapshot"
MAX_BYTES = 16 * 2**20
#: NVMe counters are 128-bit; anything larger is not a drive counter
MAX_COUNT = 2**128 - 1

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


# ---------------------------------------------------------------------------------- decoding


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _reject_constant(name):
    raise _NonJSON(name)


class _NonJSON(ValueError):
    pass


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_START = re.compile(r"^[ \t]*[\[{]", re.M)


def _too_large(source: str, size: int):
    raise InputError(
        f"{source}: too large ({size:,} bytes or more; smartctl and nvme-cli JSON is well under "
        f"1 MiB, the limit is {MAX_BYTES // 2**20} MiB)",
        key="snapshot",
    )


def loads_document(data: bytes | str, source: str = "input") -> dict:
    """The JSON object in a tool's output (non-JSON lines before it are skipped), with a clear
    error for empty, binary, non-UTF-8, truncated or malformed input."""
    if len(data) > MAX_BYTES:
        _too_large(source, len(data))
    if isinstance(data, (bytes, bytearray)):
        nul = data.find(b"\0")
        if nul >= 0:
            raise InputError(
                f"{source}: binary data (a NUL byte at offset {nul}), not a smartctl or nvme-cli JSON document",
                key="snapshot",
            )
        try:
            text = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise InputError(
                f"{source}: not UTF-8 text (byte {data[e.start]:#04x} at offset {e.start}); "
                "smartctl -j and nvme-cli -o json write UTF-8",
                key="snapshot",
            ) from None
    else:
        text = str(data).lstrip("\ufeff")
        if "\0" in text:
            raise InputError(f"{source}: binary data (a NUL character), not a JSON document", key="snapshot")
    if not text.strip():
        raise InputError(f"{source}: empty file, not a smartctl or nvme-cli JSON document", key="snapshot")
    end = len(text.rstrip())
    first_error = None
    pos = 0
    while True:
        m = _START.search(text, pos)
        if not m:
            break
        start = m.end() - 1
        try:
            obj, _ = _DECODER.raw_decode(text, start)
        except json.JSONDecodeError as e:
            if e.pos >= end:
                raise InputError(
                    f"{source}: truncated: the JSON document that starts at {_line_col(text, start)} "
                    f"ends before it is complete (at {_line_col(text, end)}); was the file cut "
                    "short?",
                    key="snapshot",
                ) from None
            first_error = first_error or f"{e.msg} at {_line_col(text, e.pos)}"
            # what lies before the error was valid JSON of this document: resume after it
            nl = text.find("\n", max(e.pos, start + 1))
            pos = len(text) if nl < 0 else nl + 1
            continue
        except _NonJSON as e:
            raise InputError(
                f"{source}: {e} is not valid JSON (smartctl and nvme-cli never write it)", key="snapshot"
            ) from None
        except RecursionError:
            raise InputError(
                f"{source}: JSON nested too deeply to be a smartctl or nvme-cli document", key="snapshot"
            ) from None
        except ValueError as e:  # e.g. an integer of more than 4300 digits
            raise InputError(f"{source}: unreadable JSON: {str(e)[:120]}", key="snapshot") from None
        if isinstance(obj, dict):
            return obj
        nl = text.find("\n", start + 1)
        pos = len(text) if nl < 0 else nl + 1
    if first_error:
        raise InputError(f"{source}: not valid JSON: {first_error}", key="snapshot")
    raise InputError(
        f"{source}: no JSON object found (not a smartctl -j document, an nvme-cli log or an opsim smart snapshot)",
        key="snapshot",
    )


def loads_lenient(text, source: str = "input") -> dict:
    """The JSON object in a tool's output; a dict passes through unchanged."""
    if isinstance(text, dict):
        return text
    return loads_document(text, source)


def load_document(path) -> dict:
    """Load a snapshot or a raw tool output and return it as a snapshot dict:
    ``{"format", "device", "smartctl", "smartctl_status", "nvme": {"smart_log", "endurance_log",
    "ocp_c0", "vendor_log"}, "warnings"}``."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_BYTES:  # a regular file: refused unread; a pipe or device: read to the limit
                _too_large(path, size)
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


def _looks_smartctl(doc: dict) -> bool:
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


def as_snapshot(doc: dict, source: str = "input") -> dict:
    if not isinstance(doc, dict):
        raise InputError(f"{source}: expected a JSON object", key="snapshot")
    if doc.get("format") == SNAPSHOT_FORMAT:
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
            int_field(
                obj(sc, "smartctl", f"{source}: smartctl."), "exit_status", f"{source}: smartctl.smartctl.", hi=255
            )
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
    if _looks_smartctl(doc):
        status = smartctl_status(
            int_field(obj(doc, "smartctl", f"{source}: "), "exit_status", f"{source}: smartctl.", hi=255)
        )
        has_data = any(
            k in doc
            for k in (
                "ata_smart_attributes",
                "nvme_smart_health_information_log",
                "ata_device_statistics",
                "scsi_error_counter_log",
                "model_name",
                "scsi_model_name",
            )
        )
        if status["fatal"] and not has_data:
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
    # an nvme-cli log JSON on its own
    if find_key(doc, "data_units_written") is not None:
        return {
            "format": "nvme-cli-json",
            "source": source,
            "device": None,
            "smartctl": None,
            "nvme": {"smart_log": doc},
            "warnings": [],
        }
    if find_key(doc, "Physical media units written") is not None:
        return {
            "format": "nvme-cli-json",
            "source": source,
            "device": None,
            "smartctl": None,
            "nvme": {"ocp_c0": doc},
            "warnings": [],
        }
    raise InputError(
        f"{source}: not a smartctl -j document, an nvme-cli log or an opsim smart snapshot "
        "(none of the keys they have)",
        key="snapshot",
    )


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
