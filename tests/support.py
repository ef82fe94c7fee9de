"""What many tests share: a long run to interrupt, the timed model's base [timing] table, a drive config.

A module of its own, not conftest.py: ``from conftest import`` finds whichever conftest.py was
imported first (tests/vm/ has one too), which depends on the command line and on pytest-xdist."""

from __future__ import annotations

#: a run far longer than any test waits for: the signal tests stop it part-way
LONG_RUN = """
[drive]
user_capacity = "4GiB"
op = 0.07
[run]
precondition = "none"
warmup_drive_writes = 0
measure_drive_writes = 100000
round_drive_writes = 0.05
max_rounds = 100000
"""


#: the timed model's [timing] table most timed tests start from: 4 channels x 2 dies x 2 planes
#: of 16 KiB pages (60/1600/4000 us), an 800 MB/s channel, 1 us of controller time, QD32
BASE_TIMING = {
    "channels": 4,
    "dies_per_channel": 2,
    "planes": 2,
    "nand_page_size": "16KiB",
    "t_read_us": 60,
    "t_prog_us": 1600,
    "t_erase_us": 4000,
    "channel_mbps": 800,
    "fw_overhead_us": 1.0,
    "queue_depth": 32,
    "background_gc": False,
}


def timing_table(**changes) -> dict:
    """:data:`BASE_TIMING` with ``changes``; a change to None leaves the key to the core's default."""
    t = BASE_TIMING | changes
    return {k: v for k, v in t.items() if v is not None}


def drive_config(user_pages: int, op: float, b: int = 256, gc: str = "greedy", **sections):
    """A config dict for a drive of ``user_pages`` 4 KiB pages."""
    cfg = {
        "drive": {"user_capacity": user_pages * 4096, "op": op, "pages_per_block": b},
        "ftl": {"gc": gc},
        "workload": {},
        "run": {"seed": 11},
    }
    for k, v in sections.items():
        cfg.setdefault(k, {}).update(v)
    return cfg
