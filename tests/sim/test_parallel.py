"""Both cores for one drive (issue 40, docs/parallel.md): ``run.threads`` / ``--threads`` run a
drive of independent GC pools on several threads with the serial result, bit for bit (bar
``perf``); what cannot split runs serial and says why; bad thread counts are refused naming
the option; Ctrl-C stops a threaded run within seconds keeping the rounds done."""

from __future__ import annotations

import copy
import json
import os
import random
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from test_hardening_core_interrupt import STOP_WITHIN_S, start, stop

import opsim
import opsim.presets
from opsim.cli import main
from opsim.errors import ConfigError, InputError
from opsim.sim import describe

ROOT = Path(__file__).resolve().parents[2]

POOLS: dict = {
    "drive": {"physical_capacity": "64MiB", "op": 0.12, "op_basis": "physical", "pages_per_block": 64, "dies": 4},
    "ftl": {"gc_scope": "die"},
    "run": {"seed": 3, "warmup_drive_writes": 0.8, "measure_drive_writes": 0.8, "round_drive_writes": 0.2},
}


def with_(cfg: dict, **sections) -> dict:
    c = copy.deepcopy(cfg)
    for sec, kv in sections.items():
        c.setdefault(sec, {}).update(kv)
    return c


def both(cfg) -> tuple[dict, dict, dict]:
    """The result with 1 and 2 threads, each without ``perf``, and the 2-thread run's ``perf.parallel``."""
    a = opsim.simulate(cfg, threads=1).to_dict()
    b = opsim.simulate(cfg, threads=2).to_dict()
    assert a["perf"]["parallel"]["threads"] == 1
    par = b["perf"]["parallel"]
    a.pop("perf")
    b.pop("perf")
    return a, b, par


def _msr_trace(path: Path) -> Path:
    """20,000 seeded reads and writes (unaligned sizes among them) within 48 MiB."""
    rnd = random.Random(5)
    with open(path, "w") as f:
        for i in range(20_000):
            kind = "Read" if rnd.random() < 0.2 else "Write"
            off = rnd.randrange(0, 48 * 2**20 // 512) * 512
            size = rnd.choice([4096, 4096, 8192, 512, 6144, 65536])
            f.write(f"{128166372003061629 + i * 1000},hm,0,{kind},{off},{size},100\n")
    return path


def _workload(kind: str, tmp_path: Path) -> dict:
    if kind == "trace":
        return {
            "type": "trace",
            "trace": {"path": str(_msr_trace(tmp_path / "t.csv")), "format": "msr", "repeat": True},
        }
    if kind == "fio":
        job = tmp_path / "j.fio"
        job.write_text("[j]\nrw=randrw\nrwmixread=30\nbssplit=4k/60:8k/30:64k/10\nrandom_distribution=zipf:0.9\n")
        return {"type": "fio", "job": str(job)}
    return {
        "uniform": {"type": "uniform"},
        "zipf": {"type": "zipf", "zipf_exponent": 0.9},
        "hot-cold": {"type": "hot-cold", "hot_fraction": 0.2, "hot_write_fraction": 0.8},
        "zoned": {"type": "zoned", "zone_size": "1MiB", "active_zones": 3},
    }[kind]


@pytest.mark.parametrize("kind", ["uniform", "zipf", "hot-cold", "zoned", "trace", "fio"])
def test_each_workload_splits_over_the_pools_with_the_serial_result(kind, tmp_path):
    a, b, par = both(with_(POOLS, workload=_workload(kind, tmp_path)))
    assert par["threads"] == 2 and par["pools"] == 4, par
    assert "independent GC pools" in par["reason"]
    assert a["waf"] > 1.0 or kind == "zoned"
    assert a == b


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"ftl": {"gc_scope": "drive"}}, "garbage collection is global"),
        (
            {"ftl": {"gc_scope": "drive"}, "timing": {"channels": 2, "dies_per_channel": 2, "planes": 1}},
            "the timed model is serial",
        ),
        ({"ftl": {"gc": "d-choices", "d": 3}}, "one random stream"),
        ({"ftl": {"separation": "gc-age"}}, 'ftl.separation = "gc-age" is not split yet'),
        ({"ftl": {"separation": "sepbit"}, "drive": {"op": 0.2}}, 'ftl.separation = "sepbit" is not split yet'),
    ],
    ids=["global-gc", "timed", "d-choices", "gc-age", "sepbit"],
)
def test_what_cannot_split_runs_serial_and_says_why(change, why):
    cfg = with_(POOLS, **change, run={"warmup_drive_writes": 0.3, "measure_drive_writes": 0.3})
    a, b, par = both(cfg)
    assert par["threads"] == 1 and par["requested"] == 2
    assert par["reason"].startswith("one thread: ") and why in par["reason"], par["reason"]
    assert a == b


def test_the_default_is_the_cores_this_process_may_run_on():
    cfg = with_(POOLS, run={"measure_drive_writes": 0.2})
    par = opsim.simulate(cfg).perf["parallel"]
    assert "requested" not in par and par["cores"] == len(os.sched_getaffinity(0))
    assert par["threads"] == min(par["cores"], par["pools"]) == min(len(os.sched_getaffinity(0)), 4)
    # a process bound to one core runs one thread, and says how to ask for more
    code = f"import json, os, opsim; os.sched_setaffinity(0, {{0}}); print(json.dumps(opsim.simulate({cfg!r}).perf['parallel']))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    one = json.loads(out)
    assert (one["threads"], one["cores"]) == (1, 1)
    assert "run.threads" in one["reason"] and "4 independent GC pools" in one["reason"]


