"""Issue 12 item 7: Ctrl-C (SIGINT) stops the Rust core promptly, keeping what was done.

Each test starts a long run in a subprocess, waits until it is working in the core, sends
SIGINT (or SIGTERM) and checks that the process ends within a bound of seconds, with exit
code 130 and, for whole runs, the rounds done so far in a result marked ``interrupted``.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support import LONG_RUN

#: the process must end this soon after the signal (it polls every ~50 ms)
STOP_WITHIN_S = 2.0

#: a driver that says when Python and opsim are imported, then runs the CLI
CLI = textwrap.dedent("""
    import sys
    import opsim.cli
    print("ready", file=sys.stderr, flush=True)
    sys.exit(opsim.cli.main(sys.argv[1:]))
""")


def start(args: list[str], script: str = CLI) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = p.stderr.readline()
    assert line.strip() == "ready", line + p.stderr.read()
    return p


def stop(p: subprocess.Popen, sig: int = signal.SIGINT, after_s: float = 1.5) -> tuple[str, str, float]:
    """Let the core work for ``after_s``, send ``sig``; (stdout, stderr, seconds to exit)."""
    time.sleep(after_s)
    assert p.poll() is None, "the run ended before the signal: make it longer"
    t = time.monotonic()
    p.send_signal(sig)
    try:
        out, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"still running 30 s after signal {sig}")
    return out, err, time.monotonic() - t


@pytest.mark.slow
def test_sigint_stops_simulate_keeping_the_rounds(tmp_path):
    cfg = tmp_path / "long.toml"
    cfg.write_text(LONG_RUN)
    out, err, took = stop(start(["simulate", str(cfg), "--json"]))
    assert took < STOP_WITHIN_S, err
    d = json.loads(out)
    assert d["interrupted"] is True
    assert d["rounds"], "the rounds done are kept"
    last = d["rounds"][-1]
    full = 0.05 * d["drive"]["user_bytes"]
    assert 0 < last["host_write_bytes"] < full * 1.01  # the last round cut short (or just whole)
    assert sum(r["host_write_bytes"] for r in d["rounds"]) == d["counters"]["host_write_bytes"]
    assert d["waf"] > 1.0


def test_sigint_stops_timed_simulate_with_the_table_and_exit_130(tmp_path):
    cfg = tmp_path / "long.toml"
    cfg.write_text(LONG_RUN + "[timing]\nqueue_depth = 32\n")
    p = start(["simulate", str(cfg)])
    out, err, took = stop(p)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 130, err
    assert "interrupted (Ctrl-C or SIGTERM)" in out
    assert "timed model" in out and "round" in out


def test_uninterrupted_result_has_no_interrupted_field():
    import opsim

    r = opsim.simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64},
            "run": {"warmup_drive_writes": 0.2, "measure_drive_writes": 0.5},
        }
    )
    assert "interrupted" not in r.data and r.interrupted is False


def big_gzip_trace(path: Path, members: int = 400) -> None:
    """An MSR trace of ``members`` x 1M identical write lines, as concatenated gzip members
    (a few MB on disk, minutes of parsing)."""
    member = gzip.compress(b"128166372003061629,hm,0,Write,8192,4096,100\n" * 1_000_000, 9)
    with open(path, "wb") as f:
        f.writelines([member] * members)


@pytest.mark.slow
def test_sigint_stops_trace_info(tmp_path):
    trace = tmp_path / "big.csv.gz"
    big_gzip_trace(trace)
    p = start(["trace", "info", str(trace)])
    _, err, took = stop(p)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 130, err
    assert "interrupted" in err


def test_sigint_stops_trace_convert_and_leaves_no_file(tmp_path):
    trace = tmp_path / "big.csv.gz"
    big_gzip_trace(trace)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    p = start(["trace", "convert", str(trace), "-o", str(out_dir / "big.iolog")])
    _, err, took = stop(p)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 130, err
    assert os.listdir(out_dir) == [], "no output and no temporary file left"


RUN_FOR = textwrap.dedent("""
    import sys, time
    from opsim import Simulator
    s = Simulator({"drive": {"user_capacity": "4GiB", "op": 0.07},
                   "run": {"precondition": "none"}})
    print("ready", file=sys.stderr, flush=True)
    try:
        s.run_for(10**15)
    except KeyboardInterrupt:
        c = s.counters
        s.write(0, 8)   # still usable
        s.check()
        print("KeyboardInterrupt", c["host_write_bytes"], flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


def test_sigint_stops_simulator_run_for_with_keyboard_interrupt():
    p = start([], script=RUN_FOR)
    out, err, took = stop(p)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 130, err
    word, written = out.split()
    assert word == "KeyboardInterrupt" and int(written) > 0


MANY = textwrap.dedent("""
    import sys, tomllib
    from opsim.sim import simulate_many
    from support import LONG_RUN
    cfg = tomllib.loads(LONG_RUN)
    print("ready", file=sys.stderr, flush=True)
    try:
        simulate_many([cfg, cfg], jobs=2)
    except KeyboardInterrupt:
        print("KeyboardInterrupt", flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


def test_sigint_stops_runs_side_by_side_on_worker_threads():
    """simulate_many's runs are on threads other than the main one, which see no signal: the
    main thread's KeyboardInterrupt sets their stop event, and they end within the bound too
    (calibrate's curve levels and timed rounds, the demo's runs)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.Popen(
        [sys.executable, "-c", MANY], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    assert p.stderr.readline().strip() == "ready"
    out, err, took = stop(p)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 130 and out.strip() == "KeyboardInterrupt", err


@pytest.mark.slow
def test_sigterm_ends_a_long_simulate_promptly(tmp_path):
    cfg = tmp_path / "long.toml"
    cfg.write_text(LONG_RUN)
    p = start(["simulate", str(cfg)])
    _, err, took = stop(p, signal.SIGTERM)
    assert took < STOP_WITHIN_S, err
    assert p.returncode == 143  # as Ctrl-C, what was done is kept (issue 23: was the default action)
