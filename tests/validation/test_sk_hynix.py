"""The SK hynix urgent-state case studies (seed 004) on the sk-hynix-mobile-64gb preset.

Runs on the 1/64 scale model (256 pages per block; the talk's 1024-block structure kept exactly),
about 0.07 s per OP level, with the core's urgent state (free blocks under N% of the 1024 main
blocks, GC takes over, host writes at K% of the sustained rate).  The talk found a 1.6%
performance gain per 1% of external OP in the urgent state; with the preset's estimates the model
predicts a much larger relative gain (about 14% per 1% on the talk's own window), and a small one
only where K% of the sustain state is below what garbage collection sustains.  These tests assert
the model's measured behaviour and the size of the disagreement, which docs/validation.md
explains; nothing is fitted to the talk's figure.
"""

import itertools
import json
import subprocess
import sys

import pytest

from opsim.units import parse_size
from opsim.validation import sk_hynix as v


@pytest.fixture(scope="module")
def study():
    return v.skh_op_study(64)


def test_geometry_is_the_talks_block_usage():
    g = v.skh_geometry(1)
    assert g["main_blocks"] == 1024
    assert g["user_blocks"] + g["free_blocks"] + g["system_blocks"] == 1024
    # 93% user, 2% free, 5% system, to the nearest block
    assert abs(g["user_blocks"] - 0.93 * 1024) < 1
    assert abs(g["free_blocks"] - 0.02 * 1024) < 1
    assert abs(g["system_blocks"] - 0.05 * 1024) < 1
    assert g["full_block_bytes"] == 64 << 20  # 1024 blocks of 64 GiB of NAND
    assert g["seq_chunk"] == 16 * g["block_bytes"]  # 1 GiB = 16 blocks


def test_op_levels_are_the_talks_axis():
    """0, 4, ... 60 blocks beyond the 1024 main blocks print as the talk's 0.0, 0.4, ... 5.9%."""
    levels = v.skh_op_levels()
    assert len(levels) == len(v.SKH_TALK_OP_AXIS) == 16
    assert [round(100 * e / 1024, 1) for e in levels] == list(v.SKH_TALK_OP_AXIS)


def test_scale_model_keeps_the_block_structure_and_costs():
    full, small = v.skh_config(60, 1), v.skh_config(60, 64)
    assert small["drive"]["pages_per_block"] * 64 == full["drive"]["pages_per_block"]
    for c, g in ((full, v.skh_geometry(1)), (small, v.skh_geometry(64))):
        assert c["drive"]["physical_capacity"] == (952 + 20 + 60) * g["block_bytes"]
        assert c["drive"]["user_capacity"] == 952 * g["block_bytes"]
        assert c["workload"]["type"] == "sk-hynix"
        # whole cycles until the sequential chunks have covered the user area (60 of 16 blocks)
        cycle = c["run"]["round_drive_writes"]
        assert c["run"]["measure_drive_writes"] == pytest.approx(60 * cycle)
        # the core's urgent state: N% of the 1024 main blocks, K%; time scales with the blocks
        t = c["timing"]
        assert (t["urgent_free_pct"], t["urgent_perf_pct"], t["urgent_reference_blocks"]) == (3.0, 30.0, 1024)
        assert t["urgent_sustain_window_s"] * g["scale"] == t["series_interval_s"] * g["scale"] * 10 == 10
    # erase time per page of a collected block is the same: the core charges tBERS per physical
    # block a collected block spans (at most one per die); 4 dies, 12 MiB NAND blocks
    per_page = {
        s: c["timing"]["t_erase_us"]
        * min(1.0, c["drive"]["pages_per_block"] / 4 / 3072)
        / c["drive"]["pages_per_block"]
        for s, c in ((1, full), (64, small))
    }
    assert per_page[64] == pytest.approx(per_page[1])
    assert not [k for k in v.skh_config(0, 64, urgent=False)["timing"] if k.startswith("urgent")]


