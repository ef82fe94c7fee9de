"""The core's cost model (``opsim.sim.costs``) against the event model it is derived from: a
closed-loop run at a high queue depth approaches the bound when one resource dominates, and
never passes it; and the advisor's screen asks the core (no copy of the cost rules)."""

from __future__ import annotations

import inspect

import pytest

from opsim.sim import costs, describe, simulate


def _run(timing: dict, workload: dict):
    cfg = {
        "drive": {"user_capacity": "48MiB", "physical_capacity": "64MiB", "pages_per_block": 64},
        "timing": timing,
        "workload": workload,
        "run": {
            "precondition": "fill",
            "warmup_drive_writes": 1,
            "measure_drive_writes": 1,
            "round_drive_writes": 0.25,
        },
    }
    r = simulate(cfg)
    size = workload.get("request_size", 4096)
    mix = {"write_fraction": 1 - workload.get("read_fraction", 0), "units_per_io": size / 4096, "bytes_per_io": size}
    return r, costs(describe(cfg)["cost_model"], mix, r.waf)


NVME64 = {"interface": "nvme", "queue_depth": 64}


@pytest.mark.parametrize(
    "timing,workload,bottleneck,floor",
    [
        # firmware time per command: the controller binds; it idles now and then while a
        # program holds the die its next read needs (the fill writes every page the reads sense)
        (NVME64 | {"fw_overhead_us": 50}, {"type": "uniform", "read_fraction": 0.5}, "controller", 0.98),
        # random writes with garbage collection (at the run's own WAF): the dies
        ({}, {"type": "uniform"}, "NAND dies", 0.93),
        # slow reads on two dies
        (
            NVME64 | {"channels": 1, "dies_per_channel": 2, "t_read_us": 400},
            {"type": "uniform", "read_fraction": 0.9},
            "NAND dies",
            0.85,
        ),
        # a slow host link and large requests
        (
            NVME64 | {"link_mbps": 50},
            {"type": "uniform", "read_fraction": 0.5, "request_size": 65536},
            "host link",
            0.85,
        ),
    ],
)
def test_closed_loop_approaches_the_bound(timing, workload, bottleneck, floor):
    r, c = _run(timing, workload)
    measured = r.timed["measured_iops"]
    assert c["bottleneck"] == bottleneck, c
    assert floor * c["iops"] <= measured <= 1.001 * c["iops"], (measured, c)


def test_bound_names_every_loaded_resource_and_the_busiest():
    _, c = _run({"gc_fw_us": 20}, {"type": "uniform"})
    names = [x["resource"] for x in c["resources"]]
    assert names == ["controller", "host link", "NAND dies", "flash channels"]
    busiest = max(c["resources"], key=lambda x: x["ns_per_io"])
    assert c["bottleneck"] == busiest["resource"] and c["iops"] == pytest.approx(1e9 / busiest["ns_per_io"])


def test_gc_copies_cost_firmware_time():
    model = describe(
        {
            "drive": {"user_capacity": "48MiB", "physical_capacity": "64MiB", "pages_per_block": 64},
            "timing": {"gc_fw_us": 20},
        }
    )["cost_model"]
    mix = {"write_fraction": 1.0, "units_per_io": 1.0, "bytes_per_io": 4096}
    ctrl = [
        next(x["ns_per_io"] for x in costs(model, mix, w)["resources"] if x["resource"] == "controller")
        for w in (1.0, 3.0)
    ]
    assert ctrl[1] - ctrl[0] == pytest.approx(2 * 20_000)


def test_bad_mix_names_its_key():
    from opsim.errors import InputError

    model = describe(
        {"drive": {"user_capacity": "48MiB", "physical_capacity": "64MiB", "pages_per_block": 64}, "timing": {}}
    )["cost_model"]
    with pytest.raises(InputError) as e:
        costs(model, {"write_fraction": 2, "units_per_io": 1, "bytes_per_io": 4096}, 1.0)
    assert e.value.key == "mix.write_fraction"
    with pytest.raises(InputError) as e:
        costs(model, {"write_fraction": 1, "units_per_io": 1, "bytes_per_io": 4096, "x": 1}, 1.0)
    assert e.value.key == "mix.x"  # the unknown key itself


def test_screen_restates_no_cost_rule():
    """``iops_bound`` asks the core: none of the timed model's parameters is read in Python."""
    from opsim.planner.advise import drive, screen

    src = inspect.getsource(screen.iops_bound)
    for name in (
        "xfer_ns",
        "t_read_ns",
        "t_prog_ns",
        "t_erase_ns",
        "fw_ns",
        "gc_fw_ns",
        "link_ps_per_byte",
        "units_per_program",
        "block_units",
    ):
        assert f'"{name}"' not in src, name  # e.g. t["xfer_ns"]
    assert "costs(" in src
    assert not hasattr(drive, "_probe")
