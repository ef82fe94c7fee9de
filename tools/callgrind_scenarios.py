"""Deterministic cost of the simulator's hot loops: run one scenario under callgrind and read
the inclusive instruction count of ``Simulator::run``.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=cg.out \\
        .venv/bin/python tools/callgrind_scenarios.py functional
    callgrind_annotate --inclusive=yes cg.out | grep -m1 'Simulator::run'

(``--toggle-collect='*Simulator*run*'`` does not catch the timed run's frames: read the
inclusive count instead.)

Instruction counts, unlike wall-clock seconds, do not move with the machine's load; BENCHMARKS.md
compares builds with them.  Scenarios: functional (1 GiB, OP 7%, 2 drive writes measured),
timed (4 GiB, QD32, OP 7%, 0.4 drive writes measured after analytic preconditioning),
timed-whole-pages (the same on today's TLC layout: 4 planes, 48 KiB word lines,
independent plane reads and whole-page reads, so GC copies share multi-plane senses).
"""

from __future__ import annotations

import sys

import opsim

SCENARIOS = {
    "functional": {
        "drive": {"user_capacity": "1GiB", "op": 0.07},
        "run": {"seed": 1, "precondition": "analytic", "warmup_drive_writes": 0.1, "measure_drive_writes": 2},
    },
    "timed": {
        "drive": {"user_capacity": "4GiB", "op": 0.07},
        "timing": {"queue_depth": 32},
        "run": {"seed": 1, "precondition": "analytic", "warmup_drive_writes": 0.05, "measure_drive_writes": 0.4},
    },
    "timed-whole-pages": {
        "drive": {"user_capacity": "4GiB", "op": 0.07},
        "timing": {
            "queue_depth": 32,
            "cell": "tlc",
            "planes": 4,
            "nand_page_size": "48KiB",
            "nand_block_size": "12MiB",
            "read_planes": 4,
            "read_whole_pages": True,
        },
        "run": {"seed": 1, "precondition": "analytic", "warmup_drive_writes": 0.05, "measure_drive_writes": 0.4},
    },
}

if __name__ == "__main__":
    r = opsim.simulate(SCENARIOS[sys.argv[1]])
    print(f"{sys.argv[1]}: waf {r.waf:.6f}")
