"""Reading a file the user named, whole: a regular file of bounded size, opened so that
nothing blocks, and TOML or nested values checked for depth before anything recurses.

* A FIFO, a device, a directory or a socket is refused (exit 2) naming the option and what
  the path is ("a FIFO", "a character device", "a directory"), before it is read: ``opsim
  simulate FIFO`` no longer waits for a writer, ``opsim simulate /dev/zero`` no longer reads
  without end.  The open itself never blocks (``O_NONBLOCK``), should a FIFO be swapped in
  between the check and the open.
* A regular file over the cap (:data:`MAX_CONFIG` for configs and other TOML) is refused
  unread; one that grows past it while read is refused too.
* TOML is scanned for its nesting depth before it is parsed (:func:`toml_too_deep`):
  ``tomllib`` recurses (a value nested 5,000 deep raised RecursionError) and takes
  quadratic time on long dotted keys.  Dicts given to the API are walked without recursion
  (:func:`check_nesting`) before they are serialised.

The core reads its own files (traces, drive files) with the same rules (``opsim_core::userfile``).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
import tomllib
from collections.abc import Mapping

from .errors import ConfigError, InputError

#: the largest config, drive file, tenants file or sweep grid read (bytes)
MAX_CONFIG = 4 << 20
#: the deepest a config nests (tables, arrays): the core's ``config::MAX_NESTING``
MAX_NESTING = 64


def kind(mode: int) -> str:
    """What a file of ``mode`` is, for messages: "a FIFO", "a directory"..."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _amount(n: int) -> str:
    """A byte count for messages: "4 MiB", "1,000 bytes"."""
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else f"{n:,} bytes"


