"""The uncertainty model of `opsim calibrate` (docs/calibrate.md, "The uncertainty model"): the
NAND prior from a population of real drives, intervals from a profile over the NAND, the one
measurement that would narrow WAF most, and what a drive file keeps.

The D7-P5520's measured WAF (about 3.5 over the whole drive after a sequential fill, issue 26)
is no input of any fit here: the datasheet-only interval is checked against it."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from opsim.calibrate import calibrate, read_inputs
from opsim.calibrate import population as pop
from opsim.calibrate import presets as cp
from opsim.calibrate import read_time as rt
from opsim.calibrate.inputs import Figure
from opsim.calibrate.model import TLP_OVERHEAD, TLP_PAYLOAD, build, predict
from opsim.calibrate.result import suggestion
from opsim.calibrate.uncertainty import DISCREPANCY, DISCREPANCY_DATA, THRESHOLD, spread
from opsim.sim import describe
from opsim.validation import discrepancy as dv

ROOT = Path(__file__).parent.resolve().parent.parent
INPUTS = ROOT / "crates" / "opsim-core" / "presets" / "inputs"
OPSIM = [sys.executable, "-m", "opsim.cli"]
#: the D7-P5520 1.92 TB's WAF measured over the whole drive (issue 26: "about 3.5")
P5520_MEASURED_WAF = 3.5


def _opsim(*args):
    return subprocess.run([*OPSIM, *args], capture_output=True, text=True, env=os.environ | {"PYTHONPATH": ""})


@pytest.fixture(scope="module")
def p5520():
    return cp.calibration("solidigm-d7-p5520-1920gb")


def test_population_entries_have_sources_and_make_the_class_priors():
    assert all(e.source and e.kind in ("raw", "fitted") for e in pop.POPULATION)
    assert {e.cls for e in pop.POPULATION} == set(pop.CLASSES)
    ri, sd_ri, n_ri = pop.class_prior("read-intensive")
    mu, _, _ = pop.class_prior("mixed-use")
    client, _, _ = pop.class_prior("client")
    # the classes are ordered as vendors build them: client < 1 DWPD < 3 DWPD
    assert 1.0 < client < ri < mu
    assert sd_ri >= pop.MIN_SIGMA and n_ri >= 5
    # a drive's prior never holds its own fitted entry
    _, _, n_without = pop.class_prior("read-intensive", exclude="solidigm-d7-p5520-1920gb")
    assert n_without == n_ri - 1
    assert pop.drive_class("tlc", 1.0) == "read-intensive"
    assert pop.drive_class("tlc", 3.0) == "mixed-use"
    assert pop.drive_class("tlc", 0.3) == "client"
    assert pop.drive_class("qlc", 0.5) == "qlc"
    assert pop.drive_class("tlc", None) is None


@pytest.mark.slow
def test_the_nand_prior_is_the_population_of_the_drives_class(p5520):
    p = next(q for q in p5520.fitted.model.params if q.name == "physical")
    centre, sigma, _ = pop.class_prior("read-intensive", exclude="solidigm-d7-p5520-1920gb")
    assert p.prior == pytest.approx(1920e9 * centre, rel=1e-9)
    assert p.sigma == pytest.approx(sigma)
    assert "population of real drives" in p.prior_source and "read-intensive" in p.prior_source


@pytest.mark.slow
def test_p5520_datasheet_only_interval_covers_the_measured_waf(p5520):
    (row,) = p5520.predict([p5520.user_bytes], simulate=False)
    assert row["waf_low"] <= P5520_MEASURED_WAF <= row["waf_high"], row
    assert row["waf_low"] <= row["waf"] <= row["waf_high"]
    assert row["iops_low"] <= row["iops"] <= row["iops_high"]
    assert not row["waf_pinned"]
    # the NAND's interval is the profile's, not the local curvature's
    phys = next(x for x in p5520.parameters() if x["name"] == "drive.physical_capacity")
    assert p5520.profile is not None
    assert (phys["low"], phys["high"]) == p5520.profile.nand_interval()
    assert (phys["low"], phys["high"]) != p5520.fitted.interval(
        next(q for q in p5520.fitted.free if q.name == "physical")
    )
    assert phys["low"] < phys["value"] < phys["high"]


@pytest.mark.slow
def test_p5520_datasheet_only_interval_spans_at_most_2x(p5520):
    (row,) = p5520.predict([p5520.user_bytes], simulate=False)
    assert row["waf_high"] / row["waf_low"] <= 2.0, row


@pytest.mark.slow
def test_the_7450_pro_six_span_intervals_are_within_15_percent_on_average():
    """Issue 26: the 7450 PRO's datasheet-only WAF intervals at six spans (100% to 50% of the
    drive) at most +-15% on average (half-width in log), given the model's structure (issue 26's
    model: no floor, greedy). Issue 38: the priors of what the datasheet never states (the floor
    above all, a one-sided +18% at most) widen every one of them, to at most +-22% on average
    (20.0% measured; docs/calibrate.md, "What a datasheet never states")."""
    cal = calibrate(*read_inputs(str(INPUTS / "micron-7450-pro-960gb.toml")))
    spans = [int(cal.user_bytes * s) // 4096 * 4096 for s in (1.0, 0.9, 0.8, 0.7, 0.6, 0.5)]
    rows = cal.predict(spans, simulate=False)
    assert cal.profile is not None
    own = cal.profile.convention()
    given = []
    for span, r in zip(spans, rows):
        fig = Figure("waf", 1.0, "x", span=span)
        lo, hi = own.interval(lambda v, fig=fig: predict(cal.fitted.model, v, [fig])[0].value)
        assert r["waf_low"] <= lo * (1 + 1e-9) and r["waf_high"] >= hi * (1 - 1e-9)
        given.append(math.sqrt(hi / lo) - 1)
    assert sum(given) / len(given) <= 0.15, given
    half = [math.sqrt(r["waf_high"] / r["waf_low"]) - 1 for r in rows]
    assert all(h > g for h, g in zip(half, given))
    assert sum(half) / len(half) <= 0.22, half
    assert half == sorted(half, reverse=True)


@pytest.mark.slow
def test_the_drive_file_keeps_the_profile_and_it_reproduces_the_interval(p5520):
    prof = p5520.drive_toml()["preset"]["calibration"]["profile"]
    assert prof["keys"][0] == "drive.physical_capacity"
    assert len(prof["points"]) >= 3 and all(len(p) == len(prof["keys"]) for p in prof["points"])
    assert all(0 <= d <= THRESHOLD + 1e-3 for d in prof["delta_cost"])
    # a later prediction: each stored point as a config, the interval their least and most
    model = p5520.fitted.model
    names = {q.key: q.name for q in model.params}
    wfig = Figure("waf", 1.0, "x")
    # each point with its structural alternative, when the profile ranged over the priors of
    # what a datasheet never states (docs/calibrate.md)
    structures = prof.get("structure", [{}] * len(prof["points"]))
    wafs = [
        predict(model, dict(p5520.fitted.values) | {names[k]: v for k, v in zip(prof["keys"], pt)} | st, [wfig])[
            0
        ].value
        for pt, st in zip(prof["points"], structures)
    ]
    (row,) = p5520.predict([p5520.user_bytes], simulate=False)
    assert min(wafs) == pytest.approx(row["waf_low"], rel=0.02)
    assert max(wafs) == pytest.approx(row["waf_high"], rel=0.02)


@pytest.mark.slow
def test_the_narrowing_suggestion_is_computed_from_the_inputs(p5520):
    s = suggestion(p5520, None)
    assert s is not None
    best = s["best"]
    # every candidate measured, the best the narrowest; a whole-drive WAF measurement pins WAF
    widths = [c["new_high"] - c["new_low"] for c in s["candidates"]]
    assert widths == sorted(widths) and len(widths) >= 4
    assert best["new_high"] - best["new_low"] < 0.5 * (best["waf_high"] - best["waf_low"])
    assert "whole drive" in best["what"] and "opsim" in best["command"]
    # other inputs, another answer: with the datasheet's random writes 30% faster the interval moves
    spec, figs = read_inputs(str(INPUTS / "solidigm-d7-p5520-1920gb.toml"))
    figs = [replace(f, value=f.value * 1.3) if f.kind == "steady_iops" else f for f in figs]
    other = suggestion(calibrate(spec, figs, timed_rounds=0), None)
    assert other is not None
    assert not math.isclose(other["best"]["new_low"], best["new_low"], rel_tol=1e-3)
    assert not math.isclose(other["best"]["waf"], best["waf"], rel_tol=1e-3)


def test_predict_above_100_percent_is_refused_before_the_fit(tmp_path):
    """Above the whole drive is refused, naming the key (100% is the whole drive:
    test_calibrate.py's test_cli_json_and_drive_file)."""
    ds = tmp_path / "ds.toml"
    ds.write_text(
        '[drive]\nnative = "480GB"\ninterface = "sata"\ncell = "tlc"\n'
        "[datasheet]\nseq_write_mbps = 450\nrand_write_iops = 9000\nfob_write_iops = 80000\ndwpd = 1\n"
    )
    bad = _opsim("calibrate", "--datasheet", str(ds), "--predict", "101%")
    assert bad.returncode == 2 and "predict" in bad.stderr


@pytest.mark.slow
def test_advise_says_what_a_preset_was_fitted_to():
    from opsim.planner.advise.notes import _fitted_to

    doc = tomllib.loads((ROOT / "crates" / "opsim-core" / "presets" / "samsung-pm9a3-960gb.toml").read_text())
    src = doc["preset"]["sources"]["timing.t_prog_us"]
    assert _fitted_to(src) == ["its datasheet"]
    r = _opsim("advise", "--preset", "samsung-pm9a3-960gb", "--min-iops", "1000")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if "timing parameters" in x)
    assert "fitted to its datasheet" in line and "seeds" not in line
    seed = tomllib.loads((ROOT / "crates" / "opsim-core" / "presets" / "micron-1100-1tb.toml").read_text())
    assert _fitted_to(seed["preset"]["sources"]["timing.fw_overhead_us"]) == ["seed 000"]


