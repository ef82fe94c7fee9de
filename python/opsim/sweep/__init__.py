"""Parameter sweeps: many simulations from one grid file, in parallel on Dask.

    >>> import opsim
    >>> df = opsim.sweep("study.toml", "study.parquet")     # pandas DataFrame, one row per point
    >>> df.groupby(["drive.op", "ftl.gc"])["waf"].mean()

A grid file is a simulation config (docs/config.md) with a ``[sweep]`` table that says what
to vary: ``sweep.grid`` (a cartesian product over any config keys) and/or ``sweep.points``
(an explicit list), ``sweep.replicates`` runs of each with their own seed, and
``sweep.seed``.  The schema is in docs/sweeps.md.

Every point has an identity: the SHA-256 of its canonical flattened config (dotted keys,
sorted, canonical JSON).  Its seed is derived from the grid seed, that hash and the
replicate number, never from the order points are submitted or finish in, so a sweep gives
the same table serially, on a LocalCluster or on any cluster.  Results go to a Parquet file
that is only ever replaced whole (written to a temporary file, then renamed), so an
interruption leaves the previous complete file; a re-run skips the points it already holds
(matched by point id) and retries failed ones.

This package imports only the standard library at import time; the Rust core, pandas,
pyarrow, Dask and tqdm are imported when a sweep runs.
Rooms: :mod:`.grid` (the grid file and its points), :mod:`.point` (one point run),
:mod:`.table` (the results table and its columns), :mod:`.store` (the results file and its
lock) and :mod:`.run` (running a sweep serially or on Dask).
"""

from __future__ import annotations

import sys
import types

from .columns import WALL_CLOCK_COLUMNS, metrics
from .grid import Grid, Point, derive_seed, load_grid
from .point import run_point
from .run import SweepOutcome, run_sweep, sweep
from .table import build_table, columns

__all__ = [
    "WALL_CLOCK_COLUMNS",
    "Grid",
    "Point",
    "SweepOutcome",
    "build_table",
    "columns",
    "derive_seed",
    "load_grid",
    "metrics",
    "run_point",
    "run_sweep",
    "sweep",
]


class _SweepPackage(types.ModuleType):
    """``opsim.sweep`` is this package and the function :func:`sweep` at once: ``import opsim``
    binds neither (the package takes a tenth of a second to import, which every command would
    pay), and whichever of the two ``opsim.sweep`` ends up bound to, calling it runs a sweep."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage
