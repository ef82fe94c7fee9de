"""Result documents as plots and reports read them.

Two kinds of result are understood:

* ``sim``: a simulation result (``opsim simulate --json``, ``SimResult.data``), functional or
  timed (``timed`` present);
* ``measure``: a measured result (``opsim measure``, ``"schema": "opsim-measure"``,
  docs/measure.md).

A trace profile (``opsim trace profile --json``, ``"schema": "opsim-trace-profile"``) is read
here too, for the write-curve plot and the report (:func:`load_trace_profile`); the profile itself
is :mod:`opsim.trace_profile`'s.

Everything here reads what the document holds; the only figures derived are the cumulative
data written (from the per-interval IOPS and the command size) and the phases of a measured run
(the timed model's rule applied to its series; see :func:`phases`).
"""

from __future__ import annotations

import os
import re
from typing import Any

from . import userfile
from .errors import InputError
from .units import fmt_bytes

#: the largest result file read (a result of many thousands of rounds is tens of MB)
MAX_RESULT = 512 << 20

SIM = "sim"
MEASURE = "measure"

_SIM_KEYS = ("opsim_version", "config", "drive", "op", "waf", "rounds", "steady_state")


def as_doc(obj: Any) -> dict:
    """The JSON document of a :class:`opsim.sim.SimResult` or of a dict."""
    data = getattr(obj, "data", obj)
    if not isinstance(data, dict):
        raise InputError(f"a result must be a SimResult or a dict, not {type(obj).__name__}", key="result")
    return data


def kind_of(doc: dict) -> str | None:
    if not isinstance(doc, dict):
        return None
    if doc.get("schema") == "opsim-measure":
        return MEASURE
    if all(k in doc for k in _SIM_KEYS):
        return SIM
    return None


def check(doc: Any, name: str = "result") -> dict:
    """``doc`` if it is an opsim result; else InputError naming ``name`` and what is wrong."""
    if not isinstance(doc, dict):
        raise InputError(
            f"{name}: not an opsim result (the JSON is a {type(doc).__name__}, not an object)", key="result"
        )
    kind = kind_of(doc)
    if kind is None:
        if "schema" in doc:
            raise InputError(
                f"{name}: not an opsim result (schema {doc['schema']!r}; expected a simulation "
                "result from `opsim simulate --json` or 'opsim-measure')",
                key="result",
            )
        missing = [k for k in _SIM_KEYS if k not in doc]
        raise InputError(
            f"{name}: not an opsim result (no 'schema' and missing {', '.join(missing)}; expected "
            "`opsim simulate --json` or `opsim measure` output)",
            key="result",
        )
    if kind == MEASURE:
        v = doc.get("schema_version")
        if v not in (1, 2):
            raise InputError(
                f"{name}: opsim-measure schema_version {v!r} is not supported (expected 1 or 2)", key="result"
            )
        if not isinstance(doc.get("iops_series"), list) or not isinstance(doc.get("rounds"), list):
            raise InputError(f"{name}: opsim-measure result without 'iops_series' and 'rounds' lists", key="result")
    else:
        t = doc.get("timed")
        if t is not None and not (
            isinstance(t, dict) and isinstance(t.get("iops_series"), list) and isinstance(t.get("rounds"), list)
        ):
            raise InputError(f"{name}: 'timed' is not a timed-model report (no iops_series/rounds)", key="result")
    return doc


def load(path: str | os.PathLike) -> dict:
    """Read and check a result file (exit code 2 on any problem, naming the file)."""
    path = os.fspath(path)
    if not os.path.lexists(path):
        raise InputError(f"{path}: no such file", key="result")
    # a regular file (a FIFO or device refused unread) of at most MAX_RESULT bytes
    text = userfile.read_text(path, what="result", cap=MAX_RESULT, key="result")
    return check(userfile.loads_json(text, source=path, key="result"), path)


# ----------------------------------------------------------------------------- descriptions


def is_timed(doc: dict) -> bool:
    return kind_of(doc) == SIM and bool(doc.get("timed"))


def user_bytes(doc: dict) -> int | None:
    if kind_of(doc) == SIM:
        return doc["drive"]["user_bytes"]
    return (doc.get("target") or {}).get("span_bytes")


