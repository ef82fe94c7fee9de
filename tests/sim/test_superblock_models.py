"""Superblock drives in the advisor's scale model, the timed model's erase charge and the
result's victim histogram (docs/config.md "Scale models", docs/timed.md, docs/planner.md):

* the advisor's scale model of a superblock drive follows the core's scale rule (its
  superblocks kept, each smaller), not "fewer units of 98,304 pages";
* a scale model and its full superblock drive charge the same erase time per page;
* a superblock's victim histogram is reported in at most 1,025 bins; smaller superblocks and
  FTL blocks of any size exactly, as before."""

from __future__ import annotations

from fractions import Fraction

import opsim
from opsim import plots
from opsim.planner.advise import load_drive
from opsim.planner.advise.confirm import plan_model, sim_config
from opsim.planner.advise.screen import grid
from opsim.sim import costs, describe
from opsim.workload import Workload

TIMING = '[timing]\nnand_block_size = "12MiB"\nplanes = 2\nchannels = 8\ndies_per_channel = 2\n'
SB = {
    "drive": {"user_capacity": "16GiB", "op": 0.25},
    "ftl": {"gc_unit": "superblock"},
    "timing": {"nand_block_size": "12MiB", "planes": 2, "channels": 8, "dies_per_channel": 2},
}


def _drive_file(tmp_path, user: str, physical: str):
    path = tmp_path / "sb.toml"
    path.write_text(
        f'[preset]\nname = "sb"\n[drive]\nuser_capacity = "{user}"\nphysical_capacity = "{physical}"\n'
        f'[ftl]\ngc_unit = "superblock"\n{TIMING}'
    )
    return load_drive(preset=str(path))


def test_advisor_scale_model_keeps_the_superblocks(tmp_path):
    # 170 superblocks of 98,304 pages (64 GiB): kept, each 1/32 (3,072 pages), so the model
    # holds about as many pages as 2,048 blocks of 256 (not 2,048 x 98,304)
    drive = _drive_file(tmp_path, "60GB", "64GiB")
    assert (drive.blocks, drive.pages_per_block) == (170, 98304)
    wl = Workload(read_fraction=0.0)
    m = plan_model(drive, wl, 2048, 1_000_000)
    assert (m.units, m.unit_pages, m.superblock_scale) == (170, 3072, 32)
    assert m.units * m.unit_pages <= 2048 * 256
    for lv in grid(drive, Fraction(1, 20), Fraction(1, 10)):
        cfg = sim_config(drive, wl, lv, m, seed=1)
        assert cfg["ftl"]["superblock_scale"] == 32
        core = describe(cfg)  # the core builds it, within the model's limits
        u = core["drive"]["gc_unit"]
        assert (core["drive"]["blocks"], u["kind"], u["pages"], u["scale"]) == (170, "superblock", 3072, 32)
        # the model's user pages give GC at least the OP it sees on the real drive
        assert core["op"]["seen_by_gc"] >= drive.op_seen(lv.user_bytes) - 1e-12


def test_advisor_scale_model_of_many_superblocks(tmp_path):
    # 2,960 superblocks (the 7450 PRO's NAND): 2,048 of them, each of 256 pages
    drive = _drive_file(tmp_path, "960GB", "1164153948KiB")
    m = plan_model(drive, Workload(read_fraction=0.0), 2048, 1_000_000)
    assert (drive.blocks, m.units, m.unit_pages, m.superblock_scale) == (2960, 2048, 256, 384)
    assert m.precondition == "analytic"


def test_tenants_scale_model_of_a_superblock_drive(tmp_path):
    # the tenants' functional model: the core's scale model as FTL blocks of its pages (a
    # superblock drive's 98,304-page unit was sent as drive.pages_per_block and refused)
    from opsim.planner.advise.tenants import level_config, model_shape

    drive = _drive_file(tmp_path, "60GB", "64GiB")
    blocks, ppb = model_shape(drive, 2048)
    assert (blocks, ppb) == (170, 3072)
    tenants = {
        "namespace": [{"name": "a", "capacity": "50%"}, {"name": "b", "capacity": "50%"}],
        "placement": {},
        "run": {},
    }
    lv = grid(drive, Fraction(1, 20), Fraction(1, 10))[1]
    cfg = level_config(drive, lv, tenants, "fdp", blocks, 1, ppb)
    core = describe(cfg)
    assert (core["drive"]["blocks"], core["drive"]["pages_per_block"]) == (170, 3072)
    assert core["op"]["seen_by_gc"] >= drive.op_seen(lv.user_bytes) - 1e-12
    # the superblock drive's own scale model (the core's) holds the same pages
    sm = drive.scale_model(lv.user_bytes, 2048)
    assert (sm["user_bytes"], sm["physical_bytes"]) == (
        cfg["drive"]["user_capacity"],
        cfg["drive"]["physical_capacity"],
    )


