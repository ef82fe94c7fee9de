"""Alternate builds of opsim on `opsim bench`: wall-clock comparisons on a shared machine
(BENCHMARKS.md, issue 37).

    python tools/bench_alternate.py --rounds 9 base=/work/wt-base head=.
    python tools/bench_alternate.py --rounds 9 --cpu base=/work/wt-base head=.

Each NAME=CHECKOUT runs its own build, ``CHECKOUT/.venv/bin/python -m opsim.cli bench
--scenario S --repeat R --json``, one after the other, in an order rotated every round, so that
no build always runs first or last while the machine's load drifts.  Prints each run (its
best-of-R figure and the load average before it), then per build the min, median and max of
its figures and the median of its ratio to the first build's in the same round.

``--cpu`` times each repetition by the process's CPU time instead of the wall clock
(``time.perf_counter`` replaced by ``time.thread_time`` in the child; the functional
scenarios only, whose figure ``opsim bench`` takes with ``perf_counter``): the CPU time of a
process that shares the cores with other jobs moves less than its wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CPU_CLOCK = "import sys, time; time.perf_counter = time.thread_time; from opsim.cli import main; sys.exit(main())"


def run_one(checkout: str, scenario: str, repeat: int, cpu: bool) -> float:
    """One `opsim bench` in ``checkout``'s venv: its best host pages (or IOs) per second."""
    py = os.path.join(checkout, ".venv", "bin", "python")
    head = [py, "-c", CPU_CLOCK] if cpu else [py, "-m", "opsim.cli"]
    out = subprocess.run(
        [*head, "bench", "--scenario", scenario, "--repeat", str(repeat), "--json"],
        cwd=checkout,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(out)["results"][0]["host_pages_per_second"]


def alternate(builds: list[tuple[str, str]], rounds: int, scenario: str, repeat: int, cpu: bool) -> list[dict]:
    """Every build once a round, the order rotated by one each round."""
    runs = []
    for r in range(rounds):
        for j in range(len(builds)):
            name, checkout = builds[(r + j) % len(builds)]
            load = os.getloadavg()[0]
            rate = run_one(checkout, scenario, repeat, cpu)
            runs.append({"round": r + 1, "build": name, "load": load, "rate": rate})
            print(f"round {r + 1:2d}  {name:10s} {rate / 1e6:8.3f} M/s  (load {load:.2f})", file=sys.stderr, flush=True)
    return runs


def summary(builds: list[tuple[str, str]], runs: list[dict]) -> list[dict]:
    """Per build: min, median and max of its figures; median ratio to the first build's."""
    rate = {(x["round"], x["build"]): x["rate"] for x in runs}
    rounds = sorted({x["round"] for x in runs})
    first = builds[0][0]
    out = []
    for name, _ in builds:
        v = [rate[(r, name)] for r in rounds]
        ratio = statistics.median(rate[(r, name)] / rate[(r, first)] for r in rounds)
        out.append({"build": name, "min": min(v), "median": statistics.median(v), "max": max(v), "ratio": ratio})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("builds", nargs="+", metavar="NAME=CHECKOUT", help="a checkout with its .venv built")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--scenario", default="16GiB", help="an `opsim bench` scenario (default 16GiB)")
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of each run; its best counts (default 3)")
    ap.add_argument("--cpu", action="store_true", help="CPU time instead of wall clock (functional scenarios)")
    ap.add_argument("--json", action="store_true", help="one JSON document instead of the table")
    args = ap.parse_args()
    builds = []
    for b in args.builds:
        name, sep, checkout = b.partition("=")
        if not sep or not os.path.isfile(os.path.join(checkout, ".venv", "bin", "python")):
            ap.error(f"{b}: expected NAME=CHECKOUT, a checkout with .venv/bin/python")
        builds.append((name, os.path.abspath(checkout)))
    if args.rounds < 1 or args.repeat < 1:
        ap.error("--rounds and --repeat must be at least 1")
    runs = alternate(builds, args.rounds, args.scenario, args.repeat, args.cpu)
    rows = summary(builds, runs)
    clock = "CPU" if args.cpu else "wall"
    if args.json:
        print(json.dumps({"scenario": args.scenario, "clock": clock, "runs": runs, "summary": rows}, indent=2))
        return
    print(f"opsim bench --scenario {args.scenario} --repeat {args.repeat}, {args.rounds} rounds, {clock} clock (M/s)")
    print(f"{'build':10s} {'min':>8s} {'median':>8s} {'max':>8s} {'ratio':>8s}")
    for x in rows:
        print(
            f"{x['build']:10s} {x['min'] / 1e6:8.3f} {x['median'] / 1e6:8.3f} {x['max'] / 1e6:8.3f} {x['ratio']:8.3f}"
        )


if __name__ == "__main__":
    main()
