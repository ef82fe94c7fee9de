"""Child processes that die with opsim: every external tool opsim starts (fio, smartctl,
nvme-cli, hdparm, blkid, lsblk, wipefs, blkdiscard...) goes through :func:`run` or
:func:`popen`.

The child asks the kernel for SIGKILL when its parent goes (``prctl(PR_SET_PDEATHSIG)``, set in
the child between fork and exec), so a SIGKILL of opsim -- which no handler can see -- also
ends fio, even though fio runs in its own session.  The signal fires when the *thread* that
forked the child exits, so children are started from the main thread (or a thread that lives
as long as the child).  After setting it the child checks that its parent is still the process
that forked it (opsim could have died in between) and kills itself if not.

Only the child itself gets the signal, not its own children: fio is run with ``--thread`` so
that its jobs are threads of that one process (see :mod:`opsim.measure.runner`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _prctl():
    """libc's ``prctl`` (loaded in the parent: the child only calls it), or None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _prctl()


def _die_with(parent: int):
    """The ``preexec_fn`` for a child of ``parent``: SIGKILL when the forking thread exits."""

    def preexec() -> None:
        if _PRCTL is not None:
            _PRCTL(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def popen(argv: list[str], **kwargs: Any) -> subprocess.Popen:
    """:class:`subprocess.Popen` of a child that dies with opsim (same arguments)."""
    if kwargs.get("preexec_fn") is not None:  # pragma: no cover - a programming error
        raise ValueError("childproc.popen sets preexec_fn itself")
    kwargs["preexec_fn"] = _die_with(os.getpid())
    return subprocess.Popen(argv, **kwargs)


def run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    """:func:`subprocess.run` of a child that dies with opsim (same arguments)."""
    if kwargs.get("preexec_fn") is not None:  # pragma: no cover - a programming error
        raise ValueError("childproc.run sets preexec_fn itself")
    kwargs["preexec_fn"] = _die_with(os.getpid())
    return subprocess.run(argv, **kwargs)
