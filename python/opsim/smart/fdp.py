"""NVMe Flexible Data Placement statistics (log page 22h) and the WAF they give.

The FDP Statistics log page (NVMe Base Specification 2.1, figure 286; TP4146) is 64 bytes per
endurance group: three 128-bit little-endian byte counters, then 16 reserved bytes.

====  =====  ============================================  =====================================
off   abbr   name                                          opsim JSON key
====  =====  ============================================  =====================================
0     HBMW   Host Bytes with Metadata Written              ``host_bytes_with_metadata_written``
16    MBMW   Media Bytes with Metadata Written             ``media_bytes_with_metadata_written``
32    MBE    Media Bytes Erased                            ``media_bytes_erased``
48    -      reserved                                      -
====  =====  ============================================  =====================================

WAF is MBMW / HBMW: bytes the media took (host writes plus the controller's own: garbage
collection, media scans) over bytes the host wrote.  The counters are cleared whenever the FDP
feature is changed (enabled, disabled or reconfigured), so one file gives the WAF since FDP was
last enabled, and two files the WAF between them.

Files this module reads (:func:`parse_fdp_stats` tells them apart by content):

* ``nvme fdp stats DEV -e ENDGID -o json``: ``{"hbmw": N, "mbmw": N, "mbe": N}`` (nvme-cli
  prints the 128-bit values as bare JSON numbers; decimal strings are taken too);
* ``nvme fdp stats DEV -e ENDGID`` (normal output): one ``NAME (ABBR): VALUE`` line per counter,
  the value grouped by the locale's thousands separator ("12,288" in en_US, "12288" in C);
* the log page itself, ``nvme fdp stats DEV -e ENDGID -b`` or ``nvme get-log DEV --log-id=0x22
  --log-len=64 --lsi=ENDGID -b``: 64 bytes (zero bytes after them, from a larger
  ``--log-len``, are ignored);
* ``nvme get-log`` without ``-b``: its hex dump (``0000: 00 30 ...``) of the same page;
* a JSON object with ``fdp_stats`` (an opsim result, simulated or from ``opsim smart fdp``).

Every bad input is an :class:`~opsim.errors.InputError` naming the file, and the line, key or
byte offset; a file larger than :data:`MAX_BYTES` is refused unread (``tests/smart_fuzz.py``
checks that nothing else escapes).
"""

from __future__ import annotations

import math
import os
import re
import stat
from typing import Any

from .._output import kv_table, table
from ..devices.jsondoc import MAX_BYTES, loads_document
from ..errors import DeviceError, InputError
from .parse import clean_text

#: log page identifier of FDP Statistics
LOG_ID = 0x22
#: size of the log page
LOG_BYTES = 64
MAX_COUNT = 2**128 - 1

#: (short key in nvme-cli JSON, opsim JSON key, the name nvme-cli prints, byte offset)
FIELDS = (
    ("hbmw", "host_bytes_with_metadata_written", "Host Bytes with Metadata Written", 0),
    ("mbmw", "media_bytes_with_metadata_written", "Media Bytes with Metadata Written", 16),
    ("mbe", "media_bytes_erased", "Media Bytes Erased", 32),
)
KEYS = tuple(f[1] for f in FIELDS)
HBMW, MBMW, MBE = KEYS
_BY_SHORT = {f[0]: f for f in FIELDS}
_BY_NAME = {re.sub(r"[^a-z]", "", f[2].lower()): f for f in FIELDS}

FORMATS = {
    "nvme-cli-json": "nvme fdp stats -o json",
    "nvme-cli-text": "nvme fdp stats (normal output)",
    "log-page": "FDP Statistics log page 22h (binary, 64 bytes)",
    "get-log-hex": "nvme get-log --log-id=0x22 hex dump",
    "opsim-json": "opsim JSON (fdp_stats)",
}
FORMULA = "media_bytes_with_metadata_written / host_bytes_with_metadata_written (MBMW / HBMW)"
#: an interval with fewer host bytes than this gets a note (the drive's write buffer blurs it)
SHORT_INTERVAL_BYTES = 2**30

_CUT_HINT = "was the file cut short?"


def label(key: str) -> str:
    """``host_bytes_with_metadata_written`` -> ``Host Bytes with Metadata Written (HBMW)``."""
    f = next(f for f in FIELDS if f[1] == key)
    return f"{f[2]} ({f[0].upper()})"


# ------------------------------------------------------------------------------------ values