def workload_label(doc: dict) -> str:
    """A short description of the workload ("4 KiB random write", "4 KiB random 95:5 R:W")."""
    if kind_of(doc) == MEASURE:
        p = doc.get("parameters") or {}
        bs = (p.get("bs") or ["?"])[0]
        mix = (p.get("rwmix") or ["0/100"])[0]
        r, _, w = str(mix).partition("/")
        what = "random write" if r in ("0", "") else f"random {r}:{w} R:W"
        return f"{bs} {what} QD{p.get('iodepth', '?')} (measured {doc.get('test', '')})"
    wl = doc["config"]["workload"]
    size = wl.get("request_size") or doc["drive"]["page_size"]
    size_s = f"{size // 1024} KiB" if size % 1024 == 0 else f"{size} B"
    rf = wl.get("read_fraction") or 0.0
    kind = wl.get("type", "uniform")
    pattern = {"uniform": "random", "snia-pts": "SNIA PTS random", "sequential": "sequential"}.get(kind, kind)
    if rf:
        mix = f"{rf * 100:g}:{(1 - rf) * 100:g} R:W"
        out = f"{size_s} {pattern} {mix}"
    else:
        out = f"{size_s} {pattern} write"
    if kind == "zoned" and wl.get("zone_size"):
        out += f" ({fmt_bytes(wl['zone_size'])} zones, {wl.get('active_zones') or 1} active)"
    span = wl.get("span", 1.0)
    if span is not None and span < 1.0:
        out += f", span {span * 100:g}%"
    return out


def pattern(doc: dict) -> tuple[int, float]:
    """(bytes per command, read share) of the workload: simulated and measured results with the
    same pattern are drawn on the same axes."""
    if kind_of(doc) == MEASURE:
        p = doc.get("parameters") or {}
        track = _measure_track(doc)
        bs = track[0] if track else (p.get("bs") or ["4k"])[0]
        mix = track[1] if track else (p.get("rwmix") or ["0/100"])[0]
        r = int(str(mix).partition("/")[0] or 0)
        return fio_size(bs), round(r / 100.0, 4)
    wl = doc["config"]["workload"]
    return int(wl.get("request_size") or doc["drive"]["page_size"]), round(float(wl.get("read_fraction") or 0.0), 4)


def default_label(doc: dict) -> str:
    if kind_of(doc) == MEASURE:
        tgt = (doc.get("target") or {}).get("path") or "?"
        return f"measured {doc.get('test', '')} {os.path.basename(str(tgt))}"
    return f"OP {doc['op']['user'] * 100:.1f}% {doc['gc']}"


# ----------------------------------------------------------------------------- series


