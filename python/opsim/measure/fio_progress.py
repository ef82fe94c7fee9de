"""Is fio still doing I/O?  The limit opsim puts on a fio run follows the work, not the clock.

fio prints a status line about once a second when asked (``--eta=always --eta-interval=1``), on its
standard output, with the rates of the last interval: ``Jobs: 1 (f=1): [w(1)][75.0%][w=109MiB/s]
[w=28.0k IOPS][eta 00m:01s]``.  A run is *stalled* when fio has printed status lines but none of the
last ``stall_s`` seconds reported any I/O, or when it has printed nothing for that long: a device that
stops answering, a fio that hangs.  A run that moves data is never stopped, however slow the machine
(a loaded CI runner, a guest under software emulation) or however long the run is meant to be.

fio's own engines count their I/O in these rates, NVMe passthrough (``io_uring_cmd``) included, which
the kernel's per-process I/O counters do not see."""

from __future__ import annotations

import re

#: fio asked for a status line a second (and with a line feed, so each line stands alone)
ETA_ARGS = ("--eta=always", "--eta-interval=1", "--eta-newline=1")

#: the seconds without reported I/O after which a fio run counts as stalled
STALL_S = 180.0

#: the IOPS field of a status line: ``[w=28.0k IOPS]``, ``[r=1234,w=567 IOPS]``
_IOPS = re.compile(r"\[([^\[\]]*)\sIOPS\]")
_RATE = re.compile(r"[a-z]=([0-9]+(?:\.[0-9]+)?)")


def reports_io(line: str) -> bool | None:
    """True when the status line reports I/O in its interval, False when it reports none, None
    when it is not a status line with rates (fio's start, before its jobs run)."""
    m = _IOPS.search(line)
    if m is None:
        return None
    return any(float(v) > 0 for v in _RATE.findall(m.group(1)))


class FioProgress:
    """Feed it fio's standard output as it grows (:meth:`feed`) and ask :meth:`stalled`."""

    def __init__(self, start: float, stall_s: float = STALL_S) -> None:
        self.stall_s = stall_s
        self.last_io = start  # the last time fio reported I/O (or started)
        self.last_output = start
        self._partial = ""

    def feed(self, text: str, now: float) -> None:
        if not text:
            return
        self.last_output = now
        lines = re.split(r"[\r\n]", self._partial + text)
        self._partial = lines.pop()
        if any(reports_io(line) for line in lines):
            self.last_io = now

    def stalled(self, now: float) -> bool:
        return now - self.last_io > self.stall_s

    def reason(self, now: float) -> str:
        quiet = now - self.last_output
        if quiet > self.stall_s:
            return f"fio printed nothing for {quiet:.0f} s (a hung fio or device) and was stopped"
        return f"fio reported no I/O for {now - self.last_io:.0f} s (a device that stopped answering) and was stopped"
