"""The advisor's screen under skewed workloads agrees with its simulator (issue 26, item 3):
the non-uniform LRW model (one shared write frontier) is 1-43% above the simulator, whose GC
copies have a frontier of their own; the screen scales it by the core's functional model at
anchor levels (``opsim.planner.advise.skew``).  The levels checked here are off the anchors'
grid (multiples of 2.5% held back), so the agreement is the interpolation's, not a figure
compared with itself."""

from __future__ import annotations

import functools
from fractions import Fraction

import pytest

from opsim import models
from opsim.planner import advise as A
from opsim.planner.advise import skew as K
from opsim.planner.advise.confirm import aging_drive_writes

MODEL_BLOCKS = A.DEFAULT_MODEL_BLOCKS  # the advisor's default scale model


@functools.cache
def _drive(preset: str):
    return A.load_drive(preset=preset)


def _workload(skew: str) -> A.Workload:
    """``--skew`` notation (the advisor's own parser), or ``jesd219``: its zones and its size mix."""
    if skew == "jesd219":
        return A.Workload(skew="jesd219", block_size=None)
    return A.Workload(**A.parse_skew(skew))


def _level(drive, held_back: Fraction):
    levels = A.grid(drive, Fraction(1, 200), Fraction(3, 4))
    return min(levels, key=lambda lv: abs(lv.held_back - held_back))


CASES = [
    # the two examples: zipf 0.8 on the P5520, JESD219 on the 7450 PRO
    ("solidigm-d7-p5520-1920gb", "zipf:0.8", Fraction(0)),
    ("solidigm-d7-p5520-1920gb", "zipf:0.8", Fraction(27, 200)),
    ("micron-7450-pro-960gb", "jesd219", Fraction(0)),
    ("micron-7450-pro-960gb", "jesd219", Fraction(77, 200)),
    ("samsung-pm9a3-960gb", "hot-cold:10/90", Fraction(7, 200)),
    ("samsung-pm9a3-960gb", "hot-cold:10/90", Fraction(27, 200)),
    # hot/cold's WAF drops sharply at high OP (hot data separated): the anchors refine there
    ("solidigm-d7-p5520-1920gb", "hot-cold:20/80", Fraction(123, 200)),
    ("micron-7450-pro-960gb", "zipf:0.6", Fraction(7, 200)),
    ("samsung-pm9a3-960gb", "zipf:0.99", Fraction(7, 200)),
]


@pytest.mark.slow
@pytest.mark.parametrize("preset,skew,held_back", CASES)
def test_screen_agrees_with_the_simulator_within_3_percent(preset, skew, held_back):
    drive, wl = _drive(preset), _workload(skew)
    lv = _level(drive, held_back)
    assert lv.held_back % K.ANCHOR_STEP != 0 or held_back == 0  # off the anchors' grid
    sk = K.skew_model(drive, wl, MODEL_BLOCKS)
    assert sk is not None
    screen = A.screen_level(drive, wl, A.Targets(min_iops=1), lv, sk)
    model = A.plan_model(drive, wl, MODEL_BLOCKS, 1_500_000)
    sim = A.sim_level(drive, wl, A.Targets(min_iops=1), lv, model, 1)
    assert screen["waf"] == pytest.approx(sim["waf"], rel=0.03), (screen["waf_model"], sim["waf"])
    # the bare LRW model (one shared frontier) is what the screen gave before: well above
    lrw = A.screen_level(drive, wl, A.Targets(min_iops=1), lv)
    assert lrw["waf"] > sim["waf"] * 1.03


@pytest.mark.slow
def test_zipf_over_the_real_drive_pages_is_reported_beside():
    """The screen's zipf classes are the scale model's pages (as simulated); the real drive's
    many more pages give a longer tail and a higher LRW figure, reported as waf_drive_pages."""
    drive, wl = _drive("samsung-pm9a3-960gb"), _workload("zipf:0.99")
    sk = K.skew_model(drive, wl, MODEL_BLOCKS)
    lv = _level(drive, Fraction(0))
    row = A.screen_level(drive, wl, A.Targets(min_iops=1), lv, sk)
    assert row["waf_drive_pages"] > row["waf"] * 1.02
    assert f"scale model's {sk.model_pages(int(drive.native.bytes // drive.page_size)):,} pages" in row["waf_model"]
    hc = A.screen_level(drive, _workload("hot-cold:10/90"), A.Targets(min_iops=1), lv, sk)
    assert hc["waf_drive_pages"] is None


