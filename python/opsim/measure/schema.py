"""The result schema shared by timed simulations and measurements.

A timed simulation's ``result["timed"]`` and a measured result (``opsim measure``,
``"schema": "opsim-measure"``, version 2) have the same keys and types at these paths, so one
piece of plotting code draws both::

    from opsim.measure.schema import timed_view
    for doc in (sim_result, measured_result):
        t = timed_view(doc)
        plot(t["iops_series"], t["rounds"], t["latency_us"]["all"]["p99"], t["phases"]["fob_end_s"])

:data:`TIMED_SCHEMA` lists the paths and the allowed JSON types; ``None`` marks what one side
cannot know (fio sees no NAND writes, so a measured round's ``waf`` is null; a simulation has
no null there).  :func:`check_timed` returns the differences from it.  Docs: docs/measure.md.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError

NUM = "number"  # a JSON number (int or float)
INT = "integer"
BOOL = "boolean"
STR = "string"
NULL = "null"

LATENCY = {
    "count": (INT,),
    "mean": (NUM,),
    "min": (NUM,),
    "p50": (NUM,),
    "p90": (NUM,),
    "p99": (NUM,),
    "p99.9": (NUM,),
    "p99.99": (NUM,),
    "max": (NUM,),
}

TIMED_SCHEMA: dict = {
    "iops_series": [
        {
            "t_s": (NUM,),
            "iops": (NUM,),
            "read_iops": (NUM,),
            "write_iops": (NUM,),
            "mbps": (NUM,),
            "waf": (NUM, NULL),
            "urgent": (BOOL, NULL),
        }
    ],
    "latency_us": {"all": LATENCY, "read": LATENCY, "write": LATENCY},
    "rounds": [
        {
            "index": (INT,),
            "phase": (STR,),
            "t_start_s": (NUM,),
            "t_end_s": (NUM,),
            "iops": (NUM,),
            "write_iops": (NUM,),
            "read_iops": (NUM,),
            "mbps": (NUM,),
            "host_write_bytes": (INT,),
            "completed_write_bytes": (INT,),
            "nand_write_pages": (INT, NULL),
            "gc_copy_pages": (INT, NULL),
            "erases": (INT, NULL),
            "waf": (NUM, NULL),
            "latency_us": LATENCY,
        }
    ],
    "steady_state": {
        "reached": (BOOL,),
        "round": (INT, NULL),
        "window": ("pair of integers", NULL),
        "mean": (NUM, NULL),
        "range_ratio": (NUM, NULL),
        "excursion_ratio": (NUM, NULL),
        "rule": {"window": (INT,), "max_range": (NUM,), "max_excursion": (NUM,)},
    },
    "steady_iops": (NUM, NULL),
    "measured_iops": (NUM,),
    "phases": {"fob_end_s": (NUM, NULL), "steady_start_s": (NUM, NULL)},
}


def json_type(v: Any) -> str:
    """The JSON type name of a value (``integer`` for ints, ``number`` for floats)."""
    if v is None:
        return NULL
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return INT
    if isinstance(v, float):
        return NUM
    if isinstance(v, str):
        return STR
    if isinstance(v, list):
        if len(v) == 2 and all(json_type(x) == INT for x in v):
            return "pair of integers"
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _allowed(t: str, allowed: tuple) -> bool:
    return t in allowed or (t == INT and NUM in allowed)  # an integer is a JSON number too


def check_timed(doc: dict, spec: dict = TIMED_SCHEMA, path: str = "") -> list[str]:
    """Differences between ``doc`` (a timed section or a measured result) and the schema: one
    line per missing key or wrong type, naming the path (``rounds[3].latency_us.p99``)."""
    problems = []
    for key, want in spec.items():
        where = f"{path}.{key}" if path else key
        if not isinstance(doc, dict) or key not in doc:
            problems.append(f"{where}: missing")
            continue
        v = doc[key]
        if isinstance(want, dict):
            if not isinstance(v, dict):
                problems.append(f"{where}: expected an object, got {json_type(v)}")
            else:
                problems += check_timed(v, want, where)
        elif isinstance(want, list):
            if not isinstance(v, list):
                problems.append(f"{where}: expected an array, got {json_type(v)}")
            else:
                for i, item in enumerate(v):
                    problems += check_timed(item, want[0], f"{where}[{i}]")
        elif not _allowed(json_type(v), want):
            problems.append(f"{where}: expected {' or '.join(want)}, got {json_type(v)} ({v!r})")
    return problems


def timed_view(doc: Any) -> dict:
    """The part of a result that has the shared schema: ``result["timed"]`` of a simulation
    (a dict or a :class:`opsim.sim.SimResult`), the document itself for a measurement."""
    data = getattr(doc, "data", doc)
    if not isinstance(data, dict):
        raise InputError(f"not a result document: {type(doc).__name__}", key="result")
    if data.get("schema") == "opsim-measure":
        return data
    if isinstance(data.get("timed"), dict):
        return data["timed"]
    if "iops_series" in data and "rounds" in data:  # already a timed section
        return data
    raise InputError("not a timed simulation result (no 'timed' section) nor an opsim-measure result", key="result")
