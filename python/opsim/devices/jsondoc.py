"""The JSON document in a tool's output (smartctl, nvme-cli, lsblk): non-JSON lines before it
(warnings, banners, sudo) are skipped.

Two readers, by how much the input is trusted:

* :func:`loads_document`, for the documents opsim reads counters from (smartctl ``-j``, nvme-cli
  logs, FDP statistics) and that a user may hand over as files: at most :data:`MAX_BYTES`;
  binary data, non-UTF-8 text, a truncated document, ``NaN``, nesting deeper than the decoder's
  limit are each an :class:`InputError` that says so; JSON values that are not objects are
  skipped.  ``tests/smart_fuzz.py`` checks it.
* :func:`json_object`, for the planner's identity outputs (lsblk, nvme-cli ``id-ctrl``/``id-ns``):
  the first JSON document, which must be an object.
"""

from __future__ import annotations

import json
import re

from ..errors import InputError
from ..toolio import extract_json

MAX_BYTES = 16 * 2**20


def json_object(text, what: str) -> dict:
    """The JSON object in a tool's output (a list or a number is not what the tools print)."""
    doc = extract_json(text, what)
    if not isinstance(doc, dict):
        raise InputError(f"{what}: expected a JSON object, found a {type(doc).__name__}", key=what)
    return doc


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line}, column {pos - (text.rfind(chr(10), 0, pos) + 1) + 1}"


def _reject_constant(name):
    raise _NonJSON(name)


class _NonJSON(ValueError):
    pass


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_START = re.compile(r"^[ \t]*[\[{]", re.M)


def too_large(source: str, size: int):
    raise InputError(
        f"{source}: too large ({size:,} bytes or more; smartctl and nvme-cli JSON is well under "
        f"1 MiB, the limit is {MAX_BYTES // 2**20} MiB)",
        key="snapshot",
    )


def loads_document(data: bytes | str, source: str = "input") -> dict:
    """The JSON object in a tool's output (non-JSON lines before it are skipped), with a clear
    error for empty, binary, non-UTF-8, truncated or malformed input."""
    if len(data) > MAX_BYTES:
        too_large(source, len(data))
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


def loads_lenient(data, source: str = "input") -> dict:
    """:func:`loads_document`, but a dict (already decoded) passes through unchanged."""
    if isinstance(data, dict):
        return data
    return loads_document(data, source)
