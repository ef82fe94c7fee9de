"""``profile(path, **reader_opts)``: the core's streaming write profile of a trace as a typed
:class:`TraceProfile` (the core computes every figure; this module only decodes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from .. import sim, trace
from ..results import SCHEMA_TRACE_PROFILE as SCHEMA
from ..units import parse_size

__all__ = ["SCHEMA", "TraceProfile", "profile"]


@dataclass(frozen=True)
class TraceProfile:
    """A trace's write profile.  ``data`` is the core's whole document (``--json``)."""

    path: str
    records: int
    #: Ctrl-C ended the pass: the figures cover the first ``records`` requests
    partial: bool
    #: 4 KiB blocks written (every write counted) and distinct blocks written
    block_writes: int
    written_blocks: int
    #: 4 KiB blocks from offset 0 to the highest end offset
    span_blocks: int
    overwrite_ratio: float
    sequential_share: float
    #: (writes, blocks): how many written blocks were written that many times, ascending
    write_counts: list[tuple[int, int]]
    #: the write-frequency curve (share of written blocks, hottest first; share of writes)
    curve: list[tuple[float, float]]
    #: the curve exactly at 1, 5, 10, 20 and 50% of the written blocks
    curve_at: dict[float, float]
    data: dict = field(repr=False)

    @classmethod
    def from_json(cls, doc: dict) -> TraceProfile:
        return cls(
            path=doc["path"],
            records=doc["records"],
            partial=doc["partial"],
            block_writes=doc["block_writes"],
            written_blocks=doc["written_blocks"],
            span_blocks=doc["span_blocks"],
            overwrite_ratio=doc["overwrite_ratio"],
            sequential_share=doc["sequential_share"],
            write_counts=[(int(n), int(b)) for n, b in doc["write_counts"]],
            curve=[(p["blocks"], p["writes"]) for p in doc["curve"]],
            curve_at={p["blocks"]: p["writes"] for p in doc["curve_at"]},
            data=doc,
        )


def profile(
    path,
    *,
    max_memory: int | str | None = None,
    progress: Callable[[int, int, float], object] | None = None,
    **reader_opts,
) -> TraceProfile:
    """Read the whole trace once (streaming) and profile its writes.

    ``reader_opts`` are the ``[workload.trace]`` options (format, device, skip_bad, columns,
    delimiter, skip_lines, action).  ``max_memory`` caps the per-block state (bytes or a size
    such as ``"8GiB"``; default 2 GiB: 8 bytes per 4 KiB block in the 1 GiB chunks the trace
    writes); past it the pass stops with a ConfigError naming ``max_memory``.  ``progress`` is
    called about once a second with (records, lines, seconds).  Ctrl-C ends the pass and
    returns what was counted, with ``partial`` set."""
    doc = trace._doc(path, reader_opts)
    cap = None if max_memory is None else parse_size(max_memory, key="max_memory")
    return TraceProfile.from_json(json.loads(sim._core().trace_profile(doc, cap, progress)))
