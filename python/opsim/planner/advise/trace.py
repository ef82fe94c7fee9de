"""Advising from a block trace (``opsim advise --trace FILE``; docs/planner.md, "Advising from
a trace").

* **Checked first**, before any long work: the trace is read once by the core
  (:func:`opsim.trace.info`, streaming): an empty trace, a garbage line (the reader's error
  names ``file:line``), a trace without writes and a trace whose highest byte lies past the
  drive's native capacity (named by the line of the request that reaches it) are refused,
  exit 2.
* **The screen** runs on the trace's *fitted workload*: :func:`opsim.trace_profile.fit`'s skew
  (``hot-cold:F/R`` or ``zipf:s``, the notation of ``--skew``), the trace's read share and its
  most frequent write size, through the advisor's own screen (the skew screen of
  :mod:`.skew` for a skewed fit).
* **The replay** confirms with the trace itself: on the advisor's scale model at each
  candidate level, a sequential fill, then the trace looped (``repeat = true``) in the
  functional model until the fitted workload's coldest class has turned over (the same aging
  rule as a synthetic workload's, :func:`.confirm.aging_drive_writes`), then the timed model's
  measurement rounds, still looping.
* **The scaling rule**: the trace's span (0 to its highest byte) stands for the user area at
  every level: ``remap = "scale-aligned"`` maps byte ``o`` to ``o x model user bytes / span``
  (a request on a 4 KiB boundary kept on one, so a 4 KiB write stays one mapping unit), so each
  LBA region keeps its share of the drive and of the writes (the meaning of ``hot-cold:20/80``
  in the fit and in the screen).  The scale model is chosen no larger than the span (fewer
  blocks, at least :data:`.confirm.MIN_MODEL_BLOCKS`), so the core's scale remap only ever
  shrinks; a span smaller than the smallest model replays at its own offsets, the rest of the
  model holding the fill's data, never rewritten, which the notes say.  Pages of the span the
  trace never writes hold the fill's data too: a trace whose write footprint is much smaller
  than its span is replayed as a drive that is mostly static data, as the real volume was.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ... import trace, trace_profile
from ...errors import TraceError
from ...workload import Workload, parse_skew
from .advisor import advise
from .confirm import (
    AGING_OPS_CAP,
    MIN_MODEL_BLOCKS,
    TIMED_OPS_CAP,
    ScaleModel,
    aging_drive_writes,
    model_geometry,
    plan_model,
)
from .drive import Drive

#: a pass of the trace may be looped at most this many times per run (beyond: the trace is
#: too small to age the model; the notes say so)
MAX_PASSES = 100_000


@dataclass
class TraceSource:
    path: str
    opts: dict  # the reader options (format, device, ...), None values dropped
    info: dict  # opsim.trace.info
    fit: dict  # skew, error, workload (opsim.trace_profile.fit)

    @property
    def span(self) -> int:
        return int(self.info["max_end"])

    def replay_table(self) -> dict:
        """The ``[workload]`` table of the replay: the trace looped, scaled to the user area."""
        t = trace.options(os.path.abspath(self.path), **self.opts)
        t |= {"remap": "scale-aligned", "repeat": True}
        return {"type": "trace", "trace": t}

    def to_dict(self) -> dict:
        i = self.info
        return {
            "path": self.path,
            "options": self.opts,
            "format": i["format"],
            "records": i["records"],
            "write_ios": i["write"]["ios"],
            "read_ios": i["read"]["ios"],
            "trim_ios": i["trim"]["ios"],
            "span_bytes": self.span,
            "footprint_bytes": i["footprint_bytes"],
            "write_footprint_bytes": i["write_footprint_bytes"],
            "fit": self.fit,
        }


def load_trace(path, opts: dict, drive: Drive, max_memory=None) -> TraceSource:
    """Read, check and fit the trace (every refusal names the file and, where there is one,
    the line); ``max_memory`` caps the profile's per-block state (its default: 2 GiB)."""
    opts = {k: v for k, v in opts.items() if v is not None}
    info = trace.info(path, **opts)  # empty, garbage: the core's TraceError names file:line
    check_for_drive(info, drive)
    return TraceSource(str(path), opts, info, fit_trace(path, opts, max_memory))


