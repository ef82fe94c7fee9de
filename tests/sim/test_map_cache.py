"""The timed model's mapping-table cache (``[timing.map_cache]``, DFTL-style) through
``opsim.simulate``: hit ratios against their closed forms, the latency of a miss, a cache
holding the whole table, errors, determinism, results unchanged when off.

A 512 MiB drive: 131072 mapping units of 4 KiB, so 128 translation pages of 1024 entries.
Expected figures come from the parameters: tR = 60 us, a 4 KiB unit moves over an 800 MB/s
channel in 5.12 us.
"""

import json
import math
import subprocess
import sys

import pytest

from opsim import simulate
from opsim.errors import CapacityError, ConfigError
from support import timing_table

TIMING = timing_table()
TR_XFER_US = 60 + 4096 / 800
PAGES = 128


def cfg(map_cache=None, timing=None, workload=None, phases=None, **run):
    t = TIMING | (timing or {})
    if map_cache is not None:
        t["map_cache"] = map_cache
    c = {
        "drive": {"user_capacity": "512MiB", "op": 0.28, "pages_per_block": 256},
        "run": {"seed": 11, "warmup_drive_writes": 0.5, "measure_drive_writes": 0.5, "round_drive_writes": 0.25} | run,
        "timing": t,
    }
    if workload is not None:
        c["workload"] = workload
    if phases is not None:
        warm, ios, w = phases
        c["phase"] = [
            {"name": "warm", "ios": warm, "workload": w},
            {"name": "measure", "ios": ios, "measure": True, "workload": w},
        ]
    return c


def mc(r):
    return r.timed["map_cache"]


def test_whole_table_cached_gives_the_uncached_iops_after_warm_up():
    w = {"read_fraction": 0.3}
    none = simulate(cfg(workload=w))
    full = simulate(cfg({"size": "1GiB"}, workload=w))  # more than the table: it all fits
    m = mc(full)
    assert (m["translation_pages"], m["cached_pages"]) == (PAGES, PAGES)
    assert m["total"]["map_reads"] == PAGES and m["total"]["map_writes"] == 0  # cold misses only
    assert m["hit_ratio"] == 1.0 and m["map_reads"] == 0
    assert full.timed["measured_iops"] == pytest.approx(none.timed["measured_iops"], rel=0.005)
    assert full.waf == none.waf
    assert m["waf_with_map"] == full.waf


@pytest.mark.parametrize("cached", [16, 48])
def test_uniform_random_reads_hit_ratio_is_the_cached_share_of_the_span(cached):
    # span 0.5: 64 translation pages; C cached: P(hit) = C / 64 per independent lookup
    r = simulate(cfg({"size": cached * 4096}, phases=(4_000, 60_000, {"read_fraction": 0.99, "span": 0.5})))
    m = mc(r)
    assert m["cached_pages"] == cached
    p, n = cached / 64, m["lookups"]
    assert n == 60_000
    assert abs(m["hit_ratio"] - p) < 4 * math.sqrt(p * (1 - p) / n)
    assert m["map_reads"] == n - m["hits"]


def test_sequential_reads_hit_1023_of_1024():
    # each phase starts its sequential stream at LBA 0: the warm-up's 10 translation pages are
    # evicted again before the measured phase gets back to them (7 cached)
    r = simulate(cfg({"fraction": 0.05}, phases=(10_240, 51_200, {"type": "sequential", "read_fraction": 0.99})))
    m = mc(r)
    assert m["cached_pages"] == math.ceil(0.05 * PAGES)
    assert m["lookups"] == 51_200
    assert m["lookups"] - m["hits"] == 50  # one miss per 1024 sequential 4 KiB commands
    assert m["hit_ratio"] == pytest.approx(1023 / 1024, abs=2e-5)


def test_qd1_random_read_latency_rises_by_one_read_per_miss():
    w = (1_000, 10_000, {"read_fraction": 0.999})
    none = simulate(cfg(timing={"queue_depth": 1}, phases=w))
    some = simulate(cfg({"fraction": 0.5}, timing={"queue_depth": 1}, phases=w))
    miss = 1 - mc(some)["hit_ratio"]
    assert miss == pytest.approx(0.5, abs=0.03)
    a, b = none.timed["latency_us"]["all"], some.timed["latency_us"]["all"]
    assert (b["mean"] - a["mean"]) / miss == pytest.approx(TR_XFER_US, rel=0.03)
    # the slowest commands in steady state are misses, one tR + transfer above a hit
    assert b["p90"] - a["p90"] == pytest.approx(TR_XFER_US, rel=0.04)


def test_bad_input_names_the_key(tmp_path):
    for bad, key in [
        ({}, "timing.map_cache.size"),
        ({"size": "1MiB", "fraction": 0.1}, "timing.map_cache.fraction"),
        ({"size": "1KiB"}, "timing.map_cache.size"),
        ({"fraction": 0}, "timing.map_cache.fraction"),
        ({"fraction": "150%"}, "timing.map_cache.fraction"),
        ({"size": "1MiB", "translation_page": "6KiB"}, "timing.map_cache.translation_page"),
        ({"size": "1MiB", "translation_page": "64KiB"}, "timing.map_cache.translation_page"),
    ]:
        with pytest.raises(ConfigError) as e:
            simulate(cfg(bad))
        assert e.value.key == key, bad
    with pytest.raises(ConfigError) as e:
        simulate(cfg({"size": "1MiB", "bogus": 1}))
    assert "bogus" in str(e.value)
    with pytest.raises(CapacityError) as e:
        simulate(cfg({"fraction": 1.0}, memory_limit="1MiB"))
    assert "mapping-table cache" in str(e.value)
    # the CLI: exit 2, the key named
    path = tmp_path / "bad.toml"
    path.write_text('[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[timing]\n[timing.map_cache]\nfraction = 2\n')
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 2
    assert "timing.map_cache.fraction" in p.stderr + p.stdout


def test_same_seed_bit_identical_and_off_unchanged():
    w = (1_000, 8_000, {"read_fraction": 0.6, "trim_fraction": 0.05})
    a = simulate(cfg({"fraction": 0.2}, phases=w)).to_dict()
    b = simulate(cfg({"fraction": 0.2}, phases=w)).to_dict()
    a.pop("perf"), b.pop("perf")
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    absent = simulate(cfg(phases=w)).to_dict()
    off = simulate(cfg({"enabled": False, "fraction": 0.2}, phases=w)).to_dict()
    for d in (absent, off):
        d.pop("perf"), d.pop("config")
    assert json.dumps(absent, sort_keys=True) == json.dumps(off, sort_keys=True)
    assert "map_cache" not in json.dumps(absent)


def test_cli_prints_the_cache(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[run]\nwarmup_drive_writes = 0.2\n'
        'measure_drive_writes = 0.2\nround_drive_writes = 0.1\n[timing]\n[timing.map_cache]\nsize = "8KiB"\n'
    )
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "2 of 16 translation pages" in p.stdout
    assert "WAF with mapping writes" in p.stdout
