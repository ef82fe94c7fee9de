"""SIGTERM and SIGHUP handled as Ctrl-C is: every command keeps what it has done and exits
128 + the signal (143 for SIGTERM, 129 for SIGHUP; 130 for SIGINT).

While :class:`TermAsInterrupt` is active (the CLI's ``main`` keeps one over the whole command)
the two signals raise :class:`Terminated`, a :class:`KeyboardInterrupt`, wherever Python is:
in Python code, and in the Rust core too, whose interrupt hook runs Python's signal handlers
(``PyErr_CheckSignals``) and stops the run with the handler's exception.  So every path that
keeps results on Ctrl-C (a simulation's rounds done, a sweep's finished points, a trace
conversion's temporary file removed) does the same on SIGTERM.  A signal whose handler is not
the default one when the block starts (``nohup`` ignores SIGHUP) is left alone.

``opsim measure`` has its own block (:class:`opsim.measure.signals.StopSignals`), which turns
the signals into a flag its fio loop polls.
"""

from __future__ import annotations

import signal
import threading

INTERRUPT_EXIT = 128 + signal.SIGINT  # 130: what a command returns when interrupted
_SIGNALS = tuple(s for s in (getattr(signal, n, None) for n in ("SIGTERM", "SIGHUP")) if s)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C's KeyboardInterrupt; ``signum`` says which."""

    def __init__(self, signum: int):
        super().__init__(signal_name(signum))
        self.signum = signum


def interrupt_exit_code(exc: BaseException) -> int:
    """128 + the signal behind a KeyboardInterrupt (SIGINT unless it is a :class:`Terminated`)."""
    return 128 + getattr(exc, "signum", signal.SIGINT)


class SignalBlock:
    """``with Block() as b: ...``: while active, ``signals`` call :meth:`_handler`, which notes
    the first one received in ``b.signum``.  Handlers can only be installed in the main thread:
    elsewhere the block is inert.  With ``only_default`` a signal whose handler is not the
    default one when the block starts (``nohup`` ignores SIGHUP) is left alone."""

    signals: tuple = ()
    only_default = False

    def __init__(self) -> None:
        self.signum: int | None = None
        self._saved: dict = {}

    def _handler(self, signum, frame):
        if self.signum is None:
            self.signum = signum

    def __enter__(self):  # -> Self (Python 3.11+)
        if threading.current_thread() is threading.main_thread():
            for s in self.signals:
                if not self.only_default or signal.getsignal(s) is signal.SIG_DFL:
                    self._saved[s] = signal.signal(s, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        for s, old in self._saved.items():
            signal.signal(s, signal.SIG_DFL if old is None else old)
        self._saved.clear()


class TermAsInterrupt(SignalBlock):
    """``with TermAsInterrupt() as term: ...``: SIGTERM and SIGHUP raise :class:`Terminated`;
    ``term.signum`` is the first one received (None if none)."""

    signals = _SIGNALS
    only_default = True

    def _handler(self, signum, frame):
        super()._handler(signum, frame)
        raise Terminated(signum)

    def exit_code(self, code: int) -> int:
        """A command's exit code: an interruption (130) caused by SIGTERM or SIGHUP becomes
        128 + that signal."""
        if code == INTERRUPT_EXIT and self.signum is not None:
            return 128 + self.signum
        return code