def test_advisor_scale_model_of_blocks_is_as_before():
    drive = load_drive(preset="micron-1100-1tb")
    m = plan_model(drive, Workload(read_fraction=0.0), 2048, 1_000_000)
    assert (m.blocks, m.units, m.unit_pages, m.superblock_scale) == (2048, 2048, 1024, None)
    # the advisor's JSON of it as before
    assert set(m.to_dict()) == {
        "blocks",
        "precondition",
        "aging_drive_writes",
        "warmup_drive_writes",
        "measure_drive_writes",
        "notes",
    }
    cfg = sim_config(drive, Workload(read_fraction=0.0), grid(drive, Fraction(1, 20), Fraction(0))[0], m, seed=1)
    assert cfg["ftl"] == {"gc": "greedy"}


def _erase_ns_per_page(cfg: dict) -> float:
    """NAND die time per GC-copied page less the copy itself: the erase charged per page."""
    m = describe(cfg)["cost_model"]
    mix = {"write_fraction": 1.0, "units_per_io": 1.0, "bytes_per_io": 4096.0}

    def dies_ns(waf):
        c = costs(m, mix, waf)
        return next(r["ns_per_io"] for r in c["resources"] if r["resource"] == "NAND dies") * m["timing"]["dies"]

    t = m["timing"]
    return dies_ns(2.0) - dies_ns(1.0) - (t["t_read_ns"] + t["xfer_ns"] + t["t_prog_ns"] / t["units_per_program"])


def test_scale_model_charges_the_full_drives_erase_per_page():
    full = _erase_ns_per_page(SB)
    t_erase = describe(SB)["timing"]["t_erase_ns"]
    assert abs(full / (t_erase * 16 / 98304) - 1) < 1e-6  # one tBERS on each of 16 dies per superblock
    for k in (2, 64):
        s = describe(SB, scale=k)["scaled"]
        small = {**SB, "ftl": {**SB["ftl"], "superblock_scale": s["superblock_scale"]}}
        small["drive"] = {"user_capacity": s["user_capacity"], "physical_capacity": s["physical_capacity"]}
        assert describe(small)["cost_model"]["superblock"] == {"dies": 16, "scale": k}
        assert abs(_erase_ns_per_page(small) / full - 1) < 1e-6, k
    # FTL blocks: no superblock in the cost model (its JSON as before)
    assert "superblock" not in describe({"drive": {"user_capacity": "1GiB", "op": 0.1}, "timing": {}})["cost_model"]


RUN = {"workload": {"type": "uniform"}, "run": {"warmup_drive_writes": 0.5, "measure_drive_writes": 1}}


def test_victim_histogram_of_a_superblock_is_binned():
    # superblocks of 1,536 pages (the 7450 stripe / 64): 769 bins of 2 valid pages
    cfg = {**SB, "ftl": {**SB["ftl"], "superblock_scale": 64}, "drive": {"user_capacity": "192MiB", "op": 0.25}}
    r = opsim.simulate(cfg | RUN).data
    v = r["victims"]
    assert r["drive"]["pages_per_block"] == 1536
    assert (len(v["valid_histogram"]), v["valid_histogram_bin_pages"]) == (769, 2)
    assert sum(v["valid_histogram"]) == v["count"] > 0
    rec = plots.drawn(plots.victims([r]))[0]  # the consumer reads the bins
    s = rec["series"][0]
    assert s["pages_per_block"] == 1536 and abs(sum(s["y"]) - 1) < 1e-9
    # the plot's mean victim valid fraction is near the exact one
    mean = sum(x * y for x, y in zip(s["x"], s["y"]))
    assert abs(mean - v["mean_valid_fraction"]) < 0.01


def test_victim_histogram_of_blocks_is_exact():
    # FTL blocks stay exact at any size (the AnandTech presets have 32,768-page blocks)
    for ppb, user in ((64, "48MiB"), (2048, "480MiB")):
        r = opsim.simulate({"drive": {"user_capacity": user, "op": 0.25, "pages_per_block": ppb}} | RUN).data
        v = r["victims"]
        assert len(v["valid_histogram"]) == ppb + 1 and "valid_histogram_bin_pages" not in v
        assert v["count"] > 0