def test_occupation_follows_the_sequential_chunks():
    seq, rand, user = 16, 3, 100
    assert v._skh_occupation(0, seq, rand, user) == 0
    assert v._skh_occupation(8, seq, rand, user) == 0.08
    assert v._skh_occupation(seq + rand, seq, rand, user) == 0.16  # random writes add nothing
    assert v._skh_occupation(seq + 2, seq, rand, user) == 0.16
    assert v._skh_occupation(10 * (seq + rand), seq, rand, user) == 1.0


def test_case1_every_level_enters_the_urgent_state_before_full(study):
    runs = study["runs"]
    for r in runs:
        assert r["entry_cycle"] is not None and 0.8 < r["entry_occupation"] < 0.9
        assert r["cycles"][-1]["occupation"] == 1.0
        # the core entered it when the free pool fell under N% of the 1024 main blocks: above
        # the threshold in every cycle before, under it in the entry cycle
        assert r["core"]["entries"] >= 1 and r["core"]["enter_below_blocks"] == pytest.approx(30.72)
        assert all(c["free_blocks_min"] >= r["threshold_blocks"] for c in r["cycles"][: r["entry_cycle"]])
        assert r["cycles"][r["entry_cycle"]]["free_blocks_min"] < r["threshold_blocks"]
        assert all(c["urgent_s"] == 0 for c in r["cycles"][: r["entry_cycle"]])
    entries = [r["entry_occupation"] for r in runs]
    assert entries == sorted(entries) and entries[-1] > entries[0], "more OP: the urgent state comes later"


def test_case1_performance_falls_toward_full_and_rises_with_op(study):
    runs = study["runs"]
    for r in runs:
        mbps = [c["mbps"] for c in r["cycles"][r["entry_cycle"] :]]
        assert mbps[-1] < 0.2 * r["sustain_mbps"], "from the sustain-state rate down to the garbage collector's"
        assert all(b <= a * 1.01 for a, b in itertools.pairwise(mbps)), "no recovery before 100%"
        # soon after the entry the host is held at K% of the sustained rate while GC keeps up (in
        # the cycle after the entry GC may refill the pool past N% and let the host through) ...
        throttle = r["core"]["throttle_mbps"]
        assert throttle == pytest.approx(0.3 * r["sustain_mbps"], rel=0.01)
        assert mbps[2] == pytest.approx(throttle, rel=0.03)
        # ... and falls under it when GC cannot (the free pool runs out before 100%)
        assert mbps[-1] < 0.5 * throttle and r["cycles"][-1]["free_blocks_min"] <= 2
    common = [r["common_mbps"] for r in runs]
    final = [r["final_mbps"] for r in runs]
    assert common == sorted(common) and len(set(common)) == 16
    assert final == sorted(final) and len(set(final)) == 16
    assert final[-1] > 2.5 * final[0]
    # each level's own window (the talk's) also rises overall; it steps back where the entry moves
    # one cycle later (that cycle, still at the sustain rate, leaves the window)
    window = [r["urgent_mbps"] for r in runs]
    assert window[-1] > 1.7 * window[0]
    for a, b in itertools.pairwise(runs):
        if a["entry_cycle"] == b["entry_cycle"]:
            assert b["urgent_mbps"] > a["urgent_mbps"]


def test_case2_sustain_state_is_the_same_at_every_level(study):
    assert study["sustain_mbps_max"] / study["sustain_mbps_min"] < 1.01
    # NAND-bound: each die moves a 4 KiB unit over its channel, then programs it (tPROG shared by the
    # 24 units of a multi-plane program); 4 dies
    t = v._skh_preset()["settings"]["timing"]
    dies = t["channels"] * t["dies_per_channel"]
    units = parse_size(t["nand_page_size"]) // 4096 * t["planes"]
    per_unit_s = t["t_prog_us"] * 1e-6 / units + 4096 / (t["channel_mbps"] * 1e6)
    assert study["sustain_mbps_min"] == pytest.approx(dies * 4096 / per_unit_s / 1e6, rel=0.01)


