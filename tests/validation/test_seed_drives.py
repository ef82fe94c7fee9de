"""The timed model on the seed drives' presets against their published figures.

Tolerances are the issue's: 15% for the Micron 1100 and Intel 320 ratios, 25% for the SanDisk
X400's.  The X400 presets' NAND (binary capacity less a fixed 6 GB reserve) was chosen among
readings of seed 001 after comparing them (docs/validation.md); the test holds that choice.
"""

import pytest

from opsim.validation import run_seeds, write_saturation


@pytest.fixture(scope="module")
def rows():
    return run_seeds()


def pick(rows, drive, figure):
    return next(r for r in rows if r["drive"].startswith(drive) and r["figure"] == figure)


@pytest.mark.slow
@pytest.mark.parametrize(
    "drive,figure",
    [
        ("Micron", "IOPS 1000 GB / 1024 GB"),
        ("Micron", "IOPS 800 GB / 1024 GB"),
        ("Intel 320", "IOPS 20% held back / native"),
        ("Intel 320", "IOPS 40% held back / native"),
    ],
)
@pytest.mark.slow
def test_micron_and_intel_ratios_within_15_percent(rows, drive, figure):
    r = pick(rows, drive, figure)
    assert abs(r["error"]) <= 0.15, r


@pytest.mark.slow
@pytest.mark.parametrize("cap", [128, 256, 512, 1024])
@pytest.mark.parametrize("figure", ["IOPS 7% / 0%", "IOPS 28% / 0%"])
def test_x400_ratios_within_25_percent(rows, cap, figure):
    r = pick(rows, f"SanDisk X400 {cap} GB", figure)
    assert abs(r["error"]) <= 0.25, r


@pytest.mark.slow
def test_x400_more_op_more_iops_every_capacity(rows):
    for cap in (128, 256, 512, 1024):
        r7 = pick(rows, f"SanDisk X400 {cap} GB", "IOPS 7% / 0%")["simulated"]
        r28 = pick(rows, f"SanDisk X400 {cap} GB", "IOPS 28% / 0%")["simulated"]
        assert 1 < r7 < r28


@pytest.mark.slow
def test_write_saturation_shape():
    w = write_saturation()
    s = [p["iops"] for p in w["series"]]
    assert w["steady_iops"] is not None, "steady state reached"
    assert w["fob_iops"] > 3 * w["steady_iops"], "a cliff from fresh-out-of-box to steady state"
    assert w["fob_end_s"] < w["steady_start_s"]
    tail = s[-len(s) // 5 :]
    assert (max(tail) - min(tail)) / w["steady_iops"] < 0.2, "a flat steady state"


@pytest.mark.slow
def test_io_consistency_tightens_with_spare_area():
    """AnandTech (seed 003): the 840 Pro's IO consistency improves as spare area grows."""
    from opsim.validation import io_consistency

    c = io_consistency()
    spread = [x["p99_9_over_p50"] for x in c]
    cv = [x["cv"] for x in c]
    assert spread == sorted(spread, reverse=True) and cv == sorted(cv, reverse=True)
    assert cv[0] > 3 * cv[2], "25% spare: 'a thickly painted line' against a spread-out mess"
    med = [x["median_iops"] for x in c]
    assert med == sorted(med)


@pytest.mark.slow
def test_x400_reserve_study_seed_reading_misses_preset_reading_meets():
    """docs/validation.md: the seed's 262 GB example misses five ratios, the presets' reading
    (binary NAND less a fixed 6 GB) meets all eight, each with the controller refitted by
    opsim calibrate."""
    from opsim.presets import load
    from opsim.units import parse_size
    from opsim.validation.x400_reserve import X400_READINGS, x400_reserve

    seed, preset = X400_READINGS[0], next(r for r in X400_READINGS if "(the presets)" in r[0])
    presets = {p["name"]: p["settings"] for p in load()}
    for cap in (128, 256, 512, 1024):  # the study's reading is the presets' NAND
        assert preset[1](cap) == parse_size(presets[f"sandisk-x400-{cap}gb"]["drive"]["physical_capacity"])
    a, b = x400_reserve(readings=[seed, preset])
    assert a["passing"] == 3 and b["passing"] == 8, (a, b)
    x = {p["name"]: p["settings"]["timing"] for p in load()}["sandisk-x400-256gb"]
    assert (b["fw_overhead_us"], b["gc_fw_us"]) == (x["fw_overhead_us"], x["gc_fw_us"])
