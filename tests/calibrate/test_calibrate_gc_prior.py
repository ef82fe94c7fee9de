"""The controller's time per GC copy when no figure pins it (issue 38, item 5): a datasheet of
bursts alone (a client drive's fresh-out-of-box random write, its sequential rates) says nothing
of the steady state, so the profile ranges over the cost's prior and every steady interval
widens (docs/calibrate.md, "What a datasheet never states")."""

from __future__ import annotations

from dataclasses import replace

import pytest
import tomli_w

from opsim.calibrate import calibrate, read_inputs
from opsim.calibrate import structure as S
from opsim.calibrate.inputs import Figure
from opsim.calibrate.model import GC_FW_SIGMA, predict, structure_of
from opsim.calibrate.uncertainty import THRESHOLD, gc_unpinned
from opsim.simulate_interval import ends

#: a client drive as a user types it: capacity, interface, cell and the datasheet (the SanDisk X400
#: 256 GB's, AnandTech's review table: the real-drives suite's case, whose measurements are not used here)
BURSTS = {
    "drive": {"name": "client-bursts", "native": "256GB", "interface": "sata", "cell": "tlc"},
    "datasheet": {
        "seq_read_mbps": 540,
        "seq_write_mbps": 520,
        "rand_read_iops": 93500,
        "fob_write_iops": 60000,
        "tbw": 80,
        "warranty_years": 5,
    },
}


def test_the_grid_is_the_half_normal_prior_inside_its_95_percent_region():
    grid = S.gc_cost_grid(GC_FW_SIGMA)
    assert [c for c, _ in grid] == [50.0, 75.0, 95.0]
    assert all(pen == pytest.approx((c / GC_FW_SIGMA) ** 2) and pen < THRESHOLD for c, pen in grid)
    with_gc = S.alternatives({}, floor_free=False, gc_width=GC_FW_SIGMA)
    without = S.alternatives({}, floor_free=False)
    added = [a for a in with_gc if a not in without]
    assert [(a.keys, a.penalty) for a in added] == [({"timing.gc_fw_us": c}, pen) for c, pen in grid]
    assert not any("timing.gc_fw_us" in a.keys for a in without)


@pytest.fixture(scope="module")
def bursts(tmp_path_factory):
    path = tmp_path_factory.mktemp("gc") / "bursts.toml"
    path.write_text(tomli_w.dumps(BURSTS))
    return calibrate(*read_inputs(str(path)), timed_rounds=0)


def test_a_datasheet_of_bursts_ranges_over_the_gc_cost(bursts):
    f = bursts.fitted
    assert f.status["gc_fw_us"] == "default" and gc_unpinned(f) == GC_FW_SIGMA
    # a steady random-write figure takes the prior away (it bounds the cost: opsim.calibrate.gc_cost)
    steady = Figure("steady_iops", 5000.0, "measured", queue_depth=32)
    assert gc_unpinned(replace(f, figures=[*f.figures, steady])) is None
    prof = bursts.profile
    assert prof is not None
    costs = {structure_of(p).get("timing.gc_fw_us", 0.0) for p in prof.inside()}
    assert {0.0, 50.0} <= costs  # the prior's points are inside (their cost is the prior's and the NAND's)
    row = next(r for r in bursts.parameters() if r["name"] == "timing.gc_fw_us")
    assert (row["low"], row["high"]) == (0.0, 95.0) and "prior" in row["source"]
    assert any("no figure is of a steady state" in n and "opsim measure iops" in n for n in bursts.notes)


def test_the_gc_prior_widens_the_steady_interval_never_narrows_it(bursts):
    """With the cost's prior the steady IOPS interval holds the one without and reaches at least
    twice as low; the WAF interval is the same (a controller's time moves no page).  Without: the
    points of the other structures, whose costs above the least the cost's walks leave as they are
    (a walk at a cost of the prior lies above the model's own by the prior's cost: no figure here
    depends on it)."""
    f = bursts.fitted
    full = bursts.profile
    assert full is not None
    kept = [(p, d) for p, d in zip(full.points, full.delta) if "timing.gc_fw_us" not in structure_of(p)]
    without = replace(full, points=[p for p, _ in kept], delta=[d for _, d in kept])
    span = 200 * 10**9
    iops = Figure("steady_iops", 1.0, "x", span=span, user=span, queue_depth=32)
    waf = replace(iops, kind="waf")

    def of(fig):
        return lambda v: predict(f.model, v, [fig])[0].value

    lo0, hi0 = without.interval(of(iops))
    lo, hi = full.interval(of(iops))
    assert lo <= lo0 / 2 and hi >= hi0
    assert full.interval(of(waf)) == pytest.approx(without.interval(of(waf)))


def test_the_drive_file_names_the_costliest_point_for_simulate_interval(bursts):
    """`opsim simulate --interval` runs the points the drive file names: the least and most WAF,
    and, as the cost's prior is walked, the point of the highest cost (the least IOPS, which no
    WAF end gives), with its structure's key."""
    prof = bursts.drive_toml()["preset"]["calibration"]["profile"]
    assert len(prof["ends"]) == 3
    costly = prof["structure"][prof["ends"][2]]
    assert costly["timing.gc_fw_us"] == max(st.get("timing.gc_fw_us", 0.0) for st in prof["structure"])
    named = ends(prof)
    assert len(named) == 3 and named[2]["timing.gc_fw_us"] == costly["timing.gc_fw_us"]
