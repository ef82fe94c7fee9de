"""`opsim trace profile` and opsim.trace_profile: the core's figures on hand-made traces, and
the fit on synthetic traces of a known skew (generated here with numpy) given back: hot-cold
20/80 within one point, zipf's exponent, uniform as uniform even when the finite number of
writes makes its curve look skewed (docs/workloads.md, "Profiling a trace")."""

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from opsim import trace_profile as tp
from opsim.errors import ConfigError, TraceError
from opsim.workload import parse_skew

OPSIM = [sys.executable, "-m", "opsim.cli"]
K = 4096


def run(*args):
    return subprocess.run(OPSIM + list(args), capture_output=True, text=True)


def write_iolog(path, blocks, sizes=None):
    """fio iolog v2 of 4 KiB writes to ``blocks`` (or of ``sizes`` bytes)."""
    sizes = [K] * len(blocks) if sizes is None else sizes
    with open(path, "w") as f:
        f.write("fio version 2 iolog\n/dev/x add\n/dev/x open\n")
        f.write("".join(f"/dev/x write {b * K} {s}\n" for b, s in zip(np.asarray(blocks).tolist(), sizes)))
    return str(path)


def write_msr(path, rows):
    """MSR Cambridge CSV of (kind, byte offset, bytes), 1 ms apart."""
    t0 = 128166372000000000
    with open(path, "w") as f:
        f.write("".join(f"{t0 + 10_000 * i},hm,0,{k},{o},{n},100\n" for i, (k, o, n) in enumerate(rows)))
    return str(path)


# ---------------------------------------------------------------- the core's figures


def test_figures_of_a_small_trace(tmp_path):
    rows = [
        ("Write", 0, 2 * K),  # blocks 0, 1
        ("Write", 2 * K, K),  # block 2, sequential after the first
        ("Write", 0, K),  # block 0 again: distance 3 block writes
        ("Read", 10 * K, 8 * K),
        ("Write", 100 * K, 512),  # sub-block write: block 100
        ("Write", 100 * K, K),  # block 100 again, not sequential (the last ended at +512)
    ]
    p = tp.profile(write_msr(tmp_path / "t.csv", rows))
    d = p.data
    assert (p.block_writes, p.written_blocks, d["overwrites"]) == (6, 4, 2)
    assert p.overwrite_ratio == pytest.approx(2 / 6)
    assert d["footprint_bytes"] == (4 + 8) * K and d["write_footprint_bytes"] == 4 * K
    assert d["sequential_writes"] == 1 and p.sequential_share == pytest.approx(1 / 5)
    assert p.write_counts == [(1, 2), (2, 2)]
    assert (d["write"]["ios"], d["read"]["ios"], d["write"]["bytes"], d["read"]["bytes"]) == (5, 1, 5 * K + 512, 8 * K)
    assert [(b["lo"], b["count"]) for b in d["update_distance"]] == [(1, 1), (2, 1)]
    mix = {b["upto"]: (b["read"], b["write"]) for b in d["size_mix"]}
    assert mix[512] == (0, 1) and mix[K] == (0, 3) and mix[2 * K] == (0, 1) and mix[8 * K] == (1, 0)
    # hottest half of the written blocks (two written twice): 4 of the 6 writes
    assert p.curve_at[0.5] == pytest.approx(4 / 6)
    assert p.span_blocks == 101 and d["duration_s"] == pytest.approx(0.005)
    assert not p.partial


# ---------------------------------------------------------------- the fit: known skews back

M = 1 << 16  # blocks of the synthetic domain (256 MiB)
N = 600_000  # 4 KiB writes


