"""The GC controller costs' upper bounds (opsim.calibrate.gc_cost): each is where the predicted
steady random-write IOPS cross the figure's 95% lower end, the prediction falls monotonically
with the cost, the bound grows with the figure's uncertainty, and a zero cost changes nothing."""

from __future__ import annotations

import copy
import itertools
import math
from dataclasses import replace

import pytest

from opsim import presets
from opsim.calibrate import gc_cost
from opsim.calibrate import presets as cp
from opsim.calibrate.fit import Z95
from opsim.calibrate.inputs import Figure
from opsim.calibrate.model import predict
from opsim.sim import simulate

NAME = "micron-7450-pro-960gb"
#: one nanosecond, the resolution of the core's times, in us
NS = 1e-3


@pytest.fixture(scope="module")
def cal():
    """The preset input's fit (the bounds are on a calibration's Fitted)."""
    return cp.calibration(NAME).fitted


def test_the_lower_end_is_the_figure_s_own_95_percent():
    f = Figure("steady_iops", 100_000.0, "test", sigma=0.1)
    assert gc_cost.lower_end(f) == pytest.approx(100_000.0 * math.exp(-Z95 * 0.1), rel=1e-12)
    assert gc_cost.lower_end(replace(f, sigma=0.05)) > gc_cost.lower_end(f)


@pytest.mark.slow
@pytest.mark.parametrize("key", list(gc_cost.COSTS))
def test_the_bound_is_where_the_figure_s_lower_end_is_crossed(cal, key):
    b = gc_cost.bound(cal, key)
    (f,) = gc_cost.steady_write_figures(cal)
    assert b.status == "bounded" and not b.capped and b.bound > 0
    assert (b.low, b.high) == (0.0, b.bound)
    assert b.lower_end == gc_cost.lower_end(f)
    # at the bound the figure is met, a nanosecond past it missed
    assert gc_cost.iops_at(cal, key, b.bound, f) >= b.lower_end
    assert gc_cost.iops_at(cal, key, b.bound + 2 * NS, f) < b.lower_end
    assert b.iops_at_bound == gc_cost.iops_at(cal, key, b.bound, f)
    assert b.iops_at_value > b.lower_end  # the preset (cost 0) meets it with room


@pytest.mark.slow
@pytest.mark.parametrize("key", list(gc_cost.COSTS))
def test_the_prediction_falls_monotonically_with_the_cost(cal, key):
    b = gc_cost.bound(cal, key)
    (f,) = gc_cost.steady_write_figures(cal)
    grid = [b.bound * k / 8 for k in range(13)]  # to 1.5 x the bound (the core takes at most 1 s)
    iops = [gc_cost.iops_at(cal, key, x, f) for x in grid]
    assert all(a >= c for a, c in itertools.pairwise(iops)), iops
    assert iops[-1] < 0.75 * iops[0]


@pytest.mark.slow
def test_the_bound_grows_with_the_figure_s_uncertainty(cal):
    wide = replace(cal, figures=[replace(f, sigma=0.2) for f in cal.figures])
    for key in gc_cost.COSTS:
        assert gc_cost.bound(wide, key).bound > gc_cost.bound(cal, key).bound


@pytest.mark.slow
def test_a_cost_no_figure_in_the_core_s_range_misses_is_capped_there(cal):
    key = "timing.gc_reclaim_us"
    loose = replace(cal, figures=[replace(f, sigma=3.0) for f in cal.figures])
    b = gc_cost.bound(loose, key)
    assert b.capped and "the core's range ends there" in b.source()
    assert gc_cost._accepts(loose, key, b.bound) and not gc_cost._accepts(loose, key, b.bound + 2 * gc_cost.XTOL)


@pytest.mark.slow
def test_zero_costs_leave_the_calibration_s_predictions_unchanged(cal):
    tables = copy.deepcopy(cal.model.tables)
    values = dict(cal.values)
    base = predict(cal.model, cal.values, cal.figures)
    for key in gc_cost.COSTS:
        model, vals = gc_cost.at_cost(cal, key, 0.0)
        assert predict(model, vals, cal.figures) == base
        gc_cost.bound(cal, key)
    assert cal.model.tables == tables and cal.values == values  # nothing of the calibration moved


def test_zero_costs_leave_a_timed_run_bit_identical():
    cfg = presets.scale_model(NAME, 512) | {
        "workload": {"type": "uniform"},
        "run": {"seed": 3, "precondition": "fill", "warmup_drive_writes": 0.3, "measure_drive_writes": 0.2},
    }
    zero = copy.deepcopy(cfg)
    zero["timing"] = {"gc_fw_us": 0.0, "gc_reclaim_us": 0.0}
    a, b = simulate(cfg).data, simulate(zero).data
    for k in ("waf", "measure_counters", "timed", "rounds"):
        assert a[k] == b[k], k
    slow = copy.deepcopy(cfg)
    slow["timing"] = {"gc_reclaim_us": 1000.0}
    assert simulate(slow).timed["measured_iops"] < a["timed"]["measured_iops"]  # the key reaches the run


@pytest.mark.slow
def test_calibrate_gives_each_bounded_cost_its_interval_and_source():
    """`opsim calibrate`'s parameters (and so a drive file, a preset) carry each cost the figures
    do not pin with its prior interval: none to the bound, and the figure that binds it."""
    c = cp.calibration(NAME)
    rows = {r["name"]: r for r in c.parameters()}
    for key in gc_cost.COSTS:
        b = gc_cost.bound(c.fitted, key)
        assert (rows[key]["value"], rows[key]["low"], rows[key]["high"]) == (0.0, 0.0, b.bound)
        assert rows[key]["source"] == b.source() and b.figure in b.source()
    kept = c.drive_toml()["preset"]["calibration"]["intervals_95"]
    assert kept["timing.gc_reclaim_us"][1] == pytest.approx(rows["timing.gc_reclaim_us"]["high"], rel=2e-3)
    assert presets.get(NAME)["meta"]["calibration"]["intervals_95"]["timing.gc_fw_us"] == kept["timing.gc_fw_us"]
