"""The zoned workload (``[workload] type = "zoned"``): its physics on a scale model with 1 MiB
GC units (``drive.pages_per_block = 256``), the same commands in the functional and timed
models, and its config errors (exit 2 naming the key).  The generator itself (sequential zones,
one whole-zone TRIM per reset, no overlap, the seed) is tested in the core:
crates/opsim-core/src/workload/zoned.rs."""

from __future__ import annotations

import copy

import pytest

import opsim
from opsim.cli import main
from opsim.errors import ConfigError, WorkloadError

#: 1 MiB GC units (256 x 4 KiB pages), 12% OP, greedy
BASE = {
    "drive": {"user_capacity": "128MiB", "op": 0.12, "pages_per_block": 256},
    "ftl": {"gc": "greedy"},
    "workload": {"type": "zoned", "zone_size": "1MiB", "active_zones": 1},
    "run": {"warmup_drive_writes": 3, "measure_drive_writes": 2, "seed": 1},
}


def zoned(**changes) -> dict:
    cfg = copy.deepcopy(BASE)
    for table, keys in changes.items():
        cfg.setdefault(table, {}).update(keys)
    return cfg


@pytest.mark.parametrize("zone", ["1MiB", "4MiB"])
def test_one_active_zone_of_whole_gc_units_moves_nothing(zone):
    r = opsim.simulate(zoned(workload={"zone_size": zone}))
    assert r.waf == pytest.approx(1.0, abs=0.005)
    m = r.measure_counters
    # every reset is one TRIM of a whole (fully mapped) zone
    zone_pages = (1 << 20 if zone == "1MiB" else 4 << 20) // 4096
    assert m["trim_cmds"] > 0 and m["trimmed_pages"] == m["trim_cmds"] * zone_pages
    assert m["host_write_cmds"] == pytest.approx(2 * (128 << 20) / 4096, rel=0.01)


@pytest.mark.parametrize(
    "workload",
    [
        {"zone_size": "256KiB", "active_zones": 1},  # zones smaller than the GC unit
        {"zone_size": "1MiB", "active_zones": 4},  # zones interleaving into the open unit
        {"zone_size": "4MiB", "active_zones": 16},
    ],
)
def test_small_zones_or_several_active_zones_cost_copies(workload):
    r = opsim.simulate(zoned(workload=workload))
    assert r.waf > 1.2, r.waf


def test_timed_model_streams_and_phases_run_the_same_commands():
    cfg = zoned(workload={"active_zones": 4})
    plain = opsim.simulate(cfg)
    timed = opsim.simulate(zoned(workload={"active_zones": 4}, timing={"queue_depth": 8}))
    assert timed.timed is not None and timed.waf == plain.waf
    assert timed.measure_counters["trim_cmds"] == plain.measure_counters["trim_cmds"]
    # all zones' writes are on stream 0: a second stream changes nothing
    streams = opsim.simulate(zoned(workload={"active_zones": 4}, ftl={"streams": 2}))
    assert streams.waf == plain.waf
    # the same seed, the same run; another seed, other zones
    assert opsim.simulate(cfg).waf == plain.waf
    assert opsim.simulate(zoned(workload={"active_zones": 4}, run={"seed": 2})).waf != plain.waf
    phased = {
        "drive": BASE["drive"],
        "ftl": BASE["ftl"],
        "run": {"precondition": "none", "round_drive_writes": 0.5},
        "phase": [
            {"workload": {"type": "sequential", "request_size": "128KiB"}, "drive_writes": 1},
            {"workload": {"type": "zoned", "zone_size": "2MiB"}, "drive_writes": 2, "measure": True},
        ],
    }
    assert opsim.simulate(phased).waf == pytest.approx(1.0, abs=0.005)


def test_analytic_preconditioning_refuses_zoned():
    with pytest.raises(ConfigError) as e:
        opsim.simulate(zoned(run={"precondition": "analytic"}))
    assert e.value.key == "run.precondition"


