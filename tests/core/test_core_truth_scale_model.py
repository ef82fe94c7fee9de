"""The advisor's scale model pinned to the core.

The advisor confirms a level on a scale model of the drive: fewer blocks of the same NAND,
holding the user pages that give garbage collection the OP it sees on the real drive at that
level.  The pool GC collects in is the core's: the free-block reserve counted per GC group
(``ftl.gc_scope``) or as ``ftl.gc_reserve`` says, and the SLC cache's static share of the
model's blocks.  A drive file of 64 GiB on 8 dies x 2 planes with each of these layouts: the
scale model the advisor simulates is the one the core describes (``describe(...,
scale_blocks=...)``), and its user pages give the core's pool the level's OP seen by GC."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import pytest

from opsim.planner.advise import load_drive
from opsim.planner.advise.confirm import ScaleModel, plan_model, sim_config
from opsim.planner.advise.screen import grid
from opsim.sim import describe
from opsim.workload import Workload

DRIVE = """[preset]
name = "scale-test"
[drive]
user_capacity = "60GiB"
physical_capacity = "64GiB"
"""
TIMING = "[timing]\nchannels = 8\ndies_per_channel = 1\nplanes = 2\n"
#: layout -> ([ftl] lines, whether the drive has [timing]; gc_scope is modelled without it)
LAYOUTS = {
    "default": ("", True),
    "gc_scope die": ('gc_scope = "die"\n', False),
    "gc_scope plane": ('gc_scope = "plane"\n', False),
    "gc_reserve": ('gc_reserve = "20 blocks per plane"\n', True),
    "slc cache": ("[ftl.slc_cache]\nmin_fraction = 0.02\nmax_fraction = 0.1\n", True),
}
#: blocks the core's pool leaves out of a 1024-block model, per layout
RESERVED = {"default": 2, "gc_scope die": 16, "gc_scope plane": 32, "gc_reserve": 320, "slc cache": 2 + 20}
MODEL_BLOCKS = 1024


def _drive(tmp_path, layout: str):
    ftl, timed = LAYOUTS[layout]
    path = tmp_path / "drive.toml"
    path.write_text(DRIVE + "[ftl]\n" + (ftl if timed else "") + TIMING)
    drive = load_drive(preset=str(path))
    if timed:
        return drive
    # GC groups are modelled by the functional model only: the same drive without [timing],
    # its dies and planes given in [drive]
    path.write_text(DRIVE + "dies = 8\nplanes_per_die = 2\n[ftl]\n" + ftl)
    config = {"preset": str(path), "drive": {"user_capacity": drive.native.bytes}}
    return dataclasses.replace(
        drive, preset=str(path), config=config, description=describe(config, model_limits=False), timing_overrides={}
    )


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_scale_model_is_the_cores(tmp_path, layout):
    drive = _drive(tmp_path, layout)
    page, ppb = drive.page_size, drive.pages_per_block
    model = ScaleModel(MODEL_BLOCKS, "fill + aging", 2.0, 0.01, 0.02, [])
    for lv in grid(drive, Fraction(1, 20), Fraction(1, 5)):
        cfg = sim_config(drive, Workload(read_fraction=0.0), lv, model, seed=1)
        core = describe({k: cfg[k] for k in ("preset", "drive", "timing") if k in cfg}, model_limits=False)
        pool = core["op"]["gc_pool_blocks"]
        assert pool == MODEL_BLOCKS - RESERVED[layout], layout
        seen = drive.op_seen(lv.user_bytes)
        user_pages = cfg["drive"]["user_capacity"] // page
        # the most user pages that give the pool at least the real drive's OP seen by GC
        assert user_pages == math.floor(pool * ppb / (1 + seen)), (layout, lv.user_bytes)
        assert core["op"]["seen_by_gc"] >= seen > (pool * ppb - user_pages - 1) / (user_pages + 1) - 1e-12
        asked = describe(drive.config, model_limits=False, users=[lv.user_bytes], scale_blocks=MODEL_BLOCKS)
        scale = asked["levels"][0]["scale_model"]
        assert (scale["user_bytes"], scale["physical_bytes"]) == (
            cfg["drive"]["user_capacity"],
            cfg["drive"]["physical_capacity"],
        )
        assert scale["gc_pool_blocks"] == pool


@pytest.mark.parametrize("layout", ["default", "gc_scope die", "slc cache"])
def test_analytic_preconditioning_as_the_core_allows_it(tmp_path, layout):
    """The advisor preconditions analytically where the core can (uniform 4 KiB writes; not
    with GC groups, which the core refuses for it), and never sends a run the core refuses."""
    drive = _drive(tmp_path, layout)
    m = plan_model(drive, Workload(read_fraction=0.0), MODEL_BLOCKS, 1_000_000)
    assert (m.precondition == "analytic") == (layout != "gc_scope die")
    lv = grid(drive, Fraction(1, 20), Fraction(1, 20))[0]
    cfg = sim_config(drive, Workload(read_fraction=0.0), lv, m, seed=1)
    describe(cfg, model_limits=False)  # the core accepts the run as configured


def test_scale_blocks_refused_by_name():
    from opsim.errors import InputError

    with pytest.raises(InputError, match="scale_blocks"):
        describe({"drive": {"user_capacity": "64MiB", "op": 0.1}}, scale_blocks=0)
