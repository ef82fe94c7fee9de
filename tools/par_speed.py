"""Threads against one: the functional model's speed on a drive of independent GC pools (issue 40).

    .venv/bin/python tools/par_speed.py [--capacity 64GiB] [--dies 8] [--pages 40000000] [--pairs 3]

One drive (uniform 4 KiB writes, greedy, OP 7% (70,144 MiB physical), 256-page blocks, ``drive.dies``,
``ftl.gc_scope = "die"``) is built, filled and settled for each thread count; then the same
number of host page writes is timed with 1 and 2 threads, alternately (``--pairs`` times), so
that the load of a shared machine falls on both alike.  Prints wall and CPU seconds per
timing, the load average, the best and median pages/s of each, and their ratio (2 threads over
1); the WAF of both must be the same (bit-identical counters).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import opsim


def drive(capacity: str, physical: str, dies: int, threads: int) -> opsim.Simulator:
    s = opsim.Simulator(
        {
            "drive": {"user_capacity": capacity, "physical_capacity": physical, "pages_per_block": 256, "dies": dies},
            "ftl": {"gc": "greedy", "gc_scope": "die"},
            "workload": {"type": "uniform"},
            "run": {"seed": 7, "threads": threads},
        }
    )
    s.precondition()
    s.run_for(s.describe()["drive"]["user_bytes"] // 2)  # past fresh-out-of-box: GC at work
    return s


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--capacity", default="64GiB")
    ap.add_argument(
        "--physical", default="70144MiB", help="physical capacity (default: OP 7%% in whole blocks per die)"
    )
    ap.add_argument("--dies", type=int, default=8)
    ap.add_argument("--pages", type=int, default=40_000_000)
    ap.add_argument("--pairs", type=int, default=3)
    a = ap.parse_args()
    sims = {t: drive(a.capacity, a.physical, a.dies, t) for t in (1, 2)}
    runs: dict[int, list[dict]] = {1: [], 2: []}
    for _ in range(a.pairs):
        for t, s in sims.items():
            c0, w0, p0 = s.counters, time.perf_counter(), time.process_time()
            s.run_for(a.pages * 4096)
            wall, cpu = time.perf_counter() - w0, time.process_time() - p0
            c1 = s.counters
            waf = (c1["nand_write_pages"] - c0["nand_write_pages"]) / (c1["host_write_pages"] - c0["host_write_pages"])
            row = {"threads": t, "wall": wall, "cpu": cpu, "pages_per_s": a.pages / wall, "waf": waf}
            row["load"] = os.getloadavg()[0]
            runs[t].append(row)
            print(json.dumps(row), flush=True)
    same = all(x["waf"] == y["waf"] for x, y in zip(runs[1], runs[2]))
    best = {t: max(r["pages_per_s"] for r in runs[t]) for t in runs}
    med = {t: statistics.median(r["pages_per_s"] for r in runs[t]) for t in runs}
    print(
        json.dumps(
            {
                "best_pages_per_s": best,
                "median_pages_per_s": med,
                "ratio_best": best[2] / best[1],
                "ratio_median": med[2] / med[1],
                "same_waf": same,
                "cores": os.cpu_count(),
            }
        )
    )


if __name__ == "__main__":
    main()