def fio_size(text) -> int:
    """fio block size text (``4k``, ``128k``, ``1m``, ``512``) in bytes (k = 1024)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)[iI]?[bB]?\s*", str(text))
    if not m:
        raise InputError(f"block size {text!r} is not a fio size", key="bs")
    return int(m.group(1)) * {"": 1, "k": 2**10, "m": 2**20, "g": 2**30}[m.group(2).lower()]


def _measure_track(doc: dict) -> tuple[str, str] | None:
    """(bs, rwmix) the iops test tracks (its steady-state metric), None for one-combination tests."""
    if doc.get("test") != "iops":
        return None
    label = doc["rounds"][0].get("label", "") if doc["rounds"] else ""
    m = re.fullmatch(r"(\S+) R/W (\d+)/(\d+)", label)
    if m:
        return m.group(1), f"{m.group(2)}/{m.group(3)}"
    p = doc.get("parameters") or {}
    return (p.get("bs") or ["4k"])[0], (p.get("rwmix") or ["0/100"])[0]


def series(doc: dict) -> dict | None:
    """Per-interval IOPS: ``{"t_s", "iops", "written_bytes", "written_dw", "interval_s"}`` as
    lists (``t_s`` = end of each interval), or None when the document has no series
    (a functional simulation).  ``written_*`` is host data written since the series began."""
    import numpy as np  # noqa: PLC0415  (start-up: `opsim --help` loads this module, not numpy)

    if kind_of(doc) == SIM:
        t = doc.get("timed")
        if not t or not t["iops_series"]:
            return None
        pts = t["iops_series"]
        dt = float(doc["config"].get("timing", {}).get("series_interval_s") or 1.0)
        req = doc["config"]["workload"].get("request_size") or doc["drive"]["page_size"]
        ts = np.array([p["t_s"] for p in pts], dtype=float)
        iops = np.array([p["iops"] for p in pts], dtype=float)
        wr = np.array([p.get("write_iops", p["iops"]) for p in pts], dtype=float) * dt * req
    else:
        pts = doc["iops_series"]
        track = _measure_track(doc)
        if track:
            pts = [p for p in pts if p.get("bs") == track[0] and p.get("rwmix") == track[1]]
        if not pts:
            return None
        p = doc.get("parameters") or {}
        bs = fio_size(track[0] if track else (p.get("bs") or ["4k"])[0])
        mix = track[1] if track else (p.get("rwmix") or ["0/100"])[0]
        wfrac = int(str(mix).partition("/")[2] or 100) / 100.0
        ts = np.array([p["t_s"] for p in pts], dtype=float)
        iops = np.array([p["iops"] for p in pts], dtype=float)
        dt = 1.0  # fio logs one-second averages
        if all(p.get("write_iops") is not None for p in pts):  # schema 2: per direction
            wr = np.array([p["write_iops"] for p in pts], dtype=float) * bs
        else:
            wr = iops * bs * wfrac
    written = np.cumsum(wr)
    cap = user_bytes(doc)
    return {
        "t_s": ts.tolist(),
        "iops": iops.tolist(),
        "written_bytes": written.tolist(),
        "written_dw": (written / cap).tolist() if cap else None,
        "interval_s": dt,
    }


def _fob_end(ts, iops):
    """The timed model's rule (timed::phases): the first point under half the first point's IOPS."""
    if not iops:
        return None
    f0 = iops[0]
    for t, v in zip(ts, iops):
        if v < 0.5 * f0:
            return float(t)
    return None


TIMED_RULE = (
    "SNIA PTS on per-round IOPS (5-round window, range <= 20%, excursion <= 10% of the mean); "
    "rounds that wrote without erasing a block (fresh out of box) not eligible"
)


def phases(doc: dict) -> dict:
    """Fresh-out-of-box, transition and steady phases of a run with a series.

    ``fob_end_s``: the timed model's ``phases.fob_end_s`` (first point under half the first
    point's IOPS; None for a run preconditioned analytically, which starts in steady state);
    for measured runs the same rule on the measured series.
    ``steady_start_s``: the start of the SNIA steady-state window on per-round IOPS: the timed
    model's own (its rule leaves out rounds that wrote without erasing a block, so a flat
    fresh-out-of-box plateau does not count as steady); for measured runs the measured
    result's steady-state window.
    """
    out: dict[str, Any] = {
        "fob_end_s": None,
        "steady_start_s": None,
        "steady_iops": None,
        "steady_reached": False,
        "rule": None,
    }
    if kind_of(doc) == SIM:
        t = doc.get("timed")
        if not t:
            return out
        ph, ss = t["phases"], t["steady_state"]
        out.update(
            fob_end_s=ph.get("fob_end_s"),
            steady_start_s=ph.get("steady_start_s"),
            steady_reached=bool(ss.get("reached")),
            steady_iops=t.get("steady_iops"),
            rule=TIMED_RULE,
        )
        if doc["config"]["run"].get("precondition") == "analytic":
            out["fob_note"] = "analytic preconditioning: the run starts in steady state"
        return out
    ss = doc.get("steady_state") or {}
    out["rule"] = "SNIA PTS rule on the measured rounds (opsim measure)"
    if isinstance(doc.get("phases"), dict):  # schema 2 carries them
        ph = doc["phases"]
        out.update(
            fob_end_s=ph.get("fob_end_s"),
            steady_start_s=ph.get("steady_start_s"),
            steady_reached=bool(ss.get("reached")),
            steady_iops=doc.get("steady_iops"),
        )
        return out
    s = series(doc)
    if s:
        out["fob_end_s"] = _fob_end(s["t_s"], s["iops"])
    if ss.get("reached") and ss.get("window_rounds"):
        first = ss["window_rounds"][0]
        t0 = 0.0
        for r in doc["rounds"]:
            if r["index"] == first:
                break
            combos = r.get("combinations") or [r]
            t0 += sum(c.get("runtime_s") or 0.0 for c in combos)
        out.update(steady_reached=True, steady_start_s=t0, steady_iops=doc.get("steady_iops"))
    return out


def measured_iops(doc: dict) -> float | None:
    """IOPS over the measurement window (timed sims) or of the last tracked round (measured)."""
    if kind_of(doc) == SIM:
        t = doc.get("timed")
        return t["measured_iops"] if t else None
    if doc.get("measured_iops") is not None:  # schema 2
        return doc["measured_iops"]
    return doc["rounds"][-1]["iops"] if doc["rounds"] else None


#: the latency percentiles a result carries (the timed model's ``LatencySummary`` and
#: ``opsim measure``'s result), as (key, quantile); the one declaration every table, plot and
#: sweep column uses
LATENCY_PERCENTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99.9", 0.999), ("p99.99", 0.9999))
#: the percentiles a one-line summary prints (tables of ``simulate``, ``measure``)
LATENCY_SUMMARY = ("p50", "p99", "p99.9", "max")


def latency(doc: dict, direction: str = "all") -> dict | None:
    """Latency percentiles in microseconds ({p50, p90, p99, p99.9, p99.99, max, count?}), or None."""
    if kind_of(doc) == SIM:
        t = doc.get("timed")
        if not t:
            return None
        lat = t["latency_us"].get(direction)
        return lat if lat and lat.get("count") else None
    lat = doc.get("latency_us") or {}
    if isinstance(lat.get("all"), dict):  # schema 2: all / read / write, as the timed model
        lat = lat.get(direction)
        return lat if lat and lat.get("p50") is not None and lat.get("count", 1) else None
    if direction != "all":  # schema 1: the last round's per-direction percentiles
        last = doc["rounds"][-1] if doc["rounds"] else {}
        lat = ((last.get("directions") or {}).get(direction) or {}).get("latency_us")
    if not lat or lat.get("p50") is None:
        return None
    return lat


def waf(doc: dict) -> float | None:
    if kind_of(doc) == SIM:
        return doc["waf"]
    smart = doc.get("smart") or {}
    return smart.get("waf")


#: how a result without a ``placement`` object ran: every write through one frontier
NO_PLACEMENT = {"mode": "none", "isolation": None, "handles": 0, "shared_blocks": None}


def placement_of(doc: dict) -> dict:
    """The data placement a simulated result ran with (``mode``: none, streams or fdp;
    ``isolation``, ``handles``, ``shared_blocks``); ``mode`` ``"none"`` for a result that
    carries no ``placement`` (made without ``[ftl.placement]`` or by an opsim without it) and
    for a measured result."""
    p = doc.get("placement") if kind_of(doc) == SIM else None
    if isinstance(p, dict) and p.get("mode"):
        return {**NO_PLACEMENT, **p}
    return dict(NO_PLACEMENT)


def placement_label(doc: dict) -> str:
    """The placement a result ran with, for legends: ``placement none``, ``placement fdp, 4
    handles``, ``placement streams, 2 streams``; with the isolation when it is not the default
    (initially)."""
    p = placement_of(doc)
    mode = p["mode"]
    if mode == "none":
        return "placement none"
    n = p.get("handles") or 0
    out = f"placement {mode}, {n} {'handle' if mode == 'fdp' else 'stream'}{'' if n == 1 else 's'}"
    if mode == "fdp" and p.get("isolation") not in (None, "initially"):
        out += f", isolated {p['isolation']}"
    return out


def namespaces_of(doc: dict) -> list[dict] | None:
    """A simulated result's per-namespace results (``namespaces``), or None without them."""
    if kind_of(doc) != SIM:
        return None
    ns = doc.get("namespaces")
    return ns if isinstance(ns, list) and ns else None


