"""A datasheet of bursts alone (a client drive's fresh-out-of-box random write, its sequential
rates: issue 38, item 5) says nothing of the steady state: the controller's time per GC copy and
the native array's write rate (the bursts go to an SLC cache, :mod:`opsim.calibrate.burst`) are
only their priors, the profile ranges over both and every steady interval widens
(docs/calibrate.md, "What a datasheet never states", "A datasheet of bursts")."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

import numpy as np
import pytest
import tomli_w

from opsim.calibrate import burst, calibrate, read_inputs, timed
from opsim.calibrate import structure as S
from opsim.calibrate.fit import Fitted
from opsim.calibrate.inputs import Figure
from opsim.calibrate.model import GC_FW_SIGMA, Param, build, fresh_state, mix_of, predict, structure_of
from opsim.calibrate.uncertainty import THRESHOLD, gc_unpinned, native_unpinned
from opsim.sim import costs, describe
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


def test_the_slow_priors_widen_the_steady_interval_never_narrow_it(bursts):
    """With the priors of the GC cost and of the native array's rate the steady IOPS interval holds
    the one without and reaches at least twice as low; the WAF interval is the same (a
    controller's time or a program's moves no page).  Without: the points of the other
    structures, whose costs above the least the priors' walks leave as they are (a walk at a cost
    of the prior lies above the model's own by the prior's cost: no figure here depends on it)."""
    f = bursts.fitted
    full = bursts.profile
    assert full is not None
    kept = [(p, d) for p, d in zip(full.points, full.delta) if not set(S.SLOW_KEYS) & set(structure_of(p))]
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


def test_the_drive_file_names_the_slowest_points_for_simulate_interval(bursts):
    """`opsim simulate --interval` runs the points the drive file names: the least and most WAF,
    and, as the priors of the GC cost and the native program time are walked, the point of the
    highest of each (the least IOPS, which no WAF end gives), with its structure's key."""
    prof = bursts.drive_toml()["preset"]["calibration"]["profile"]
    assert len(prof["ends"]) == 4
    named = ends(prof)
    assert len(named) == 4
    # every point keeps the native program time it was fitted with: the prior's share of its own
    # SLC-mode program time, or its alternative's
    m = bursts.fitted.model
    slc = prof["keys"].index("timing.t_prog_slc_us")
    walked = {t for t, _, _ in native_unpinned(bursts.fitted) or []}
    for pt, st in zip(prof["points"], prof["structure"]):
        if st[S.NATIVE_KEY] not in walked:
            assert st[S.NATIVE_KEY] == pytest.approx(
                burst.native_prog_us(pt[slc], m.units_ratio, m.native_share or 0), rel=1e-4
            )
    for i, key in enumerate(S.SLOW_KEYS, start=2):
        slow = prof["structure"][prof["ends"][i]]
        assert slow[key] == max(st.get(key, 0.0) for st in prof["structure"])
        assert named[i][key] == slow[key]


# ---------------------------------------------------------------- the native array's rate (opsim.calibrate.burst)


def test_the_share_prior_is_computed_from_the_published_pairs():
    """Centre the geometric mean of the pairs' shares, width the spread of one more drive (as the
    population's NAND prior): every published pair inside its 95% interval; the grid is the prior
    at its steps, capped at 1 (the native array no faster than the bursts)."""
    logs = [math.log(s.native / s.burst) for s in burst.SHARES]
    centre, width, n = burst.prior()
    assert n == len(burst.SHARES) >= 6
    assert centre == pytest.approx(math.exp(statistics.fmean(logs)))
    assert width > statistics.stdev(logs)  # one more drive is known less well than the sample
    assert all(abs(x - math.log(centre)) < 1.96 * width for x in logs)
    grid = burst.grid()
    assert all(0 < s <= 1.0 for s, _ in grid) and len({s for s, _ in grid}) == len(grid)
    for s, pen in grid:
        if s < 1.0:
            assert pen == pytest.approx((math.log(s / centre) / width) ** 2)
    assert max(pen for _, pen in grid) < THRESHOLD