def test_case2_gain_per_pct_the_models_value_and_the_disagreement(study):
    """The model's slope (predicted) is about 14% per 1% of OP on the talk's window, 9x the talk's
    1.6%; read as points of the sustain-state performance it is 1.9.  docs/validation.md."""
    f = study["fits"]
    w = f["window"]
    assert 12.0 < w["gain_pct_per_pct"] < 16.5 and w["r2"] > 0.95
    assert 1.5 < w["gain_points_of_sustain_per_pct"] < 2.4
    assert w["ratio_to_talk"] > 5, "the documented disagreement with the talk's 1.6%"
    assert 11.0 < f["in_state"]["gain_pct_per_pct"] < 16.0 and f["in_state"]["r2"] > 0.95
    assert 17 < f["common"]["gain_pct_per_pct"] < 27 and f["common"]["r2"] > 0.98
    assert 24 < f["final"]["gain_pct_per_pct"] < 34 and f["final"]["r2"] > 0.98


def test_case2_fit_is_predicted_not_fitted(monkeypatch, study):
    runs = study["runs"]
    op, mbps = [r["op_pct"] for r in runs], [r["urgent_mbps"] for r in runs]
    a = v.skh_fit(op, mbps)
    monkeypatch.setattr(v, "SKH_TALK_GAIN_PER_PCT", 99.0)
    b = v.skh_fit(op, mbps)
    assert a["gain_pct_per_pct"] == b["gain_pct_per_pct"] and a["ratio_to_talk"] != b["ratio_to_talk"]


def test_skh_fit_on_a_known_line():
    f = v.skh_fit([0, 1, 2, 3], [10, 11, 12, 13], sustain_mbps=100)
    assert f["gain_pct_per_pct"] == pytest.approx(10) and f["r2"] == pytest.approx(1)
    assert f["gain_points_of_sustain_per_pct"] == pytest.approx(1)
    assert f["ratio_to_talk"] == pytest.approx(10 / 1.6)


@pytest.mark.parametrize(
    "label,kw",
    [
        ("seed 2", {"seed": 2}),
        ("GC fifo", {"ftl": {"gc": "fifo"}}),
        ("tPROG x2", {"timing": {"t_prog_us": 2800}}),
        ("sustain window 60 s", {"timing": {"urgent_sustain_window_s": 60 / 64}}),
        ("no urgent state", {"urgent": False}),
    ],
)
def test_case2_slope_while_the_garbage_collector_sets_the_urgent_rate(study, label, kw):
    """While K% of the sustain state is above what garbage collection sustains near full, the slope
    stays at 12-16% per 1% of OP whatever estimate changes: the NAND is busy all the time either
    way, and the work it has to do falls with OP."""
    s = v.skh_op_study(64, **kw)
    w = s["fits"]["window"]
    assert 11.0 < w["gain_pct_per_pct"] < 17.0, label
    assert w["gain_pct_per_pct"] > 5 * v.SKH_TALK_GAIN_PER_PCT


@pytest.mark.parametrize(
    "label,kw,sustain",
    [
        ("K = 10%", {"timing": {"urgent_perf_pct": 10}}, 258.7),
        ("host link 100 MB/s", {"timing": {"link_mbps": 100}}, 100),
    ],
)
def test_case2_slope_hinges_on_k_percent_of_the_sustain_state(study, label, kw, sustain):
    """Where K% of the sustain state is under what garbage collection sustains, the throttle sets
    the urgent-state performance and OP matters little: the slope falls to a few % per 1% of OP,
    under 1% over the time in the state.  The talk gives neither the sustain-state performance nor
    the NAND; the preset's estimates put the model in the other regime (docs/validation.md)."""
    s = v.skh_op_study(64, **kw)
    assert s["sustain_mbps_min"] == pytest.approx(sustain, rel=0.01)
    w, ins = s["fits"]["window"], s["fits"]["in_state"]
    assert w["gain_pct_per_pct"] < 0.4 * study["fits"]["window"]["gain_pct_per_pct"], label
    assert ins["gain_pct_per_pct"] < 2.0
    for r in s["runs"]:
        k = r["core"]["throttle_mbps"]
        assert 0.75 * k < r["in_state_mbps"] < 1.02 * k


