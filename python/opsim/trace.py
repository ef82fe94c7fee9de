"""Block traces: summaries and conversion to fio iologs (the readers live in the Rust core).

    >>> from opsim import trace
    >>> trace.info("hm_0.csv.gz", device="0")["write"]["ios"]
    >>> trace.convert("hm_0.csv.gz", "hm_0.iolog", target="/dev/nvme0n1")   # fio --read_iolog=
    >>> trace.synth("hc.iolog", skew="hot-cold:20/80", span=64 << 30, count=1_000_000)

The options are those of a ``[workload.trace]`` table in a simulation config
(docs/workloads.md): ``format`` (auto, msr, blkparse, fio-iolog, disksim, mqsim, spc, columns),
``device``, ``skip_bad``, ``columns``, ``delimiter``, ``skip_lines``, ``action``.
"""

from __future__ import annotations

import json
import os

from . import _args, sim
from .errors import InputError, TraceError
from .workload import Workload, parse_skew

__all__ = ["FORMATS", "convert", "frame", "head", "info", "options", "synth"]

FORMATS = ("auto", "msr", "blkparse", "fio-iolog", "disksim", "mqsim", "spc", "columns")


def options(path, **opts) -> dict:
    """The ``[workload.trace]`` table for ``path`` and the given options (None values dropped)."""
    p = _args.path("path", path)
    if not os.path.exists(p):
        raise TraceError(f"{p}: no such file", key=p)
    d = {"path": p}
    d.update({k: v for k, v in opts.items() if v is not None})
    return d


def _doc(path, opts) -> str:
    """The options as the JSON the core reads (its errors name the option: ``trace.skip_lines``)."""
    d = options(path, **opts)
    try:
        return json.dumps(d, allow_nan=True)
    except (TypeError, ValueError) as e:
        bad = next((k for k, v in d.items() if not _jsonable(v)), "trace")
        raise InputError(f"trace.{bad}: {e}", key=f"trace.{bad}") from None


def _jsonable(v) -> bool:
    try:
        json.dumps(v)
    except (TypeError, ValueError):
        return False
    return True


def info(path, **opts) -> dict:
    """Read the whole trace (streaming) and summarise it: requests, bytes and split by kind,
    footprint, span, duration, the most frequent sizes, lines skipped."""
    return json.loads(sim._core().trace_info(_doc(path, opts)))


def head(path, n: int = 10, **opts) -> list[tuple[int, str, int, int]]:
    """The first ``n`` requests: (time in ns from the first request, kind, byte offset, bytes)."""
    doc = _doc(path, opts)
    return [tuple(r) for r in json.loads(sim._core().trace_head(doc, _args.uint("n", n)))]


def frame(path, n: int = 1_000_000, **opts):
    """The first ``n`` requests as a pandas DataFrame (t_s, kind, offset, bytes)."""
    import pandas as pd  # noqa: PLC0415  (start-up: pandas for this frame only)

    rows = head(path, n, **opts)
    df = pd.DataFrame(rows, columns=["t_ns", "kind", "offset", "bytes"])
    df.insert(0, "t_s", df.pop("t_ns") / 1e9)
    return df


def convert(path, out, version: int = 3, target: str = "/dev/sdX", **opts) -> int:
    """Write the trace as a fio iolog (version 3: times in microseconds; version 2: ``wait``
    lines in milliseconds) replaying on ``target``; returns the number of requests written.
    The output appears atomically (nothing is left behind on error)."""
    doc = _doc(path, opts)
    out, version = _args.path("out", out), _args.uint("version", version, lo=2, hi=3)
    return sim._core().trace_convert(doc, out, version, _args.text("target", target))


def synth(
    out,
    skew: str = "uniform",
    span: int = 64 << 30,
    count: int = 1_000_000,
    block_size: int = 4096,
    read_fraction: float = 0.0,
    seed: int = 1,
    interval_ns: int = 10_000,
    target: str = "/dev/sdX",
) -> int:
    """Write ``count`` commands of the core's own generator for ``skew`` (``uniform``,
    ``hot-cold:20/80``, ``zipf:0.9``, ``sequential``, ``jesd219``; the notation of ``opsim advise
    --skew``) over ``span`` bytes as a fio iolog v3: a trace with a known skew.  Same seed, same
    file.  Returns the commands written; the file appears atomically."""
    rf = _args.number("read_fraction", read_fraction)
    if not 0 <= rf < 1:
        raise InputError(f"read_fraction: {rf} is outside [0, 1)", key="read_fraction")
    wl = Workload(read_fraction=rf, block_size=_args.uint("block_size", block_size))
    name = _args.text("skew", skew).strip().lower()
    if name in ("sequential", "jesd219"):
        doc: dict = {"type": name, "read_fraction": wl.read_fraction}
        if name == "sequential":
            doc["request_size"] = wl.block_size
    else:
        for k, v in parse_skew(name).items():
            setattr(wl, k, v)
        doc = wl.sim_workload()  # no random/sequential mix here: no drive geometry needed
    out = _args.path("out", out)
    return sim._core().trace_synth(
        json.dumps(doc),
        _args.uint("span", span),
        _args.uint("count", count),
        out,
        _args.uint("seed", seed),
        _args.uint("interval_ns", interval_ns),
        _args.text("target", target),
    )
