"""The workload notation, low in the house: what a workload is (:class:`Workload`: read/write mix,
transfer sizes, random/sequential mix, skew, write rate), its notation (``70:30``,
``hot-cold:20/80``, ``zipf:0.8``: :mod:`.notation`), its LBA classes for the analytic models
(:mod:`.classes`), its translation into a core ``[workload]`` table
(:meth:`Workload.sim_workload`) and a fio job file's job as a workload (:mod:`.fio`).

The advisor, the trace profile's fit, ``opsim trace synth``, calibrate and validation all speak it
from here; nothing here imports them.
"""

from __future__ import annotations

from .notation import parse_read_write, parse_skew
from .spec import JESD219_SIZES, Workload

__all__ = ["JESD219_SIZES", "Workload", "parse_read_write", "parse_skew"]
