"""Issue 25: reads of today's NAND (``timing.read_planes``, ``timing.read_whole_pages``).

Bad values exit 2 naming the key before any work; the cost model carries the knobs (describe's
``cost_model``) and charges sequential whole-page reads by the NAND pages they touch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import opsim.sim

SMALL = '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[run]\nwarmup_drive_writes = 0.5\nmeasure_drive_writes = 1\n'
NAND = 'interface = "nvme"\nplanes = 4\nnand_page_size = "48KiB"\nnand_block_size = "12MiB"\nt_read_us = 60\n'


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("read_planes = 0", "timing.read_planes"),
        ("read_planes = 5", "timing.read_planes"),
        ("read_planes = -1", "timing.read_planes"),
        ('read_planes = "two"', "timing.read_planes"),
        ("read_planes = 1.5", "timing.read_planes"),
        ('read_whole_pages = "yes"', "timing.read_whole_pages"),
        ("read_whole_pages = 1", "timing.read_whole_pages"),
        ('channel_order = "fifo"', "timing.channel_order"),
        ("channel_order = 1", "timing.channel_order"),
        ('channel_order = ""', "timing.channel_order"),
    ],
)
def test_a_bad_read_or_channel_knob_exits_2_naming_the_key(tmp_path, line, key):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"{SMALL}[timing]\n{NAND}{line}\n")
    env = os.environ | {"PYTHONPATH": ""}
    r = subprocess.run(
        [sys.executable, "-m", "opsim.cli", "simulate", str(cfg)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert key in r.stderr, r.stderr


def _cost_model(extra: str) -> dict:
    cfg = {
        "drive": {"user_capacity": "64MiB", "op": 0.28},
        "timing": {
            "interface": "nvme",
            "planes": 4,
            "nand_page_size": "48KiB",
            "nand_block_size": "12MiB",
            "t_read_us": 60,
            "channel_mbps": 100000,
            "link_mbps": 100000,
            "fw_overhead_us": 0.01,
        },
    }
    for kv in filter(None, extra.split(",")):
        k, v = kv.split("=")
        cfg["timing"][k] = json.loads(v)
    return opsim.sim.describe(cfg)["cost_model"]


def _costs(model: dict, mix: dict) -> float:
    return opsim.sim.costs(model, mix, 1.0)["iops"]


def test_the_knobs_off_leave_the_cost_model_as_it_was():
    m = _cost_model("")
    assert "reads" not in m["timing"]
    assert _cost_model("read_planes=1,read_whole_pages=false") == m


def test_random_reads_scale_with_independent_read_planes():
    rnd = {"write_fraction": 0, "units_per_io": 1, "bytes_per_io": 4096}
    one = _costs(_cost_model(""), rnd)
    four = _costs(_cost_model("read_planes=4"), rnd)
    assert _cost_model("read_planes=4")["timing"]["reads"] == {
        "read_planes": 4,
        "read_whole_pages": False,
        "planes": 4,
        "page_units": 4,
    }
    assert four == pytest.approx(4 * one, rel=1e-9)
    # 16 dies x 4 planes / 60 us
    assert four == pytest.approx(16 * 4 / 60e-6, rel=1e-9)


def test_sequential_whole_page_reads_sense_once_per_nand_page():
    seq = {"write_fraction": 0, "units_per_io": 32, "bytes_per_io": 131072, "sequential": True}
    m = _cost_model("read_whole_pages=true")
    # 32 units back to back over 16 dies: 2 a die, in one 16 KiB page: 16 senses, not 32
    assert _costs(m, seq) == pytest.approx(2 * _costs(m, seq | {"sequential": False}), rel=1e-9)
    assert _costs(m, seq) == pytest.approx(16 / (16 * 60e-6), rel=1e-9)
    # without whole pages, a sequential read senses every unit
    off = _cost_model("")
    assert _costs(off, seq) == pytest.approx(_costs(off, seq | {"sequential": False}), rel=1e-12)