def read_bytes(path, *, what: str, cap: int = MAX_CONFIG, key: str | None = None, error=InputError) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` of them.  Errors are
    ``error`` ("WHAT PATH: ...", key ``key`` or ``what``): the file is missing or unreadable,
    is not a regular file (refused before it is opened), or holds more than ``cap`` bytes."""
    path = os.fspath(path)
    key = key or what

    def refuse(detail: str):
        return error(f"{what} {path}: {detail}", key=key)

    def check(st: os.stat_result) -> None:
        if not stat.S_ISREG(st.st_mode):
            raise refuse(f"{kind(st.st_mode)}, not a regular file")
        if st.st_size > cap:
            raise refuse(f"{st.st_size:,} bytes; the limit is {_amount(cap)}")

    try:
        check(os.stat(path))
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise refuse("does not exist") from None
    except OSError as e:
        raise refuse(f"cannot read: {e.strerror or e}") from None
    try:
        check(os.fstat(fd))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
    except OSError as e:
        raise refuse(f"cannot read: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise refuse(f"grew past the limit of {_amount(cap)} while it was read")
    return data


def decode(raw: bytes, *, what: str, path, key: str | None = None, error=InputError) -> str:
    """``raw`` as UTF-8 text, or ``error`` naming the first bad byte and its line."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise error(
            f"{what} {os.fspath(path)} is not UTF-8 text: byte 0x{raw[e.start]:02x} on line {line}", key=key or what
        ) from None


def read_text(path, *, what: str, cap: int = MAX_CONFIG, key: str | None = None, error=InputError) -> str:
    """:func:`read_bytes` decoded as UTF-8 (an error names the byte and line)."""
    return decode(
        read_bytes(path, what=what, cap=cap, key=key, error=error), what=what, path=path, key=key, error=error
    )


# the characters that change the scanner's state; everything else is skipped in one search
_TOML_MARKS = re.compile(r"[\"'#\n\[\]{}=.,]")


def _string_end(text: str, i: int) -> int:
    """The index just past the TOML string starting at ``i`` (any of the four kinds); an
    unterminated one ends at its line's end (basic, literal) or the text's (multi-line)."""
    q = text[i]
    if text.startswith(q * 3, i):
        j = i + 3
        while j < len(text):
            if q == '"' and text[j] == "\\":
                j += 2
            elif text.startswith(q * 3, j):
                end = j + 3
                while end < len(text) and text[end] == q and end - j < 5:  # up to two quotes inside
                    end += 1
                return end
            else:
                j += 1
        return len(text)
    j = i + 1
    while j < len(text) and text[j] != "\n":
        if q == '"' and text[j] == "\\":
            j += 2
            continue
        if text[j] == q:
            return j + 1
        j += 1
    return j


def toml_too_deep(text: str, limit: int = MAX_NESTING) -> int | None:
    """The line on which the TOML ``text`` nests deeper than ``limit`` levels, or None.

    A scan, not a parse (strings and comments skipped): a level is a table header's key part
    (``[a.b]`` is 2, ``[[a]]`` 2), a key part (``a.b.c = 1`` is 3) and an array or inline
    table.  It errs on the side of counting more; a text it misreads is one the parser then
    refuses with its own message."""
    line, i, n = 1, 0, len(text)
    stack: list[tuple[str, int]] = []  # open '[' / '{' of values, with the key dots before each
    header = dots = 0
    at_key = True
    while True:
        m = _TOML_MARKS.search(text, i)
        if m is None:
            return None
        i, c = m.start(), m.group()
        if c in "\"'":
            j = _string_end(text, i)
            line += text.count("\n", i, j)
            i = j
            continue
        i += 1
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "\n":
            line += 1
            if not stack:
                at_key, dots = True, 0
        elif c == "." and at_key:
            dots += 1
        elif c == "[" and at_key and not stack:  # a [table] or [[array of tables]] header
            header = 2 if text.startswith("[", i) else 1
            while i < n and text[i] not in "]\n":
                if text[i] in "\"'":
                    i = _string_end(text, i)
                    continue
                header += text[i] == "."
                i += 1
            at_key = False
        elif c == "=" and at_key:
            at_key = False
        elif c in "[{":
            stack.append((c, dots))
            at_key = c == "{"
        elif c in "]}" and stack:
            dots = stack.pop()[1]
            at_key = False
        elif c == "," and stack and stack[-1][0] == "{":
            at_key, dots = True, stack[-1][1]
        else:
            continue
        if header + dots + len(stack) + 1 > limit:
            return line


def load_toml(path, *, what: str, key: str | None = None, error=InputError, cap: int = MAX_CONFIG) -> dict:
    """The TOML file ``path`` parsed: read as :func:`read_text`, checked for nesting
    (:func:`toml_too_deep`), then parsed; every error is ``error`` naming the file and line."""
    text = read_text(path, what=what, cap=cap, key=key, error=error)
    return loads_toml(text, source=f"{what} {os.fspath(path)}", key=key or what, error=error)


def check_toml_nesting(text: str, *, source: str, key: str, error=InputError) -> None:
    """``error`` ("SOURCE:LINE: nested too deeply...") when the TOML ``text`` nests deeper
    than :data:`MAX_NESTING` (:func:`toml_too_deep`)."""
    line = toml_too_deep(text)
    if line is not None:
        raise error(f"{source}:{line}: nested too deeply: a config nests at most {MAX_NESTING} levels", key=key)


def loads_toml(text: str, *, source: str, key: str, error=InputError) -> dict:
    """TOML ``text`` parsed after the nesting check; errors name ``source`` and the line."""
    check_toml_nesting(text, source=source, key=key, error=error)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise error(f"{source}: not valid TOML: {e}", key=key) from None


def read_config(path) -> str:
    """The text of the config file ``path`` (TOML): a regular file of at most
    :data:`MAX_CONFIG` bytes of UTF-8 nested at most :data:`MAX_NESTING` levels, else a
    :class:`ConfigError` (key ``config``) naming the file, and the line where it can."""
    text = read_text(path, what="config file", key="config", error=ConfigError)
    check_toml_nesting(text, source=f"config file {os.fspath(path)}", key="config", error=ConfigError)
    return text


def loads_json(text: str, *, source: str, key: str, error=InputError):
    """JSON ``text`` parsed; errors name ``source`` and the line.  Python's parser recurses:
    a document nested thousands deep is refused, not a RecursionError."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise error(f"{source}:{e.lineno}: not JSON ({e.msg}, column {e.colno})", key=key) from None
    except RecursionError:
        raise error(f"{source}: nested too deeply (JSON nested thousands of levels)", key=key) from None
    except ValueError:  # an integer past Python's digit limit (sys.get_int_max_str_digits)
        limit = sys.get_int_max_str_digits()
        m = re.search(rf"\d{{{limit + 1},}}", text) if limit else None
        line = f":{text.count(chr(10), 0, m.start()) + 1}" if m else ""
        raise error(f"{source}{line}: a number of more than {limit:,} digits: no figure needs one", key=key) from None


def check_nesting(value, *, key: str = "config", limit: int = MAX_NESTING, error=ConfigError) -> None:
    """Refuse ``value`` (dicts and lists, as the API takes a config) nested deeper than
    ``limit``, naming the key path of the first value too deep; walked without recursion."""
    todo = [("", value, 0)]
    while todo:
        path, v, depth = todo.pop()
        if isinstance(v, Mapping):
            steps = [(f".{k}", x) for k, x in v.items()]
        elif isinstance(v, (list, tuple)):
            steps = [(f"[{i}]", x) for i, x in enumerate(v)]
        else:
            continue
        if steps and depth >= limit:
            where = path.lstrip(".")
            where = where if len(where) <= 120 else where[:120] + "..."
            raise error(f"{where or key}: nested too deeply: a config nests at most {limit} levels", key=where or key)
        todo.extend((path + s, x, depth + 1) for s, x in steps)


# ----------------------------------------------------------------------------- where a key is


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key_parts(text: str, i: int, stop: str) -> tuple[list[str], int]:
    """The dotted key starting at ``i`` (bare or quoted parts), up to ``stop`` ("=" or "]"),
    and the index of ``stop``."""
    parts: list[str] = []
    n = len(text)
    while i < n and text[i] != stop and text[i] != "\n":
        c = text[i]
        if c in "\"'":
            j = _string_end(text, i)
            raw = text[i + 1 : j - 1]
            parts.append(json.loads(f'"{raw}"') if c == '"' and "\\" in raw else raw)
            i = j
        elif c in " \t.":
            i += 1
        else:
            m = _BARE_KEY.match(text, i)
            if m is None:
                break
            parts.append(m.group())
            i = m.end()
    return parts, i


def _value_end(text: str, i: int) -> int:
    """The index of the newline that ends the value starting at ``i`` (arrays and inline tables
    may span lines; strings, multi-line ones included, and comments are skipped)."""
    depth, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            i = _string_end(text, i)
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
        elif c == "\n" and depth <= 0:
            return i
        i += 1
    return n


def toml_key_lines(text: str) -> dict[tuple, int]:
    """{key path: line} of every table header and key of the TOML ``text`` (one that parsed):
    a path is the table's keys, an array of tables' index after its name, then the key's
    (``("candidate", 1, "price")`` for ``price`` in the second ``[[candidate]]``); values
    (arrays, inline tables) are not entered.  For messages that name a key's line
    (:func:`line_of`): tomllib keeps no positions."""
    out: dict[tuple, int] = {}
    counts: dict[tuple, int] = {}  # arrays of tables: how many seen
    table: tuple = ()
    line, i, n = 1, 0, len(text)
    while i < n:
        c = text[i]
        if c in " \t\r":
            i += 1
        elif c == "\n":
            line, i = line + 1, i + 1
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == "[":
            many = text.startswith("[[", i)
            parts, i = _key_parts(text, i + (2 if many else 1), "]")
            path: tuple = ()
            for p in parts:
                path += (p,)
                if path in counts and (many is False or len(path) < len(parts)):
                    path += (counts[path] - 1,)
            if many:
                counts[path] = counts.get(path, 0) + 1
                path += (counts[path] - 1,)
            table = path
            out.setdefault(table, line)
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            parts, j = _key_parts(text, i, "=")
            out.setdefault(table + tuple(parts), line)
            end = _value_end(text, j + 1)
            line += text.count("\n", j, end)
            i = end
    return out


def line_of(lines: dict[tuple, int], path: tuple) -> int | None:
    """The line of ``path`` in :func:`toml_key_lines`' map, else of its nearest table."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return None