@pytest.mark.parametrize(
    "workload,key",
    [
        ({"zone_size": 0}, "workload.zone_size"),
        ({"zone_size": "6KiB"}, "workload.zone_size"),  # not a whole number of 4 KiB pages
        ({"zone_size": "12KiB", "request_size": "8KiB"}, "workload.zone_size"),  # nor of requests
        ({"zone_size": "1GiB"}, "workload.zone_size"),  # larger than the drive
        ({"zone_size": None}, "workload.zone_size"),  # required
        ({"active_zones": 0}, "workload.active_zones"),
        ({"active_zones": 129}, "workload.active_zones"),  # 128 zones of 1 MiB
        ({"active_zones": -1}, "workload.active_zones"),
        ({"type": "uniform", "active_zones": None}, "workload.zone_size"),
        ({"type": "sequential", "zone_size": None}, "workload.active_zones"),
        ({"read_fraction": 0.5}, "workload.read_fraction"),
        ({"trim_fraction": 0.1}, "workload.trim_fraction"),
    ],
)
def test_bad_values_exit_2_naming_the_key(workload, key, tmp_path, capsys):
    cfg = zoned(workload=workload)
    cfg["workload"] = {k: v for k, v in cfg["workload"].items() if v is not None}
    with pytest.raises((ConfigError, WorkloadError)) as e:
        opsim.simulate(cfg)
    assert e.value.key == key, str(e.value)
    lines = [f"[{t}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in keys.items()) for t, keys in cfg.items()]
    path = tmp_path / "zoned.toml"
    path.write_text("".join(lines))
    assert main(["simulate", str(path)]) == 2
    assert key in capsys.readouterr().err


def _toml(v) -> str:
    return f'"{v}"' if isinstance(v, str) else str(v)


def test_results_label_the_zones():
    from opsim import results

    r = opsim.simulate(zoned(workload={"active_zones": 4}))
    assert results.workload_label(r.to_dict()) == "4 KiB zoned write (1MiB zones, 4 active)"


def test_the_figure_generator_sweeps_zone_size_and_active_zones(tmp_path, capsys):
    import json

    from opsim.validation import zoned as gen

    out = tmp_path / "z.svg"
    args = ["--set", "drive.user_capacity=64MiB", "--zone-sizes", "256KiB,1MiB", "--active", "1,4,64"]
    assert gen.main([*args, "--warmup", "2", "--measure", "1", "-o", str(out)]) == 0
    data = json.loads((tmp_path / "z.json").read_text())
    assert data["gc_unit_bytes"] == 1 << 20
    waf = {(p["zone_size"], p["active_zones"]): p["waf"] for p in data["points"]}
    # 64 active zones of 1 MiB on a 64 MiB drive: all zones open, kept (64 = zones); 256 KiB x 64 too
    assert set(waf) == {(z, a) for z in (1 << 18, 1 << 20) for a in (1, 4, 64)}
    assert waf[(1 << 20, 1)] == pytest.approx(1.0, abs=0.005)
    assert waf[(1 << 18, 1)] > 1.2 and waf[(1 << 20, 4)] > 1.2
    assert out.stat().st_size > 1000 and "active" in capsys.readouterr().out
    with pytest.raises(ConfigError):
        gen.base_config(sets=["drive=1"])


def test_namespaces_run_zoned_workloads_and_name_their_keys():
    cfg = {
        "drive": BASE["drive"],
        "ftl": BASE["ftl"],
        "run": {"warmup_drive_writes": 2, "measure_drive_writes": 1},
        "namespace": [
            {"capacity": "50%", "workload": {"type": "zoned", "zone_size": "1MiB"}},
            {"capacity": "50%", "workload": {"type": "zoned", "zone_size": "2MiB", "active_zones": 2}},
        ],
    }
    r = opsim.simulate(cfg)
    assert r.waf > 1.0 and all(n["host_write_bytes"] > 0 for n in r.namespaces)
    cfg["namespace"][1]["workload"]["active_zones"] = 33  # 32 zones of 2 MiB in 64 MiB
    with pytest.raises(WorkloadError) as e:
        opsim.simulate(cfg)
    assert e.value.key == "namespace[1].workload.active_zones"


@pytest.mark.slow
def test_the_7450_pro_superblock_scale_model_keeps_zones_against_the_superblock():
    """The 7450 PRO preset collects in superblocks (768 MiB: 12 MiB x 4 planes x 16 dies); at
    scale 256 the core divides the superblock and the zone alike.  One open zone of 16 GiB
    (21.3 superblocks) is rewritten at WAF 1; a zone of a quarter superblock, or four open
    zones of 16 GiB sharing the open superblock, are not."""
    from opsim.validation import zoned as gen

    cfg = gen.base_config("micron-7450-pro-960gb")
    assert gen.gc_unit_bytes(cfg) == 768 << 20
    m = gen.model_config(cfg, 16 << 30, 1, 256)
    assert m["workload"]["zone_size"] == 64 << 20 and m["ftl"]["superblock_scale"] == 256
    assert opsim.sim.describe(m)["drive"]["gc_unit"]["bytes"] == (768 << 20) // 256
    waf = {
        (z, a): gen.run_point(cfg, z, a, 2.0, 1.0, 1, 256)["waf"]
        for z, a in ((16 << 30, 1), (16 << 30, 4), (192 << 20, 1))
    }
    assert waf[(16 << 30, 1)] == pytest.approx(1.0, abs=0.03)
    assert waf[(16 << 30, 4)] > 1.1 and waf[(192 << 20, 1)] > 1.1, waf