_GROUPED = re.compile(r"[0-9]{1,3}(?:([,.' _\u00a0\u202f])[0-9]{3})(?:\1[0-9]{3})*")
_PLAIN = re.compile(r"[0-9]+")


def _count(v: Any, where: str, key: str) -> int:
    """A byte counter: a JSON integer, a whole float up to 2**53 (exact), or a decimal string
    (thousands separators allowed, as nvme-cli prints them in some locales); 0..2**128-1."""
    if isinstance(v, (list, dict)):  # never repr() a container: it may be large or deep
        raise InputError(f"{where}: a JSON {'list' if isinstance(v, list) else 'object'} is not a byte count", key=key)
    shown = clean_text(repr(v[:80] if isinstance(v, str) else v), 60)
    if isinstance(v, bool) or v is None:
        raise InputError(f"{where}: {shown} is not a byte count", key=key)
    if isinstance(v, float):
        if not math.isfinite(v) or v < 0 or v != int(v):
            raise InputError(f"{where}: {shown} is not a byte count (a whole number of bytes)", key=key)
        if v > 2**53:
            raise InputError(
                f"{where}: {shown} is a floating-point number above 2^53, not an exact byte count "
                "(nvme-cli prints integers: was the file converted?)",
                key=key,
            )
        v = int(v)
    elif isinstance(v, str):
        s = v.strip()
        if len(s) > 60:
            raise InputError(f"{where}: a {len(s)}-character value is not a byte count", key=key)
        if not (_PLAIN.fullmatch(s) or _GROUPED.fullmatch(s)):
            raise InputError(f"{where}: {shown} is not a byte count (digits, optionally grouped by 3)", key=key)
        v = int(re.sub(r"[^0-9]", "", s))
    elif not isinstance(v, int):
        raise InputError(f"{where}: a JSON {type(v).__name__} is not a byte count", key=key)
    if v < 0:
        raise InputError(f"{where}: {shown} is negative; FDP counters are unsigned", key=key)
    if v > MAX_COUNT:
        raise InputError(f"{where}: {shown} is larger than a 128-bit FDP counter can be", key=key)
    return v


def _snapshot(source: str, fmt: str, counts: dict[str, int], warnings: list[str]) -> dict:
    return {
        "source": source,
        "input_format": fmt,
        "fdp_stats": {k: counts[k] for k in KEYS},
        "warnings": warnings,
    }


# ------------------------------------------------------------------------------------ binary


def _field_at(offset: int) -> str:
    for short, _key, name, start in FIELDS:
        if start <= offset < start + 16:
            return f"{name} ({short.upper()}, bytes {start}-{start + 15})"
    return f"the reserved bytes ({3 * 16}-{LOG_BYTES - 1})"


def parse_log_page(data: bytes, source: str = "input", fmt: str = "log-page") -> dict:
    """The 64-byte FDP Statistics log page (16-byte little-endian counters at 0, 16, 32)."""
    n = len(data)
    if n == 0:
        raise InputError(f"{source}: empty file, not FDP statistics", key="log page")
    if n < LOG_BYTES:
        raise InputError(
            f"{source}: truncated FDP statistics log page: {n} bytes of {LOG_BYTES}; it ends at "
            f"offset {n}, inside {_field_at(n)} ({_CUT_HINT})",
            key="log page",
        )
    warnings: list[str] = []
    if n > LOG_BYTES:
        tail = data[LOG_BYTES:]
        stripped = tail.lstrip(b"\0")
        if stripped:
            off = LOG_BYTES + len(tail) - len(stripped)
            raise InputError(
                f"{source}: {n} bytes, but the FDP statistics log page (log identifier 0x22) is "
                f"{LOG_BYTES}; byte {stripped[0]:#04x} at offset {off} is past its end (not this "
                "log page, or more than one thing in the file)",
                key="log page",
            )
        warnings.append(
            f"{n - LOG_BYTES} zero bytes after the {LOG_BYTES}-byte log page ignored (a --log-len larger than 64)"
        )
    counts = {key: int.from_bytes(data[start : start + 16], "little") for _s, key, _n, start in FIELDS}
    reserved = data[48:LOG_BYTES].lstrip(b"\0")
    if reserved:
        off = LOG_BYTES - len(reserved)
        warnings.append(
            f"reserved byte at offset {off} is {reserved[0]:#04x}, not 0: is this the FDP statistics "
            "log page (log identifier 0x22)?"
        )
    return _snapshot(source, fmt, counts, warnings)


