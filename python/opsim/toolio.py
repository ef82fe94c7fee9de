"""Parsing what external tools print: JSON after stray lines, and counters in every spelling.

Shared by the planner (lsblk, hdparm, nvme-cli, smartctl), ``opsim smart`` and the fio
harness, because the tools all have the same habits:

* warnings or other non-JSON lines before the JSON document (smartctl, nvme-cli, fio, sudo);
* numbers as JSON numbers, decimal or hex strings, comma-grouped strings with a trailing
  unit ("1,969,459 [1.00 TB]"), OCP ``{"hi", "lo"}`` pairs or smartctl raw objects.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from .errors import InputError


def extract_json(text: Any, what: str = "output", accept: Callable[[Any], bool] | None = None):
    """The first JSON document in ``text`` (for which ``accept`` is true), skipping any
    non-JSON lines before it.  A dict or list passes through unchanged."""
    if isinstance(text, (dict, list)):
        return text
    text = str(text).lstrip("\ufeff")
    ok = accept or (lambda obj: True)
    dec = json.JSONDecoder()
    for m in re.finditer(r"^[ \t]*[\[{]", text, re.M):
        try:
            obj, _ = dec.raw_decode(text[m.end() - 1 :])
        except ValueError:
            continue
        if ok(obj):
            return obj
    raise InputError(f"{what}: no JSON document found", key=what)


_COUNT_RE = re.compile(r"^\s*(0x[0-9a-fA-F]+|[0-9][0-9,_ ]*)(?:\s*[\[(].*)?$")


def parse_count(v, key: str = "counter") -> int:
    """An unsigned counter from a JSON number, a decimal/hex string, a comma-grouped
    number (with an optional trailing "(1.01 TB)" or "[1.01 TB]"), an OCP ``{"hi","lo"}``
    pair or a smartctl ``{"value": .., "string": ..}`` raw object."""
    if isinstance(v, bool) or v is None:
        raise InputError(f"{key}: {v!r} is not a counter", key=key)
    if isinstance(v, int):
        if v < 0:
            raise InputError(f"{key}: negative counter {v}", key=key)
        return v
    if isinstance(v, float):
        if v < 0 or v != int(v):
            raise InputError(f"{key}: {v!r} is not a whole counter", key=key)
        return int(v)
    if isinstance(v, dict):
        if "hi" in v and "lo" in v:
            return (parse_count(v["hi"], key) << 64) + parse_count(v["lo"], key)
        if "value" in v:
            return parse_count(v["value"], key)
        if "raw" in v:
            return parse_count(v["raw"], key)
        raise InputError(f"{key}: cannot read a counter from {v!r}", key=key)
    if isinstance(v, str):
        m = _COUNT_RE.match(v)
        if not m:
            raise InputError(f"{key}: {v!r} is not a counter", key=key)
        s = m.group(1)
        if s.lower().startswith("0x"):
            return int(s, 16)
        digits = re.sub(r"[,_ ]", "", s)
        if not digits.isdigit():
            raise InputError(f"{key}: {v!r} is not a counter", key=key)
        return int(digits)
    raise InputError(f"{key}: {type(v).__name__} is not a counter", key=key)


def to_int(v):
    """Like :func:`parse_count`, but ``None`` for a missing or unreadable value."""
    if v is None or isinstance(v, bool):
        return None
    try:
        return parse_count(v)
    except InputError:
        return None