def test_the_read_time_prior_is_computed_from_published_figures():
    for cell in ("slc", "mlc", "tlc", "qlc"):
        centre, sigma, source = rt.prior(cell)
        assert rt.entries(cell) and all(e.source and e.low_us <= e.high_us for e in rt.entries(cell))
        # every published figure of the cell lies inside the prior's 95% interval
        lo, hi = centre * math.exp(-rt.Z95 * sigma), centre * math.exp(rt.Z95 * sigma)
        assert all(lo * (1 - 1e-9) <= x <= hi * (1 + 1e-9) for e in rt.entries(cell) for x in (e.low_us, e.high_us))
        assert sigma >= rt.prior(rt.WIDEST_SOURCED)[1] - 1e-12
        assert f"{len(rt.entries(cell))} figure" in source
    # more bits per cell read slower
    assert rt.prior("slc")[0] < rt.prior("mlc")[0] < rt.prior("qlc")[0]
    assert rt.prior("tlc")[0] < rt.prior("qlc")[0]
    # the 7450 MAX's earlier valley (16.6 µs) lies far outside TLC's prior
    centre, sigma, _ = rt.prior("tlc")
    assert math.log(centre / 16.6) / sigma > 3
    with pytest.raises(ValueError):
        rt.prior("plc")


@pytest.mark.slow
def test_a_fit_takes_the_read_time_prior_of_its_cell(p5520):
    p = next(q for q in p5520.fitted.model.params if q.name == "t_read_us")
    centre, sigma, source = rt.prior("tlc")
    assert p.prior == pytest.approx(centre) and p.sigma == pytest.approx(sigma) and p.prior_source == source


