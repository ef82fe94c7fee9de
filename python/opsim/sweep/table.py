"""A sweep's results table: its columns (the point's config keys, the metrics taken from
each result document, the error and bookkeeping columns), the Arrow table built from the rows,
and the whole-file atomic write of the Parquet file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from .._output import atomic_write
from .._version import __version__
from ..errors import OpsimError
from .columns import (
    _ERROR_COLUMNS,
    _ID_COLUMNS,
    _TAIL_COLUMNS,
    WALL_CLOCK_COLUMNS,
)
from .grid import Grid, _canonical

#: the Parquet key-value metadata key holding the sweep's description
META_KEY = b"opsim.sweep"


SCHEMA_VERSION = 1


def _config_arrow_type(values: list):
    """One column type for a config key over every point: the values' own type when they
    share one (int and float together: float), otherwise strings (numbers as JSON)."""
    import pyarrow as pa

    vals = [v for v in values if v is not None]
    kinds = {type(v) for v in vals}
    if kinds == {bool}:
        return pa.bool_(), None
    if kinds == {int} and all(-(2**63) <= v < 2**63 for v in vals):
        return pa.int64(), None
    if kinds and kinds <= {int, float} and all(isinstance(v, float) or abs(v) <= 2**53 for v in vals):
        return pa.float64(), float
    if kinds == {str} or not kinds:
        return pa.string(), None
    return pa.string(), lambda v: v if isinstance(v, str) else json.dumps(v)


def _arrow_type(code: str):
    import pyarrow as pa

    return {"f": pa.float64(), "i": pa.int64(), "b": pa.bool_()}[code]


def _cast(code, v):
    if v is None:
        return None
    if code == "f":
        return float(v)
    if code == "i":
        return int(v)
    return bool(v)


def columns(grid: Grid) -> dict:
    """The table's columns by role."""
    return {
        "id": list(_ID_COLUMNS),
        "config": list(grid.config_columns),
        "status": list(_ERROR_COLUMNS),
        "metrics": [c for c, _, _ in grid.metrics],
        "other": (["result_json"] if grid.documents else []) + list(_TAIL_COLUMNS),
        "wall_clock": list(WALL_CLOCK_COLUMNS),
    }


def build_table(grid: Grid, rows: Mapping[str, dict]):
    """The results as a pyarrow Table: one row per point that has a result, in grid order."""
    import pyarrow as pa

    done = [p for p in grid.points if p.point_id in rows]
    arrays, fields = [], []

    def add(name, typ, values):
        fields.append(pa.field(name, typ))
        arrays.append(pa.array(values, type=typ))

    add("point_id", pa.string(), [p.point_id for p in done])
    add("config_id", pa.string(), [p.config_id for p in done])
    add("replicate", pa.int64(), [p.replicate for p in done])
    for c in grid.config_columns:
        typ, conv = _config_arrow_type([p.config.get(c) for p in grid.points])
        vals = [p.config.get(c) for p in done]
        if conv is not None:
            vals = [None if v is None else conv(v) for v in vals]
        add(c, typ, vals)
    for c in _ERROR_COLUMNS:
        add(c, pa.string(), [rows[p.point_id].get(c) for p in done])
    for col, code, _ in grid.metrics:
        add(col, _arrow_type(code), [_cast(code, rows[p.point_id].get(col)) for p in done])
    if grid.documents:
        add("result_json", pa.string(), [rows[p.point_id].get("result_json") for p in done])
    add("opsim_version", pa.string(), [rows[p.point_id].get("opsim_version") for p in done])
    add("wall_seconds", pa.float64(), [_cast("f", rows[p.point_id].get("wall_seconds")) for p in done])
    meta = {"schema": SCHEMA_VERSION, "opsim_version": __version__, "grid": grid.describe(), "columns": columns(grid)}
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={META_KEY: _canonical(meta)}))


def to_frame(table):
    """A pandas DataFrame of a results table (the same as ``pandas.read_parquet`` gives)."""
    return table.to_pandas()


def _write_atomic(table, path: str) -> None:
    """Replace the results file whole (see :func:`opsim._output.atomic_write`); the temporary
    file is named ``.NAME.*.tmp`` so that the next holder of the lock can clear one left by a
    writer that was killed."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        atomic_write(path, lambda f: pq.write_table(table, f), binary=True, prefix=f".{os.path.basename(path)}.")
    except pa.ArrowException as e:
        raise OpsimError(f"cannot write the results to {path}: {e}") from None