def check_for_drive(info: dict, drive: Drive) -> None:
    """Refuse a trace (its :func:`opsim.trace.info`) without writes, or reaching past the
    drive's native capacity (named by the line of the request that does)."""
    p = info["path"]
    if info["write"]["ios"] == 0:
        raise TraceError(
            f"{p}: no write among its {info['records']:,} requests ({info['lines']:,} lines): "
            "nothing to wear the drive, no OP to advise",
            key=p,
        )
    if info["max_end"] > drive.native.bytes:
        line = info.get("max_end_line") or 0
        key = f"{p}:{line}" if line else p
        raise TraceError(
            f"{key}: the request there ends at byte {info['max_end']:,}, past the drive's native capacity "
            f"({drive.native.bytes:,} bytes): the trace was recorded on a larger volume; keep one device "
            "(--device) or advise a larger drive",
            key=key,
        )


def fit_trace(path, opts: dict, max_memory=None) -> dict:
    """The trace's fitted workload (:mod:`opsim.trace_profile`): ``skew`` in ``--skew``
    notation, ``error``, ``workload`` (the ``[workload]`` table), ``write_size`` (the upper
    bound of the profile's size bucket holding the most writes).  A profile cut short by
    Ctrl-C is not advised on: the interrupt goes on (exit 130)."""
    p = trace_profile.profile(path, max_memory=max_memory, **opts)
    if getattr(p, "partial", False):
        raise KeyboardInterrupt
    if p.overwrite_ratio <= 0:
        # every block written once: the write counts are all 1 under any skew, so there is no
        # skew to fit (and nothing the drive's GC would see as hot)
        raise TraceError(
            f"{path}: too few writes to fit a workload: its {p.block_writes:,} block writes each write a block "
            "not written before in the trace, which every skew would show alike; give a longer trace, or the "
            "workload's skew (--skew)",
            key=str(path),
        )
    f = trace_profile.fit(p)
    mix = [b for b in p.data.get("size_mix", []) if b["write"] > 0]
    size = max(mix, key=lambda b: b["write"])["upto"] if mix else None
    return {"skew": f.skew, "error": f.error, "workload": dict(f.workload), "write_size": size}


def fitted_workload(src: TraceSource, write_rate: int | None = None) -> Workload:
    """The workload the screen plans for: the fit's skew, the trace's read share (reads over
    reads and writes) and its most frequent write size: the upper bound of the profile's size
    bucket holding the most writes (sizes in (b/2, b]; 4 KiB when none is a whole number of
    512-byte sectors)."""
    i = src.info
    rw = i["read"]["ios"] + i["write"]["ios"]
    wl = Workload(read_fraction=i["read"]["ios"] / rw if rw else 0.0)
    for k, v in parse_skew(src.fit["skew"]).items():
        setattr(wl, k, v)
    bs = src.fit.get("write_size")
    wl.block_size = int(bs) if isinstance(bs, int) and bs > 0 and bs % 512 == 0 else 4096
    wl.write_rate = write_rate
    return wl


def replay_model(
    drive: Drive, wl: Workload, src: TraceSource, model_blocks: int, io_budget: int
) -> tuple[ScaleModel, list[str]]:
    """The scale model of the replay and its notes: the advisor's (``plan_model`` for the
    fitted workload), no larger than the trace's span, aged in the functional model with the
    trace looped (a sequential fill first)."""
    notes = []
    blocks = model_blocks
    per_block = drive.scale_model(drive.native.bytes, blocks)["user_bytes"] / blocks
    fit_blocks = math.floor(src.span / per_block) if per_block > 0 else blocks
    if fit_blocks < blocks:
        blocks = max(MIN_MODEL_BLOCKS, fit_blocks)
        notes.append(
            f"the replay's scale model has {blocks:,} blocks, at most the trace's span "
            f"({src.span / 2**30:,.2f} GiB), so the span is scaled down onto it"
        )
    model = plan_model(drive, wl, blocks, io_budget)
    units, ppb, _ = model_geometry(drive, model.blocks)
    user = drive.scale_model(drive.native.bytes, model.blocks)["user_bytes"]
    if src.span < user:
        notes.append(
            f"the trace's span ({src.span / 2**30:,.2f} GiB) is smaller than the smallest scale model's user "
            f"area ({user / 2**30:,.2f} GiB): it replays at its own offsets, the rest of the model holds the "
            "fill's data, never rewritten (the replay's WAF is then low against the screen's)"
        )
    aging = model.aging_drive_writes or aging_drive_writes(wl, units * ppb)  # analytic: none planned
    passes = aging * user / max(1, src.info["write"]["bytes"])
    _check_replay_length(src, aging, model.warmup_drive_writes + model.measure_drive_writes, user)
    if passes > MAX_PASSES:
        notes.append(f"the trace is looped {passes:,.0f} times to age the model: it is short for the drive")
    model.precondition = "fill + aging"
    model.aging_drive_writes = aging
    model.notes = model.notes + notes
    return model, notes