_HEX_LINE = re.compile(r"^\s*([0-9a-fA-F]{4,8}):((?:\s+[0-9a-fA-F]{2})+)(?:\s+\".*\")?\s*$")
_GETLOG_HEAD = re.compile(r"^\s*Device:\s*(\S*)\s+log-id:\s*(\d+)", re.I)
_HEX_HEAD = re.compile(r"^\s*0(?:\s+[0-9a-f]){15}\s*$")


def _parse_hexdump(lines: list[str], source: str) -> dict:
    """``nvme get-log`` without ``-b``: a header, a column ruler, ``OFFS: xx xx ... "ascii"``."""
    buf = bytearray()
    seen = False
    for no, line in enumerate(lines, 1):
        if not line.strip() or _HEX_HEAD.match(line):
            continue
        m = _GETLOG_HEAD.match(line)
        if m:
            log_id = int(m.group(2)[:6])
            if log_id != LOG_ID:
                raise InputError(
                    f"{source}:{no}: log-id {log_id} is not the FDP statistics log (log-id {LOG_ID} = 0x22)",
                    key="log-id",
                )
            continue
        m = _HEX_LINE.match(line)
        if not m:
            if seen:  # the dump ended (a cut line ends it too: the length check below names it)
                break
            continue
        seen = True
        offset = int(m.group(1), 16)
        if offset != len(buf):
            raise InputError(
                f"{source}:{no}: hex dump line at offset {offset:#06x}, expected {len(buf):#06x} "
                "(a line missing or out of order)",
                key="hex dump",
            )
        buf += bytes(int(h, 16) for h in m.group(2).split())
        if len(buf) > MAX_BYTES:
            raise InputError(f"{source}: hex dump of more than {MAX_BYTES} bytes", key="hex dump")
    return parse_log_page(bytes(buf), source, fmt="get-log-hex")


# ------------------------------------------------------------------------------------ text

_TEXT_LINE = re.compile(r"^\s*([A-Za-z]+(?: [A-Za-z]+)*)\s*(?:\(\s*([A-Za-z]+)\s*\)\s*)?:(.*)$")
_FIELD_WORDS = re.compile(r"\((?:HBMW|MBMW|MBE)\)|bytes\s+with\s+metadata\s+written|media\s+bytes\s+erased", re.I)
#: longer lines are not nvme-cli's (and are not searched with the line pattern)
MAX_LINE = 1000


def _text_field(name: str, abbr: str | None):
    if abbr and abbr.lower() in _BY_SHORT:
        return _BY_SHORT[abbr.lower()]
    return _BY_NAME.get(re.sub(r"[^a-z]", "", name.lower()))


def _parse_text(lines: list[str], source: str) -> dict:
    """``nvme fdp stats`` normal output: ``Host Bytes with Metadata Written (HBMW): 12,288``."""
    found: dict[str, int] = {}
    where_found: dict[str, int] = {}
    for no, line in enumerate(lines, 1):
        if len(line) > MAX_LINE:
            if _FIELD_WORDS.search(line, 0, 200):
                raise InputError(f"{source}:{no}: a {len(line):,}-character line is not nvme-cli's", key="file")
            continue
        m = _TEXT_LINE.match(line)
        if not m:
            continue
        f = _text_field(m.group(1), m.group(2))
        if f is None:
            continue
        short, key, name, _ = f
        if key in found:
            raise InputError(
                f"{source}:{no}: {name} ({short.upper()}) again (first at line {where_found[key]}): "
                "two outputs in one file? Save one snapshot per file",
                key=key,
            )
        found[key] = _count(m.group(3).strip(), f"{source}:{no}: {name} ({short.upper()})", key)
        where_found[key] = no
    missing = [k for k in KEYS if k not in found]
    if not found:
        raise InputError(
            f"{source}: not FDP statistics: no 'NAME (HBMW|MBMW|MBE): VALUE' line as nvme fdp stats prints",
            key="file",
        )
    if missing:
        raise InputError(
            f"{source}: no {' or '.join(label(k) for k in missing)} line; nvme fdp stats prints all "
            f"three counters ({_CUT_HINT})",
            key=missing[0],
        )
    return _snapshot(source, "nvme-cli-text", found, [])


# ------------------------------------------------------------------------------------ JSON


