import os
import signal

import pytest

# A test run started in the background of a non-interactive shell inherits SIGINT ignored, and
# so would every opsim it starts (an ignored signal survives exec): the Ctrl-C tests need it live.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")

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


@pytest.fixture
def cfg_factory():
    return drive_config
