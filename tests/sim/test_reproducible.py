"""Same results on any machine (docs/reliability.md): the simulator's results for a config and
seed are bit-identical on every machine and in every process.

The figures below were computed once and are pinned, so a machine (CPU, C library, BLAS) on
which the core computed anything else fails here rather than in a user's hands.  A deliberate
change of the model changes them: update them in the same commit and say so.  The run covers
the integer FTL, a Zipf workload (sampled through ``libm``) and the timed model (exponential
arrival times, latency percentiles)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import opsim
from opsim.sim import simulate_many

CONFIG = {
    "drive": {"user_capacity": 32768 * 4096, "op": 0.12, "pages_per_block": 64},
    "timing": {"interface": "sata", "cell": "tlc"},
    "workload": {"type": "zipf", "zipf_exponent": 0.9},
    "run": {"seed": 5, "warmup_drive_writes": 1, "measure_drive_writes": 1},
}

PINNED = {
    "waf": 5.01953125,
    "nand_write_pages": 164480,
    "measured_iops": 9575.954423085946,
    "simulated_seconds": 5.893935632,
    "write_p99_us": 6389.759,
    "write_mean_us": 2878.5248244382024,
}


def _figures(d: dict) -> dict:
    t = d["timed"]
    return {
        "waf": d["waf"],
        "nand_write_pages": d["measure_counters"]["nand_write_pages"],
        "measured_iops": t["measured_iops"],
        "simulated_seconds": t["simulated_seconds"],
        "write_p99_us": t["latency_us"]["write"]["p99"],
        "write_mean_us": t["latency_us"]["write"]["mean"],
    }


def _without_perf(d: dict) -> str:
    return json.dumps({k: v for k, v in d.items() if k != "perf"}, sort_keys=True)


def test_a_seeded_run_gives_the_pinned_figures():
    assert _figures(opsim.simulate(CONFIG).data) == PINNED


@pytest.mark.parametrize(
    "blas",
    [
        {"OPENBLAS_CORETYPE": None, "OPENBLAS_NUM_THREADS": "1"},
        {"OPENBLAS_CORETYPE": "Sandybridge", "OPENBLAS_NUM_THREADS": "2"},
    ],
    ids=["native-1-thread", "sandybridge-2-threads"],
)
def test_another_process_and_blas_give_the_same_json(blas):
    """Another process (as a sweep's worker is), under another OpenBLAS kernel and thread
    count: the whole result is the same, byte for byte, bar the wall-clock timings."""
    env = {k: v for k, v in os.environ.items() if k not in blas} | {k: v for k, v in blas.items() if v}
    code = "import json, sys, opsim; print(json.dumps(opsim.simulate(json.loads(sys.argv[1])).data))"
    r = subprocess.run(
        [sys.executable, "-c", code, json.dumps(CONFIG)], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert _without_perf(json.loads(r.stdout)) == _without_perf(opsim.simulate(CONFIG).data)


def test_runs_side_by_side_on_threads_give_the_same_json_in_order():
    """:func:`opsim.sim.simulate_many` (calibration's WAF-curve levels, the demo's runs): each
    run on a thread of its own, several at once, is the run alone, byte for byte bar the
    timings, and the results come in the configs' order whatever finishes first."""
    cfgs = [CONFIG | {"run": CONFIG["run"] | {"seed": s}} for s in (5, 6, 7)]
    cfgs.insert(1, CONFIG | {"drive": CONFIG["drive"] | {"op": 0.5}})  # a quicker run between
    alone = [_without_perf(opsim.simulate(c, threads=1).data) for c in cfgs]
    done: list[int] = []
    assert [_without_perf(r.data) for r in simulate_many(cfgs, jobs=3, on_done=done.append)] == alone
    assert sorted(done) == [0, 1, 2, 3]
    assert [_without_perf(r.data) for r in simulate_many(cfgs, jobs=1)] == alone
    assert _figures(simulate_many(cfgs, jobs=2)[0].data) == PINNED
