"""Behaviour of the functional simulator beyond the oracle models."""

import json
import math

import pytest

import opsim
from opsim import models, simulate
from opsim.errors import CapacityError, ConfigError, DeviceError, WorkloadError
from opsim.sim import Simulator


def cfg(user_pages=65536, op=0.28, b=64, gc="greedy", workload=None, **run):
    return {
        "drive": {"user_capacity": user_pages * 4096, "op": op, "pages_per_block": b},
        "ftl": {"gc": gc},
        "workload": workload or {},
        "run": {"seed": 3, "warmup_drive_writes": 2, "measure_drive_writes": 2} | run,
    }


def strip_perf(d):
    d = dict(d)
    d.pop("perf")
    return d


def test_same_seed_bit_identical_and_seed_matters():
    a = simulate(cfg()).data
    b = simulate(cfg()).data
    assert json.dumps(strip_perf(a)) == json.dumps(strip_perf(b))
    c = simulate(cfg(seed=4)).data
    assert c["waf"] != a["waf"]


def test_dynamic_op_trimmed_space_acts_as_spare():
    """20% of the LBA space never written: WAF equals that of a drive whose OP includes it."""
    user_pages = 16_000 * 64
    op = 0.07
    r = simulate(
        cfg(
            user_pages,
            op,
            b=64,
            workload={"type": "uniform", "span": 0.8},
            warmup_drive_writes=3,
            measure_drive_writes=4,
        )
    )
    # Equivalent drive: the same physical pages, user capacity = the span.
    phys = r.drive["physical_pages"]
    span_pages = math.floor(user_pages * 0.8)
    eq = simulate(
        {
            "drive": {"user_capacity": span_pages * 4096, "physical_capacity": phys * 4096, "pages_per_block": 64},
            "run": {"seed": 3, "warmup_drive_writes": 3 * 1.25, "measure_drive_writes": 4 * 1.25},
        }
    )
    assert abs(r.waf - eq.waf) / eq.waf < 0.02, (r.waf, eq.waf)
    # ... and the nominal 7% drive would be far worse: the trimmed space really is spare.
    assert r.waf < 0.5 * models.waf_greedy(op, 64)


def test_trim_after_fill_is_dynamic_op():
    """TRIM 20% of a full drive through the command API, then random writes to the rest."""
    s = Simulator(cfg(4096 * 16, 0.07, b=64, workload={"type": "uniform", "span": 0.8}, precondition="none"))
    sectors = 4096 * 16 * 8
    s.write(0, sectors)  # fill everything (one command)
    keep = int(sectors * 0.8) // 8 * 8
    s.trim(keep, sectors - keep)
    assert s.mapped_pages == keep // 8
    s.check()


#: one measured drive write in quarter rounds, straight after the analytic layout
ANALYTIC_FIRST = {
    "seed": 5,
    "precondition": "analytic",
    "warmup_drive_writes": 0,
    "measure_drive_writes": 1,
    "round_drive_writes": 0.25,
}