def test_the_native_program_time_gives_its_share_in_the_core():
    """`native_prog_us` is the core's own rule: the native program rate the core resolves is the
    share of the SLC mode's."""
    base = {"drive": {"user_capacity": 1 << 30, "physical_capacity": 1 << 31}, "ftl": {"slc_cache": burst.SLC_CACHE}}
    for timing in (
        {"cell": "tlc"},
        {"cell": "tlc", "nand_page_size": "48KiB", "nand_block_size": "12MiB", "planes": 4},
    ):
        d = describe(base | {"timing": timing | {"t_prog_slc_us": 300}}, model_limits=False)
        ratio = d["timing"]["units_per_program"] / d["timing"]["slc"]["units_per_program"]
        for share in (0.2, 0.45, 1.0):
            t = burst.native_prog_us(300, ratio, share)
            r = describe(base | {"timing": timing | {"t_prog_slc_us": 300, "t_prog_us": t}}, model_limits=False)
            got = r["timing"]["program_units_per_s"] / r["timing"]["slc"]["program_units_per_s"]
            assert got == pytest.approx(share)


def _spec(doc: dict, tmp_path):
    path = tmp_path / "drive.toml"
    path.write_text(tomli_w.dumps(doc))
    return read_inputs(str(path))


@pytest.mark.parametrize(
    "change",
    [
        {"drive": BURSTS["drive"] | {"cell": "mlc"}},  # the published pairs are TLC drives'
        {"datasheet": BURSTS["datasheet"] | {"tbw": 600}},  # a data-center rating (1.3 DWPD)
        {"datasheet": BURSTS["datasheet"] | {"rand_write_iops": 5000}},  # a steady figure
        {"model": {"timing.t_prog_us": 2000}, "source": {"model": {"timing.t_prog_us": "estimate"}}},
    ],
)
def test_only_a_client_tlc_datasheet_of_bursts_is_an_slc_cache(change, tmp_path):
    spec, figures = _spec(BURSTS | change, tmp_path)
    m = build(spec, figures)
    assert m.native_share is None and "slc_cache" not in m.tables.get("ftl", {})
    assert any(p.name == "t_prog_us" for p in m.params) or "timing.t_prog_us" in m.sources
    spec, figures = _spec(BURSTS, tmp_path)
    m = build(spec, figures)
    assert m.native_share == burst.prior()[0] and m.tables["ftl"]["slc_cache"] == burst.SLC_CACHE
    assert [p.name for p in m.params if p.name.startswith("t_prog")] == ["t_prog_slc_us"]


def test_a_measured_steady_point_pins_the_native_program_time(tmp_path):
    """A datasheet of bursts with a measured steady point: the bursts are still the SLC cache's,
    and the native program time is a parameter of its own, which the point pins (no share)."""
    point = {"user": "200GB", "block_size": "4KiB", "queue_depth": 32, "read_fraction": 0, "iops": 9948}
    spec, figures = _spec(BURSTS | {"point": [point]}, tmp_path)
    m = build(spec, figures)
    assert m.slc_bursts and m.native_share is None and m.tables["ftl"]["slc_cache"] == burst.SLC_CACHE
    assert {p.name for p in m.params} >= {"t_prog_us", "t_prog_slc_us"}
    assert fresh_state(m) == {"slc_folds": False, "slc_burst": True}


