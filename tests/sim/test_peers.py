"""Peer parity (issue 16, docs/peers.md): the GC frontier, scope, reserve and fill knobs,
off by default; the shared frontier against an independent textbook simulator; MQSim's
8 GiB drive against MQSim's published WAF."""

from __future__ import annotations

import copy
import json
import subprocess
import sys

import pytest

import opsim
from opsim.validation import peers

SMALL: dict = {
    "drive": {"physical_capacity": "64MiB", "user_capacity": "56MiB", "pages_per_block": 64},
    "ftl": {"gc": "greedy"},
    "workload": {"type": "hot-cold", "hot_write_fraction": 0.9, "hot_fraction": 0.1},
    "run": {"warmup_drive_writes": 2, "measure_drive_writes": 2},
}


def with_(cfg: dict, **sections) -> dict:
    c = copy.deepcopy(cfg)
    for sec, kv in sections.items():
        c.setdefault(sec, {}).update(kv)
    return c


def result(cfg: dict) -> dict:
    d = opsim.simulate(cfg).to_dict()
    d.pop("perf")
    return d


def test_defaults_spelled_out_change_nothing():
    explicit = with_(SMALL, ftl={"gc_frontier": "separate", "gc_scope": "drive"})
    # the same result, config echo included: the defaults are not even serialised
    a = result(SMALL)
    assert "gc_layout" not in a
    assert result(explicit) == a


@pytest.mark.parametrize(
    "ftl",
    [
        {"gc_frontier": "shared"},
        {"gc_scope": "plane", "gc_reserve": "3 blocks per plane"},
        {"gc_scope": "die", "gc_frontier": "shared", "gc_reserve": "2 blocks per die"},
        {"gc_scope": "plane", "gc": "fifo"},
    ],
)
def test_invariants_hold_after_every_collection(ftl):
    cfg = with_(SMALL, drive={"dies": 2, "planes_per_die": 2}, ftl={**ftl, "check_invariants": True})
    cfg["run"] = {"warmup_drive_writes": 1, "measure_drive_writes": 1}
    r = opsim.simulate(cfg).to_dict()
    assert 1.0 < r["waf"] < 20
    assert r["gc_layout"]["frontier"] == ftl.get("gc_frontier", "separate")


def test_scope_splits_the_reserve_and_reports_it():
    cfg = with_(
        SMALL, drive={"dies": 2, "planes_per_die": 2}, ftl={"gc_scope": "plane", "gc_reserve": "4 blocks per plane"}
    )
    g = opsim.simulate(cfg).to_dict()["gc_layout"]
    assert g == {"frontier": "separate", "scope": "plane", "groups": 4, "low": 4, "high": 4, "reserve_blocks": 16}
    from opsim.sim import describe

    d = describe(cfg)
    # the OP GC sees leaves the whole reserve out: one rule, in the core
    base = describe(SMALL)
    assert d["op"]["gc_pool_blocks"] == base["op"]["gc_pool_blocks"] + 2 - 16


def test_precondition_fill_leaves_the_rest_unwritten():
    cfg = with_(SMALL, run={"precondition_fill": 0.5})
    s = opsim.Simulator(cfg)
    s.precondition()
    user_pages = 56 * 1024 * 1024 // 4096
    assert s.mapped_pages == user_pages // 2


@pytest.mark.parametrize(
    ("patch", "key"),
    [
        ({"ftl": {"gc_reserve": "20 blocks"}}, "ftl.gc_reserve"),
        ({"ftl": {"gc_scope": "plane"}}, "ftl.gc_scope"),
        ({"ftl": {"gc_frontier": "both"}}, "ftl.gc_frontier"),
        ({"drive": {"dies": 3}, "ftl": {"gc_scope": "die"}}, "drive.physical_capacity"),
        ({"run": {"precondition_fill": 1.5}}, "run.precondition_fill"),
        ({"run": {"precondition_fill": 0.5, "precondition": "none"}}, "run.precondition_fill"),
        ({"drive": {"dies": 2}, "ftl": {"gc_scope": "die"}, "timing": {}}, "drive.dies"),
    ],
)
def test_bad_knobs_exit_2_naming_the_key(tmp_path, patch, key):
    import tomli_w

    cfg = copy.deepcopy(SMALL)
    for sec, kv in patch.items():
        cfg.setdefault(sec, {}).update(kv)
    path = tmp_path / "c.toml"
    path.write_bytes(tomli_w.dumps(cfg).encode())
    p = subprocess.run([sys.executable, "-m", "opsim.cli", "simulate", str(path)], capture_output=True, text=True)
    assert p.returncode == 2, p.stderr
    assert key in p.stderr


@pytest.mark.slow
def test_shared_frontier_matches_the_textbook_simulator():
    # an independent compact-in-place greedy (numpy) on the same drive: within 3%
    for r in peers.textbook_check(workloads=(None, (0.9, 0.1), (0.95, 0.05))):
        assert r["shared"] == pytest.approx(r["textbook"], rel=0.03), r


@pytest.mark.slow
def test_acceptance_shared_frontier_under_hot_cold():
    # 16 GiB of NAND, 8 MiB blocks (2048 pages of 4 KiB), 87.5% holding data
    def waf(frontier, hot):
        cfg = {
            "drive": {"physical_capacity": "16GiB", "user_capacity": "14GiB", "pages_per_block": 2048},
            "ftl": {"gc": "greedy", "gc_frontier": frontier},
            "workload": {"type": "uniform"},
            "run": {"warmup_drive_writes": 4, "measure_drive_writes": 4},
        }
        if hot:
            cfg["workload"] = {"type": "hot-cold", "hot_write_fraction": hot[0], "hot_fraction": hot[1]}
        return opsim.simulate(cfg).waf

    for hot in ((0.9, 0.1), (0.95, 0.05)):
        assert waf("shared", hot) > 1.05 * waf("separate", hot)
    assert waf("shared", None) == pytest.approx(waf("separate", None), rel=0.01)


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(peers.MQSIM_PUBLISHED))
def test_mqsim_example_within_3_percent(op):
    r = opsim.simulate(peers.mqsim_config(op))
    assert r.waf == pytest.approx(peers.MQSIM_PUBLISHED[op], rel=0.03)


@pytest.mark.slow
def test_mqsim_example_runs_from_the_cli():
    p = subprocess.run(
        [sys.executable, "-m", "opsim.cli", "simulate", str(peers.MQSIM_EXAMPLE), "--json"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert d["gc_layout"]["groups"] == 16 and d["gc_layout"]["reserve_blocks"] == 128
