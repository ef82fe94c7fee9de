"""opsim's own scratch file: how ``opsim measure --file PATH`` tells a file it made from anyone else's.

``measure`` overwrites its target with random data, so an existing file is refused unless it is
opsim's scratch file (or ``--force`` is given).  The mark is a small JSON record beside the
file, ``PATH.opsim-scratch.json``, holding the identity of the file as opsim last left it:
device, inode, size and modification time (ns).

Why a record beside the file, and why those fields:

* a header inside the file would not survive: fio's random writes cover the whole span,
  the first bytes included, and anything else could be written there too;
* an extended attribute (``user.*``) survives fio's writes, but not every filesystem keeps
  one (tmpfs before Linux 6.6, NFS, some FUSE mounts), stays on the inode when a program
  rewrites the file in place (a false "ours"), and is copied by ``cp -a``;
* the record is written by opsim, after fio has stopped, on any filesystem it can write to.
  It names the inode (a file moved or copied over ``PATH`` is a different inode) and the
  size and mtime (any write after opsim's changes them; the user cannot set them back
  without ``touch -d`` and a truncate to the same size).  A mismatch, a missing or unreadable
  record, and a run killed with SIGKILL (the record still holds the state before the run)
  all read as "not opsim's": the check fails closed.

:func:`claim_new` creates the file (``O_EXCL``: never one that appeared meanwhile) and its
record; :func:`seal` updates the record when a run ends, however it ends.
"""

from __future__ import annotations

import json
import os
import stat

from .._output import atomic_write_text, file_mode
from ..errors import DeviceError

FORMAT = "opsim-scratch"
SUFFIX = ".opsim-scratch.json"


def record_path(path) -> str:
    """The record of the scratch file ``path`` (beside the real file a symlink points to)."""
    return os.path.realpath(os.fspath(path)) + SUFFIX


def _identity(st) -> dict:
    return {"dev": st.st_dev, "ino": st.st_ino, "size": st.st_size, "mtime_ns": st.st_mtime_ns}


def _read_record(path) -> tuple[dict | None, str | None]:
    """(record, None) or (None, why there is none)."""
    rec = record_path(path)
    try:
        with open(rec, encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        return None, f"no record {rec}"
    except (OSError, ValueError) as e:
        return None, f"{rec} is not an opsim scratch record ({getattr(e, 'strerror', None) or e})"
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return None, f"{rec} is not an opsim scratch record"
    return doc, None


def check_record_slot(path) -> None:
    """Refuse when ``PATH.opsim-scratch.json`` exists and is not opsim's record: opsim would
    overwrite it when the run ends."""
    rec = record_path(path)
    if os.path.lexists(rec) and _read_record(path)[0] is None:
        raise DeviceError(
            f"{rec} exists and is not an opsim scratch record; opsim keeps the record of its "
            f"scratch file {path} there, so move that file away first",
            key="file",
        )


def is_scratch(path) -> tuple[bool, str]:
    """(True, "") when ``path`` is the file opsim left, unchanged since; else (False, why not)."""
    doc, why = _read_record(path)
    if doc is None:
        assert why is not None  # _read_record gives a reason whenever there is no record
        return False, why
    try:
        st = os.stat(path)
    except OSError as e:
        return False, f"cannot stat {path}: {e.strerror}"
    if not stat.S_ISREG(st.st_mode):
        return False, f"{path} is not a regular file"
    if doc.get("path") != os.path.realpath(path):
        return False, f"{record_path(path)} names another file ({doc.get('path')})"
    now = _identity(st)
    if any(doc.get(k) != v for k, v in now.items()):
        return False, (
            f"{path} is not the file opsim left there or changed since opsim last wrote it "
            "(a run killed with SIGKILL leaves it so)"
        )
    return True, ""


def claim_new(path) -> None:
    """Create the empty scratch file ``path`` (it must not exist) and its record."""
    p = os.fspath(path)
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), file_mode())
    except FileExistsError:
        raise DeviceError(
            f"{p} appeared while opsim was checking it; run again to have it checked", key="file"
        ) from None
    except OSError as e:
        raise DeviceError(f"cannot create {p}: {e.strerror}", key="file") from None
    os.close(fd)
    try:
        seal(p)
    except BaseException:
        os.unlink(p)
        raise


def seal(path) -> bool:
    """Record ``path`` as opsim left it (after a run, however it ended).  False (nothing
    written) when the file is gone or is not a regular file."""
    p = os.fspath(path)
    try:
        st = os.stat(p)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode):
        return False
    doc = {
        "format": FORMAT,
        "path": os.path.realpath(p),
        "note": "written by opsim measure: the file beside it is opsim's scratch file while it is unchanged",
        **_identity(st),
    }
    atomic_write_text(record_path(p), json.dumps(doc, indent=1))
    return True