def test_a_datasheet_of_bursts_fits_the_slc_mode_and_ranges_over_the_native_rate(bursts):
    """The bursts are SLC-mode programs (the fit's program time is the SLC mode's); the native
    program time is the prior's share of its rate, its parameter row the prior's range and its
    source; the profile ranges over it and the note says so."""
    f = bursts.fitted
    assert f.status["t_prog_slc_us"] == "fitted"
    cfg = bursts.config()
    slc = cfg["timing"]["t_prog_slc_us"]
    assert cfg["timing"]["t_prog_us"] == pytest.approx(
        burst.native_prog_us(slc, f.model.units_ratio, burst.prior()[0]), rel=1e-6
    )
    # the burst as the SLC mode writes it: the dies' time per write is the SLC mode's, less than
    # the native array's at the prior's share
    fob = next(x for x in f.figures if x.kind == "fob_iops")
    cm = describe(cfg, model_limits=False)["cost_model"]
    mix = mix_of(fob, 4096, "sata")

    def dies(state):
        return next(r["ns_per_io"] for r in costs(cm | state, mix, 1.0)["resources"] if r["resource"] == "NAND dies")

    assert fresh_state(f.model) == {"slc_folds": False, "slc_burst": True}
    assert dies(fresh_state(f.model)) < 0.8 * dies({"slc_folds": False})
    row = next(r for r in bursts.parameters() if r["name"] == "timing.t_prog_us")
    assert row["low"] < row["value"] < row["high"] and "native array" in row["source"]
    shares = {round(s, 6) for _, _, s in native_unpinned(f) or []}
    assert shares == {round(s, 6) for s, _ in burst.grid()}
    assert any(S.NATIVE_KEY in structure_of(p) for p in bursts.profile.inside())
    assert any("native array" in n and "opsim measure iops" in n for n in bursts.notes)


def test_a_steady_only_prior_costs_its_prior_over_the_profile_already_walked(bursts):
    """No figure of a datasheet of bursts depends on the GC copy cost or the native array's rate:
    each such point is a point of the model's own structure or of the likeliest one (the same NAND
    and parameters), costing exactly its prior more (judged as that structure's points are);
    none is refitted."""
    prof = bursts.profile
    slow = set(S.SLOW_KEYS)
    by_point = {}
    for p, d in zip(prof.points, prof.delta):
        st = structure_of(p)
        if not slow & set(st):
            by_point[(p["physical"], tuple(sorted(st.items())))] = (p, d)
    shifted = 0
    for p, d in zip(prof.points, prof.delta):
        st = structure_of(p)
        if not slow & set(st):
            continue
        rest = tuple(sorted((k, v) for k, v in st.items() if k not in slow))
        twin = by_point.get((p["physical"], rest))
        if twin is None:  # an interval's end, refitted where the cost crosses the threshold
            continue
        alt = next(
            a
            for a in S.alternatives({}, False, GC_FW_SIGMA, native_unpinned(bursts.fitted))
            if a.keys and set(a.keys) <= slow and all(st.get(k) == v for k, v in a.keys.items())
        )
        assert d == pytest.approx(twin[1] + alt.penalty, abs=1e-9)
        assert {k: v for k, v in p.items() if "." not in k} == {k: v for k, v in twin[0].items() if "." not in k}
        shifted += 1
    assert shifted > 10


def test_the_steady_interval_ends_are_timed_at_their_own_points(bursts):
    """The IOPS interval's ends are profile points, each timed on its own config (docs/calibrate.md,
    "The uncertainty model", step 4): a top where the controller is the busiest is the
    controller's rate, not scaled by the efficiency of a fit whose dies are the busiest; and the
    controller's time per command, which the burst rating pins only to within its uncertainty,
    reaches on from there by the cost the point has left, as the delta method says."""
    f = bursts.fitted
    span = 200 * 10**9
    fig = Figure("steady_iops", 1.0, "x", span=span, user=span, queue_depth=32)
    row = bursts.predict([span], max_address=True, queue_depth=32)[0]

    def bound(v):
        return predict(f.model, v, [fig])[0].value

    assert predict(f.model, f.values, [fig])[0].bottleneck == "NAND dies" and row["iops"] < row["iops_bound"]
    assert bursts.profile is not None
    (bottom, _, down, own_bottom), (top, _, up, own_top) = bursts._iops_ends(fig)
    assert predict(f.model, top, [fig])[0].bottleneck == "controller" and up > 0.1 and down <= 0.0
    assert own_bottom and own_top  # both ends' controllers are the busiest, the fit's dies
    for pt, reach, end in ((bottom, down, row["iops_low"]), (top, up, row["iops_high"])):
        assert end == pytest.approx(timed.run(f.model.config(pt), fig, bursts.user_bytes).iops * math.exp(reach))
    assert row["iops_high"] >= max(bound(v) for v in bursts.profile.inside())
    # the reach is the delta method's at the point, in the cost the point has left (the fit's is
    # 3.84), with the covariance of the refit there: the controller's rate is log-linear in its time
    budget, cov = next((b, c) for p, b, c in bursts.profile.budgets() if p is top)
    assert cov is not None and cov.shape == (len([p for p in f.free if p.name != "physical"]),) * 2
    assert up == pytest.approx(math.sqrt(budget) * f.log_sd(bound, top, "physical", cov), rel=0.02)


