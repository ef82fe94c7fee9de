"""The scale models calibration simulates on superblocks: the core's rule, as many superblocks
each k times smaller, k dividing the superblock into units of at least 1,536 pages."""

from __future__ import annotations

import pytest

from opsim.calibrate import population, scale, timed
from opsim.calibrate.inputs import DriveSpec
from opsim.calibrate.model import build
from opsim.sim import describe

#: a 7450 PRO-like drive: 12 MiB blocks x 4 planes x 16 dies = 196,608 pages of 4 KiB a superblock
SUPERBLOCK = {
    "drive": {"user_capacity": "960GB", "physical_capacity": "1TiB"},
    "ftl": {"gc_unit": "superblock"},
    "timing": {"interface": "nvme", "channels": 8, "dies_per_channel": 2, "planes": 4, "nand_block_size": "12MiB"},
}


def test_unit_scale_divides_the_superblock_into_units_of_at_least_1536_pages():
    assert scale.unit_scale(196_608, 10**6) == 128  # 1,536 pages: the smallest unit allowed
    assert scale.unit_scale(196_608, 100) == 96  # the largest divisor within the cap
    assert scale.unit_scale(1_000, 50) == 1  # already smaller than 1,536 pages
    for pages, most in ((983_040, 640), (196_608, 527), (393_216, 2311)):
        k = scale.unit_scale(pages, most)
        assert pages % k == 0 and pages // k >= scale.MIN_UNIT_PAGES and k <= most


def test_a_timed_scale_model_keeps_the_superblocks():
    full = describe(SUPERBLOCK, model_limits=False)
    model, k = timed.scale_model(SUPERBLOCK, 960 * 10**9)
    small = describe(model, model_limits=False)
    assert small["drive"]["gc_unit"]["kind"] == "superblock"
    assert model["ftl"]["superblock_scale"] == k > 1
    assert small["drive"]["gc_unit"]["pages"] * k == full["drive"]["gc_unit"]["pages"]
    assert small["drive"]["blocks"] == full["drive"]["blocks"]  # as many superblocks
    assert small["drive"]["physical_bytes"] <= full["drive"]["physical_bytes"] // k


@pytest.mark.parametrize("gc_unit", ["superblock", "block"])
def test_the_nand_capacity_is_stepped_over_whole_superblocks(gc_unit):
    """The core cuts the NAND into whole superblocks: the fit's Jacobian steps the capacity over
    4 of them (a step of 0.1% of a prior width would see no change); FTL blocks keep the fit's step."""
    spec = DriveSpec(native=960 * 10**9, interface="nvme", cell="tlc")
    spec.model = {"ftl.gc_unit": gc_unit, "timing.planes": 4} if gc_unit == "superblock" else {"timing.planes": 4}
    spec.model_sources = {k: "test" for k in spec.model}
    m = build(spec)
    physical = next(p for p in m.params if p.name == "physical")
    if gc_unit == "block":
        assert physical.step is None
        return
    unit = describe(m.config({"physical": physical.prior}), model_limits=False)["drive"]["gc_unit"]["bytes"]
    lo, hi = physical.value(0.0), physical.value(physical.step)
    assert hi - lo == pytest.approx(4 * unit, rel=0.01)
    # the prior: the population of real drives (no endurance given: every class)
    centre, _, _ = population.class_prior(None)
    assert physical.prior == int(960 * 10**9 * centre) and "population of real drives" in physical.prior_source
