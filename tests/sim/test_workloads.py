"""Workloads: composable phases, the TRIM mix, JESD219 endurance against OP, the SK hynix pattern
in a run, and their config errors.  (The generators' statistics are tested in the Rust core:
crates/opsim-core/src/workload.rs; JESD219 FIFO against Desnoyers' model is an oracle case.)"""

import json

import pytest

import opsim
from opsim.errors import ConfigError, WorkloadError

DRIVE = {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64}


def phased(**extra):
    return {
        "drive": DRIVE,
        "run": {"precondition": "none", "round_drive_writes": 0.5},
        "phase": [
            {"name": "fill", "workload": {"type": "sequential", "request_size": "128KiB"}, "drive_writes": 1},
            {"name": "age", "workload": {"type": "uniform"}, "drive_writes": 2},
            {
                "name": "measure",
                "workload": {"type": "uniform", "read_fraction": 0.3},
                "drive_writes": 1.5,
                "measure": True,
            },
        ],
    } | extra


def test_phases_run_in_order_and_the_last_is_measured():
    r = opsim.simulate(phased())
    names = [x["phase"] for x in r.rounds]
    assert names == ["fill"] * 2 + ["age"] * 4 + ["measure"] * 3
    assert r.measure_window["first_round"] == 6
    fill = r.rounds[:2]
    assert all(x["waf"] == 1.0 for x in fill)  # a sequential fill of an empty drive moves nothing
    m = r.measure_counters
    assert m["host_read_cmds"] == pytest.approx(0.3 * (m["host_read_cmds"] + m["host_write_cmds"]), rel=0.03)
    # the same steady WAF as the plain workload
    plain = opsim.simulate({"drive": DRIVE, "run": {"warmup_drive_writes": 2, "measure_drive_writes": 1.5}})
    assert r.waf == pytest.approx(plain.waf, rel=0.03)
    # without measure flags, the last phase is the window
    cfg = phased()
    for p in cfg["phase"]:
        p.pop("measure", None)
    assert opsim.simulate(cfg).measure_window["first_round"] == 6


def test_phase_by_command_count_and_trim_mix():
    cfg = phased()
    cfg["phase"][2] = {"name": "trim-mix", "workload": {"type": "uniform", "trim_fraction": 0.2}, "ios": 5000}
    r = opsim.simulate(cfg)
    m = r.measure_counters
    assert m["host_write_cmds"] + m["trim_cmds"] == 5000
    assert m["trim_cmds"] == pytest.approx(1000, abs=5 * (5000 * 0.2 * 0.8) ** 0.5)
    assert m["trimmed_pages"] > 0.5 * m["trim_cmds"]


def test_phases_in_the_timed_model():
    cfg = phased(timing={"queue_depth": 8})
    r = opsim.simulate(cfg)
    t = r.timed["rounds"]
    assert [x["phase"] for x in t] == [x["phase"] for x in r.rounds]
    assert t[-1]["read_iops"] > 0 and t[0]["read_iops"] == 0
    assert r.timed["latency_us"]["read"]["count"] > 0


@pytest.mark.parametrize(
    "change,key",
    [
        (lambda c: c["phase"][1].update(ios=10), "phase[1].drive_writes"),
        (lambda c: c["phase"][1].pop("drive_writes"), "phase[1].drive_writes"),
        (lambda c: c["phase"][0].update(measure=True), "phase[1].measure"),
        (lambda c: c["phase"][1]["workload"].update(type="snia-pts"), "phase[1].workload.type"),
        (lambda c: c["phase"][2]["workload"].update(hot_fraction=0.2), "phase[2].workload.hot_fraction"),
        (lambda c: c["phase"][2].update(drive_writes=-1), "phase[2].drive_writes"),
        (lambda c: c["phase"][2].update(color="red"), "phase[2].color"),
    ],
)
def test_phase_errors_name_the_key(change, key):
    cfg = json.loads(json.dumps(phased()))
    change(cfg)
    with pytest.raises(ConfigError) as e:
        opsim.simulate(cfg)
    assert e.value.key == key, str(e.value)


def test_workload_keys_are_checked():
    with pytest.raises(WorkloadError) as e:
        opsim.simulate({"drive": DRIVE, "workload": {"type": "uniform", "random_chunk": "1MiB"}})
    assert e.value.key == "workload.random_chunk"
    with pytest.raises(WorkloadError) as e:
        opsim.simulate({"drive": DRIVE, "workload": {"type": "trace"}})
    assert e.value.key == "workload.trace"


def test_sk_hynix_pattern_fills_the_drive_cycle_by_cycle():
    cfg = {
        "drive": DRIVE,
        "run": {
            "precondition": "none",
            "warmup_drive_writes": 0,
            "measure_drive_writes": 2,
            "round_drive_writes": 0.125,
        },
        "workload": {"type": "sk-hynix", "sequential_chunk": "8MiB", "random_chunk": "2MiB"},
    }
    r = opsim.simulate(cfg)
    # 8 MiB of every 10 MiB advance the sequential front, the random writes overwrite data
    # already written: the NAND (82 MiB) fills after about 80 MiB of writes (1.25 drive
    # writes), and only then does garbage collection erase blocks
    first_erase = next(i for i, x in enumerate(r.rounds) if x["erases"] > 0)
    assert 1.0 <= first_erase * 0.125 <= 1.35
    # the sequential rewrites invalidate whole blocks: GC moves (almost) nothing
    assert 1.0 <= r.waf < 1.1


def test_jesd219_endurance_rises_with_op():
    from opsim.validation import x400_tbw_trend

    rows = x400_tbw_trend(model_bytes=1 << 30, caps=(512,))
    assert [r["op"] for r in rows] == ["0%", "7%", "28%"]
    per_pe = [r["host_bytes_per_pe"] for r in rows]
    assert per_pe[0] < per_pe[1] < per_pe[2]
    pub = [r["published_tbw"] for r in rows]
    assert pub[0] < pub[1] < pub[2]  # SanDisk's table rises too