def test_an_nvme_drive_s_link_carries_a_tlp_s_payload_share():
    spec, figs = read_inputs(str(INPUTS / "micron-7450-pro-960gb.toml"))
    m = build(spec, figs)
    raw = describe(
        {
            "drive": {"user_capacity": 1 << 30, "physical_capacity": 1 << 31},
            "timing": {"interface": "nvme", "pcie_gen": 4},
        },
        model_limits=False,
    )["timing"]["link_mbps"]
    assert m.tables["timing"]["link_mbps"] == pytest.approx(raw * TLP_PAYLOAD / (TLP_PAYLOAD + TLP_OVERHEAD), abs=0.1)
    assert "Intel AN 456" in m.sources["timing.link_mbps"]
    # a datasheet's sequential read above that share sets the link instead
    fast = replace(spec, source=spec.source | {"seq_read_mbps": raw * 0.97})
    assert build(fast, figs).tables["timing"]["link_mbps"] == pytest.approx(raw * 0.97, abs=0.1)
    # SATA drives keep the core's link (the seed presets unchanged)
    sata, sfigs = read_inputs(str(INPUTS / "micron-1100-1tb.toml"))
    assert "timing.link_mbps" not in build(sata, sfigs).tables["timing"]


@pytest.fixture(scope="module")
def max800():
    return cp.calibration("micron-7450-max-800gb")


