"""The GC unit (`ftl.gc_unit`): superblocks striped over the NAND's dies and planes, their
refusals through the CLI, and the core's scale rule as python/opsim/presets.scale_model
applies it (docs/config.md, "The GC unit" and "Scale models")."""

from __future__ import annotations

import subprocess
import sys

import pytest

import opsim
from opsim import presets
from opsim.sim import describe

SB = {
    "drive": {"user_capacity": "16GiB", "op": 0.25},
    "ftl": {"gc_unit": "superblock"},
    "timing": {"nand_block_size": "12MiB", "planes": 2, "channels": 8, "dies_per_channel": 2},
}


def with_(cfg: dict, **sections) -> dict:
    return {k: dict(v) for k, v in cfg.items()} | {s: {**cfg.get(s, {}), **kv} for s, kv in sections.items()}


def test_describe_says_the_unit():
    u = describe(SB)["drive"]["gc_unit"]
    assert (u["kind"], u["pages"], u["bytes"], u["dies"], u["planes"]) == ("superblock", 98304, 384 << 20, 16, 2)
    assert (u["open_host"], u["open_gc"], u["scale"]) == (1, 1, 1)
    d = describe(with_(SB, ftl={"superblock_dies": 4, "streams": 2}))["drive"]
    assert (d["pages_per_block"], d["gc_unit"]["dies"], d["gc_unit"]["open_host"]) == (24576, 4, 2)
    # today's NVMe presets collect in superblocks (12 MiB x 4 planes x 16 dies on the 7450 PRO);
    # the seed presets in FTL blocks, as before
    u = describe({"preset": "micron-7450-pro-960gb"})["drive"]["gc_unit"]
    assert (u["kind"], u["bytes"], u["planes"], u["dies"]) == ("superblock", 768 << 20, 4, 16)
    assert describe({"preset": "micron-1100-1tb"})["drive"]["gc_unit"]["kind"] == "block"


@pytest.mark.parametrize(
    ("patch", "key"),
    [
        ({"ftl": {"gc_unit": "stripe"}}, "ftl.gc_unit"),
        ({"ftl": {"superblock_dies": 17}}, "ftl.superblock_dies"),
        ({"ftl": {"superblock_dies": 0}}, "ftl.superblock_dies"),
        ({"ftl": {"superblock_scale": 5}}, "ftl.superblock_scale"),
        ({"drive": {"pages_per_block": 256}}, "drive.pages_per_block"),
        ({"ftl": {"gc_reserve": "2 blocks per plane"}}, "ftl.gc_reserve"),
        ({"timing": {"nand_block_size": "32MiB", "planes": 4, "channels": 16, "dies_per_channel": 4}}, "ftl.gc_unit"),
    ],
)
def test_bad_values_exit_2_naming_the_key(tmp_path, patch, key):
    import tomli_w

    path = tmp_path / "bad.toml"
    path.write_bytes(tomli_w.dumps(with_(SB, **patch)).encode())
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert key in p.stderr


def test_superblock_needs_timing(tmp_path):
    import tomli_w

    cfg = {k: v for k, v in SB.items() if k != "timing"}
    path = tmp_path / "bad.toml"
    path.write_bytes(tomli_w.dumps(cfg).encode())
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 2 and "ftl.gc_unit" in p.stderr and "[timing]" in p.stderr, p.stderr


def test_scale_model_of_blocks_is_unchanged():
    # the old rule: NAND and user capacity divided, rounded down to 4 KiB
    name = "micron-1100-1tb"
    m = presets.scale_model(name, 64)
    assert m == {
        "preset": name,
        "drive": {
            "user_capacity": presets.user_bytes(name) // 64 // 4096 * 4096,
            "physical_capacity": presets.physical_bytes(name) // 64,
        },
    }


def test_scale_model_of_superblocks_keeps_them(tmp_path):
    drive = tmp_path / "sb.toml"
    drive.write_text(
        '[preset]\nname = "sb"\n[drive]\nuser_capacity = "16GiB"\nphysical_capacity = "20GiB"\n'
        '[ftl]\ngc_unit = "superblock"\n[timing]\nnand_block_size = "12MiB"\nplanes = 2\nchannels = 8\n'
        "dies_per_channel = 2\n"
    )
    full = describe({"preset": str(drive)})["drive"]
    m = presets.scale_model(str(drive), 32)
    assert m["ftl"] == {"superblock_scale": 32}
    small = describe(m)["drive"]
    assert small["blocks"] == full["blocks"] == 53
    assert small["pages_per_block"] * 32 == full["pages_per_block"] == 98304
    assert small["user_bytes"] == full["user_bytes"] // 32
    assert small["gc_unit"]["scale"] == 32
    # the rule is the core's: a scale that does not divide the superblock is refused
    with pytest.raises(opsim.ConfigError, match="scale"):
        presets.scale_model(str(drive), 7)


def test_scale_model_and_full_drive_agree_on_waf():
    # a drive of 40 superblocks of 12,288 pages (48 MiB) and its model 16 times smaller
    base = with_(SB, ftl={"superblock_dies": 2})
    base["drive"] = {"user_capacity": 1440 << 20, "physical_capacity": 40 * (48 << 20)}
    run = {"workload": {"type": "uniform"}, "run": {"warmup_drive_writes": 2, "measure_drive_writes": 4}}
    full = describe(base)["drive"]
    s = describe(base, scale=16)["scaled"]
    small = with_(base, ftl={"superblock_scale": s["superblock_scale"]})
    small["drive"] = {"user_capacity": s["user_capacity"], "physical_capacity": s["physical_capacity"]}
    assert describe(small)["drive"]["blocks"] == full["blocks"] == 40
    waf_full = opsim.simulate(base | run).waf
    waf_small = opsim.simulate(small | run).waf
    assert waf_full > 1.5
    assert abs(waf_small / waf_full - 1) < 0.01, (waf_full, waf_small)


def test_simulate_prints_the_superblock(tmp_path):
    import tomli_w

    cfg = with_(SB, ftl={"superblock_scale": 64}, run={"warmup_drive_writes": 0.5, "measure_drive_writes": 0.5})
    cfg["drive"] = {"user_capacity": "256MiB", "op": 0.25}
    path = tmp_path / "sb.toml"
    path.write_bytes(tomli_w.dumps(cfg).encode())
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "superblock of 1,536 pages (6MiB): 16 dies x 2 planes, scale model 1/64; open: 1 host, 1 GC" in p.stdout


def test_results_echo_the_block_default_as_before_superblocks():
    """With FTL blocks (the default GC unit) a result's config says `drive.pages_per_block`
    (256 when not given), as results did before superblocks; with superblocks it is absent
    (the key is refused there), and the echo runs again unchanged."""
    import opsim

    run = {"warmup_drive_writes": 0.1, "measure_drive_writes": 0.1}
    r = opsim.simulate({"drive": {"user_capacity": "64MiB", "op": 0.1}, "run": run}).to_dict()
    assert r["config"]["drive"]["pages_per_block"] == 256
    assert opsim.simulate(r["config"]).waf == r["waf"]
    sb = {"drive": {"user_capacity": "1GiB", "op": 0.1}, "ftl": {"gc_unit": "superblock", "superblock_scale": 64}}
    d = opsim.sim.describe(sb | {"timing": {}})
    assert "pages_per_block" not in d["config"]["drive"]
