"""The measurement tests: WSAT, the PTS IOPS test and the AnandTech IO-consistency run.

Each round is one fio invocation (JSON output and per-second logs in the output
directory), so an interrupted run keeps every completed round.  The SNIA steady-state rule
is applied by opsim to the round values with :func:`opsim.sim.steady_state` (Rust core).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from ..errors import CommandError
from .fio import FIO_PERCENTILE_LIST, Interrupted, fio_binary, fio_version, log_paths, per_second, run_fio, summarize

SCHEMA_VERSION = 1
PTS_BLOCK_SIZES = ("512", "4k", "8k", "16k", "32k", "64k", "128k", "1m")
PTS_MIXES = ((0, 100), (5, 95), (35, 65), (50, 50), (65, 35), (95, 5), (100, 0))  # (read %, write %)


@dataclass
class Plan:
    test: str                       # "wsat" | "iops" | "consistency"
    target: str                     # file or block device
    target_kind: str                # "file" | "block"
    capacity_bytes: int             # bytes addressed (the span)
    outdir: str
    iodepth: int = 32
    numjobs: int = 1
    round_s: int = 60
    bs: tuple = ("4k",)
    mixes: tuple = ((0, 100),)      # (read %, write %)
    time_cap_s: float | None = None
    max_rounds: int = 25
    capacity_multiple: float = 4.0  # WSAT: stop after this many times the capacity written
    ioengine: str = "libaio"
    direct: bool = True
    fio_steadystate: str | None = None
    offset_bytes: int = 0
    extra: dict = field(default_factory=dict)


class Progress:
    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.t0 = time.monotonic()

    def show(self, msg: str):
        if self.enabled:
            sys.stderr.write(f"\r\033[K[{time.monotonic() - self.t0:6.0f}s] {msg}")
            sys.stderr.flush()

    def done(self):
        if self.enabled:
            sys.stderr.write("\n")


def _base_argv(plan: Plan, name: str, rw: str, bs: str, runtime_s: float | None, prefix: str,
               rwmixread: int | None = None, time_based: bool = True, size_override: int | None = None) -> list:
    argv = [fio_binary(), f"--name={name}", f"--filename={plan.target}", f"--rw={rw}", f"--bs={bs}",
            f"--iodepth={plan.iodepth}", f"--numjobs={plan.numjobs}", f"--ioengine={plan.ioengine}",
            f"--direct={1 if plan.direct else 0}", f"--size={size_override or plan.capacity_bytes}",
            f"--offset={plan.offset_bytes}", "--norandommap", "--randrepeat=0", "--refill_buffers",
            "--group_reporting", f"--percentile_list={FIO_PERCENTILE_LIST}",
            f"--write_iops_log={prefix}", f"--write_lat_log={prefix}", "--log_avg_msec=1000",
            "--per_job_logs=1", "--allow_file_create=1"]
    if rwmixread is not None:
        argv.append(f"--rwmixread={rwmixread}")
    if time_based and runtime_s:
        argv += ["--time_based", f"--runtime={max(1, int(runtime_s))}"]
    if plan.numjobs > 1 and plan.target_kind == "file":
        argv.append("--thread")
    if plan.fio_steadystate:
        argv += [f"--steadystate={plan.fio_steadystate}", f"--ss_dur={max(2, int(runtime_s or 60))}"]
    return argv


def _round(plan: Plan, index: int, label: str, argv: list, prefix: str, t_offset: float, prog: Progress,
           status: str) -> tuple[dict, list]:
    json_path = f"{prefix}.json"
    doc = run_fio(argv, json_path, timeout=(plan.round_s * 3 + 120) if plan.round_s else None,
                  on_tick=lambda t: prog.show(f"{status} (round {index}, {t:4.0f}s)"))
    s = summarize(doc)
    if s["fio_errors"]:
        raise CommandError(f"fio reported error(s) {s['fio_errors']} in round {index}")
    iops_s = per_second(log_paths(prefix, "iops"))
    lat_s = per_second(log_paths(prefix, "clat"), reduce_jobs="mean")
    series = [{"t_s": round(t_offset + sec, 3), "iops": v,
               "clat_mean_us": (lat_s.get(sec) / 1000.0) if lat_s.get(sec) is not None else None}
              for sec, v in iops_s.items()]
    rnd = {"index": index, "label": label, "iops": s["iops"], "bw_bytes": s["bw_bytes"],
           "io_bytes": s["io_bytes"], "latency_us": s["latency_us"], "directions": s["directions"],
           "runtime_s": s["runtime_ms"] / 1000.0, "fio_json": os.path.basename(json_path),
           "fio_steadystate": s["fio_steadystate"]}
    return rnd, series


def _steady(values: list, tracked_rounds: list) -> tuple[dict, float | None]:
    from ..sim import steady_state

    ss = steady_state(values)
    steady_iops = ss["mean"] if ss["reached"] else None
    if ss.get("window"):
        lo, hi = ss["window"]
        ss["window_rounds"] = [tracked_rounds[lo]["index"], tracked_rounds[hi]["index"]]
    return ss, steady_iops


def run(plan: Plan, progress: Progress | None = None) -> dict:
    os.makedirs(plan.outdir, exist_ok=True)
    prog = progress or Progress()
    result = {"schema": "opsim-measure", "schema_version": SCHEMA_VERSION, "test": plan.test,
              "target": {"path": plan.target, "kind": plan.target_kind, "span_bytes": plan.capacity_bytes,
                         "offset_bytes": plan.offset_bytes},
              "fio_version": fio_version(), "source": "fio",
              "parameters": {"iodepth": plan.iodepth, "numjobs": plan.numjobs, "round_s": plan.round_s,
                             "bs": list(plan.bs), "rwmix": [f"{r}/{w}" for r, w in plan.mixes],
                             "time_cap_s": plan.time_cap_s, "max_rounds": plan.max_rounds,
                             "ioengine": plan.ioengine, "direct": plan.direct,
                             "fio_steadystate": plan.fio_steadystate, **plan.extra},
              "rounds": [], "iops_series": [], "latency_us": None, "steady_state": None, "steady_iops": None,
              "interrupted": False, "stop_reason": None, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    t0 = time.monotonic()
    tracked: list[dict] = []   # the rounds the steady-state rule looks at
    try:
        if plan.test == "wsat":
            _wsat(plan, result, tracked, prog, t0)
        elif plan.test == "iops":
            _iops(plan, result, tracked, prog, t0)
        elif plan.test == "consistency":
            _consistency(plan, result, tracked, prog, t0)
        else:  # pragma: no cover - argparse restricts it
            raise ValueError(plan.test)
    except Interrupted:
        result["interrupted"] = True
        result["stop_reason"] = "interrupted (Ctrl-C); the rounds completed so far are kept"
    finally:
        prog.done()
    values = [r["iops"] for r in tracked]
    if values:
        result["steady_state"], result["steady_iops"] = _steady(values, tracked)
        result["steady_state"]["metric"] = "iops of " + (tracked[0].get("label") or "each round")
        last = tracked[-1]["latency_us"]
        mx = max((r["latency_us"].get("max") or 0) for r in tracked)
        result["latency_us"] = {**last, "max": mx}
    result["elapsed_s"] = round(time.monotonic() - t0, 3)
    return result


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


def _wsat(plan, result, tracked, prog, t0):
    target_bytes = plan.capacity_multiple * plan.capacity_bytes
    written = 0
    t_off = 0.0
    i = 0
    bs = plan.bs[0]
    while True:
        i += 1
        left = _time_left(plan, t0)
        runtime = plan.round_s if left is None else min(plan.round_s, max(1, left))
        prefix = os.path.join(plan.outdir, f"round-{i:03d}")
        status = f"wsat: {written / 2**30:.2f}/{target_bytes / 2**30:.2f} GiB written"
        argv = _base_argv(plan, "wsat", "randwrite", bs, runtime, prefix)
        rnd, series = _round(plan, i, f"{bs} random write", argv, prefix, t_off, prog, status)
        rnd["written_total_bytes"] = written = written + rnd["io_bytes"]["write"]
        result["rounds"].append(rnd)
        result["iops_series"] += series
        tracked.append(rnd)
        t_off += rnd["runtime_s"] or runtime
        prog.show(f"wsat: round {i}: {rnd['iops']:,.0f} IOPS, {written / 2**30:.2f}/{target_bytes / 2**30:.2f} GiB")
        if written >= target_bytes:
            result["stop_reason"] = f"wrote {plan.capacity_multiple:g}x the capacity"
            return
        if _time_capped(plan, t0, result):
            return
        if i >= 100000:  # pragma: no cover
            return


def _iops(plan, result, tracked, prog, t0):
    # the steady-state metric (SNIA PTS): 4 KiB, 100% write -- or the first combination given
    track = ("4k", (0, 100)) if ("4k" in plan.bs and (0, 100) in plan.mixes) else (plan.bs[0], plan.mixes[0])
    t_off = 0.0
    for i in range(1, plan.max_rounds + 1):
        round_combos = []
        tracked_rnd = None
        for r, w in plan.mixes:
            for bs in plan.bs:
                prefix = os.path.join(plan.outdir, f"round-{i:03d}-{bs}-r{r}w{w}")
                rw = "randread" if w == 0 else "randwrite" if r == 0 else "randrw"
                argv = _base_argv(plan, "iops", rw, bs, plan.round_s, prefix,
                                  rwmixread=r if rw == "randrw" else None)
                rnd, series = _round(plan, i, f"{bs} R/W {r}/{w}", argv, prefix, t_off, prog,
                                     f"iops: round {i}/{plan.max_rounds} {bs} R/W {r}/{w}")
                rnd.update(bs=bs, rwmix=f"{r}/{w}")
                t_off += rnd["runtime_s"] or plan.round_s
                result["iops_series"] += [{**s, "bs": bs, "rwmix": f"{r}/{w}"} for s in series]
                round_combos.append(rnd)
                if (bs, (r, w)) == track:
                    tracked_rnd = rnd
        main = dict(tracked_rnd or round_combos[0])
        main["combinations"] = round_combos
        main["label"] = f"{track[0]} R/W {track[1][0]}/{track[1][1]}"
        result["rounds"].append(main)
        tracked.append(main)
        from ..sim import steady_state

        ss = steady_state([t["iops"] for t in tracked])
        prog.show(f"iops: round {i}: {main['iops']:,.0f} IOPS ({main['label']}), steady={ss['reached']}")
        if ss["reached"]:
            result["stop_reason"] = f"steady state reached at round {i}"
            return
        if _time_capped(plan, t0, result):
            return
    result["stop_reason"] = f"{plan.max_rounds} rounds without steady state"


def _consistency(plan, result, tracked, prog, t0):
    # 1. sequential fill of the span (128 KiB writes, once)
    prefix = os.path.join(plan.outdir, "fill")
    argv = _base_argv(plan, "fill", "write", "128k", None, prefix, time_based=False)
    fill, _ = _round(plan, 0, "sequential fill 128k", argv, prefix, 0.0, prog, "consistency: sequential fill")
    fill["phase"] = "fill"
    result["fill"] = fill
    # 2. 4 KiB random writes over the span, round after round until the time cap
    cap = plan.time_cap_s or 30 * 60
    t1 = time.monotonic()
    t_off = 0.0
    i = 0
    while True:
        i += 1
        left = cap - (time.monotonic() - t1)
        runtime = min(plan.round_s, max(1, left))
        prefix = os.path.join(plan.outdir, f"round-{i:03d}")
        argv = _base_argv(plan, "consistency", "randwrite", plan.bs[0], runtime, prefix)
        rnd, series = _round(plan, i, f"{plan.bs[0]} random write", argv, prefix, t_off, prog,
                             "consistency: random writes")
        result["rounds"].append(rnd)
        result["iops_series"] += series
        tracked.append(rnd)
        t_off += rnd["runtime_s"] or runtime
        if cap - (time.monotonic() - t1) < 1:
            result["stop_reason"] = "time cap reached"
            return
