"""The timed model against first-principles figures of its own parameters.

Times: tR, tPROG per program unit (nand_page x planes mapping units), tBERS per superblock
erase on every die; host link and firmware per command.  Each test derives the expected
figure from those parameters, not from the simulator.
"""

import json

import pytest

from opsim import simulate
from support import BASE_TIMING


def cfg(timing=None, workload=None, op=0.28, b=256, cap="2GiB", **run):
    return {
        "drive": {"user_capacity": cap, "op": op, "pages_per_block": b},
        "workload": workload or {},
        "run": {"seed": 2, "warmup_drive_writes": 1, "measure_drive_writes": 1, "round_drive_writes": 0.25} | run,
        "timing": BASE_TIMING | (timing or {}),
    }


def test_timed_and_functional_waf_agree():
    for op in (0.07, 0.28):
        c = cfg(op=op)
        timed = simulate(c)
        func = simulate({k: v for k, v in c.items() if k != "timing"})
        assert abs(timed.waf - func.waf) / func.waf < 0.01
    # background GC uses idle time only; with a read-heavy mix there is idle time, and WAF
    # still agrees within 1%
    c = cfg({"background_gc": True}, workload={"read_fraction": 0.5})
    timed = simulate(c)
    func = simulate({k: v for k, v in c.items() if k != "timing"})
    assert abs(timed.waf - func.waf) / func.waf < 0.01


def test_fob_write_rate_is_the_program_bandwidth():
    r = simulate(cfg(precondition="none", warmup_drive_writes=0, measure_drive_writes=0.5))
    t = r.timed["timing"]
    dies, upp = 8, 4 * 2  # 16 KiB / 4 KiB x 2 planes
    bound = dies * upp / 1600e-6
    assert t["program_units_per_s"] == pytest.approx(bound)
    assert r.waf == 1.0
    assert r.timed["measured_iops"] == pytest.approx(bound, rel=0.03)


def test_write_cache_off_pads_every_command():
    r = simulate(cfg({"write_cache": False}, precondition="none", warmup_drive_writes=0, measure_drive_writes=0.05))
    dies = 8
    # each 4 KiB command programs a whole (padded) unit: dies / tPROG commands per second
    assert r.timed["measured_iops"] == pytest.approx(dies / 1600e-6, rel=0.03)
    # and a command waits for its program: latency >= tPROG
    assert r.timed["latency_us"]["write"]["p50"] >= 1600


def test_steady_state_iops_matches_die_time_budget():
    """IOPS = dies / die time per host write, with die time = one unit program + per GC
    copy (tR + unit program) + per erase, on every die, the share of a physical block
    (8 MiB, the default) the FTL block spans there: tBERS x (256 / 8 dies) / 2048 units."""
    b = 256
    r = simulate(cfg(b=b, warmup_drive_writes=2, measure_drive_writes=1))
    c = r.measure_counters
    host = c["host_write_pages"]
    copies = c["gc_copy_pages"] / host
    erases = c["erases"] / host
    dies, unit = 8, 1600e-6 / 8
    erase_share = min(1.0, b / dies / 2048)
    die_time = unit + copies * (60e-6 + unit) + erases * dies * 4000e-6 * erase_share
    expect = dies / die_time
    assert r.timed["measured_iops"] == pytest.approx(expect, rel=0.05)
    assert r.timed["steady_state"]["reached"]


def test_read_latency_at_qd1():
    """An unloaded 4 KiB read: firmware + tR + channel transfer + host link."""
    r = simulate(
        cfg({"queue_depth": 1}, workload={"read_fraction": 0.99}, warmup_drive_writes=0, measure_drive_writes=0.002)
    )
    expect_us = 1.0 + 60 + 4096 / 800 + 4096 / 600
    p50 = r.timed["latency_us"]["read"]["p50"]
    assert p50 == pytest.approx(expect_us, rel=0.03)


def test_more_op_more_steady_iops_and_tighter_tail():
    low = simulate(cfg(op=0.07, warmup_drive_writes=2))
    high = simulate(cfg(op=0.28, warmup_drive_writes=2))
    assert high.timed["measured_iops"] > 2 * low.timed["measured_iops"]
    assert high.timed["latency_us"]["write"]["p99"] < low.timed["latency_us"]["write"]["p99"]


def test_series_covers_simulated_time_and_is_deterministic():
    c = cfg(timing={"series_interval_s": 0.5})
    a, b = simulate(c), simulate(c)
    sa, sb = a.timed["iops_series"], b.timed["iops_series"]
    assert json.dumps(sa) == json.dumps(sb)
    assert sa[-1]["t_s"] == pytest.approx(a.timed["simulated_seconds"], abs=0.5)
    total_ios = sum(p["iops"] * 0.5 for p in sa)
    assert total_ios == pytest.approx(
        a.counters["host_write_cmds"] + a.counters["host_read_cmds"] - 2**30 * 2 // (128 * 1024), rel=0.01
    )


def test_open_loop_below_capacity_has_no_queueing():
    r = simulate(cfg({"arrival_iops": 1000}, precondition="none", warmup_drive_writes=0, measure_drive_writes=0.01))
    assert r.timed["measured_iops"] == pytest.approx(1000, rel=0.1)
    lat = r.timed["latency_us"]["write"]
    assert lat["p50"] < 20  # buffer admission: firmware + link only


def test_timing_errors_name_the_key():
    from opsim.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        simulate(cfg({"queue_depth": 64}))
    assert e.value.key == "timing.queue_depth"
    with pytest.raises(ConfigError) as e:
        simulate(cfg({"nand_page_size": "6KiB"}))
    assert e.value.key == "timing.nand_page_size"
    with pytest.raises(ConfigError) as e:
        simulate(cfg({"bogus": 1}))
    assert "bogus" in str(e.value)
