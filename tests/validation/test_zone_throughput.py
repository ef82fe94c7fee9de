"""Zone-write throughput against open zones (opsim.validation.zone_throughput): the table in
docs/validation.md is the checked-in run's (docs/figures/zone-throughput.json), the run's GC cost
bounds are the presets' now, and a small run behaves: WAF the same at every GC cost, throughput
no higher with a cost than without, the scale model's reclaim time the full-size one's over the
superblock scale, the ratios as defined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opsim.validation import zone_throughput as zt

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "docs" / "figures" / "zone-throughput.json"
SECTION = "## Zone writes: throughput against open zones"


def _doc_table() -> list[str]:
    doc = (ROOT / "docs" / "validation.md").read_text()
    lines: list[str] = []
    for ln in doc[doc.index(SECTION) :].splitlines():
        if ln.startswith("|"):
            lines.append(ln)
        elif lines:
            break
    return lines


def test_the_docs_table_is_the_checked_in_run():
    data = json.loads(DATA.read_text())
    assert _doc_table() == zt.table(data["points"]).splitlines()
    assert {p["preset"] for p in data["points"]} == set(zt.PRESETS)
    assert sorted({p["active_zones"] for p in data["points"]}) == list(zt.ACTIVE)
    for p in data["points"]:
        assert set(p["mbps"]) == set(zt.SETTINGS)
        assert len(set(p["waf_by_setting"].values())) == 1  # the timing does not move WAF


def test_the_run_s_bounds_are_the_presets_now():
    """The run's bounds are the presets' drive files' (each kept there at its stored precision,
    calibrate.stored: a few significant digits; the run took them unrounded)."""
    data = json.loads(DATA.read_text())
    for name, bounds in data["bounds_us"].items():
        assert bounds == pytest.approx(zt.bounds_of(name), rel=2e-3), f"{name}: rerun the module (docs/validation.md)"


def test_the_preset_point_has_no_cost_key_and_the_reclaim_time_is_scaled():
    name, zone = "micron-7450-pro-960gb", 768 << 20
    plain = zt.point_config(name, zone, 2, 64)
    assert "timing" not in plain  # no GC cost: the preset itself
    c = zt.point_config(name, zone, 2, 64, ("timing.gc_reclaim_us", 640.0))
    assert c["timing"] == {"gc_reclaim_us": 640.0 / c["ftl"]["superblock_scale"]} and c["ftl"]["superblock_scale"] > 1
    assert zt.point_config(name, zone, 2, 64, ("timing.gc_fw_us", 4.0))["timing"] == {"gc_fw_us": 4.0}
    assert c["workload"] | {"zone_size": 0} == plain["workload"] | {"zone_size": 0}
    assert plain["workload"]["request_size"] == zt.REQUEST and plain["workload"]["type"] == "zoned"


def test_a_small_run(monkeypatch):
    monkeypatch.setattr(zt, "RUN", zt.RUN | {"warmup_drive_writes": 0.5, "measure_drive_writes": 0.3})
    costs = {"timing.gc_fw_us": 20.0, "timing.gc_reclaim_us": 500_000.0}
    pts = zt.rows("micron-7450-pro-960gb", 128, zone_units=(1,), actives=(1, 4), costs=costs)
    assert [p["active_zones"] for p in pts] == [1, 4]
    one, four = pts
    for p in pts:
        assert len(set(p["waf_by_setting"].values())) == 1
        assert all(p["mbps"][s] <= p["mbps"]["none"] for s in costs)
        for s in zt.SETTINGS:
            assert p["relative"][s] == pytest.approx(p["mbps"][s] / one["mbps"][s])
            assert p["beyond_waf"][s] == pytest.approx(p["relative"][s] * p["waf"] / one["waf"])
    assert four["waf"] > one["waf"] == 1.0  # open zones share superblocks; one alone copies nothing
    assert one["mbps"]["timing.gc_fw_us"] == one["mbps"]["none"]  # no copy, no copy cost
    assert all(four["mbps"][s] < four["mbps"]["none"] for s in costs)
    assert all(four["relative"][s] < 1 for s in zt.SETTINGS)
    lines = zt.table(pts).splitlines()
    assert len(lines) == 4 and "(1)" in lines[2]


def test_a_bad_preset_is_refused_before_any_run(capsys, monkeypatch):
    monkeypatch.setattr(zt, "rows", lambda *a, **k: pytest.fail("ran before checking its arguments"))
    with pytest.raises(SystemExit) as e:
        zt.main(["no-such-drive"])
    assert e.value.code == 2 and "no such preset" in capsys.readouterr().err
