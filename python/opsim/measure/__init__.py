"""Real-drive measurement with fio: WSAT, PTS IOPS, IO consistency.  Result schema: docs/measure.md.

Rooms: :mod:`.target` (the file or guarded device measured), :mod:`.outdir` (an earlier run's
files), :mod:`.fio` (fio's command lines and output), :mod:`.runner` (the rounds), :mod:`.steps`
(the purge and SMART around the run), :mod:`.smart_window` (SMART around each round),
:mod:`.purge`, :mod:`.scratch` (opsim's scratch file), :mod:`.fdp` (NVMe FDP placement),
:mod:`.schema` (the result document), :mod:`.signals` (a stop signal)."""

from . import fdp, fio, outdir, runner, scratch, signals, smart_window, steps, target
from .fio import parse_fio_json, parse_log, per_second, summarize
from .runner import Plan, run

__all__ = [
    "Plan",
    "fdp",
    "fio",
    "outdir",
    "parse_fio_json",
    "parse_log",
    "per_second",
    "run",
    "runner",
    "scratch",
    "signals",
    "smart_window",
    "steps",
    "summarize",
    "target",
]
