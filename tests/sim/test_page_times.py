"""Per-page-type NAND times (``timing.t_read_page_us``, ``timing.t_prog_page_us``) through the
Python API: a mapping unit's page type (LSB, CSB, MSB) follows from its place on its die
(docs/timed.md#page-types-lsb-csb-msb); a read costs its page's tR; programmed page by page, a
word line costs the sum of its pages' times.  Expected figures from the model's parameters.

Geometry: 4 dies, 2 planes, a 48 KiB TLC word line of 4 KiB units: a program unit is 24 units
on a die, 8 per page type, and the page types repeat every 4 x 24 = 96 physical pages."""

import random
import subprocess
import sys

import pytest

from opsim import simulate
from opsim.errors import ConfigError
from support import timing_table

DIES, UPP, PER_PAGE = 4, 24, 8
TIMING = timing_table(
    channels=2, cell="tlc", nand_page_size="48KiB", nand_block_size="12MiB", t_prog_us=1800, queue_depth=None
)
USER_PAGES = (64 << 20) // 4096
# firmware + channel transfer + SATA link of one unloaded 4 KiB read
OVERHEAD_US = 1.0 + 4096 / 800 + 4096 / 600


def page_type(ppn):
    return (ppn // DIES) % UPP // PER_PAGE


def reads(tmp_path, lpns, timing):
    """A 64 MiB drive filled sequentially (user page i in physical page i), then a DiskSim
    trace of 4 KiB reads of `lpns` at queue depth 1."""
    trace = tmp_path / "reads.disksim"
    trace.write_text("".join(f"{i}.0 0 {lpn * 8} 8 1\n" for i, lpn in enumerate(lpns)))
    return simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 96},
            "run": {"seed": 5, "precondition": "fill"},
            "phase": [
                {
                    "name": "reads",
                    "ios": len(lpns),
                    "workload": {"type": "trace", "trace": {"path": str(trace), "format": "disksim"}},
                }
            ],
            "timing": TIMING | {"queue_depth": 1} | timing,
        }
    )


def test_random_reads_cost_the_mean_page_read_time(tmp_path):
    rng = random.Random(3)
    lpns = [rng.randrange(USER_PAGES) for _ in range(10_000)]
    r = reads(tmp_path, lpns, {"t_read_page_us": [50, 100, 150]})
    lat = r.timed["latency_us"]["read"]
    # reads only (the phase ends with its last read issued, still in flight)
    assert lat["count"] == r.timed["latency_us"]["all"]["count"] >= len(lpns) - 1
    want = sum((50, 100, 150)[page_type(lpn)] for lpn in lpns) / len(lpns)
    assert want == pytest.approx(100, abs=2)
    assert lat["mean"] == pytest.approx(want + OVERHEAD_US, abs=0.5)
    assert lat["min"] == pytest.approx(50 + OVERHEAD_US, abs=1)
    assert lat["max"] == pytest.approx(150 + OVERHEAD_US, abs=3)
    t = r.timed["timing"]
    assert t["pages"] == {"bits": 3, "units_per_page": 8, "t_read_ns": [50_000, 100_000, 150_000]}
    assert t["t_read_ns"] == 100_000


def test_msb_reads_cost_the_msb_read_time(tmp_path):
    rng = random.Random(4)
    lpns = [lpn for lpn in (rng.randrange(USER_PAGES) for _ in range(3000)) if page_type(lpn) == 2]
    r = reads(tmp_path, lpns, {"t_read_page_us": [50, 100, 150]})
    lat = r.timed["latency_us"]["read"]
    assert lat["mean"] == pytest.approx(150 + OVERHEAD_US, abs=0.5)
    assert lat["max"] - lat["min"] < 1


def test_without_page_times_reads_cost_t_read(tmp_path):
    r = reads(tmp_path, list(range(0, USER_PAGES, 7)), {})
    assert r.timed["latency_us"]["read"]["mean"] == pytest.approx(60 + OVERHEAD_US, abs=0.5)
    assert "pages" not in r.timed["timing"]


def fob(timing, drive_writes=0.5):
    return simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 96},
            "run": {
                "seed": 5,
                "precondition": "none",
                "warmup_drive_writes": 0,
                "measure_drive_writes": drive_writes,
                "round_drive_writes": drive_writes,
            },
            "timing": TIMING | {"queue_depth": 32, "write_buffer": "128KiB"} | timing,
        }
    )


def test_page_by_page_word_line_costs_the_sum_of_its_pages():
    r = fob({"t_prog_page_us": [500, 1500, 2500]})
    bound = DIES * UPP / 4500e-6
    t = r.timed["timing"]
    assert t["t_prog_ns"] == 4_500_000
    assert t["program_units_per_s"] == pytest.approx(bound)
    assert r.timed["measured_iops"] == pytest.approx(bound, rel=0.03)
    # with the write cache off a command pads its own page: the mean page time per command
    off = fob({"t_prog_page_us": [500, 1500, 2500], "write_cache": False}, 0.03)
    assert off.timed["measured_iops"] == pytest.approx(DIES / 1500e-6, rel=0.05)


def test_bad_page_times_name_the_key(tmp_path):
    with pytest.raises(ConfigError) as e:
        fob({"t_read_page_us": [50, 100]})
    assert e.value.key == "timing.t_read_page_us"
    assert "TLC needs 3 values (LSB, CSB, MSB), got 2" in str(e.value)
    with pytest.raises(ConfigError) as e:
        fob({"t_prog_page_us": [500, 0, 2500]})
    assert e.value.key == "timing.t_prog_page_us"
    with pytest.raises(ConfigError) as e:
        fob({"nand_page_size": "16KiB", "nand_block_size": "8MiB", "t_read_page_us": [50, 100, 150]})
    assert e.value.key == "timing.t_read_page_us" and "nand_page_size" in str(e.value)
    # the CLI: exit code 2, the key in the message, no traceback
    cfg = tmp_path / "bad.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[timing]\ncell = "mlc"\n'
        'nand_page_size = "32KiB"\nt_prog_page_us = [300, 900, 1500]\n'
    )
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(cfg)], capture_output=True, text=True)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "timing.t_prog_page_us" in p.stderr and "MLC needs 2 values" in p.stderr
    assert "Traceback" not in p.stderr