def test_hot_cold_20_80_comes_back_within_one_point(tmp_path):
    rng = np.random.default_rng(7)
    hot = rng.random(N) < 0.8
    blocks = np.where(hot, rng.integers(0, M // 5, N), rng.integers(M // 5, M, N))
    p = tp.profile(write_iolog(tmp_path / "hc.iolog", rng.permutation(M)[blocks]))
    # the raw curve is biased: the hottest 20% of the *written* blocks take less than 80%
    assert p.curve_at[0.2] < 0.78
    f = tp.fit(p)
    assert f.kind == "hot-cold", f.candidates
    assert abs(f.workload["hot_fraction"] - 0.2) < 0.01 and abs(f.workload["hot_write_fraction"] - 0.8) < 0.01
    s = parse_skew(f.skew)
    assert abs(s["hot_fraction"] - 0.2) < 0.01 and abs(s["hot_write_fraction"] - 0.8) < 0.01
    assert f.error < 0.01
    assert f.workload["type"] == "hot-cold" and f.workload["span"] == pytest.approx(M / p.span_blocks, rel=0.02)


@pytest.mark.slow
def test_zipf_exponent_comes_back(tmp_path):
    rng = np.random.default_rng(11)
    w = np.arange(1, M + 1, dtype=float) ** -0.9
    ranks = rng.choice(M, N, p=w / w.sum())
    blocks = rng.permutation(M)[ranks]
    p = tp.profile(write_msr(tmp_path / "z.csv", [("Write", int(b) * K, K) for b in blocks]))
    f = tp.fit(p)
    assert f.kind == "zipf", f.candidates
    assert abs(f.workload["zipf_exponent"] - 0.9) < 0.02
    assert parse_skew(f.skew) == {"skew": "zipf", "zipf_exponent": pytest.approx(0.9, abs=0.02)}


@pytest.mark.parametrize("writes", [N, M])
def test_uniform_comes_back_uniform(tmp_path, writes):
    # with as many writes as blocks, a third of the domain is never written and the rest is
    # written 1, 2, 3... times: the raw curve looks skewed, the corrected fit does not
    rng = np.random.default_rng(3)
    p = tp.profile(write_iolog(tmp_path / "u.iolog", rng.integers(0, M, writes)))
    if writes == M:
        assert p.curve_at[0.2] > 0.3
        assert p.written_blocks < 0.7 * M
    f = tp.fit(p)
    assert f.kind == "uniform" and f.skew == "uniform", f.candidates
    assert f.domain_blocks == pytest.approx(M, rel=0.03)


# ---------------------------------------------------------------- the command


@pytest.mark.slow
def test_cli_table_and_json(tmp_path):
    rng = np.random.default_rng(5)
    path = write_iolog(tmp_path / "u.iolog", rng.integers(0, 4096, 40_000))
    r = run("trace", "profile", path)
    assert r.returncode == 0, r.stderr
    assert "write-frequency curve" in r.stdout and "fit: --skew uniform" in r.stdout
    r = run("trace", "profile", path, "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "opsim-trace-profile" and d["records"] == 40_000
    assert d["fit"]["skew"] == "uniform" and d["fit"]["workload"]["type"] == "uniform"
    assert len(d["curve"]) <= 1001 and d["curve"][-1]["writes"] == pytest.approx(1.0)
    r = run("trace", "profile", path, "--json", "--no-fit")
    assert json.loads(r.stdout)["fit"] is None


@pytest.mark.slow
def test_bad_traces_exit_2_naming_the_line(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    r = run("trace", "profile", str(empty))
    assert r.returncode == 2 and "no requests" in r.stderr, r.stderr
    reads = write_msr(tmp_path / "r.csv", [("Read", 0, K)] * 3)
    r = run("trace", "profile", reads)
    assert r.returncode == 2 and "no writes" in r.stderr and "r.csv" in r.stderr, r.stderr
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372003061629,hm,0,Write,0,4096,1\n128166372003061630,hm,0,Write,12x,4096,1\n")
    r = run("trace", "profile", str(bad))
    assert r.returncode == 2 and "bad.csv:2" in r.stderr, r.stderr
    with pytest.raises(TraceError, match="no writes"):
        tp.profile(reads)


def test_memory_cap_refuses_with_advice(tmp_path):
    path = write_msr(tmp_path / "far.csv", [("Write", 0, K), ("Write", 1 << 40, K)])
    r = run("trace", "profile", path, "--max-memory", "3MiB")
    assert r.returncode == 2 and "--max-memory" in r.stderr and "far.csv:2" in r.stderr, r.stderr
    with pytest.raises(ConfigError) as e:
        tp.profile(path, max_memory="3MiB")
    assert e.value.key == "max_memory"
    assert tp.profile(path).written_blocks == 2


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_keeps_what_was_counted(tmp_path):
    # a trace read from a FIFO that never ends: Ctrl-C must end the pass with a partial result
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    p = subprocess.Popen(
        [*OPSIM, "trace", "profile", str(fifo), "--format", "msr", "--json", "--no-fit"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    with open(fifo, "w") as f:
        f.write("".join(f"{128166372000000000 + i},hm,0,Write,{(i % 977) * K},{K},1\n" for i in range(5000)))
        f.flush()
        time.sleep(1.5)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 5
    assert p.returncode == 130, err
    d = json.loads(out)
    assert d["partial"] and d["records"] == 5000 and d["written_blocks"] == 977


# ---------------------------------------------------------------- plot kind and report section


@pytest.mark.slow
def test_write_curve_plot_and_report_section(tmp_path):
    from opsim.report.sections import trace_profile_section

    rng = np.random.default_rng(9)
    hot = rng.random(50_000) < 0.9
    blocks = np.where(hot, rng.integers(0, 400, 50_000), rng.integers(400, 4000, 50_000))
    path = write_iolog(tmp_path / "hc.iolog", blocks)
    r = run("trace", "profile", path, "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    prof = tmp_path / "p.json"
    prof.write_text(r.stdout)
    png = tmp_path / "c.png"
    r = run("plot", "write-curve", str(prof), "-o", str(png), "--json")
    assert r.returncode == 0, r.stderr
    axes = json.loads(r.stdout)["axes"][0]
    assert axes["xscale"] == "log" and png.stat().st_size > 0
    (s,) = axes["series"]
    # what is drawn is the profile's curve; the fit's expected curve is drawn too
    assert s["y"][-1] == pytest.approx(1.0) and axes["models"][0]["skew"] == doc["fit"]["skew"]
    # a simulation result is not a trace profile: exit 2 naming the file
    bad = tmp_path / "bad.json"
    bad.write_text('{"op": 1}')
    r = run("plot", "write-curve", str(bad), "-o", str(png))
    assert r.returncode == 2 and "not a trace profile" in r.stderr, r.stderr
    html = "".join(trace_profile_section([doc]))
    assert "Trace profiles" in html and doc["fit"]["skew"] in html and "hc.iolog" in html


@pytest.mark.slow
def test_report_with_a_trace_profile(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        "[run]\nwarmup_drive_writes = 0.5\nmeasure_drive_writes = 0.5\n"
    )
    res = tmp_path / "r.json"
    assert run("simulate", str(cfg), "--json-file", str(res)).returncode == 0
    rng = np.random.default_rng(4)
    r = run("trace", "profile", write_iolog(tmp_path / "u.iolog", rng.integers(0, 2048, 20_000)), "--json")
    prof = tmp_path / "p.json"
    prof.write_text(r.stdout)
    html = tmp_path / "r.html"
    r = run("report", str(res), "--trace-profile", str(prof), "-o", str(html))
    assert r.returncode == 0, r.stderr
    page = html.read_text()
    assert "Trace profiles" in page and "u.iolog" in page and "uniform" in page


def test_the_fitted_workload_simulates_like_the_trace_replayed(tmp_path):
    # the fit's [workload] (span included) is what `opsim simulate` takes, and on a drive of
    # the trace's span it gives the WAF of the trace itself replayed there (remap = "scale")
    import opsim

    rng = np.random.default_rng(1)
    m, n = 16384, 200_000
    hot = rng.random(n) < 0.8
    path = write_iolog(tmp_path / "hc.iolog", np.where(hot, rng.integers(0, m // 5, n), rng.integers(m // 5, m, n)))
    f = tp.fit(tp.profile(path))
    assert f.kind == "hot-cold"
    base = {
        "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64},
        "run": {"warmup_drive_writes": 1, "measure_drive_writes": 1},
    }
    synthetic = opsim.simulate(base | {"workload": f.workload}).waf
    replay = opsim.simulate(
        base | {"workload": {"type": "trace", "trace": {"path": path, "remap": "scale", "repeat": True}}}
    ).waf
    assert synthetic == pytest.approx(replay, rel=0.03)
