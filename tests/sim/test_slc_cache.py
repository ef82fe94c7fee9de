"""The dynamic SLC cache (Micron's Dynamic Write Acceleration) in the timed model, checked
against first-principles figures of its own parameters, and against the functional model.

SLC mode: a program writes 1/bits of a native program unit (48 KiB x 2 planes = 24 mapping
units in TLC, 8 in SLC) in tPROG(SLC); folding reads each valid SLC page (tR(SLC)) and
programs it in TLC, with the controller's GC firmware time per page.
"""

import pytest

from opsim import simulate
from support import timing_table

TIMING = timing_table(
    nand_page_size="48KiB",
    nand_block_size="12MiB",
    cell="tlc",
    t_prog_us=2400,
    t_read_slc_us=30,
    t_prog_slc_us=200,
    link_mbps=4000,
    write_buffer="512KiB",
)


def cfg(slc=None, timing=None, op=0.28, cap="1GiB", workload=None, **run):
    c = {
        "drive": {"user_capacity": cap, "op": op, "pages_per_block": 192},
        "workload": workload or {},
        "run": {"seed": 3, "warmup_drive_writes": 1, "measure_drive_writes": 1, "round_drive_writes": 0.25} | run,
        "timing": TIMING | (timing or {}),
    }
    if slc is not None:
        c["ftl"] = {"slc_cache": slc}
    return c


def test_fob_burst_runs_at_the_slc_program_bandwidth():
    """Fresh drive, 5% of it written: every page lands in SLC mode; the rate is the SLC
    program bandwidth, 8 units per tPROG(SLC) on each die, against 24 per tPROG(TLC)
    without (each unit's channel transfer occupies its die too)."""
    dies = 8
    short = {"precondition": "none", "warmup_drive_writes": 0, "measure_drive_writes": 0.05, "round_drive_writes": 0.01}
    tlc = simulate(cfg(**short))
    slc = simulate(cfg({}, **short))
    xfer = 4096 / 800e6  # a die is busy for its unit's channel transfer, then its share of tPROG
    assert tlc.timed["measured_iops"] == pytest.approx(dies / (xfer + 2400e-6 / 24), rel=0.03)
    assert slc.timed["measured_iops"] == pytest.approx(dies / (xfer + 200e-6 / 8), rel=0.03)
    t = slc.timed["timing"]["slc"]
    assert t["units_per_program"] == 8 and t["program_units_per_s"] == pytest.approx(dies * 8 / 200e-6)
    assert "slc" not in tlc.timed["timing"]
    assert slc.counters.get("fold_pages", 0) == 0 and slc.waf == 1.0


def test_timed_and_functional_waf_agree_with_the_cache():
    """Same FTL code: folding when the cache is full happens in both models alike."""
    for slc in ({"min_fraction": 0.02}, {"min_fraction": 0.02, "when_full": "direct"}, {}):
        c = cfg(slc, op=0.12, precondition="none", warmup_drive_writes=1.5)
        timed = simulate(c)
        func = simulate({k: v for k, v in c.items() if k != "timing"})
        assert abs(timed.waf - func.waf) / func.waf < 0.01, (slc, timed.waf, func.waf)
        assert timed.counters.get("fold_pages", 0) > 0


def test_static_part_folds_every_host_write_in_steady_state():
    """On a full drive, host writes go through the static SLC part and are folded: about
    one more NAND write per host write than without the cache (and the static part comes
    out of the spare area, so GC copies a little more too)."""
    off = simulate(cfg(op=0.12))
    on = simulate(cfg({"min_fraction": 0.01}, op=0.12))
    m = on.measure_counters
    assert m["fold_pages"] / m["host_write_pages"] == pytest.approx(1.0, abs=0.02)
    assert on.waf > off.waf + 0.95
    assert on.timed["measured_iops"] < off.timed["measured_iops"]


