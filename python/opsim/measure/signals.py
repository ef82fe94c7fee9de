"""Stop requests during a measurement: SIGINT, SIGTERM and SIGHUP become a flag the run checks.

While a :class:`StopSignals` block is active the three signals no longer kill opsim (SIGTERM,
SIGHUP) or raise :class:`KeyboardInterrupt` at an arbitrary point (SIGINT): the handler notes
the first signal, and the code that waits for fio checks :attr:`StopSignals.signum` every
fraction of a second, stops fio's process group and returns what was finished.  The exit code
of a stopped run is ``128 + signal number``: 130 (SIGINT), 143 (SIGTERM), 129 (SIGHUP), as a
shell reports a process killed by that signal.

Outside the main thread signal handlers cannot be installed; the block is then inert and
SIGINT keeps raising :class:`KeyboardInterrupt` (which the fio runner also handles).
"""

from __future__ import annotations

import signal

from ..stopsignals import SignalBlock, signal_name

__all__ = ["STOP_SIGNALS", "StopSignals", "signal_name"]

STOP_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s)


class StopSignals(SignalBlock):
    """``with StopSignals() as stop: ...; stop.signum`` (None, or the first signal received)."""

    signals = STOP_SIGNALS

    def __call__(self) -> int | None:
        return self.signum

    @property
    def name(self) -> str | None:
        return None if self.signum is None else signal_name(self.signum)

    @property
    def exit_code(self) -> int:
        return 0 if self.signum is None else 128 + self.signum
