"""``opsim bench``: the simulator's speed on the reference scenarios (BENCHMARKS.md).

Each scenario builds a drive, preconditions it analytically to steady state, settles for a
tenth of a drive write, then times a fixed number of host page writes on one core (with
``--threads N``, a drive of independent GC pools on N threads: docs/parallel.md).
"""

from __future__ import annotations

import os
import platform
import tempfile
import time
from typing import Any

from .._output import Output, table
from ..errors import InputError
from ..sim import Simulator, check_threads, simulate
from ..units import parse_size

SCENARIOS: dict[str, dict[str, Any]] = {
    "16GiB": {"user_capacity": "16GiB", "pages": 40_000_000},
    "256GiB": {"user_capacity": "256GiB", "pages": 40_000_000},
    "timed-64GiB-qd32": {"user_capacity": "64GiB", "pages": 8_000_000, "timed": True},
    # the same with a DFTL mapping-table cache holding a tenth of the table
    "timed-64GiB-qd32-mapcache": {
        "user_capacity": "64GiB",
        "pages": 8_000_000,
        "timed": True,
        "timing": {"map_cache": {"fraction": 0.1}},
    },
    "trace-msr-1GiB": {"user_capacity": "1GiB", "pages": 4_000_000, "trace": True},
    # garbage collection in superblocks of the Micron 7450's NAND (12 MiB blocks x 2 planes x 16
    # dies: 384 MiB, 98,304 pages of 4 KiB) instead of 256-page blocks
    "64GiB-superblocks": {"user_capacity": "64GiB", "pages": 40_000_000, "superblocks": True},
    "timed-64GiB-qd32-superblocks": {"user_capacity": "64GiB", "pages": 8_000_000, "timed": True, "superblocks": True},
    # GC within each of 8 dies (independent pools: what --threads splits), filled sequentially;
    # OP 7% in whole blocks per die
    "64GiB-8dies": {"user_capacity": "64GiB", "pages": 40_000_000, "dies": 8, "physical_capacity": "70144MiB"},
}

#: the NAND of the superblock scenarios ([timing]) and their GC unit ([ftl])
SUPERBLOCK_NAND = {"nand_block_size": "12MiB", "planes": 2, "channels": 8, "dies_per_channel": 2}


def _unit(superblocks: bool) -> tuple[dict, dict, dict, str]:
    """([drive], [ftl], [timing]) keys of a scenario's GC unit, and its label."""
    if superblocks:
        return {}, {"gc_unit": "superblock"}, SUPERBLOCK_NAND, "384 MiB superblocks"
    return {"pages_per_block": 256}, {}, {}, "256 pages/block"


def register(sub, common):
    p = sub.add_parser("bench", parents=[common], help="measure simulator speed (host page writes per second)")
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS), help="scenario to run (default: all)")
    p.add_argument("--repeat", type=int, default=3, help="timed repetitions; the best is reported (default 3)")
    p.add_argument("--gc", default="greedy", help="GC policy (default greedy)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        metavar="N",
        help="run.threads of each scenario: a drive of independent GC pools (64GiB-8dies) runs on N threads "
        "(default 1; docs/parallel.md)",
    )
    p.set_defaults(func=run)


def machine() -> dict:
    cpu = platform.processor()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "system": f"{platform.system()} {platform.release()}",
    }