def _from_json(doc: dict, source: str) -> dict:
    lower = {k.lower(): k for k in doc if isinstance(k, str)}
    if any(f[0] in lower for f in FIELDS):
        counts = {}
        for short, key, name, _ in FIELDS:
            if short not in lower:
                raise InputError(
                    f"{source}: {short}: missing ({name}); nvme fdp stats -o json has hbmw, mbmw and mbe",
                    key=short,
                )
            counts[key] = _count(doc[lower[short]], f"{source}: {lower[short]} ({name})", key)
        return _snapshot(source, "nvme-cli-json", counts, [])
    if "fdp_stats" in doc:
        if doc.get("mode") == "interval":
            raise InputError(
                f"{source}: an interval result of opsim smart fdp (AFTER - BEFORE), not one snapshot's "
                "counters; give the snapshot files themselves",
                key="fdp_stats",
            )
        fs = doc["fdp_stats"]
        if not isinstance(fs, dict):
            raise InputError(f"{source}: fdp_stats: expected a JSON object, got {type(fs).__name__}", key="fdp_stats")
        counts = {}
        for key in KEYS:
            if key not in fs:
                raise InputError(f"{source}: fdp_stats.{key}: missing", key=key)
            counts[key] = _count(fs[key], f"{source}: fdp_stats.{key}", key)
        return _snapshot(source, "opsim-json", counts, [])
    err = doc.get("error")
    if isinstance(err, str):
        raise InputError(
            f"{source}: nvme-cli reported an error, not statistics: {clean_text(err, 120)!r} (FDP disabled "
            "in the endurance group, or the drive lacks FDP?)",
            key="error",
        )
    hint = ""
    if any(k in doc for k in ("smartctl", "json_format_version", "data_units_written")):
        hint = "; this is a SMART document: opsim smart waf reads it"
    raise InputError(
        f"{source}: not FDP statistics: none of the keys hbmw, mbmw, mbe (nvme fdp stats -o json) "
        f"or fdp_stats (an opsim result){hint}",
        key="fdp_stats",
    )


# ------------------------------------------------------------------------------------ detection


#: what nvme-cli prints instead of the statistics when the command fails
_NVME_ERROR = re.compile(
    r"NVMe status|identifier required|Permission denied|No such (?:file|device)|Inappropriate ioctl|Invalid argument",
    re.I,
)


def parse_fdp_stats(data: bytes | str, source: str = "input") -> dict:
    """Parse one saved FDP statistics file (any of the forms in the module docstring).

    Returns ``{"source", "input_format", "fdp_stats": {host_bytes_with_metadata_written,
    media_bytes_with_metadata_written, media_bytes_erased}, "warnings"}`` with exact ints."""
    if len(data) > MAX_BYTES:
        raise InputError(
            f"{source}: too large ({len(data):,} bytes; FDP statistics are 64 bytes binary or a few "
            f"lines of text, the limit is {MAX_BYTES // 2**20} MiB)",
            key="file",
        )
    if isinstance(data, str):
        text = data.lstrip("\ufeff")
        if "\0" in text:
            raise InputError(f"{source}: a NUL character in text; the binary log page is read as bytes", key="file")
    else:
        data = bytes(data)
        if not data:
            raise InputError(f"{source}: empty file, not FDP statistics", key="file")
        nul = data.find(b"\0")
        bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
        try:
            text = data[bom:].decode("utf-8") if nul < 0 else ""
        except UnicodeDecodeError as e:
            nul = bom + e.start
        if nul >= 0:  # binary: the log page, unless it is text with a stray byte
            if len(data) < LOG_BYTES or data[LOG_BYTES:].strip(b"\0"):
                probe = data[:4096].replace(b"\0", b"").decode("utf-8", "replace")
                if _FIELD_WORDS.search(probe) or probe.lstrip().startswith("{"):
                    raise InputError(
                        f"{source}: text (nvme fdp stats output?) with a binary byte {data[nul]:#04x} at "
                        f"offset {nul}; nvme-cli writes plain UTF-8 text",
                        key="file",
                    )
            return parse_log_page(data, source)
    stripped = text.lstrip()
    if not stripped:
        raise InputError(f"{source}: empty file, not FDP statistics", key="file")
    if stripped.startswith("{"):
        return _from_json(loads_document(text, source), source)
    lines = text.splitlines()
    if any(_HEX_LINE.match(line) for line in lines[:8]) or any(_GETLOG_HEAD.match(line) for line in lines[:4]):
        return _parse_hexdump(lines, source)
    if _FIELD_WORDS.search(text):
        return _parse_text(lines, source)
    if any(line.lstrip().startswith("{") for line in lines):  # JSON after a warning line or two
        return _from_json(loads_document(text, source), source)
    status = next((line.strip() for line in lines[:20] if _NVME_ERROR.search(line)), None)
    if status:
        raise InputError(
            f"{source}: nvme-cli reported an error, not statistics: {clean_text(status, 120)!r} (FDP disabled "
            "in the endurance group, or the drive lacks FDP?)",
            key="file",
        )
    raise InputError(
        f"{source}: not FDP statistics: no HBMW/MBMW/MBE lines (nvme fdp stats), no JSON object "
        "(-o json), not the 64-byte log page (-b) and not an nvme get-log hex dump",
        key="file",
    )