@pytest.mark.slow
def test_analytic_precondition_starts_in_steady_state():
    """First measured round after analytic preconditioning within 2% of the long-run WAF."""
    base = cfg(16_400 * 256 // 1.07, 0.07, b=256)
    base["drive"]["user_capacity"] = int(16_400 * 256 / 1.07) * 4096
    long = simulate(base | {"run": {"seed": 5, "warmup_drive_writes": 4, "measure_drive_writes": 4}})
    pre = simulate(base | {"run": ANALYTIC_FIRST})
    first = pre.rounds[0]
    assert first["phase"] == "measure"
    assert abs(first["waf"] - long.waf) / long.waf < 0.02, (first["waf"], long.waf)


@pytest.mark.parametrize("gc", ["fifo", "random"])
def test_analytic_precondition_other_policies(gc):
    c = cfg(200_000, 0.28, b=64, gc=gc)
    long = simulate(c | {"run": {"seed": 5, "warmup_drive_writes": 4, "measure_drive_writes": 4}})
    pre = simulate(c | {"run": ANALYTIC_FIRST})
    assert abs(pre.rounds[0]["waf"] - long.waf) / long.waf < 0.02, (pre.rounds[0]["waf"], long.waf)


def test_analytic_precondition_of_part_page_writes_is_their_steady_state():
    """4 KiB writes to a 16 KiB mapping unit rewrite one uniformly chosen unit each: the analytic
    layout is their steady state too (first measured round within 2% of a long run from a fill,
    whose WAF is the unit's read-modify-write: 16 KiB programmed per 4 KiB written, and more)."""
    c = {
        "drive": {"user_capacity": 3000 * 64 * 16384, "op": 0.2, "page_size": "16KiB", "pages_per_block": 64},
        "workload": {"type": "uniform", "request_size": 4096},
    }
    long = simulate(
        c | {"run": {"seed": 5, "precondition": "fill", "warmup_drive_writes": 8, "measure_drive_writes": 4}}
    )
    pre = simulate(c | {"run": ANALYTIC_FIRST})
    assert long.waf > 4.0
    assert abs(pre.rounds[0]["waf"] - long.waf) / long.waf < 0.02, (pre.rounds[0]["waf"], long.waf)
    # a request that can straddle two units is not one unit's rewrite: refused, naming the key
    with pytest.raises(ConfigError, match=r"run\.precondition"):
        simulate(
            c
            | {
                "workload": {"type": "uniform", "request_size": 4096, "align": 2048},
                "run": {"precondition": "analytic"},
            }
        )


def test_snia_pts_sequence():
    r = simulate(cfg(65536, 0.07, b=64, workload={"type": "snia-pts"}, round_drive_writes=0.25))
    phases = [x["phase"] for x in r.rounds]
    assert phases[:8] == ["precondition"] * 8  # 2 x user capacity in 0.25 rounds
    assert r.steady_state["reached"]
    w = r.measure_window
    assert w["last_round"] - w["first_round"] == 4
    assert w["last_round"] == r.steady_state["round"] == len(r.rounds) - 1
    # sequential precondition writes cost no GC copies
    assert all(x["gc_copy_pages"] == 0 for x in r.rounds[:8])


def test_policies_order_at_same_op():
    w = {
        p: simulate(cfg(100_000, 0.15, b=64, gc=p)).waf
        for p in ["greedy", "fifo", "random", "cost-benefit", "windowed-greedy"]
    }
    assert w["greedy"] < w["fifo"] < w["random"]
    assert w["greedy"] <= w["windowed-greedy"] <= w["fifo"] * 1.01
    assert w["cost-benefit"] < w["random"]


def test_hot_cold_streams_separate_temperatures():
    """With two host streams, hot and cold data go to different blocks and greedy WAF drops."""
    wl = {"type": "hot-cold", "hot_fraction": 0.1, "hot_write_fraction": 0.9}
    one = simulate(cfg(100_000, 0.1, workload=wl))
    two_cfg = cfg(100_000, 0.1, workload=wl)
    two_cfg["ftl"]["streams"] = 2
    two = simulate(two_cfg)
    assert two.waf < one.waf


def test_zipf_and_read_mix_run():
    zipf = {"type": "zipf", "zipf_exponent": 0.9}
    r = simulate(cfg(50_000, 0.2, workload=zipf | {"read_fraction": 0.95}))
    assert r.counters["host_read_cmds"] > 15 * r.counters["host_write_cmds"] * 0.9
    # reads move no data: the WAF is the write-only run's (the fill writes every page either
    # way; it once took the read mix and left the drive part empty, the WAF far lower)
    w = simulate(cfg(50_000, 0.2, workload=zipf))
    assert r.waf > 1.0 and abs(r.waf / w.waf - 1) < 0.02, (r.waf, w.waf)


def test_sub_page_writes_do_read_modify_write():
    s = Simulator(cfg(1024, 0.5, precondition="none"))
    s.write(0, 8)  # whole page
    s.write(1, 1)  # 512 B inside a mapped page: RMW
    s.write(8 * 5 + 3, 2)  # inside an unmapped page: no read needed
    c = s.counters
    assert c["rmw_pages"] == 1
    assert c["host_write_bytes"] == (8 + 1 + 2) * 512
    assert c["nand_write_pages"] == 3
    assert c["nand_read_pages"] == 1


def test_sub_page_random_workload_waf_counts_bytes():
    r = simulate(cfg(20_000, 0.28, workload={"request_size": 512, "align": 512}))
    # every 512-byte write programs a 4 KiB page: WAF at least 8
    assert r.waf > 8


def test_security_erase_returns_to_fob():
    s = Simulator(cfg(4096, 0.28, precondition="none"))
    s.write(0, 4096 * 8)
    erases_before = s.counters["erases"]
    s.security_erase()
    assert s.mapped_pages == 0
    s.check()
    assert s.counters["erases"] > erases_before
    s.write(0, 8)
    assert s.mapped_pages == 1


def test_set_max_address_rules():
    s = Simulator(cfg(4096, 0.28, precondition="none"))
    native = s.max_address
    s.set_max_address(native // 2)
    with pytest.raises(DeviceError, match="already set in this power cycle"):
        s.set_max_address(native // 4)
    with pytest.raises(DeviceError, match="max address"):
        s.write(native // 2, 8)
    s.power_cycle()
    assert s.max_address == native // 2  # permanent change survives power cycle
    s.set_max_address(native // 4, volatile=True)
    s.power_cycle()
    assert s.max_address == native // 2  # volatile change reverts
    with pytest.raises(DeviceError):
        s.set_max_address(native + 8)


def test_hpa_without_purge_keeps_hidden_data():
    """Lowering the max address without a purge gains no spare: hidden LBAs keep their data."""
    s = Simulator(cfg(4096, 0.28, precondition="none"))
    native = s.max_address
    s.write(0, native)
    s.set_max_address(native // 2)
    assert s.mapped_pages == 4096
    s.power_cycle()
    s.security_erase()
    s.set_max_address(native // 2)
    s.write(0, native // 2)
    assert s.mapped_pages == 2048


def test_data_tokens_survive_gc():
    s = Simulator(cfg(2048, 0.1, b=32, precondition="none", track_data=True))
    import random

    rnd = random.Random(1)
    last = {}
    for _ in range(60_000):
        lpn = rnd.randrange(2048)
        s.write(lpn * 8, 8)
        last[lpn] = s.counters["host_write_cmds"]
    for lpn, tok in last.items():
        assert s.read_token(lpn * 8) == tok
    s.check()
    assert s.counters["gc_copy_pages"] > 0


@pytest.mark.parametrize(
    "bad,key,exc",
    [
        ({"drive": {"user_capacity": "1GiB", "op": 0.1, "bogus": 1}}, "drive.bogus", ConfigError),
        ({"drive": {"user_capacity": "1GiB", "op": -0.1}}, "drive.op", ConfigError),
        ({"drive": {"user_capacity": "1GiB", "op": 0.0}}, "drive.op", CapacityError),
        ({"drive": {"user_capacity": 0, "op": 0.1}}, "drive.user_capacity", CapacityError),
        ({"drive": {"user_capacity": "1GiB", "op": 0.1, "page_size": 0}}, "drive.page_size", CapacityError),
        ({"drive": {"user_capacity": "1GiB", "op": 0.1}, "ftl": {"gc": "lru"}}, "ftl.gc", ConfigError),
        ({"drive": {"user_capacity": "1GiB", "op": 0.1}, "ftl": {"gc": "d-choices"}}, "ftl.d", ConfigError),
        (
            {"drive": {"user_capacity": "1GiB", "op": 0.1}, "workload": {"type": "zipf"}},
            "workload.zipf_exponent",
            WorkloadError,
        ),
        ({"drive": {"user_capacity": "1GiB", "op": 0.1}, "workload": {"span": 1.5}}, "workload.span", WorkloadError),
        (
            {"drive": {"user_capacity": "8TiB", "op": 0.1}, "run": {"memory_limit": "1GiB"}},
            "drive.user_capacity",
            CapacityError,
        ),
    ],
)
def test_bad_input_names_the_key(bad, key, exc):
    with pytest.raises(exc) as ei:
        simulate(bad)
    assert ei.value.key == key, str(ei.value)
    assert isinstance(ei.value, opsim.InputError)


def test_measure_counters_cover_the_window():
    for c in (cfg(), cfg(workload={"type": "snia-pts"})):
        r = simulate(c)
        m = r.measure_counters
        assert m["host_write_pages"] * 4096 == m["host_write_bytes"] > 0
        assert m["nand_write_pages"] * 4096 / m["host_write_bytes"] == pytest.approx(r.waf)
        assert m["nand_write_pages"] == m["host_write_pages"] + m["gc_copy_pages"]
        assert m["host_write_cmds"] > 0


def test_rounds_frame():
    r = simulate(cfg())
    df = r.rounds_frame()
    assert list(df["phase"].unique()) == ["precondition", "warmup", "measure"]
    assert (df["waf"] >= 1).all()