def test_without_anchors_the_screen_says_lrw_is_above_the_simulator():
    drive = _drive("solidigm-d7-p5520-1920gb")
    w, src = A.waf_gc_model(drive, _workload("hot-cold:20/80"), 0.3)
    assert w == pytest.approx(models.waf_lrw_classes(0.3, [(0.2, 0.8), (0.8, 0.2)]))
    assert "the simulator is lower" in src


def test_ratio_is_interpolated_in_log_op_and_held_beyond_the_anchors():
    a = K.Anchor(Fraction(0), 0.25, 2.0, 2.5, 1000, 2000)  # ratio 0.8
    b = K.Anchor(Fraction(1, 2), 1.0, 1.8, 2.0, 500, 1000)  # ratio 0.9
    m = K.SkewModel([a, b])
    assert m.ratio(0.5) == pytest.approx(0.85)  # halfway in log OP
    assert m.ratio(0.1) == pytest.approx(0.8) and m.ratio(4.0) == pytest.approx(0.9)
    assert m.model_pages(10_000) == 5_000


@pytest.mark.parametrize(
    "wl,pages,aging",
    [
        (A.Workload(), 10_000, 4.0),  # uniform: the floor
        (A.Workload(skew="hot-cold", hot_fraction=0.2, hot_write_fraction=0.8), 10_000, 12.0),  # 3 / (0.2/0.8)
        (A.Workload(skew="hot-cold", hot_fraction=0.1, hot_write_fraction=0.9), 10_000, 27.0),  # 3 / (0.1/0.9)
        (A.Workload(skew="hot-cold", hot_fraction=0.05, hot_write_fraction=0.95), 10_000, 30.0),  # the cap
    ],
)
def test_skewed_aging_lets_the_coldest_class_turn_over(wl, pages, aging):
    assert aging_drive_writes(wl, pages) == pytest.approx(aging)


def test_confirmation_ages_a_skewed_workload_to_steady_state():
    """Hot/cold 10/90 at 30% held back: 4 drive writes after the fill (the old rule) leave
    the cold pages where the fill put them (WAF about 1.13); the rule ages 27."""
    drive, wl = _drive("solidigm-d7-p5520-1920gb"), _workload("hot-cold:10/90")
    model = A.plan_model(drive, wl, MODEL_BLOCKS, 1_500_000)
    assert model.aging_drive_writes == pytest.approx(27.0)


def test_anchors_keep_the_functional_runs_small():
    """A superblock drive is anchored on the confirmation's model; a block drive on at most
    2,048 x 256 pages (512 blocks of 1,024 pages); 128 MiB GC units would need fewer than 512
    blocks: no anchors, the bare LRW figure."""
    assert K.anchor_blocks(_drive("micron-7450-pro-960gb"), MODEL_BLOCKS) == MODEL_BLOCKS
    assert K.anchor_blocks(_drive("micron-1100-1tb"), MODEL_BLOCKS) == 512
    big = _drive("samsung-840-pro-256gb")
    assert K.anchor_blocks(big, MODEL_BLOCKS) is None
    assert K.skew_model(big, _workload("jesd219"), MODEL_BLOCKS) is None


def test_aging_is_cut_to_the_io_cap_on_a_model_that_cannot_shrink():
    model = A.plan_model(_drive("samsung-840-pro-256gb"), _workload("jesd219"), MODEL_BLOCKS, 1_500_000)
    assert model.blocks == A.MIN_MODEL_BLOCKS
    assert 4.0 <= model.aging_drive_writes < 12.0  # 3 turnovers of JESD219's coldest zone: 12
    assert any(n.startswith("aging cut to") for n in model.notes)


def test_fifo_anchor_matches_the_lrw_model():
    """FIFO GC is the LRW model's policy (with either frontier): its anchor ratio is 1, which
    checks the anchors' arithmetic (fill, aging, counters, OP and classes of the scale model)."""
    drive = A.load_drive(preset="solidigm-d7-p5520-1920gb", gc="fifo")
    a = K._anchor(drive, _workload("zipf:0.8"), Fraction(0), MODEL_BLOCKS)
    assert a is not None and a.ratio == pytest.approx(1.0, abs=0.01)