def test_a_sweep_s_points_and_the_demo_s_runs_take_one_thread_each():
    from opsim.sweep.point import _one_thread

    base = json.dumps(with_(POOLS, run={"measure_drive_writes": 0.2}))
    assert json.loads(_one_thread(base))["run"]["threads"] == 1
    assert json.loads(_one_thread(json.dumps({"drive": {}})))["run"] == {"threads": 1}
    own = json.dumps(with_(POOLS, run={"threads": 3}))
    assert _one_thread(own) == own  # a point's own threads are kept


def test_more_threads_than_pools_run_one_a_pool():
    cfg = with_(POOLS, drive={"dies": 2}, run={"threads": 8, "measure_drive_writes": 0.3})
    par = opsim.simulate(cfg).perf["parallel"]
    assert (par["threads"], par["requested"], par["pools"]) == (2, 8, 2)
    assert "at most one thread a pool: 8 asked" in par["reason"]
    assert par["memory_bytes"] > 0


def test_bad_thread_counts_are_refused_naming_the_argument(capsys, tmp_path):
    with pytest.raises(InputError) as e:
        opsim.simulate(POOLS, threads=0)
    assert e.value.key == "threads"
    with pytest.raises(InputError, match="threads: must be an integer"):
        opsim.simulate(POOLS, threads=True)
    with pytest.raises(ConfigError) as c:
        opsim.simulate(with_(POOLS, run={"threads": 0}))
    assert c.value.key == "run.threads"
    cfg = tmp_path / "c.toml"
    cfg.write_text('[drive]\nuser_capacity = "64MiB"\nop = 0.1\n')
    assert main(["simulate", str(cfg), "--threads", "0"]) == 2
    assert "--threads: 0 is out of range" in capsys.readouterr().err


def test_the_command_takes_threads_and_prints_why(capsys, tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[drive]\nphysical_capacity = "64MiB"\nop = 0.12\nop_basis = "physical"\npages_per_block = 64\ndies = 4\n'
        '[ftl]\ngc_scope = "die"\n[run]\nwarmup_drive_writes = 0.2\nmeasure_drive_writes = 0.2\n'
    )
    assert main(["simulate", str(cfg), "--threads", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 threads over 4 independent GC pools" in out
    assert main(["simulate", str(cfg), "--threads", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["perf"]["parallel"]["threads"] == 2


def _scaled(cfg: dict) -> dict:
    """``cfg`` with short runs, and 64 times smaller when it is larger than 8 GiB."""
    c = with_(cfg, run={"warmup_drive_writes": 0.2, "measure_drive_writes": 0.2, "round_drive_writes": 0.1})
    c.pop("phase", None)
    if c.get("workload", {}).get("type") == "snia-pts":
        c["run"]["max_rounds"] = 6
    if describe(c)["drive"]["physical_bytes"] > 8 * 2**30:
        s = describe(c, scale=64)["scaled"]
        c["drive"] = {k: v for k, v in c["drive"].items() if k != "op"}
        c["drive"] |= {k: s[k] for k in ("physical_capacity", "user_capacity")}
    return c


def _examples() -> list[str]:
    return sorted(p.name for p in (ROOT / "examples").glob("*.toml") if "[drive]" in p.read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", _examples())
def test_every_example_config_gives_the_same_json_with_two_threads(name):
    path = ROOT / "examples" / name
    with open(path, "rb") as f:
        cfg = tomllib.load(f)
    for t in cfg.get("workload", {}).get("trace", {}), cfg.get("workload", {}):
        for k in ("path", "job"):
            if k in t and not os.path.isabs(t[k]):
                t[k] = str(path.parent / t[k])
    a, b, par = both(_scaled(cfg))
    assert par["threads"] == 2 or par["reason"].startswith("one thread: "), par
    assert a == b


@pytest.mark.slow
def test_every_preset_at_scale_gives_the_same_json_with_two_threads():
    """The presets are timed drives (their [timing]): serial, saying so, with the same JSON."""
    run = {"warmup_drive_writes": 0, "measure_drive_writes": 0.05, "round_drive_writes": 0.025}
    for name in opsim.presets.names():
        for k in (256, 64, 16, 4):  # the smallest scale model the core takes
            cfg = opsim.presets.scale_model(name, k) | {"workload": {"type": "uniform"}, "run": run}
            try:
                describe(cfg)
                break
            except opsim.errors.CapacityError:
                continue
        else:
            continue  # no scale model small enough to run here (tools/result_identity.py runs it)
        a, b, par = both(cfg)
        assert a == b, name
        assert par["reason"].startswith("one thread: the timed model is serial"), (name, par)


@pytest.mark.slow
def test_sigint_stops_a_threaded_run_keeping_the_rounds(tmp_path):
    cfg = tmp_path / "long.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "4GiB"\nphysical_capacity = "4400MiB"\ndies = 8\n[ftl]\ngc_scope = "die"\n'
        '[run]\nprecondition = "none"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 100000\n'
        "round_drive_writes = 0.05\nmax_rounds = 100000\n"
    )
    out, err, took = stop(start(["simulate", str(cfg), "--threads", "2", "--json"]))
    assert took < STOP_WITHIN_S, err
    d = json.loads(out)
    assert d["interrupted"] is True and d["perf"]["parallel"]["threads"] == 2
    assert d["rounds"], "the rounds done are kept"
    assert sum(r["host_write_bytes"] for r in d["rounds"]) == d["counters"]["host_write_bytes"]
