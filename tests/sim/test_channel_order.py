"""Issue 25: the flash channels' order (``timing.channel_order``): "issue" (default, today's
model) or "ready" (each transfer in the earliest free time at or after its data is ready).

Bad values exit 2 naming the key (tests/sim/test_read_planes.py); the cost model has no channel order (describe's
``cost_model`` is the same either way); the default is the old model, bit for bit.
"""

from __future__ import annotations

import opsim.sim


def _cfg(order: str | None) -> dict:
    timing: dict = {"interface": "nvme", "queue_depth": 64, "nvme_queues": 2, "planes": 4, "read_planes": 4}
    if order is not None:
        timing["channel_order"] = order
    return {
        "drive": {"user_capacity": "64MiB", "op": 0.28},
        "timing": timing,
        "workload": {"type": "uniform", "read_fraction": 0.9},
        "run": {"warmup_drive_writes": 0.2, "measure_drive_writes": 0.3},
    }


def test_the_cost_model_has_no_channel_order():
    base = opsim.sim.describe(_cfg(None))["cost_model"]
    assert opsim.sim.describe(_cfg("issue"))["cost_model"] == base
    assert opsim.sim.describe(_cfg("ready"))["cost_model"] == base


def test_issue_is_the_default_and_ready_moves_the_event_model():
    default = opsim.sim.simulate(_cfg(None)).to_dict()["timed"]
    issue = opsim.sim.simulate(_cfg("issue")).to_dict()["timed"]
    ready = opsim.sim.simulate(_cfg("ready")).to_dict()["timed"]
    assert issue["measured_iops"] == default["measured_iops"]
    assert issue["latency_us"] == default["latency_us"]
    assert ready["measured_iops"] != issue["measured_iops"]
