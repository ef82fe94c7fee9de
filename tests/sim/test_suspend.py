"""Program/erase suspend (``timing.suspend_us``): a host read on a die busy with programs,
erases or GC work suspends it and goes first; the suspended work resumes after the read.
Checked against first principles of the model's own parameters."""

import pytest

from opsim import simulate
from support import timing_table

TIMING = timing_table(background_gc=None)


def run(suspend=None, read_fraction=0.5):
    t = TIMING | ({"suspend_us": suspend} if suspend is not None else {})
    return simulate(
        {
            "drive": {"user_capacity": "2GiB", "op": 0.28, "pages_per_block": 256},
            "workload": {"read_fraction": read_fraction},
            "run": {"seed": 2, "warmup_drive_writes": 1, "measure_drive_writes": 0.5, "round_drive_writes": 0.25},
            "timing": t,
        }
    )


def test_reads_suspend_programs_and_erases():
    off, on = run(), run(20)
    # a read behind programs waits for them without suspend ...
    assert off.timed["latency_us"]["read"]["p50"] > 10 * 60
    # ... with it: firmware + tSUS + tR + channel transfer + SATA link, whatever the die does
    expect = 1.0 + 20 + 60 + 4096 / 800 + 4096 / 600
    lat = on.timed["latency_us"]["read"]
    assert lat["p50"] == pytest.approx(expect, rel=0.03)
    assert lat["p99"] < 1.5 * expect
    # the same FTL work (WAF), the reads' die time added to the suspended programs: writes
    # wait a little longer, and the closed loop completes more commands
    assert on.waf == off.waf
    assert on.timed["latency_us"]["write"]["p50"] > off.timed["latency_us"]["write"]["p50"]
    assert on.timed["measured_iops"] > off.timed["measured_iops"]
    assert on.timed["timing"]["suspend_ns"] == 20000 and "suspend_ns" not in off.timed["timing"]


def test_suspend_is_idle_with_idle_dies():
    """Open-loop reads on an idle drive: nothing to suspend, the read latency is unchanged."""
    base = {
        "drive": {"user_capacity": "2GiB", "op": 0.28, "pages_per_block": 256},
        "workload": {"read_fraction": 0.99},
        "run": {"seed": 2, "warmup_drive_writes": 0, "measure_drive_writes": 0.001, "round_drive_writes": 0.0005},
    }
    a = simulate(base | {"timing": TIMING | {"arrival_iops": 500}})
    b = simulate(base | {"timing": TIMING | {"arrival_iops": 500, "suspend_us": 20}})
    assert a.timed["latency_us"]["read"]["p50"] == b.timed["latency_us"]["read"]["p50"]


def test_suspend_error_names_the_key():
    from opsim.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        run(-1)
    assert e.value.key == "timing.suspend_us"
