"""The CLI conventions: tables for people, one JSON document with --json, exit codes 0/2/1."""

import json
import subprocess
import sys

import pytest

OPSIM = [sys.executable, "-m", "opsim.cli"]


def run(*args, check_code=None):
    p = subprocess.run(OPSIM + list(args), capture_output=True, text=True)
    if check_code is not None:
        assert p.returncode == check_code, (p.returncode, p.stdout, p.stderr)
    return p


@pytest.fixture
def cfg(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = "28%"\npages_per_block = 64\n'
        "[run]\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\n"
    )
    return path


def test_simulate_table_and_json(cfg, tmp_path):
    p = run("simulate", str(cfg), check_code=0)
    assert "WAF (measurement window)" in p.stdout and "OP (physical basis / spare area)" in p.stdout
    p = run("simulate", str(cfg), "--json", check_code=0)
    doc = json.loads(p.stdout)
    # 64 MiB in 256 KiB blocks: whole blocks make the realised OP 28.125%
    assert doc["op"]["user"] == pytest.approx(0.28125, abs=1e-9) and doc["waf"] > 1
    out = tmp_path / "r.json"
    p = run("simulate", str(cfg), "--json-file", str(out), check_code=0)
    assert json.loads(out.read_text())["waf"] == doc["waf"]
    assert "JSON written to" in p.stdout


@pytest.mark.parametrize(
    "text,key",
    [
        ('[drive]\nuser_capacity = "1GiB"\nop = 0.1\nbogus = 2\n', "drive.bogus"),
        ('[drive]\nuser_capacity = "1GiB"\nop = -1\n', "drive.op"),
        ('[drive]\nuser_capacity = "1GiB"\nop = 0\n', "drive.op"),
        ('[drive]\nuser_capacity = "1GiB"\nop = 0.1\n[workload]\ntype = "zipf"\n', "workload.zipf_exponent"),
        ("[drive\n", "config"),
    ],
)
def test_bad_config_exit_2_names_key_no_traceback(tmp_path, text, key):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "out.json"
    p = run("simulate", str(path), "--json-file", str(out), check_code=2)
    assert p.stderr.startswith(f"opsim: error: {key}"), p.stderr
    assert "Traceback" not in p.stderr
    assert not out.exists(), "nothing half-written on error"


def test_missing_file_and_bad_usage():
    p = run("simulate", "/nonexistent.toml", check_code=2)
    assert "does not exist" in p.stderr
    run("no-such-command", check_code=2)


@pytest.mark.slow
def test_demo_prints_the_study_writes_the_report_and_json(tmp_path):
    # a fast variant of the default study: 1/128 of the NAND in 4 MiB FTL blocks (512 blocks)
    report, out = tmp_path / "demo.html", tmp_path / "demo.json"
    p = run(
        "demo", "--scale", "128", "--pages-per-block", "1024", "-o", str(report), "--json-file", str(out), check_code=0
    )
    # the table for people, and where the report is
    assert "native 256 GB" in p.stdout and f"written to {report}" in p.stdout
    doc = json.loads(out.read_text())
    levels = doc["levels"]
    assert [round(lv["user_bytes"] / 1e9, 1) for lv in levels][:3] == [256.1, 241.9, 240.1]
    wafs = [lv["waf"] for lv in levels]
    assert wafs == sorted(wafs, reverse=True), "less capacity (more OP) never raises WAF"
    for lv in levels:
        assert lv["steady_state"]
        assert abs(lv["waf"] - lv["waf_model"]) / lv["waf_model"] < 0.02
        w, h = lv["workloads"]["random-write"], lv["workloads"]["read-heavy"]
        assert w["iops_steady"] and h["iops_steady"]
    iops = [lv["workloads"]["random-write"]["steady_iops"] for lv in levels]
    assert iops == sorted(iops), "more OP, more steady-state random-write IOPS"
    assert doc["report"] == str(report) and report.exists()
    html = report.read_text()
    assert html.count("<img ") == len(doc["figures"]) > 0 and "native 256 GB" in html


def test_demo_bad_input():
    p = run("demo", "--scale", "64", "-o", "/nonexistent-dir/r.html", check_code=2)
    assert "/nonexistent-dir" in p.stderr
    p = run("demo", "--scale", "64", check_code=2)  # 64 of the preset's 128 MiB blocks: no room at native
    assert "--scale 64" in p.stderr and "Traceback" not in p.stderr


def test_validate_markdown(tmp_path, monkeypatch):
    from opsim.validation import oracles as validation

    # a fast subset: the suite's own cases are run in test_oracle.py
    cases = [c for c in validation.oracle_cases() if c[0] == "greedy b=32" and c[1] == 0.28]
    monkeypatch.setattr(validation, "oracle_cases", lambda: cases)
    rows = validation.run_oracles()
    md = validation.markdown(rows)
    assert md.count("\n") == 2 and "| greedy b=32 | 28% |" in md
    assert abs(rows[0]["error"]) < 0.01


def test_bench_reports_speed():
    from opsim.commands.bench import bench_one

    r = bench_one("256MiB", 200_000, 1, "greedy")
    assert r["host_pages_per_second"] > 0 and 1 < r["waf"] < 10


def test_bench_runs_a_drive_of_die_pools_on_the_threads_asked():
    """The 8-die scenario (GC per die) runs on 2 threads with --threads 2, with the WAF of 1."""
    from opsim.commands.bench import bench_one

    sc = {"dies": 8, "physical_capacity": "320MiB"}
    one, two = (bench_one("256MiB", 200_000, 1, "greedy", threads=t, sc=sc) for t in (1, 2))
    assert (one["threads"], two["threads"]) == (1, 2)
    assert "GC per die of 8" in two["scenario"] and one["waf"] == two["waf"] and 1 < one["waf"] < 20


def test_bench_timed_with_extra_timing():
    """The timed bench takes extra [timing] (the map-cache scenario); same WAF, the table runs."""
    from opsim.commands.bench import SCENARIOS, bench_timed

    assert SCENARIOS["timed-64GiB-qd32-mapcache"]["timing"] == {"map_cache": {"fraction": 0.1}}
    a = bench_timed("256MiB", 100_000, 1, "greedy")
    b = bench_timed("256MiB", 100_000, 1, "greedy", {"map_cache": {"fraction": 0.1}})
    assert "map_cache" in b["scenario"] and a["waf"] == b["waf"] and b["host_pages_per_second"] > 0


def test_bench_superblock_scenarios_collect_in_superblocks():
    """The superblock scenarios run the 7450's NAND with 384 MiB superblocks as the GC unit:
    a different WAF from 256-page blocks at the same OP (few, large units), in both models."""
    from opsim.commands.bench import SCENARIOS, bench_one, bench_timed

    assert SCENARIOS["64GiB-superblocks"]["superblocks"] and SCENARIOS["timed-64GiB-qd32-superblocks"]["timed"]
    blocks, sb = bench_one("64GiB", 100_000, 1, "greedy"), bench_one("64GiB", 100_000, 1, "greedy", True)
    assert "superblocks" in sb["scenario"] and sb["waf"] != blocks["waf"] and sb["host_pages_per_second"] > 0
    t = bench_timed("64GiB", 20_000, 1, "greedy", None, True)
    assert "superblocks" in t["scenario"] and t["host_pages_per_second"] > 0