def load_fdp_stats(path) -> dict:
    """Read and parse a saved FDP statistics file (read-only; a regular file over
    :data:`MAX_BYTES` is refused unread, a device refused)."""
    path = os.fspath(path)

    def refuse_device(mode: int) -> None:
        if stat.S_ISBLK(mode) or stat.S_ISCHR(mode):
            raise DeviceError(
                f"{path}: a device, not a saved file; save the statistics first, e.g. "
                "nvme fdp stats /dev/nvme0 -e 1 -o json > stats.json",
                key="file",
            )

    try:
        refuse_device(os.stat(path).st_mode)  # a device is not even opened
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            refuse_device(st.st_mode)
            if st.st_size > MAX_BYTES:
                raise InputError(
                    f"{path}: too large ({st.st_size:,} bytes; FDP statistics are 64 bytes binary or a "
                    f"few lines of text, the limit is {MAX_BYTES // 2**20} MiB)",
                    key="file",
                )
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}", key="file") from None
    return parse_fdp_stats(data, source=path)


# ------------------------------------------------------------------------------------ WAF


def _below_one(what: str, hbmw: int, mbmw: int) -> str:
    return (
        f"{what}: media bytes written (MBMW {mbmw:,}) are fewer than host bytes written (HBMW "
        f"{hbmw:,}), a WAF below 1: possible only if the drive compresses or deduplicates, or host "
        "writes were still in its write buffer; check that the file is this drive's FDP statistics"
    )


def lifetime_fdp_waf(snap: dict) -> dict:
    """WAF from one snapshot: MBMW / HBMW since FDP was last enabled in the endurance group."""
    c = snap["fdp_stats"]
    h, m = c[HBMW], c[MBMW]
    res: dict[str, Any] = {
        "mode": "lifetime",
        "source": snap.get("source"),
        "input_format": snap.get("input_format"),
        "fdp_stats": dict(c),
        "waf": None,
        "available": False,
        "reason": None,
        "formula": FORMULA,
        "warnings": list(snap.get("warnings") or []),
    }
    if h == 0:
        res["reason"] = (
            "no host writes counted yet (HBMW is 0): FDP was just enabled (which clears the counters) "
            "or nothing was written to this endurance group"
        )
        if m:
            res["warnings"].append(f"MBMW is {m:,} with HBMW 0: the media was written without host writes")
        return res
    res.update(waf=m / h, available=True)
    if m < h:
        res["warnings"].append(_below_one("since FDP was enabled", h, m))
    return res


def interval_fdp_waf(before: dict, after: dict) -> dict:
    """WAF between two snapshots of one endurance group: the differences of the counters.

    Refused (:class:`InputError`): a counter that went backwards (BEFORE and AFTER swapped, or
    the FDP feature changed in between, which clears the counters) and an interval without host
    writes (no WAF; the same file twice?).  A WAF below 1 is a warning."""
    names = f"BEFORE ({before.get('source')}) and AFTER ({after.get('source')})"
    cb, ca = before["fdp_stats"], after["fdp_stats"]
    delta = {}
    for k in KEYS:
        if ca[k] < cb[k]:
            raise InputError(
                f"{names}: {label(k)} went backwards ({cb[k]:,} -> {ca[k]:,}); were BEFORE and AFTER "
                "swapped, or was the FDP feature changed in between (that clears the counters)?",
                key=k,
            )
        delta[k] = ca[k] - cb[k]
    if delta[HBMW] == 0:
        extra = " (the same counters twice: the same file, or no writes in between)" if not any(delta.values()) else ""
        raise InputError(
            f"{names}: no host writes between them (HBMW is {cb[HBMW]:,} in both){extra}; an interval WAF "
            "needs host writes",
            key=HBMW,
        )
    warnings = [f"BEFORE: {w}" for w in before.get("warnings") or []]
    warnings += [f"AFTER: {w}" for w in after.get("warnings") or []]
    if delta[MBMW] < delta[HBMW]:
        warnings.append(_below_one("over the interval", delta[HBMW], delta[MBMW]))
    res: dict[str, Any] = {
        "mode": "interval",
        "before": _end(before),
        "after": _end(after),
        "fdp_stats": delta,
        "waf": delta[MBMW] / delta[HBMW],
        "available": True,
        "reason": None,
        "formula": "difference of " + FORMULA,
        "warnings": warnings,
    }
    if delta[HBMW] < SHORT_INTERVAL_BYTES:
        res["note"] = (
            f"only {delta[HBMW]:,} host bytes in the interval: the drive's write buffer and open reclaim "
            "units make a short interval's WAF imprecise; write more data"
        )
    return res


