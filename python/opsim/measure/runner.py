"""The measurement tests: WSAT, the PTS IOPS test and the AnandTech IO-consistency run.

Each round is one fio invocation (JSON output and per-second logs in the output
directory, named ``.partial`` until the round has finished), so a run that ends early keeps
every completed round: on a stop signal
(SIGINT, SIGTERM, SIGHUP: fio's process group is stopped, ``interrupted`` is true) and when fio
fails (exits non-zero, is killed, hangs: ``error`` says how).  The SNIA steady-state rule
is applied by opsim to the round values with :func:`opsim.sim.steady_state` (Rust core).

The result has the timed simulator's result schema (``iops_series``, ``latency_us``,
``rounds``, ``steady_state``, ``steady_iops``, ``measured_iops``, ``phases``: the keys and types
of a simulation's ``timed`` section, see :mod:`opsim.measure.schema`), plus what only a
measurement has (fio files, labels, the fill, the target).  Docs: docs/measure.md.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..sim import steady_state
from .fdp import ENGINE as FDP_ENGINE
from .fdp import NO_PLACEMENT, FdpPlacement
from .fio import (
    FIO_PERCENTILE_LIST,
    FioFailed,
    Interrupted,
    Latency,
    fio_binary,
    fio_version,
    log_paths,
    per_second,
    per_second_dirs,
    run_fio,
    size_bytes,
    summarize,
)
from .signals import StopSignals, signal_name

SCHEMA_VERSION = 2
PTS_BLOCK_SIZES = ("512", "4k", "8k", "16k", "32k", "64k", "128k", "1m")
PTS_MIXES = ((0, 100), (5, 95), (35, 65), (50, 50), (65, 35), (95, 5), (100, 0))  # (read %, write %)
#: the iops test's measurement window when steady state is not reached: the last rounds
LAST_ROUNDS = 5
#: what a round's file names carry while fio writes them (``round-001.partial.json``,
#: ``round-001.partial_iops.1.log``): a round stopped or killed midway never looks finished
PARTIAL = ".partial"


@dataclass
class Plan:
    test: str  # "wsat" | "iops" | "consistency"
    target: str  # file or block device
    target_kind: str  # "file" | "block"
    capacity_bytes: int  # bytes addressed (the span)
    outdir: str
    iodepth: int = 32
    numjobs: int = 1
    round_s: int = 60
    bs: tuple = ("4k",)
    mixes: tuple = ((0, 100),)  # (read %, write %)
    time_cap_s: float | None = None
    max_rounds: int = 25
    capacity_multiple: float = 4.0  # WSAT: stop after this many times the capacity written
    ioengine: str = "libaio"
    direct: bool = True
    fio_steadystate: str | None = None
    offset_bytes: int = 0
    precondition_passes: int = 0  # SNIA workload-independent preconditioning: 128 KiB sequential passes
    extra: dict = field(default_factory=dict)
    # FDP placement (--fdp): fio writes fdp.device (/dev/ngXnY) with io_uring_cmd; None: no placement
    fdp: FdpPlacement | None = None
    # polled while fio runs: the number of a stop signal received, or None (set by run())
    stop: object = field(default=None, repr=False, compare=False)
    # called as checkpoint("before" | "after", round index) around the tracked runs of each round
    # (a "before" only where another run came between): the SMART snapshots of --smart
    # (measure/smart_window.py); None: nothing is called
    checkpoint: Callable[[str, int], None] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.fdp is not None:  # fio places writes only through NVMe passthrough
            self.ioengine = FDP_ENGINE


class Progress:
    """Progress on stderr.  ``mode``: "auto" (only when stderr is a terminal), "on", "off".

    On a terminal one status line is redrawn every half second; otherwise (``on`` with stderr
    redirected) one line is printed per completed round, so logs stay readable."""

    def __init__(self, mode: str | bool | None = "auto", stream=None):
        self.stream = stream or sys.stderr
        if mode is None or mode is True:
            mode = "on" if mode else "auto"
        elif mode is False:
            mode = "off"
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.enabled = mode == "on" or (mode == "auto" and self.tty)
        self.t0 = time.monotonic()
        self._drawn = False

    def show(self, msg: str, final: bool = False):
        """A status line; ``final`` marks a line worth keeping (a round finished)."""
        if not self.enabled:
            return
        stamp = f"[{time.monotonic() - self.t0:6.0f}s] {msg}"
        if self.tty:
            self.stream.write(f"\r\033[K{stamp}")
            self._drawn = True
        elif final:
            self.stream.write(stamp + "\n")
        self.stream.flush()

    def done(self):
        if self.enabled and self.tty and self._drawn:
            self.stream.write("\n")
            self.stream.flush()


def _base_argv(
    plan: Plan,
    name: str,
    rw: str,
    bs: str,
    runtime_s: float | None,
    prefix: str,
    rwmixread: int | None = None,
    time_based: bool = True,
    size_override: int | None = None,
) -> list:
    argv = [
        fio_binary(),
        f"--name={name}",
        f"--filename={plan.fdp.device if plan.fdp else plan.target}",
        f"--rw={rw}",
        f"--bs={bs}",
        f"--iodepth={plan.iodepth}",
        f"--numjobs={plan.numjobs}",
        f"--ioengine={plan.ioengine}",
        f"--direct={1 if plan.direct else 0}",
        f"--size={size_override or plan.capacity_bytes}",
        f"--offset={plan.offset_bytes}",
        "--norandommap",
        "--randrepeat=0",
        "--refill_buffers",
        "--group_reporting",
        f"--percentile_list={FIO_PERCENTILE_LIST}",
        f"--write_iops_log={prefix}{PARTIAL}",
        f"--write_lat_log={prefix}{PARTIAL}",
        "--log_avg_msec=1000",
        "--per_job_logs=1",
        "--allow_file_create=1",
        # jobs as threads of the one fio process, which dies with opsim (opsim.childproc): forked
        # job processes would outlive a SIGKILLed fio and go on writing
        "--thread",
    ]
    if plan.fdp is not None:
        argv += plan.fdp.fio_args()
    if rwmixread is not None:
        argv.append(f"--rwmixread={rwmixread}")
    if time_based and runtime_s:
        argv += ["--time_based", f"--runtime={max(1, int(runtime_s))}"]
    if plan.fio_steadystate:
        argv += [f"--steadystate={plan.fio_steadystate}", f"--ss_dur={max(2, int(runtime_s or 60))}"]
    return argv


def _round(
    plan: Plan,
    index: int,
    label: str,
    phase: str,
    bs: str,
    argv: list,
    prefix: str,
    t_offset: float,
    runtime_s: float | None,
    prog: Progress,
    status: str,
) -> tuple[dict, list, dict]:
    """Run one fio round.  Returns (round, per-second points, {"all"|"read"|"write": Latency}).

    fio writes the round's files under ``prefix + PARTIAL``; they get their final names
    (:func:`_commit`) only once the round has finished and been read."""
    json_path = f"{prefix}{PARTIAL}.json"
    doc = run_fio(
        argv,
        json_path,
        on_tick=lambda t: prog.show(f"{status} ({t:4.0f}s)"),
        stop=plan.stop,
    )
    s = summarize(doc)
    if s["fio_errors"]:
        raise FioFailed(f"fio reported error(s) {s['fio_errors']} in {label} ({os.path.basename(json_path)})")
    runtime = s["runtime_ms"] / 1000.0 or float(runtime_s or 0)
    try:
        per_dir = per_second_dirs(log_paths(prefix + PARTIAL, "iops"))
        lat_s = per_second(log_paths(prefix + PARTIAL, "clat"), reduce_jobs="mean")
    except InputError as e:  # fio's own log, not the user's input
        raise FioFailed(f"fio's log is unreadable: {e}") from None
    bs_bytes = size_bytes(bs)
    series = []
    for sec, dirs in per_dir.items():
        iops = sum(dirs.values())
        series.append(
            {
                "t_s": round(t_offset + sec, 3),
                "iops": iops,
                "read_iops": dirs.get(0, 0.0),
                "write_iops": dirs.get(1, 0.0),
                "mbps": iops * bs_bytes / 1e6,
                "waf": None,
                "urgent": None,
                "clat_mean_us": (lat_s[sec] / 1000.0) if lat_s.get(sec) is not None else None,
            }
        )
    rnd = {
        # the timed model's round fields (docs/timed.md); what fio cannot see is null
        "index": index,
        "phase": phase,
        "t_start_s": round(t_offset, 3),
        "t_end_s": round(t_offset + runtime, 3),
        "iops": s["iops"],
        "write_iops": s["write_iops"],
        "read_iops": s["read_iops"],
        "mbps": s["bw_bytes"] / 1e6,
        "host_write_bytes": s["io_bytes"]["write"],
        "completed_write_bytes": s["io_bytes"]["write"],
        "nand_write_pages": None,
        "gc_copy_pages": None,
        "erases": None,
        "waf": None,
        "latency_us": s["latency_us"],
        # measurement only
        "label": label,
        "bw_bytes": s["bw_bytes"],
        "io_bytes": s["io_bytes"],
        "runtime_s": runtime,
        "directions": s["directions"],
        "fio_json": os.path.basename(_commit(prefix)),
        "fio_steadystate": s["fio_steadystate"],
    }
    return rnd, series, {k: s["latency"][k] for k in ("all", "read", "write")}


def _commit(prefix: str) -> str:
    """Give a finished round's files their final names (``prefix`` + what fio appended), the
    JSON document last, so that a round whose JSON exists is complete.  Returns its path."""
    part = prefix + PARTIAL
    folder, base = os.path.split(part)
    names = sorted(n for n in os.listdir(folder or ".") if n.startswith(base) and n != base + ".json")
    for n in [*names, base + ".json"]:
        os.replace(os.path.join(folder, n), os.path.join(folder, os.path.basename(prefix) + n[len(base) :]))
    return prefix + ".json"


def _new_result(plan: Plan, version: str) -> dict[str, Any]:
    """The result document before the first round: the target, the parameters, empty series."""
    return {
        "schema": "opsim-measure",
        "schema_version": SCHEMA_VERSION,
        "test": plan.test,
        "target": {
            "path": plan.target,
            "kind": plan.target_kind,
            "span_bytes": plan.capacity_bytes,
            "offset_bytes": plan.offset_bytes,
        },
        "fio_version": version,
        "source": "fio",
        "placement": plan.fdp.to_dict() if plan.fdp else dict(NO_PLACEMENT),
        "parameters": {
            "iodepth": plan.iodepth,
            "numjobs": plan.numjobs,
            "round_s": plan.round_s,
            "bs": list(plan.bs),
            "rwmix": [f"{r}/{w}" for r, w in plan.mixes],
            "time_cap_s": plan.time_cap_s,
            "max_rounds": plan.max_rounds,
            "ioengine": plan.ioengine,
            "direct": plan.direct,
            "fio_steadystate": plan.fio_steadystate,
            **plan.extra,
        },
        "iops_series": [],
        "latency_us": None,
        "rounds": [],
        "steady_state": None,
        "steady_iops": None,
        "measured_iops": 0.0,
        "phases": {"fob_end_s": None, "steady_start_s": None},
        "interrupted": False,
        "interrupted_by": None,
        "error": None,
        "stop_reason": None,
        "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def run(plan: Plan, progress: Progress | None = None, stop: StopSignals | None = None) -> dict:
    """Run the test; return the result document, also when the run ended early.

    ``stop``: an active :class:`StopSignals` (the CLI keeps one over the whole command); without
    it, one is active for the duration of the rounds.  A stop signal ends the run with
    ``interrupted: true`` and ``interrupted_by`` (the signal's name); a fio failure with
    ``error`` (the message); both keep every round finished before."""
    if stop is None:
        with StopSignals() as own:
            return run(plan, progress, own)
    plan.stop = stop
    version = fio_version()
    os.makedirs(plan.outdir, exist_ok=True)
    prog = progress or Progress()
    result = _new_result(plan, version)
    t0 = time.monotonic()
    tracked: list[dict] = []  # the rounds the steady-state rule looks at
    lat: dict[int, dict] = {}  # round index -> {"all"|"read"|"write": Latency} of its tracked run
    try:
        if plan.precondition_passes:
            _precondition(plan, result, prog)
        if plan.test == "wsat":
            _wsat(plan, result, tracked, lat, prog, t0)
        elif plan.test == "iops":
            _iops(plan, result, tracked, lat, prog, t0)
        elif plan.test == "consistency":
            _consistency(plan, result, tracked, lat, prog, t0)
        else:  # pragma: no cover - argparse restricts it
            raise ValueError(plan.test)
    except Interrupted as e:
        result["interrupted"] = True
        result["interrupted_by"] = signal_name(e.signum)
        result["stop_reason"] = (
            f"interrupted by {signal_name(e.signum)}; fio was stopped and the "
            f"{len(result['rounds'])} round(s) completed before are kept"
        )
    except FioFailed as e:
        result["error"] = str(e)
        result["stop_reason"] = f"fio failed: {e}; the {len(result['rounds'])} round(s) completed before are kept"
    finally:
        prog.done()
    _finish(plan, result, tracked, lat)
    result["elapsed_s"] = round(time.monotonic() - t0, 3)
    return result


def _steady(values: list, tracked_rounds: list) -> tuple[dict, float | None]:
    """The SNIA rule (Rust core) on the tracked rounds' values, with ``round`` and ``window``
    given as round indexes (as the timed model reports them); and the steady IOPS or None."""
    ss = steady_state(values)
    if ss.get("window"):
        lo, hi = ss["window"]
        ss["window"] = [tracked_rounds[lo]["index"], tracked_rounds[hi]["index"]]
    if ss.get("round") is not None:
        ss["round"] = tracked_rounds[ss["round"]]["index"]
    ss["window_rounds"] = ss["window"]  # the schema-1 name, kept
    return ss, (ss["mean"] if ss["reached"] else None)


def _finish(plan: Plan, result: dict, tracked: list, lat: dict) -> None:
    """The steady state, the measurement window and what is computed over it."""
    ss, result["steady_iops"] = _steady([r["iops"] for r in tracked], tracked)
    ss["metric"] = "iops of " + (tracked[0].get("label") if tracked else "each round")
    result["steady_state"] = ss
    pos = None
    if ss["reached"]:
        where = {r["index"]: n for n, r in enumerate(tracked)}
        pos = (where[ss["window"][0]], where[ss["window"][1]])
    # measurement window: the steady-state window; else the whole run (wsat, consistency) or the
    # last rounds (iops, like the timed model's PTS run)
    if pos is not None:  # steady state reached
        window, rule = tracked[pos[0] : pos[1] + 1], "the steady-state window"
    elif plan.test == "iops":
        window, rule = tracked[-LAST_ROUNDS:], f"the last {LAST_ROUNDS} rounds (no steady state)"
    else:
        window, rule = tracked, "every round"
    merged = {k: Latency() for k in ("all", "read", "write")}
    for r in window:
        for k, v in lat[r["index"]].items():
            merged[k].merge(v)
    result["latency_us"] = {k: v.summary_us() for k, v in merged.items()}
    secs = sum(r["runtime_s"] for r in window)
    result["measured_iops"] = sum(r["iops"] * r["runtime_s"] for r in window) / secs if secs > 0 else 0.0
    result["measurement_window"] = {
        "rounds": [window[0]["index"], window[-1]["index"]] if window else None,
        "rule": rule,
    }
    pts = result["iops_series"]
    if plan.test == "iops" and tracked:
        first = tracked[0]
        pts = [p for p in pts if p.get("bs") == first.get("bs") and p.get("rwmix") == first.get("rwmix")]
    result["phases"] = {
        "fob_end_s": fob_end(pts),
        "steady_start_s": tracked[pos[0]]["t_start_s"] if pos is not None else None,
    }


def fob_end(points: list) -> float | None:
    """The timed model's rule (``timed::phases``): the time of the first point under half the
    first point's IOPS."""
    first = next((p["iops"] for p in points if p["iops"] > 0), None)
    if first is None:
        return None
    return next((p["t_s"] for p in points if p["iops"] < 0.5 * first), None)


def _time_left(plan: Plan, t0: float) -> float | None:
    if plan.time_cap_s is None:
        return None
    return plan.time_cap_s - (time.monotonic() - t0)


def _time_capped(plan: Plan, t0: float, result: dict) -> bool:
    """True (and the stop reason recorded) when less than a second of the time cap is left."""
    left = _time_left(plan, t0)
    if left is not None and left < 1:
        result["stop_reason"] = "time cap reached"
        return True
    return False


def _cap_note(plan: Plan, t0: float) -> str:
    left = _time_left(plan, t0)
    return "" if left is None else f", {max(0.0, left):.0f}s of the time cap left"


def _mark(plan: Plan, event: str, index: int) -> None:
    """A checkpoint around the tracked runs (``Plan.checkpoint``), when one is set."""
    if plan.checkpoint is not None:
        plan.checkpoint(event, index)


def _precondition(plan, result, prog):
    """SNIA PTS workload-independent preconditioning: the span written sequentially in 128 KiB
    writes, ``precondition_passes`` times (the PTS: twice), before the test rounds.  Not part of
    the rounds, the series or the time axis."""
    prefix = os.path.join(plan.outdir, "precondition")
    argv = _base_argv(plan, "precondition", "write", "128k", None, prefix, time_based=False)
    argv.append(f"--loops={plan.precondition_passes}")
    pre, _, _ = _round(
        plan,
        0,
        f"sequential 128k x{plan.precondition_passes}",
        "precondition",
        "128k",
        argv,
        prefix,
        0.0,
        None,
        prog,
        f"{plan.test}: preconditioning ({plan.precondition_passes} sequential passes)",
    )
    result["precondition"] = pre
    prog.show(
        f"{plan.test}: preconditioned ({pre['io_bytes']['write'] / 2**30:.2f} GiB written "
        f"sequentially, {pre['mbps']:,.0f} MB/s)",
        final=True,
    )


def _wsat(plan, result, tracked, lat, prog, t0):
    target_bytes = plan.capacity_multiple * plan.capacity_bytes
    written = 0
    t_off = 0.0
    i = 0
    bs = plan.bs[0]
    _mark(plan, "before", 1)
    while True:
        i += 1
        left = _time_left(plan, t0)
        runtime = plan.round_s if left is None else min(plan.round_s, max(1, left))
        prefix = os.path.join(plan.outdir, f"round-{i:03d}")
        status = f"wsat: round {i}, {written / 2**30:.2f}/{target_bytes / 2**30:.2f} GiB written{_cap_note(plan, t0)}"
        argv = _base_argv(plan, "wsat", "randwrite", bs, runtime, prefix)
        rnd, series, lat[i] = _round(
            plan, i, f"{bs} random write", "measure", bs, argv, prefix, t_off, runtime, prog, status
        )
        rnd["written_total_bytes"] = written = written + rnd["io_bytes"]["write"]
        result["rounds"].append(rnd)
        _mark(plan, "after", i)
        result["iops_series"] += series
        tracked.append(rnd)
        t_off = rnd["t_end_s"]
        prog.show(
            f"wsat: round {i}: {rnd['iops']:,.0f} IOPS, p99 {rnd['latency_us']['p99'] or 0:,.0f} us, "
            f"{written / 2**30:.2f}/{target_bytes / 2**30:.2f} GiB written",
            final=True,
        )
        if written >= target_bytes:
            result["stop_reason"] = f"wrote {plan.capacity_multiple:g}x the capacity"
            return
        if _time_capped(plan, t0, result):
            return


def _iops(plan, result, tracked, lat, prog, t0):

    # the steady-state metric (SNIA PTS): 4 KiB, 100% write -- or the first combination given
    track = ("4k", (0, 100)) if ("4k" in plan.bs and (0, 100) in plan.mixes) else (plan.bs[0], plan.mixes[0])
    combos = [(bs, mix) for mix in plan.mixes for bs in plan.bs]
    t_off = 0.0
    for i in range(1, plan.max_rounds + 1):
        round_combos = []
        tracked_rnd = None
        for n, (bs, (r, w)) in enumerate(combos, 1):
            prefix = os.path.join(plan.outdir, f"round-{i:03d}-{bs}-r{r}w{w}")
            rw = "randread" if w == 0 else "randwrite" if r == 0 else "randrw"
            argv = _base_argv(plan, "iops", rw, bs, plan.round_s, prefix, rwmixread=r if rw == "randrw" else None)
            is_tracked = (bs, (r, w)) == track
            if is_tracked:
                _mark(plan, "before", i)
            rnd, series, combo_lat = _round(
                plan,
                i,
                f"{bs} R/W {r}/{w}",
                "steady-state",
                bs,
                argv,
                prefix,
                t_off,
                plan.round_s,
                prog,
                f"iops: round {i}/{plan.max_rounds}, {bs} R/W {r}/{w} ({n}/{len(combos)}){_cap_note(plan, t0)}",
            )
            if is_tracked:
                _mark(plan, "after", i)
            rnd.update(bs=bs, rwmix=f"{r}/{w}")
            t_off = rnd["t_end_s"]
            result["iops_series"] += [{**s, "bs": bs, "rwmix": f"{r}/{w}"} for s in series]
            round_combos.append(rnd)
            if is_tracked:
                tracked_rnd, lat[i] = rnd, combo_lat
        if tracked_rnd is None:  # pragma: no cover - track is always one of the combinations
            tracked_rnd, lat[i] = round_combos[0], combo_lat
        main = dict(tracked_rnd)
        main["combinations"] = round_combos
        result["rounds"].append(main)
        tracked.append(main)
        ss = steady_state([t["iops"] for t in tracked])
        prog.show(
            f"iops: round {i}: {main['iops']:,.0f} IOPS ({main['label']}), "
            f"steady state {'reached' if ss['reached'] else 'not yet'}",
            final=True,
        )
        if ss["reached"]:
            result["stop_reason"] = f"steady state reached at round {i}"
            return
        if _time_capped(plan, t0, result):
            return
    result["stop_reason"] = f"{plan.max_rounds} rounds without steady state"


def _consistency(plan, result, tracked, lat, prog, t0):
    # 1. sequential fill of the span (128 KiB writes, once)
    prefix = os.path.join(plan.outdir, "fill")
    argv = _base_argv(plan, "fill", "write", "128k", None, prefix, time_based=False)
    fill, _, _ = _round(
        plan, 0, "sequential fill 128k", "fill", "128k", argv, prefix, 0.0, None, prog, "consistency: sequential fill"
    )
    result["fill"] = fill
    prog.show(f"consistency: fill done, {fill['mbps']:,.0f} MB/s", final=True)
    # 2. 4 KiB random writes over the span, round after round until the time cap
    cap = plan.time_cap_s or 30 * 60
    t1 = time.monotonic()
    t_off = 0.0
    i = 0
    bs = plan.bs[0]
    _mark(plan, "before", 1)
    while True:
        i += 1
        left = cap - (time.monotonic() - t1)
        runtime = min(plan.round_s, max(1, left))
        prefix = os.path.join(plan.outdir, f"round-{i:03d}")
        argv = _base_argv(plan, "consistency", "randwrite", bs, runtime, prefix)
        rnd, series, lat[i] = _round(
            plan,
            i,
            f"{bs} random write",
            "measure",
            bs,
            argv,
            prefix,
            t_off,
            runtime,
            prog,
            f"consistency: random writes, round {i}, {max(0.0, left):.0f}s left",
        )
        result["rounds"].append(rnd)
        _mark(plan, "after", i)
        result["iops_series"] += series
        tracked.append(rnd)
        t_off = rnd["t_end_s"]
        prog.show(f"consistency: round {i}: {rnd['iops']:,.0f} IOPS", final=True)
        if cap - (time.monotonic() - t1) < 1:
            result["stop_reason"] = "time cap reached"
            return
