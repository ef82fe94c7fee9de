"""Shared output conventions for every opsim command.

A command returns an :class:`Output`: a JSON-serialisable document for programs and a
human-readable text (usually tables) for people.  ``opsim CMD --json`` prints the
document on stdout; ``--json-file FILE`` writes it to FILE atomically and prints the text.

Every file a command writes goes through :func:`atomic_write`: readers see the old file or
the whole new one, never a part, and after a crash the new one is on disk (fsync of the file
before the rename and of the directory after it).  :func:`check_writable_file` and
:func:`check_writable_dir` check an output path *before* the work, so a result is never
computed only to be thrown away at the end.

One rule for every output target (docs/reliability.md, "Writing files"): a path that exists
and is not a regular file is written directly when it is a character device or a FIFO
(``-o /dev/null``, ``--json-file /dev/stdout``: no temporary file, never renamed over) and
refused otherwise (a directory, a block device, a socket); an output that is the same file as
one of the command's inputs (through a symbolic or hard link too) is refused before the work.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import stat
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InputError


@dataclass
class Output:
    data: dict
    text: str = ""
    #: process exit code after the output is printed (130: interrupted, results kept)
    exit_code: int = 0


def _fmt_cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if math.isnan(v):
            return "-"
        if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
            return f"{v:.4g}"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        return f"{v:.4g}" if abs(v) < 10 else f"{v:.2f}".rstrip("0").rstrip(".")
    if isinstance(v, int):
        return f"{v:,}"
    return str(v)


def table(
    headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None, align: str | None = None
) -> str:
    """Render a fixed-width table.  ``align`` is a string of 'l'/'r' per column
    (default: first column left, the rest right)."""
    rows = [[_fmt_cell(c) for c in r] for r in rows]
    headers = [str(h) for h in headers]
    n = len(headers)
    if align is None:
        align = "l" + "r" * (n - 1)
    widths = [len(h) for h in headers]
    for r in rows:
        if len(r) != n:
            raise ValueError(f"table row has {len(r)} cells, expected {n}")
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))

    def line(cells):
        out = []
        for i, c in enumerate(cells):
            out.append(c.ljust(widths[i]) if align[i] == "l" else c.rjust(widths[i]))
        return "  ".join(out).rstrip()

    parts = []
    if title:
        parts.append(title)
    parts.append(line(headers))
    parts.append("  ".join("-" * w for w in widths))
    parts.extend(line(r) for r in rows)
    return "\n".join(parts)


def kv_table(pairs: Iterable[tuple[str, Any]], title: str | None = None) -> str:
    """A two-column key/value listing."""
    pairs = [(str(k), _fmt_cell(v)) for k, v in pairs]
    w = max((len(k) for k, _ in pairs), default=0)
    lines = [title] if title else []
    lines += [f"{k.ljust(w)}  {v}" for k, v in pairs]
    return "\n".join(lines)


def markdown_table(headers: Sequence[str], align: str, rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table; ``align`` has 'l' or 'r' per column; cells are used as given."""
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---:" if a == "r" else "---" for a in align) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def to_jsonable(obj: Any) -> Any:
    """Convert numpy scalars/arrays, NaN and dataclasses into plain JSON values."""
    np = sys.modules.get("numpy")  # no numpy value exists unless numpy was imported: not imported here
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if np is not None:
        if isinstance(obj, np.ndarray):
            return [to_jsonable(v) for v in obj.tolist()]
        if isinstance(obj, np.generic):
            return to_jsonable(obj.item())
    if isinstance(obj, float) and (math.isnan(obj) or math.isinf(obj)):
        return None
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return to_jsonable(obj.to_dict())
    return obj


def dumps(data: Any) -> str:
    return json.dumps(to_jsonable(data), indent=2, sort_keys=False)