def test_the_reach_is_the_delta_method_where_linear_and_the_model_where_not():
    """``Fitted.reach``: -+ k sds of the delta method for a log-linear figure; evaluated at the
    ellipsoid's extreme points, a figure that is the least of two rates stops at the other's
    (the delta method's line would go on), and a parameter ends at its bound."""
    a, b = (Param(n, f"x.{n}", n, 1.0, 1.0, log=False, lower=-math.inf) for n in "ab")
    cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    fitted = Fitted(None, [], {"a": 1.0, "b": 1.0}, {}, [a, b], cov, 1.0, {})  # type: ignore[arg-type]

    def linear(v):
        return math.exp(v["a"] + 2 * v["b"])

    sd = fitted.log_sd(linear)
    assert fitted.reach(linear, 1.96) == pytest.approx((-1.96 * sd, 1.96 * sd), rel=1e-3)

    def capped(v):  # a rate the other resource caps at e^2 (the line reaches e^(1 + 5.3))
        return min(math.exp(v["a"]), math.exp(2.0))

    down, up = fitted.reach(capped, 3.0, at={"a": 1.0, "b": 1.0})
    assert up == pytest.approx(1.0) and down == pytest.approx(-3.0 * math.sqrt(cov[0, 0]), rel=1e-3)
    # with b bounded at 0, its line from 1.0 down 3 sds of 1.41 stops there
    b0 = replace(b, lower=0.0)
    bounded = Fitted(None, [], {"a": 1.0, "b": 1.0}, {}, [a, b0], cov, 1.0, {})  # type: ignore[arg-type]
    down, _ = bounded.reach(lambda v: math.exp(v["b"]), 3.0)
    assert down == pytest.approx(-1.0, rel=1e-3)


def test_the_delta_method_given_the_profiled_parameter_is_conditional():
    """``Fitted.log_sd(fn, at, given)``: the slope at ``at``, the other parameters' covariance the
    fit's conditional on ``given`` (the Schur complement)."""
    a, b = (Param(n, f"x.{n}", n, 1.0, 1.0, log=False) for n in "ab")
    cov = np.array([[1.0, 0.5], [0.5, 2.0]])
    fitted = Fitted(None, [], {"a": 1.0, "b": 1.0}, {}, [a, b], cov, 1.0, {})  # type: ignore[arg-type]

    def fn(v):  # log fn = a * b: the slope at (a, b) is (b, a)
        return math.exp(v["a"] * v["b"])

    at = {"a": 2.0, "b": 3.0}
    g = np.array([3.0, 2.0])
    assert fitted.log_sd(fn, at) == pytest.approx(math.sqrt(g @ cov @ g), rel=1e-3)
    assert fitted.log_sd(fn, at, "a") == pytest.approx(2.0 * math.sqrt(2.0 - 0.25), rel=1e-3)
    assert fitted.log_sd(fn, at, "b") == pytest.approx(3.0 * math.sqrt(1.0 - 0.25 / 2.0), rel=1e-3)