def test_idle_time_folds_the_cache():
    """Open-loop load far below capacity leaves idle time: closed SLC blocks are folded
    then (the functional model, with no idle time, never folds here: the cache never
    fills).  Folding in idle time programs TLC off the host's path: write latency stays at
    buffer admission."""
    c = cfg(
        {"idle_ms": 0.5},
        {"arrival_iops": 2000},
        precondition="none",
        warmup_drive_writes=0,
        measure_drive_writes=0.02,
        round_drive_writes=0.01,
    )
    r = simulate(c)
    assert r.counters["folds"] > 0
    f = simulate({k: v for k, v in c.items() if k != "timing"})
    assert f.counters.get("folds", 0) == 0
    assert r.timed["latency_us"]["write"]["p50"] < 20
    off = simulate(c | {"ftl": {"slc_cache": {"idle_fold": False}}})
    assert off.counters.get("folds", 0) == 0


def test_read_latency_from_slc_at_qd1():
    """A 4 KiB read of data still in SLC mode: firmware + tR(SLC) + channel + link."""
    c = cfg({}, {"queue_depth": 1}, precondition="none")
    c["phase"] = [
        {"name": "write", "workload": {"type": "sequential", "span": 0.02}, "drive_writes": 0.02},
        {"name": "read", "workload": {"read_fraction": 0.99, "span": 0.02}, "ios": 3000},
    ]
    r = simulate(c)
    assert r.counters["unmapped_read_pages"] == 0
    expect_us = 1.0 + 30 + 4096 / 800 + 4096 / 4000
    assert r.timed["latency_us"]["read"]["p50"] == pytest.approx(expect_us, rel=0.03)


def test_slc_config_errors():
    from opsim.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        simulate(cfg({"min_fraction": 0.9}))
    assert e.value.key == "ftl.slc_cache.min_fraction"
    # a preset's cache turned off: SLC-mode times ignored
    r = simulate(
        cfg(
            {"enabled": False},
            {"t_prog_slc_us": 100},
            precondition="none",
            warmup_drive_writes=0,
            measure_drive_writes=0.01,
            round_drive_writes=0.01,
        )
    )
    assert "slc" not in r.timed["timing"]
    with pytest.raises(ConfigError) as e:
        simulate(cfg({"bits_per_cell": 2}))
    assert e.value.key == "ftl.slc_cache.bits_per_cell"


# ----------------------------------------------------------------------------- Micron 1100 DWA


@pytest.fixture(scope="module")
def dwa():
    from opsim.validation import micron_dwa

    return micron_dwa()


@pytest.mark.slow
def test_micron_dwa_write_saturation_against_seed_000(dwa):
    """Seed 000, Figure 1: over 80,000 IOPS fresh out of box, a transition down through
    70,000-18,000, steady state at about 11,000.  With the SLC cache the burst is in SLC mode
    and short (the cache fills after a fifth of the drive is written, then every write pays
    a fold), and the steady state is the fitted controller's."""
    on = dwa["runs"]["DWA (micron-1100-1tb-dwa)"]
    off = dwa["runs"]["DWA preset, cache off"]
    base = dwa["runs"]["no DWA (micron-1100-1tb)"]
    assert on["fob_iops"] > 1.5 * base["fob_iops"] and on["fob_iops"] == pytest.approx(80000, rel=0.01)
    assert on["burst_drive_writes"] < 0.3 < off["burst_drive_writes"], "the SLC burst ends when the cache is full"
    assert on["fold_pages"] > 0 and off["fold_pages"] == 0
    assert on["steady_iops"] == pytest.approx(11000, rel=0.15)
    assert on["cliff_ratio"] > 5
    hi, lo = on["transition"]
    assert hi < on["fob_iops"] and lo < 0.3 * on["fob_iops"]
    s = [p["iops"] for p in on["series"]]
    tail = s[-len(s) // 5 :]
    assert (max(tail) - min(tail)) / on["steady_iops"] < 0.25, "a flat steady state"


@pytest.mark.slow
def test_micron_dwa_steady_state_ratios():
    """The DWA preset is fitted to over 80,000 IOPS fresh out of box (the controller's rate)
    and 11,000 IOPS at 1024 GB; 29,000 at 800 GB and 13,000 at 1000 GB are predictions, within
    the issue's 15%."""
    from opsim.validation import steady_run

    m = {gb: steady_run("micron-1100-1tb-dwa", gb * 10**9, 64)["iops"] for gb in (1024, 1000, 800)}
    assert m[1024] == pytest.approx(11000, rel=0.03)
    assert m[800] / m[1024] == pytest.approx(29000 / 11000, rel=0.15)
    assert m[1000] / m[1024] == pytest.approx(13000 / 11000, rel=0.15)