@pytest.fixture(scope="module")
def case3():
    return v.skh_case3(64)


def test_case3_a_slower_sustain_state_brings_the_urgent_rate_to_k_percent(case3):
    """Controlling the sustain state: with the host link under the NAND's rate the urgent-state
    performance approaches K% of the sustain state (the throttle binds instead of the garbage
    collector), which is how a requirement stated as a share of it is met."""
    for e in v.SKH_CASE3_OP_BLOCKS:
        rows = [r for r in case3 if r["factor"] == "sustain state" and r["ext_blocks"] == e]
        assert rows[0]["setting"].startswith("NAND-bound")
        sustain = [r["sustain_mbps"] for r in rows]
        ratio = [r["urgent_pct_of_sustain"] for r in rows]
        assert sustain == sorted(sustain, reverse=True) and sustain[-1] == pytest.approx(60, rel=0.02)
        assert ratio == sorted(ratio), e
        assert ratio[0] < 25 and ratio[2] > 29, "GC-bound at the NAND's rate, K% = 30% at 100 MB/s"
        # measured over the last 10 s (full-size) before the entry: within a command of the cycles' rate
        assert all(r["throttle_mbps"] == pytest.approx(0.3 * r["sustain_mbps"], rel=0.04) for r in rows)


def test_case3_entering_the_urgent_state_earlier_raises_its_performance(case3):
    """Entering earlier (larger N): GC takes over the throttled time from an earlier occupation and
    the urgent-state performance over the common window rises, clearly with 2.7% of OP."""
    for e in v.SKH_CASE3_OP_BLOCKS:
        rows = [
            r
            for r in case3
            if r["ext_blocks"] == e and (r["factor"] == "urgent entry" or r["setting"].startswith("NAND-bound"))
        ]
        assert [r["setting"][:6] for r in rows] == ["NAND-b", "N = 5%", "N = 10", "N = 20"]
        entry = [r["entry_occupation"] for r in rows]
        urgent = [r["urgent_mbps"] for r in rows]
        assert entry == sorted(entry, reverse=True) and entry[-1] < 0.7
        assert len({r["window_from_occupation"] for r in rows}) == 1
        assert urgent[-1] > urgent[0]
        assert rows[-1]["window_waf"] < rows[0]["window_waf"]
    high = [r["urgent_mbps"] for r in case3 if r["ext_blocks"] == 28 and r["factor"] == "urgent entry"]
    base = next(r for r in case3 if r["ext_blocks"] == 28 and r["setting"].startswith("NAND-bound"))
    assert high[-1] > 1.2 * base["urgent_mbps"]


def test_core_urgent_state_counts_free_blocks_against_the_main_blocks(study):
    """The core's trigger is the pool of erased blocks against N% of the 1024 main blocks (the old
    basis, NAND not holding valid data against the simulated pages, was reachable at 3 of the 16
    levels only): every level enters it, the sustained rate is measured in bytes before it, and
    the throttle is K% of that."""
    for r in study["runs"]:
        c = r["core"]
        assert (c["reference_blocks"], c["free_pct"], c["perf_pct"]) == (1024, 3.0, 30.0)
        assert c["sustained_from"] == "measured" and c["gc_takes_over"]
        assert c["sustained_mbps"] == pytest.approx(r["sustain_mbps"], rel=0.01)
        assert c["gc_victims"] > 0 and c["gc_copy_pages"] > 0


