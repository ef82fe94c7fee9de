"""The WAF floor (``ftl.meta_writes``) from Python: the result reports its share, ``describe``
echoes it into the cost model, a bad value is refused naming the key (exit 2 from the CLI), the
calibration's WAF curve carries it, and ``opsim calibrate`` fits it only when two WAF figures at
different spans can pin it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from opsim.calibrate.curve import META_GRID, curve
from opsim.calibrate.inputs import SIGMA_MEASURED, DriveSpec, Figure
from opsim.calibrate.model import build, pins_floor, predict
from opsim.errors import OpsimError
from opsim.sim import costs, describe, simulate

SMALL = {"drive": {"user_capacity": "32MiB", "op": 0.15, "pages_per_block": 64}}
RUN = {"precondition": "fill", "warmup_drive_writes": 2, "measure_drive_writes": 1, "round_drive_writes": 0.5}


def test_the_result_reports_the_share_of_metadata_pages():
    off = simulate(SMALL | {"run": RUN})
    on = simulate(SMALL | {"ftl": {"meta_writes": 0.1}, "run": RUN})
    assert "meta_share" not in off.data and "meta_pages" not in off.measure_counters
    m = on.measure_counters
    assert on.meta_share == m["meta_pages"] / m["nand_write_pages"]
    assert abs(m["meta_pages"] / m["host_write_pages"] - 0.1) < 1e-3
    assert on.waf > off.waf + 0.1


def test_describe_echoes_the_knob_into_the_cost_model():
    cfg = SMALL | {"ftl": {"meta_writes": 0.25}, "timing": {}}
    d = describe(cfg)
    assert d["config"]["ftl"]["meta_writes"] == 0.25
    assert d["cost_model"]["meta_writes"] == 0.25
    mix = {"write_fraction": 1.0, "units_per_io": 1.0, "bytes_per_io": 4096.0}
    plain = describe(SMALL | {"timing": {}})["cost_model"]
    assert "meta_writes" not in plain
    assert costs(d["cost_model"], mix, 1.5)["iops"] < costs(plain, mix, 1.5)["iops"]


@pytest.mark.parametrize("bad", [-0.1, 1.01, float("nan")])
def test_a_bad_value_is_refused_naming_the_key(bad, tmp_path):
    with pytest.raises(OpsimError) as e:
        describe(SMALL | {"ftl": {"meta_writes": bad}})
    assert "ftl.meta_writes" in str(e.value)
    if bad == bad:  # TOML has nan too, but the CLI case needs one
        cfg = tmp_path / "c.toml"
        cfg.write_text(f'[drive]\nuser_capacity = "32MiB"\nop = 0.15\n[ftl]\nmeta_writes = {bad}\n')
        r = subprocess.run(
            [sys.executable, "-m", "opsim.cli", "simulate", str(cfg)],
            capture_output=True,
            text=True,
            env=os.environ | {"PYTHONPATH": ""},
        )
        assert r.returncode == 2 and "ftl.meta_writes" in r.stderr, r.stderr


def test_the_curve_carries_the_floor_and_interpolates_between_levels():
    drive, ftl = {"page_size": 4096, "pages_per_block": 256}, {}
    a, b = curve(drive, ftl, 4096), curve(drive, ftl | {"meta_writes": META_GRID[3]}, 4096)
    mid = curve(drive, ftl | {"meta_writes": (META_GRID[3] + META_GRID[4]) / 2}, 4096)
    c = curve(drive, ftl | {"meta_writes": META_GRID[4]}, 4096)
    assert a.extra == 0.0 and abs(b.extra - META_GRID[3]) < 1e-4
    for s in (0.05, 0.3, 1.0):
        (wa, ga), (wb, gb), (wm, gm), (wc, gc) = a.at(s), b.at(s), mid.at(s), c.at(s)
        # the floor takes space too: more GC copies, not only the metadata itself
        assert gb > ga and wb - wa > META_GRID[3]
        assert gb < gm < gc and wb < wm < wc


def _spec() -> DriveSpec:
    return DriveSpec(native=480 * 10**9, interface="sata", cell="tlc", rand_write_qd=32)


def _datasheet() -> list[Figure]:
    return [
        Figure("seq_write", 450e6 / 131072, "datasheet", block_size=131072),
        Figure("steady_iops", 9000, "datasheet", queue_depth=32),
    ]


def test_the_floor_is_a_parameter_only_when_two_spans_pin_it():
    user = 480 * 10**9
    one = [Figure("waf", 3.0, "m")]
    assert not pins_floor(one, user)
    # the whole drive given as None or as its size is one span
    assert not pins_floor([*one, Figure("waf", 3.1, "m", span=user)], user)
    two = [*one, Figure("waf", 1.5, "m", span=user // 2)]
    assert pins_floor(two, user)
    assert "meta_writes" not in {p.name for p in build(_spec(), _datasheet() + one).params}
    assert "meta_writes" not in {p.name for p in build(_spec(), _datasheet()).params}
    p = next(p for p in build(_spec(), _datasheet() + two).params if p.name == "meta_writes")
    assert (p.key, p.prior, p.lower) == ("ftl.meta_writes", 0.0, 0.0)


@pytest.mark.slow
def test_calibrate_fits_the_floor_from_two_waf_points_and_holds_it_with_one():
    from opsim.calibrate import calibrate

    spec, sheet = _spec(), _datasheet()
    base = calibrate(spec, sheet, timed_rounds=0)
    assert "ftl.meta_writes" not in {p["name"] for p in base.parameters()}
    # a drive with a floor of 0.15: its WAF at two spans and its datasheet, from the core
    user = base.user_bytes
    spans = [user // 2, user]
    truth = build(spec, [Figure("waf", 1, "t", span=s) for s in spans])
    values = dict(base.fitted.values) | {"meta_writes": 0.15}
    sheet = [
        Figure(x.kind, p.value, x.source, block_size=x.block_size, queue_depth=x.queue_depth)
        for x, p in zip(sheet, predict(truth, values, sheet))
    ]
    wafs = [
        Figure("waf", p.value, "synthetic", span=s, sigma=SIGMA_MEASURED)
        for s, p in zip(spans, predict(truth, values, [Figure("waf", 1, "t", span=s) for s in spans]))
    ]
    two = calibrate(spec, sheet + wafs, timed_rounds=0)
    by = {p["name"]: p for p in two.parameters()}
    assert by["ftl.meta_writes"]["source"].startswith("fitted")
    assert two.fitted.values["meta_writes"] > 0.05
    one = calibrate(spec, sheet + wafs[1:], timed_rounds=0)
    assert "meta_writes" not in one.fitted.values
    assert "ftl.meta_writes" not in {p["name"] for p in one.parameters()}


def test_simulate_prints_the_share(tmp_path):
    cfg = tmp_path / "c.toml"
    drive = '[drive]\nuser_capacity = "32MiB"\nop = 0.15\npages_per_block = 64\n'

    def simulate(text: str) -> subprocess.CompletedProcess:
        cfg.write_text(text)
        return subprocess.run(
            [sys.executable, "-m", "opsim.cli", "simulate", str(cfg)],
            capture_output=True,
            text=True,
            env=os.environ | {"PYTHONPATH": ""},
        )

    r = simulate(drive + "[ftl]\nmeta_writes = 0.04\n")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("metadata pages"))
    share = float(line.split()[-5].rstrip("%")) / 100
    assert 0.0 < share < 0.04
    r = simulate(drive)
    assert r.returncode == 0 and "metadata" not in r.stdout
