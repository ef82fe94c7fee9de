"""``opsim.sim.describe``: the resolved drive and timing from the core, without building the
drive's model (a 100 TB drive is described from its geometry: nothing its size is allocated)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from opsim.errors import CapacityError
from opsim.sim import describe, simulate

HUGE = {"drive": {"user_capacity": "100TB", "op": 0.07}, "timing": {"interface": "nvme"}}


def test_huge_drive_is_described_without_its_model():
    """In a fresh process: the peak RSS stays far below the model's size (hundreds of GB).  The
    peak is the process's own (VmHWM): getrusage's ru_maxrss survives execve, so it would report
    the pytest process's peak at the fork."""
    code = (
        "import json, re; from opsim.sim import describe; "
        f"d = describe({HUGE!r}, model_limits=False); "
        "hwm = int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)); "
        "print(json.dumps([d['drive']['model_memory_bytes'], d['drive']['user_bytes'], d['fits_model'], "
        "hwm * 1024]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    model, user, fits, rss = json.loads(out.stdout)
    assert user == 100 * 10**12 and not fits
    assert model > 100 * 2**30
    assert rss < 300 * 2**20, rss


def test_model_limits_refuse_what_the_simulator_cannot_build():
    with pytest.raises(CapacityError) as e:
        describe(HUGE)
    # past the 32-bit page limit and far past any machine's memory: refused for its memory,
    # with the numbers (the memory check comes first, issue 12 item 9)
    assert e.value.key == "drive.user_capacity" and "memory" in str(e.value)
    small = {"drive": {"user_capacity": "8TiB", "op": 0.1, "page_size": "64KiB"}, "run": {"memory_limit": "1GiB"}}
    with pytest.raises(CapacityError) as e:
        describe(small)
    assert e.value.key == "drive.user_capacity"
    assert describe(small, model_limits=False)["fits_model"] is False


@pytest.mark.parametrize("preset", ["samsung-840-pro-256gb", "micron-1100-1tb-dwa", "sk-hynix-mobile-64gb"])
def test_resolved_timing_is_what_a_run_uses(preset):
    """The timing ``describe`` resolves is the one a timed run of the same config reports
    (the advisor used to run a tiny simulation only to learn it)."""
    cfg = {
        "preset": preset,
        "drive": {"user_capacity": "128MiB", "physical_capacity": "256MiB", "pages_per_block": 256},
        "run": {
            "precondition": "none",
            "warmup_drive_writes": 0,
            "measure_drive_writes": 0.0005,
            "round_drive_writes": 0.0005,
        },
    }
    d = describe(cfg)
    r = simulate(cfg)
    assert d["timing"] == r.timed["timing"]
    assert d["config"] == r.data["config"]
    assert d["drive"] == r.data["drive"]


def test_levels_give_every_basis_at_each_user_capacity():
    cfg = {
        "drive": {
            "user_capacity": "1000GB",
            "physical_capacity": "1100GB",
            "native_capacity": "1000GB",
            "page_size": "16KiB",
        }
    }
    d = describe(cfg, model_limits=False, users=[1000 * 10**9, 800 * 10**9])
    top, low = d["levels"]
    assert top == d["op"]
    assert low["native"] == pytest.approx(0.2) and low["added"] == pytest.approx(0.25)
    assert low["seen_by_gc"] > top["seen_by_gc"]
    with pytest.raises(CapacityError) as e:
        describe(cfg, users=[100])
    assert e.value.key == "user_bytes"