def workload_of(doc: dict) -> str:
    """The workload of a result: :func:`opsim.results.workload_label`, or for a result with
    namespaces the tenants ("4 tenants: seq-4k, seq-16k, ...")."""
    ns = namespaces_of(doc)
    if ns is None:
        return workload_label(doc)
    names = [str(n.get("name")) for n in ns]
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"{len(names)} tenant{'' if len(names) == 1 else 's'}: {shown}"


# --------------------------------------------------------------------------- trace profiles

#: the ``schema`` of ``opsim trace profile --json``
SCHEMA_TRACE_PROFILE = "opsim-trace-profile"


def check_trace_profile(doc, name: str = "profile") -> dict:
    """``doc`` if it is ``opsim trace profile --json`` output; else InputError naming ``name``."""
    if not (isinstance(doc, dict) and doc.get("schema") == SCHEMA_TRACE_PROFILE and isinstance(doc.get("curve"), list)):
        raise InputError(f"{name}: not a trace profile (expected `opsim trace profile --json` output)", key="profile")
    return doc


def load_trace_profile(path) -> dict:
    """Read and check a saved trace profile (exit code 2 on any problem, naming the file)."""
    path = os.fspath(path)
    text = userfile.read_text(path, what="trace profile", cap=64 << 20, key="profile")
    return check_trace_profile(userfile.loads_json(text, source=path, key="profile"), path)


# --------------------------------------------------------------------------- fleet comparisons

#: the ``schema`` of ``opsim advise --compare FILE --json``
SCHEMA_ADVISE_COMPARE = "opsim-advise-compare"


def check_compare(doc, name: str = "comparison") -> dict:
    """``doc`` if it is ``opsim advise --compare FILE --json`` output (schema version 1, each
    candidate with its name and curve); else InputError naming ``name``."""
    ok = (
        isinstance(doc, dict)
        and doc.get("schema") == SCHEMA_ADVISE_COMPARE
        and doc.get("schema_version") == 1
        and isinstance(doc.get("candidates"), list)
        and all(isinstance(c, dict) and "name" in c and isinstance(c.get("curve"), list) for c in doc["candidates"])
    )
    if not ok:
        raise InputError(
            f"{name}: not a fleet comparison (expected `opsim advise --compare FILE --json` output)", key="compare"
        )
    return doc


def load_compare(path) -> dict:
    """Read and check a saved fleet comparison (exit code 2 on any problem, naming the file)."""
    path = os.fspath(path)
    text = userfile.read_text(path, what="comparison", cap=64 << 20, key="compare")
    return check_compare(userfile.loads_json(text, source=path, key="compare"), path)