def _check_replay_length(src: TraceSource, aging: float, measured: float, user: int) -> None:
    """Refuse, before any simulation, a trace whose replay would take more commands than the
    advisor spends on a level (:data:`.confirm.AGING_OPS_CAP` functional commands of aging,
    :data:`.confirm.TIMED_OPS_CAP` timed ones measured): each drive write of the model is
    ``user / write bytes`` passes of the trace, reads and all.  A trace of a few writes among
    many reads (MQSim's wsrch-small: 4 in 24,783) would loop for hours."""
    i = src.info
    per_drive_write = user / max(1, i["write"]["bytes"]) * i["records"]
    for what, drive_writes, cap in (
        ("aging", aging, AGING_OPS_CAP),
        ("measurement", measured, TIMED_OPS_CAP),
    ):
        cmds = drive_writes * per_drive_write
        if cmds > cap:
            raise TraceError(
                f"{src.path}: too few writes to replay: {i['write']['ios']:,} writes "
                f"({i['write']['bytes']:,} bytes) among {i['records']:,} requests, so the model's {what} "
                f"({drive_writes:.3g} drive writes of its {user / 2**30:,.2f} GiB) would replay the trace "
                f"{drive_writes * user / max(1, i['write']['bytes']):,.0f} times, {cmds:,.0f} commands (at most "
                f"{cap:,}); give a longer trace, --no-simulate for the screen alone, or the workload's skew (--skew)",
                key=src.path,
            )


def compare(d: dict, src: TraceSource) -> dict:
    """What the screen (the fitted workload) and the replay (the trace) each gave: their
    picks, and the WAF each predicts at the advised level, with how far apart they are."""
    screen = {r["index"]: r for r in d["screen"]}
    sim = {r["index"]: r for r in d["simulated"]}
    rec = d["recommendation"]
    replayed = rec is not None and rec["source"] == "simulator"
    pick = (rec["model_pick"] if replayed else rec) if rec is not None else None
    idx = rec["index"] if rec else None
    s_waf = screen[idx]["waf"] if idx is not None else None
    r_waf = sim[idx]["waf"] if idx is not None and idx in sim else None
    return {
        "fit": src.fit,
        "screen": {
            "workload": f"the fitted workload: {src.fit['skew']}",
            "advised_held_back": None if pick is None else pick["held_back"],
            "advised_user_bytes": None if pick is None else pick["user_bytes"],
            "waf_at_its_pick": None if pick is None else screen[pick["index"]]["waf"],
        },
        "replay": {
            "workload": "the trace, looped, scaled to the user area",
            "advised_held_back": rec["held_back"] if replayed else None,
            "advised_user_bytes": rec["user_bytes"] if replayed else None,
        },
        "waf_at_advised": {
            "held_back": None if rec is None else rec["held_back"],
            "screen": s_waf,
            "replay": r_waf,
            "difference": None if s_waf is None or r_waf is None else r_waf - s_waf,
            "relative": None if s_waf is None or r_waf is None else (r_waf - s_waf) / s_waf,
        },
    }


def advise_trace(drive: Drive, targets, src: TraceSource, *, write_rate=None, **kw) -> dict:
    """:func:`.advisor.advise` with the trace's fitted workload screened and the trace itself
    replayed in confirmation.  Returns its document with a ``trace`` section."""
    wl = fitted_workload(src, write_rate)
    model = None
    notes: list[str] = []
    if kw.get("confirm", True):
        model, notes = replay_model(drive, wl, src, kw.get("model_blocks", 2048), kw.get("io_budget", 1_500_000))
    d = advise(drive, wl, targets, replay=src.replay_table(), scale_model=model, intervals=False, **kw)
    d["trace"] = src.to_dict() | {
        "rule": (
            "the trace's span (0 to its highest byte) stands for the user area at every level "
            '(remap = "scale-aligned": byte o at o x user bytes / span, a 4 KiB-aligned request kept aligned); looped (repeat = true) from a sequential '
            "fill until the fitted workload's coldest class has turned over, then measured"
        ),
        "notes": notes,
    }
    d["trace"]["comparison"] = compare(d, src)
    d["workload"]["description"] = f"{src.path}: fitted {src.fit['skew']}; " + d["workload"]["description"]
    d["assumptions"].append(
        f"trace {src.path}: the screen uses its fitted workload ({src.fit['skew']}, fit error "
        f"{100 * src.fit['error']:.2f} points of the write share, spread over every LBA), the simulator replays "
        f"the trace itself: {d['trace']['rule']}" + "".join(f"; {n}" for n in notes)
    )
    return d