def test_core_urgent_state_does_not_depend_on_the_block_granularity():
    """GC work is charged page by page into the time the throttle leaves, so blocks 4x larger (1/16
    scale) give the same urgent-state performance (the old throttle, sampled over one series
    interval in commands, crawled at 4.6 MB/s at 1/16)."""
    a, b = v.skh_run(0, 64), v.skh_run(0, 16)
    assert b["urgent_mbps"] == pytest.approx(a["urgent_mbps"], rel=0.06)
    assert b["core"]["throttle_mbps"] == pytest.approx(a["core"]["throttle_mbps"], rel=0.01)
    assert [c["mbps"] for c in b["cycles"][50:53]] == pytest.approx([c["mbps"] for c in a["cycles"][50:53]], rel=0.06)


def test_gc_taking_over_the_throttled_time_matters():
    """With the throttle only (urgent_gc = false) the collector waits for the FTL's last free
    blocks; taking over the time the throttle leaves keeps the pool near N% for several cycles and
    gives more in the urgent window at 5.9% OP."""
    on, off = v.skh_run(60, 64), v.skh_run(60, 64, timing={"urgent_gc": False})
    assert off["core"]["gc_victims"] == 0 and on["core"]["gc_victims"] > 100
    first = on["entry_cycle"] + 1
    assert min(c["free_blocks_min"] for c in on["cycles"][first : first + 3]) > 10
    assert max(c["free_blocks_min"] for c in off["cycles"][first : first + 3]) <= 2
    assert on["urgent_mbps"] > 1.05 * off["urgent_mbps"]


def test_background_gc_outside_the_urgent_state_still_needs_all_dies_idle():
    """Characterises the core outside the urgent state: with the host link well under the NAND's
    rate the dies idle between writes, yet background GC (it needs every die idle when a command is
    issued, and the queue keeps them scheduled) collects nothing more with a much larger target."""
    link = {"link_mbps": 60}
    base = v.skh_run(0, 64, timing=link, urgent=False)
    bg = v.skh_run(0, 64, timing=link | {"background_free_blocks": 102}, urgent=False)
    assert base["sustain_mbps"] < 0.25 * 258
    assert bg["window_waf"] == base["window_waf"]
    assert [c["gc_copy_pages"] for c in bg["cycles"]] == [c["gc_copy_pages"] for c in base["cycles"]]


@pytest.mark.slow
def test_cli_sk_hynix_suite_json_and_exit_codes(tmp_path):
    out, md = tmp_path / "skh.json", tmp_path / "skh.md"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "opsim.cli",
            "validate",
            "--suite",
            "sk-hynix",
            "--scale",
            "64",
            "--json-file",
            str(out),
            "--markdown",
            str(md),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    assert "Case #2" in p.stdout and "talk's 1.6%" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["suite"] == "sk-hynix" and doc["geometry"]["scale"] == 64
    assert doc["checks"]["monotone_common"] and doc["checks"]["sustain_fixed"]
    assert doc["checks"]["op_axis_matches_talk"]
    assert len(doc["study"]["runs"]) == 16 and len(doc["sensitivity"]) == v.SKH_SENSITIVITY_ROWS == 22
    assert doc["checks"]["core_urgent_entered"] == v.skh_op_levels()
    assert len(doc["case3"]) == v.SKH_CASE3_ROWS
    assert doc["headline"]["metric"] == "window" and doc["headline"]["ratio_to_talk"] > 5
    text = md.read_text()
    assert text.count("| external OP blocks |") == 1 and "Case #3" in text
    bad = subprocess.run(
        [sys.executable, "-m", "opsim.cli", "validate", "--suite", "sk-hynix", "--scale", "3"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "--scale 3" in bad.stderr
    other = subprocess.run(
        [sys.executable, "-m", "opsim.cli", "validate", "--suite", "oracles", "--scale", "4"],
        capture_output=True,
        text=True,
    )
    assert other.returncode == 2 and "--scale" in other.stderr