def _end(snap: dict) -> dict:
    c = snap["fdp_stats"]
    return {
        "source": snap.get("source"),
        "input_format": snap.get("input_format"),
        "fdp_stats": dict(c),
        "waf": c[MBMW] / c[HBMW] if c[HBMW] else None,
    }


def fdp_waf(snaps: list[dict]) -> dict:
    """One snapshot: :func:`lifetime_fdp_waf`; two (BEFORE, AFTER): :func:`interval_fdp_waf`."""
    if len(snaps) == 1:
        return lifetime_fdp_waf(snaps[0])
    if len(snaps) == 2:
        return interval_fdp_waf(snaps[0], snaps[1])
    raise InputError("smart fdp: give one FILE (since FDP was enabled) or two, BEFORE AFTER (interval)", key="files")


# ------------------------------------------------------------------------------------ report


def human_bytes(n: int) -> str:
    x = float(n)
    for u, m in (("EB", 1e18), ("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if x >= m:
            return f"{x / m:.3f} {u}"
    return f"{n} B"


def _waf_cell(w) -> str:
    return "-" if w is None else f"{w:.4f}"


def fdp_text(r: dict) -> str:
    """The table for people of a :func:`lifetime_fdp_waf` or :func:`interval_fdp_waf` result."""
    rows: list[tuple[str, ...]]
    if r["mode"] == "lifetime":
        c = r["fdp_stats"]
        rows = [(label(k), f"{c[k]:,}", human_bytes(c[k])) for k in KEYS]
        rows.append(("WAF = MBMW / HBMW", _waf_cell(r["waf"]), ""))
        t = table(["counter", "bytes", ""], rows, title="opsim smart fdp: since FDP was enabled", align="lrr")
        pairs = [("file", r["source"]), ("format", FORMATS.get(r["input_format"], r["input_format"]))]
        if not r["available"]:
            pairs.append(("reason", r["reason"]))
    else:
        b, a, d = r["before"]["fdp_stats"], r["after"]["fdp_stats"], r["fdp_stats"]
        rows = [(label(k), f"{b[k]:,}", f"{a[k]:,}", f"{d[k]:,}", human_bytes(d[k])) for k in KEYS]
        rows.append(
            ("WAF = MBMW / HBMW", _waf_cell(r["before"]["waf"]), _waf_cell(r["after"]["waf"]), _waf_cell(r["waf"]), "")
        )
        t = table(
            ["counter", "before", "after", "interval", ""],
            rows,
            title="opsim smart fdp: interval (AFTER - BEFORE)",
            align="lrrrr",
        )
        pairs = [
            ("before", f"{r['before']['source']} ({FORMATS.get(r['before']['input_format'], '?')})"),
            ("after", f"{r['after']['source']} ({FORMATS.get(r['after']['input_format'], '?')})"),
        ]
        if r.get("note"):
            pairs.append(("note", r["note"]))
    pairs += [("warning", clean_text(w, 400)) for w in r.get("warnings") or []]
    return t + "\n\n" + kv_table([(k, clean_text(str(v), 400)) for k, v in pairs])


__all__ = [
    "FIELDS",
    "KEYS",
    "LOG_BYTES",
    "LOG_ID",
    "MAX_BYTES",
    "fdp_text",
    "fdp_waf",
    "interval_fdp_waf",
    "lifetime_fdp_waf",
    "load_fdp_stats",
    "parse_fdp_stats",
    "parse_log_page",
]
