"""The precision a drive file stores a fitted figure at, and the tolerance a fresh calibration is
compared to a checked-in one at (opsim.calibrate.stored): one stored unit plus 1e-6 relative,
for fitted figures only; everything else exactly."""

from __future__ import annotations

import copy

import pytest

from opsim.calibrate import stored

DOC = {
    "preset": {
        "name": "x",
        "sources": {
            "drive.user_capacity": "datasheet: native capacity",
            "drive.physical_capacity": "fitted: NAND (95% interval in [preset.calibration])",
            "timing.t_prog_us": "fitted: program time, to datasheet 85000 IOPS (95%: 668.1..1107)",
            "timing.channels": "default: 8 channels",
        },
        "calibration": {
            "opsim_version": "0.1.0",
            "pe_cycles": 4006.9,
            "pe_cycles_source": "fitted: endurance at the model's WAF (2.73)",
            "intervals_95": {"timing.t_read_us": [4.25, 161.8], "drive.physical_capacity": [1.063e12, 1.336e12]},
        },
    },
    "drive": {"user_capacity": "960GB", "physical_capacity": "1164153948KiB"},
    "timing": {"channels": 8, "t_prog_us": 860.16, "channel_mbps": 400.0},
}


def changed(path: str, v):
    d = copy.deepcopy(DOC)
    *head, last = path.split("/")
    node = d
    for k in head:
        node = node[k]
    node[last] = v
    return d


def test_equal_documents_agree():
    assert stored.differences(copy.deepcopy(DOC), DOC) == []


@pytest.mark.parametrize(
    "path, near, far",
    [
        ("timing/t_prog_us", 860.15, 860.13),  # a time: 0.01 us
        ("preset/calibration/pe_cycles", 4007.0, 4007.2),  # 0.1 cycle
        ("drive/physical_capacity", "1164153944KiB", "1164143948KiB"),  # 4 KiB + 1e-6 (1.2 MB)
        ("preset/calibration/intervals_95/timing.t_read_us", [4.251, 161.7], [4.25, 161.5]),
        ("preset/calibration/intervals_95/drive.physical_capacity", [1.064e12, 1.336e12], [1.07e12, 1.336e12]),
        ("preset/sources/timing.t_prog_us", "fitted: program time, to datasheet 85000 IOPS (95%: 668.2..1108)", None),
        ("preset/calibration/pe_cycles_source", "fitted: endurance at the model's WAF (2.74)", None),
    ],
)
def test_a_fitted_figure_agrees_within_one_stored_unit(path, near, far):
    """The rounding-boundary case: two machines round x.xx5 (+-1e-12) to neighbouring units."""
    assert stored.differences(changed(path, near), DOC) == []
    if far is not None:
        assert stored.differences(changed(path, far), DOC) == [path.replace("/", ".")]


@pytest.mark.parametrize(
    "path, other",
    [
        ("timing/channels", 9),  # a count: exact
        ("timing/channel_mbps", 400.01),  # not fitted here: exact
        ("drive/user_capacity", "961GB"),  # given: exact
        ("preset/sources/drive.user_capacity", "datasheet: native capacity!"),
        ("preset/sources/timing.t_prog_us", "fitted: read time, to datasheet 85000 IOPS (95%: 668.1..1107)"),
        ("preset/sources/timing.t_prog_us", "fitted: program time, to datasheet 85002 IOPS (95%: 668.1..1107)"),
        ("preset/sources/timing.channels", "default: 9 channels"),  # not a fitted key's text
        ("preset/calibration/opsim_version", "0.1.1"),
        ("preset/calibration/pe_cycles", "4006.9"),  # a type change
    ],
)
def test_everything_else_must_be_equal(path, other):
    assert stored.differences(changed(path, other), DOC) == [path.replace("/", ".")]


def test_a_key_missing_or_added_is_a_difference():
    d = copy.deepcopy(DOC)
    del d["timing"]["t_prog_us"]
    d["timing"]["t_erase_us"] = 5000
    assert stored.differences(d, DOC) == ["timing.t_erase_us", "timing.t_prog_us"]


def test_values_on_a_rounding_boundary_round_to_neighbours_that_agree():
    """1.23445000001 and 1.23444999999 (a fit's last bits on two CPUs) store differently, and
    the comparison accepts both."""
    a, b = stored.value("t_prog_us", 860.155 + 1e-9), stored.value("t_prog_us", 860.155 - 1e-9)
    assert (a, b) == (860.16, 860.15)
    assert stored.differences(changed("timing/t_prog_us", b), changed("timing/t_prog_us", a)) == []
    lo, hi = 161.75 + 1e-9, 161.75 - 1e-9
    assert stored.interval(4.2497, lo) != stored.interval(4.2497, hi)
    iv = "preset/calibration/intervals_95/timing.t_read_us"
    assert stored.differences(changed(iv, stored.interval(4.2497, lo)), changed(iv, stored.interval(4.2497, hi))) == []


def test_stored_precision():
    # 4 significant digits, and the width keeps 3
    assert stored.interval(4.249692508387836, 161.77368095293215) == [4.25, 161.8]
    assert stored.interval(1063365921960.9584, 1336404734946.8367) == [1.063e12, 1.336e12]
    assert stored.interval(859.5312, 860.8467) == [859.53, 860.85]
    assert stored.interval_text(4.249692508387836, 161.77368095293215) == "4.250..161.8"
    assert stored.interval_text(1063365921960.9584, 1336404734946.8367) == "1063000000000..1336000000000"
    # the capacity stays whole sectors; times to 0.01; P/E to 0.1
    assert stored.value("physical", 1192093642751.9) == 1192093638656.0
    assert stored.value("physical", 1192093642751.9) % 4096 == 0
    assert stored.value("gc_fw_us", 10.6149) == 10.61
    assert stored.pe_cycles(4006.94) == 4006.9