def file_mode() -> int:
    """0666 less the process umask: what open() would have given (mkstemp makes 0600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def _fsync_dir(d: str) -> None:
    """Make a rename in directory ``d`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # pragma: no cover - not POSIX
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on a directory
        pass
    finally:
        os.close(fd)


def _mode(p: str) -> int | None:
    """The mode of what ``p`` names (links followed), or None where nothing is there yet."""
    try:
        return os.stat(p).st_mode
    except (OSError, ValueError):  # missing, a dangling link, a bad name: the callers say why
        return None


def is_stream(path: str | os.PathLike) -> bool:
    """True where ``path`` names a character device or a FIFO: an output written directly."""
    m = _mode(os.fspath(path))
    return m is not None and (stat.S_ISCHR(m) or stat.S_ISFIFO(m))


def _refused_kind(p: str) -> str | None:
    """Why ``p`` cannot be an output (it exists and is neither a regular file, a character
    device nor a FIFO), or None."""
    m = _mode(p)
    if m is None or stat.S_ISREG(m) or stat.S_ISCHR(m) or stat.S_ISFIFO(m):
        return None
    kinds = {stat.S_IFDIR: "a directory", stat.S_IFBLK: "a block device", stat.S_IFSOCK: "a socket"}
    return kinds.get(stat.S_IFMT(m), "not a regular file")


def _write_stream(p: str, write, binary: bool) -> None:
    """Write to a character device or FIFO in place: the output is built in memory first (a
    failure writes nothing; a writer may seek), then written through a plain open (no
    O_CREAT, no rename: ``/dev/null`` stays a device)."""
    buf: io.BytesIO | io.StringIO = io.BytesIO() if binary else io.StringIO()
    write(buf)
    try:
        with os.fdopen(os.open(p, os.O_WRONLY | os.O_CLOEXEC), "wb" if binary else "w") as f:
            f.write(buf.getvalue())
    except OSError as e:
        raise InputError(f"cannot write {p}: {e.strerror}", key="output") from None


def atomic_write(
    path: str | os.PathLike, write, binary: bool = False, suffix: str = "", prefix: str = ".opsim-"
) -> None:
    """Write a file so that readers never see it half-written: ``write(f)`` fills a temporary
    file in the same directory, which is fsynced and then renamed into place (removed on any
    error), and the directory is fsynced so the rename survives a crash.

    A symbolic link at ``path`` is followed: the file it points to is replaced and the link
    stays.  A character device or a FIFO at ``path`` is written directly (``/dev/null`` stays
    a device); any other existing non-regular file is refused.  Where writing fails (a missing
    or read-only directory, a full disk) the error is an :class:`~opsim.errors.InputError`
    naming ``path``."""
    p = os.fspath(path)
    kind = _refused_kind(p)
    if kind is not None:
        raise InputError(f"cannot write {p}: it is {kind}", key="output")
    if is_stream(p):
        _write_stream(p, write, binary)
        return
    path = os.path.realpath(p)
    d = os.path.dirname(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix + ".tmp", dir=d)
    except OSError as e:
        raise InputError(f"cannot write {path}: {e.strerror}", key="output") from None
    try:
        os.fchmod(fd, file_mode())
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        _fsync_dir(d)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.strerror:
            raise InputError(f"cannot write {path}: {e.strerror}", key="output") from None
        raise


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """True where ``a`` and ``b`` name one file: the same device and inode (through symbolic
    and hard links), or, where neither exists yet, the same resolved path."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        try:
            return os.path.realpath(a) == os.path.realpath(b)
        except (OSError, ValueError):
            return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_output_not_input(out: str | os.PathLike | None, inputs: Iterable[Any], key: str) -> None:
    """Refuse, before any work, an output file that is one of the command's ``inputs`` (it
    would be replaced by the output).  A character device or FIFO is not replaced: not
    checked.  ``inputs`` may hold None and lists of paths."""
    if out is None or is_stream(out):
        return
    for inp in _flat(inputs):
        if same_file(out, inp):
            raise InputError(
                f"{key} {out} is the same file as {inp}, given to this command: it would be overwritten", key=key
            )


def _flat(values: Iterable[Any]) -> list[str]:
    out: list[str] = []
    for v in values:
        if isinstance(v, (list, tuple)):
            out += _flat(v)
        elif isinstance(v, (str, os.PathLike)) and os.fspath(v):
            out.append(os.fspath(v))
    return out


def check_writable_file(path: str | os.PathLike, key: str = "output", inputs: Iterable[Any] = ()) -> str:
    """Check, before any work, that a file can be written at ``path``: its directory exists
    and is writable, and ``path`` is not a directory, a block device or a socket, nor the same
    file as one of ``inputs`` (a symbolic link is followed, as :func:`atomic_write` does).  A
    character device or a FIFO passes where it is writable.  Returns the path; raises
    :class:`InputError` naming it."""
    p = os.fspath(path)
    if not p or "\0" in p:
        raise InputError(f"{key}: not a usable file name: {p!r}", key=key)
    kind = _refused_kind(p)
    if kind == "a directory":
        raise InputError(f"{key}: {p} is a directory; give a file path", key=key)
    if kind is not None:
        raise InputError(
            f"{key}: {p} is {kind}; give a regular file, a character device (/dev/null) or a FIFO", key=key
        )
    if is_stream(p):
        if not os.access(p, os.W_OK):
            raise InputError(f"{key}: cannot write {p}: permission denied", key=key)
        return p
    check_output_not_input(p, inputs, key)
    real = os.path.realpath(p)
    d = os.path.dirname(real)
    if os.path.isdir(real):
        raise InputError(f"{key}: {p} is a directory; give a file path", key=key)
    if not os.path.isdir(d):
        raise InputError(f"{key}: cannot write {p}: directory {d} does not exist", key=key)
    if not os.access(d, os.W_OK | os.X_OK):
        raise InputError(f"{key}: cannot write {p}: directory {d} is not writable", key=key)
    if os.path.exists(real) and not os.access(real, os.W_OK) and not os.access(d, os.W_OK):
        raise InputError(f"{key}: cannot write {p}: permission denied", key=key)
    _check_space(d, p, key)
    return p


def check_writable_dir(path: str | os.PathLike, key: str = "output") -> str:
    """Check, before any work, that ``path`` is a writable directory or can be created as one
    (its parent exists and is writable).  Creates nothing.  Returns the path."""
    p = os.fspath(path)
    if not p or "\0" in p:
        raise InputError(f"{key}: not a usable directory name: {p!r}", key=key)
    real = os.path.realpath(p)
    if os.path.exists(real):
        if not os.path.isdir(real):
            raise InputError(f"{key}: {p} exists and is not a directory", key=key)
        target = real
    else:
        target = os.path.dirname(real)
        if not os.path.isdir(target):
            raise InputError(f"{key}: cannot create {p}: directory {target} does not exist", key=key)
    if not os.access(target, os.W_OK | os.X_OK):
        raise InputError(f"{key}: cannot write in {target}: permission denied", key=key)
    _check_space(target, p, key)
    return p


#: an output is refused up front where its filesystem has less free space than this
MIN_FREE_BYTES = 1 << 20


def _check_space(d: str, p: str, key: str) -> None:
    try:
        st = os.statvfs(d)
    except (OSError, AttributeError):  # pragma: no cover - not POSIX
        return
    if st.f_bavail * st.f_frsize < MIN_FREE_BYTES:
        raise InputError(f"{key}: cannot write {p}: the filesystem of {d} is full", key=key)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write a text file atomically (see :func:`atomic_write`), ending with a newline."""
    atomic_write(path, lambda f: f.write(text if text.endswith("\n") else text + "\n"))