def bench_one(
    capacity: str, pages: int, repeat: int, gc: str, superblocks: bool = False, threads: int = 1, sc=None
) -> dict:
    if repeat < 1:
        raise InputError("--repeat must be at least 1", key="repeat")
    drive, ftl, timing, unit = _unit(superblocks)
    run = {"seed": 7, "precondition": "analytic", "threads": threads}
    size = {"op": 0.07}
    if sc and sc.get("dies"):  # GC pools per die: filled sequentially (analytic is one pool's)
        size = {"physical_capacity": sc["physical_capacity"], "dies": sc["dies"]}
        ftl, run, unit = (
            ftl | {"gc_scope": "die"},
            run | {"precondition": "fill"},
            f"{unit}, GC per die of {sc['dies']}",
        )
    s = Simulator(
        {"drive": {"user_capacity": capacity} | size | drive, "ftl": {"gc": gc} | ftl, "run": run}
        | ({"timing": timing} if timing else {})
    )
    user = s.describe()["drive"]["user_bytes"]
    s.precondition()
    s.run_for(user // 10)
    times = []
    c0 = s.counters
    for _ in range(repeat):
        t = time.perf_counter()
        s.run_for(pages * 4096)
        times.append(time.perf_counter() - t)
    c1 = s.counters
    waf = (c1["nand_write_pages"] - c0["nand_write_pages"]) * 4096 / (c1["host_write_bytes"] - c0["host_write_bytes"])
    best = min(times)
    return {
        "scenario": f"uniform 4 KiB, {gc}, OP 7%, {unit}, {capacity}",
        "threads": s.parallelism["threads"],
        "capacity": capacity,
        "host_pages": pages,
        "best_seconds": best,
        "host_pages_per_second": pages / best,
        "waf": waf,
        "all_seconds": times,
    }


def bench_timed(
    capacity: str, pages: int, repeat: int, gc: str, timing: dict | None = None, superblocks: bool = False
) -> dict:
    """The timed model: 4 KiB random writes at QD32 in steady state (analytic
    preconditioning); simulated host commands per wall second of the timed rounds.
    ``timing``: more [timing] settings (e.g. a mapping-table cache)."""
    drive, ftl, nand, unit = _unit(superblocks)
    rates = []
    for _ in range(repeat):
        r = simulate(
            {
                "drive": {"user_capacity": capacity, "op": 0.07} | drive,
                "ftl": {"gc": gc} | ftl,
                "run": {
                    "seed": 7,
                    "precondition": "analytic",
                    "warmup_drive_writes": 0,
                    "measure_drive_writes": pages * 4096 / r_user(capacity),
                    "round_drive_writes": 0.05,
                },
                "timing": {"queue_depth": 32} | nand | (timing or {}),
            }
        )
        rates.append(r.perf["timed_ios_per_second"])
    best = max(rates)
    extra = "".join(f", {k} {v}" for k, v in (timing or {}).items())
    extra += f", {unit}" if superblocks else ""
    return {
        "scenario": f"timed: 4 KiB random writes QD32, {gc}, OP 7%, {capacity}{extra}",
        "capacity": capacity,
        "host_pages": pages,
        "best_seconds": pages / best,
        "host_pages_per_second": best,
        "waf": r.waf,
        "all_seconds": [pages / x for x in rates],
    }


def write_msr_trace(path, n: int, span_pages: int, seed: int = 7) -> None:
    """An MSR Cambridge CSV of ``n`` uniform random 4 KiB writes over ``span_pages`` pages."""
    import numpy as np  # noqa: PLC0415  (start-up: numpy for this benchmark only, not for `opsim --help`)

    rng = np.random.default_rng(seed)
    t0 = 128166372003061629
    with open(path, "w") as f:
        for start in range(0, n, 500_000):
            k = min(500_000, n - start)
            offs = rng.integers(0, span_pages, k) * 4096
            ts = t0 + (np.arange(start, start + k) * 1000)
            f.write("".join(f"{t},hm,0,Write,{o},4096,100\n" for t, o in zip(ts.tolist(), offs.tolist())))


def bench_trace(capacity: str, records: int, repeat: int, gc: str) -> dict:
    """Trace replay in the functional model: an MSR CSV of uniform random 4 KiB writes over the
    whole drive at OP 28%, after a sequential fill; trace records parsed and simulated per
    wall second (the whole run, fill included)."""
    with tempfile.TemporaryDirectory(prefix="opsim-bench-") as d:
        path = os.path.join(d, "msr.csv")
        write_msr_trace(path, records, r_user(capacity) // 4096)
        rates = []
        for _ in range(repeat):
            r = simulate(
                {
                    "drive": {"user_capacity": capacity, "op": 0.28},
                    "ftl": {"gc": gc},
                    "workload": {"type": "trace", "trace": {"path": path}},
                    "run": {"precondition": "fill", "warmup_drive_writes": 0, "measure_drive_writes": 1e5},
                }
            )
            rates.append(records / r.perf["wall_seconds"])
    best = max(rates)
    return {
        "scenario": f"trace replay: MSR CSV, {records / 1e6:g} M random 4 KiB writes, {gc}, OP 28%, {capacity}",
        "capacity": capacity,
        "host_pages": records,
        "best_seconds": records / best,
        "host_pages_per_second": best,
        "waf": r.waf,
        "all_seconds": [records / x for x in rates],
    }


def r_user(capacity: str) -> int:
    return parse_size(capacity)


def run(args) -> Output:
    threads = check_threads("--threads", args.threads)
    names = args.scenario or list(SCENARIOS)
    rows = []
    for n in names:
        sc = SCENARIOS[n]
        sb = bool(sc.get("superblocks"))
        if sc.get("timed"):
            rows.append(bench_timed(sc["user_capacity"], sc["pages"], args.repeat, args.gc, sc.get("timing"), sb))
        elif sc.get("trace"):
            rows.append(bench_trace(sc["user_capacity"], sc["pages"], args.repeat, args.gc))
        else:
            rows.append(bench_one(sc["user_capacity"], sc["pages"], args.repeat, args.gc, sb, threads, sc))
    data: dict[str, Any] = {"machine": machine(), "results": rows}
    text = table(
        ["scenario", "M host pages (or records)/s", "WAF", "best s"],
        [[r["scenario"], r["host_pages_per_second"] / 1e6, r["waf"], r["best_seconds"]] for r in rows],
        title=f"opsim bench on {data['machine']['cpu']} ({data['machine']['cores']} cores; --threads {threads})",
    )
    return Output(data=data, text=text)
