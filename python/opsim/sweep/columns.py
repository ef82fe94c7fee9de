"""The metric columns of a sweep's results table, declared once: each column's name, type and
path in the ``opsim simulate --json`` document, and the values taken from a document."""

from __future__ import annotations

from collections.abc import Mapping

from ..results import LATENCY_PERCENTILES, LATENCY_SUMMARY

#: columns that depend on the machine and the moment; everything else is deterministic
WALL_CLOCK_COLUMNS = ("wall_seconds",)


# (column, type, path in the `opsim simulate --json` document).  Types: f float64,
# i int64, b bool.  Column names are the paths, dotted.
_BASE_METRICS = [
    ("waf", "f", ("waf",)),
    ("op.user", "f", ("op", "user")),
    ("op.physical", "f", ("op", "physical")),
    ("op.native", "f", ("op", "native")),
    ("op.effective", "f", ("op", "effective")),
    ("drive.user_bytes", "i", ("drive", "user_bytes")),
    ("drive.physical_bytes", "i", ("drive", "physical_bytes")),
    ("drive.blocks", "i", ("drive", "blocks")),
    ("steady_state.reached", "b", ("steady_state", "reached")),
    ("steady_state.round", "i", ("steady_state", "round")),
    ("steady_state.mean", "f", ("steady_state", "mean")),
    ("steady_state.range_ratio", "f", ("steady_state", "range_ratio")),
    ("steady_state.excursion_ratio", "f", ("steady_state", "excursion_ratio")),
    ("measure_window.first_round", "i", ("measure_window", "first_round")),
    ("measure_window.last_round", "i", ("measure_window", "last_round")),
    ("measure_window.host_write_bytes", "i", ("measure_window", "host_write_bytes")),
    ("measure_window.nand_write_bytes", "i", ("measure_window", "nand_write_bytes")),
    ("measure_counters.host_write_pages", "i", ("measure_counters", "host_write_pages")),
    ("measure_counters.nand_write_pages", "i", ("measure_counters", "nand_write_pages")),
    ("measure_counters.gc_copy_pages", "i", ("measure_counters", "gc_copy_pages")),
    ("measure_counters.erases", "i", ("measure_counters", "erases")),
    ("measure_counters.rmw_pages", "i", ("measure_counters", "rmw_pages")),
    ("measure_counters.host_read_cmds", "i", ("measure_counters", "host_read_cmds")),
    ("wear.min", "i", ("wear", "min")),
    ("wear.mean", "f", ("wear", "mean")),
    ("wear.max", "i", ("wear", "max")),
    ("victims.mean_valid_fraction", "f", ("victims", "mean_valid_fraction")),
    ("free_blocks_min", "i", ("free_blocks_min",)),
]


_TIMED_METRICS = [
    ("timed.simulated_seconds", "f", ("timed", "simulated_seconds")),
    ("timed.measured_iops", "f", ("timed", "measured_iops")),
    ("timed.steady_iops", "f", ("timed", "steady_iops")),
    ("timed.steady_state.reached", "b", ("timed", "steady_state", "reached")),
    ("timed.steady_state.round", "i", ("timed", "steady_state", "round")),
    ("timed.phases.fob_end_s", "f", ("timed", "phases", "fob_end_s")),
    ("timed.phases.steady_start_s", "f", ("timed", "phases", "steady_start_s")),
] + [
    (f"timed.latency_us.{cls}.{q}", "f", ("timed", "latency_us", cls, q))
    for cls, qs in (
        ("all", ("mean", *(k for k, _ in LATENCY_PERCENTILES), "max")),
        ("read", ("mean", *LATENCY_SUMMARY)),
        ("write", ("mean", *LATENCY_SUMMARY)),
    )
    for q in qs
]


_ERROR_COLUMNS = ["status", "error_type", "error_key", "error_message"]


_TAIL_COLUMNS = ["opsim_version", "wall_seconds"]


_ID_COLUMNS = ["point_id", "config_id", "replicate"]


def _dig(d, path):
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def metrics(data: Mapping) -> dict:
    """The sweep's metric columns from one ``opsim simulate`` result document."""
    out = {}
    for col, _, path in _BASE_METRICS + _TIMED_METRICS:
        out[col] = _dig(data, path)
    t = data.get("timed")
    if t:
        for cls in ("read", "write"):  # no commands of that kind: no latency, not zeros
            if not _dig(t, ("latency_us", cls, "count")):
                for col, _, path in _TIMED_METRICS:
                    if path[:3] == ("timed", "latency_us", cls):
                        out[col] = None
    return out