def _within_issue_25(cal) -> None:
    """Reads within 15%, writes within 10% (issue 25), with a read time real TLC has."""
    for r, f in zip(cal.fit_report()["figures"], cal.fitted.figures):
        bound = 0.15 if "read" in f.kind else 0.10
        assert abs(r["error"]) <= bound, r
    centre, sigma, _ = rt.prior("tlc")
    tr = cal.fitted.values["t_read_us"]
    assert abs(math.log(tr / centre)) <= rt.Z95 * sigma, tr


@pytest.mark.slow
def test_the_7450_max_fits_its_datasheet_within_issue_25s_bounds(max800):
    _within_issue_25(max800)


@pytest.mark.slow
def test_the_p5520_fit_finds_the_read_time_its_sequential_read_needs(p5520):
    """Its 5,300 MB/s sequential read is the NAND's only at a read time near 93 µs, which also
    slows its GC copies: the scan left the read time at its prior (sequential read +38%, the
    host link's) until pass A's restarts (fit.RESTART_Z)."""
    _within_issue_25(p5520)
    assert p5520.fitted.status["t_read_us"] == "fitted" and p5520.fitted.values["t_read_us"] > 80


def test_the_discrepancy_is_the_spread_of_held_out_predictions():
    doc = tomllib.loads(DISCREPANCY_DATA.read_text())
    rows = doc["row"]
    assert spread(rows) == pytest.approx(DISCREPANCY)
    assert doc["spread"] == pytest.approx(DISCREPANCY, abs=1e-6)
    # none of it from the drives it is judged on, each a held-out prediction of the suite
    assert not any(r["case"].startswith(j) for r in rows for j in dv.JUDGED)
    assert len(rows) >= 5 and all(r["measured"] > 0 and r["predicted"] > 0 for r in rows)
    # fits of two or more figures only (a one-figure fit's misses are the profile's to carry)
    assert not any(r["fit"] == "1 point" for r in rows)
    assert {(r["case"], r["fit"]) for r in rows} == {(c.id, f.name) for c in dv.cases() for f in c.fits}


@pytest.mark.slow
def test_the_stored_discrepancy_is_what_the_suite_gives_now():
    """The real-drives suite's held-out predictions, run again (about 20 s): their spread
    within CHECK_REL of the stored one (else `python -m opsim.validation.discrepancy --write`)."""
    assert abs(spread(dv.rows()) / DISCREPANCY - 1) <= dv.CHECK_REL


@pytest.mark.slow
def test_one_steady_smart_waf_narrows_the_p5520_to_a_few_percent(p5520):
    """Issue 26: one measured point of the right kind (the steady window's WAF of `opsim measure
    iops --smart` over the whole drive, as known as such a window is expected to be) takes the
    datasheet-only interval (+-31%) to a few percent; the interval's ends are where the profile's
    cost crosses the threshold, not short of it (a narrow profile lies inside one grid step)."""
    from opsim.measure.smart_window import EXPECTED_SIGMA

    s = suggestion(p5520, None)
    assert s is not None
    best = s["best"]
    assert "--smart" in best["command"] and best["assumed_sigma"]["waf"] == EXPECTED_SIGMA
    assert best["waf_high"] / best["waf_low"] > 1.5  # the datasheet alone: wide
    # the WAF figure alone allows +-1.96 sigma; the profile is no narrower than 85% of that
    alone = math.exp(1.96 * EXPECTED_SIGMA) - 1
    assert 0.85 * alone <= best["new_half_width"] <= 0.05
