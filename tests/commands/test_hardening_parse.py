"""Hardening of the core's input parsers (issue 12): trace lines capped with memory bounded
whatever the input, pipes read like files, column indices checked, conversions that leave
nothing behind when killed, and config messages that point at the user's own text."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import zlib

import pytest

import opsim
import opsim.trace as T
from opsim.errors import ConfigError, InputError, TraceError

FIX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "traces")
OPSIM = [sys.executable, "-m", "opsim.cli"]
MSR = os.path.join(FIX, "msr_hm_0.csv")

# runs the command and prints the largest resident set of its children, in KiB
MAXRSS = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stderr.write(p.stderr)\n"
    "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def run(*args, timeout=60):
    return subprocess.run(OPSIM + list(args), capture_output=True, text=True, timeout=timeout)


def run_measured(*args):
    """(exit code, max RSS in MB, stderr) of ``opsim ARGS``."""
    p = subprocess.run([sys.executable, "-c", MAXRSS, *OPSIM, *args], capture_output=True, text=True, timeout=120)
    code, kib = p.stdout.split()
    return int(code), int(kib) / 1024, p.stderr


# ---------------------------------------------------------------- item 8: line cap, bounded memory


def test_a_200mb_file_without_newlines_is_refused_with_bounded_memory(tmp_path):
    big = tmp_path / "nolines.csv"
    with open(big, "wb") as f:  # sparse: 200 MB of NUL bytes, no newline
        f.truncate(200 << 20)
    code, mb, err = run_measured("trace", "info", str(big))
    assert code == 2, err
    assert "nolines.csv:1" in err and "line longer than 64 KiB" in err, err
    assert mb < 100, f"max RSS {mb:.0f} MB"
    # the same with the format named (no detection on the way)
    code, mb, err = run_measured("trace", "info", "--format", "msr", str(big))
    assert code == 2 and "line longer than 64 KiB" in err, err
    assert mb < 100, f"max RSS {mb:.0f} MB"


def test_a_gzip_bomb_is_refused_with_bounded_memory(tmp_path):
    bomb = tmp_path / "bomb.csv.gz"
    co = zlib.compressobj(1, zlib.DEFLATED, 31)  # gzip framing
    chunk = b"7" * (1 << 20)
    with open(bomb, "wb") as f:
        for _ in range(200):  # 200 MB of digits, no newline, about 200 KB on disk
            f.write(co.compress(chunk))
        f.write(co.flush())
    code, mb, err = run_measured("trace", "info", "--format", "msr", str(bomb))
    assert code == 2 and "line longer than 64 KiB" in err, err
    assert mb < 100, f"max RSS {mb:.0f} MB"


def test_dev_zero_is_refused_quickly():
    p = run("trace", "info", "/dev/zero", timeout=30)
    assert p.returncode == 2, p.stderr
    assert "line longer than 64 KiB" in p.stderr


def _feed(path, data):
    def w():
        with open(path, "wb") as f:
            for i in range(0, len(data), 1000):  # in pieces, as a pipe hands them over
                f.write(data[i : i + 1000])
                f.flush()

    t = threading.Thread(target=w, daemon=True)
    t.start()
    return t


def test_a_fifo_trace_reads_like_the_file(tmp_path):
    want = T.info(MSR)
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    with open(MSR, "rb") as f:
        data = f.read()
    t = _feed(fifo, data)
    got = T.info(fifo)
    t.join(5)
    for k in ("format", "records", "read", "write", "min_offset", "max_end", "duration_s"):
        assert got[k] == want[k], k
    # the shell's <(...) form, through the CLI
    p = subprocess.run(
        ["bash", "-c", 'exec "$@" <(cat "$0")', MSR, *OPSIM, "trace", "info"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 0, p.stderr
    assert re.search(rf"requests\s+{want['records']}\b", p.stdout), p.stdout


# ---------------------------------------------------------------- item 11: column indices


@pytest.mark.parametrize(
    "spec,key",
    [
        ("time=0,op=1,offset=18446744073709551615,size=3", "workload.trace.columns.offset"),
        ("time=0,op=1,offset=2,size=99999999999999999999999", "workload.trace.columns.size"),
        ("time=18446744073709551614,op=1,offset=2,size=3", "workload.trace.columns.time"),
    ],
)
def test_a_huge_column_index_is_an_input_error(tmp_path, spec, key):
    t = tmp_path / "c.csv"
    t.write_text("0,w,0,4096\n")
    with pytest.raises(InputError) as e:
        T.info(t, format="columns", columns=spec)
    assert e.value.key == key, str(e.value)
    p = run("trace", "info", "--format", "columns", "--columns", spec, str(t))
    assert p.returncode == 2, p.stderr
    assert key in p.stderr and "internal error" not in p.stderr


def test_huge_numbers_in_a_trace_are_errors_not_crashes(tmp_path):
    t = tmp_path / "big.csv"
    t.write_text("0,w,18446744073709551615,1\n")
    with pytest.raises(TraceError, match="too large"):
        T.info(t, format="columns", columns="time=0,op=1,offset=2:4k,size=3:4k")


# ---------------------------------------------------------------- item 6: conversion killed


def _writing(pid, d):
    """True once process ``pid`` holds a file in ``d`` with data in it."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith(str(d)) and os.stat(f"/proc/{pid}/fd/{fd}").st_size > 0:
                return True
        except OSError:
            pass
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_conversion_killed_midway_leaves_nothing(tmp_path):
    src_dir, out_dir = tmp_path / "in", tmp_path / "out"
    src_dir.mkdir()
    out_dir.mkdir()
    (out_dir / "keep.txt").write_text("mine")
    fifo = src_dir / "t.fifo"
    os.mkfifo(fifo)
    line = b"128166372003061629,hm,0,Write,8192,4096,1\n"
    p = subprocess.Popen(
        [*OPSIM, "trace", "convert", "--format", "msr", str(fifo), "-o", str(out_dir / "t.iolog")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    f = open(fifo, "wb")  # noqa: SIM115 - held open so the conversion waits mid-way
    try:
        deadline = time.monotonic() + 60
        while not _writing(p.pid, out_dir):  # feed until the output holds data
            assert time.monotonic() < deadline, "the conversion never started writing"
            f.write(line * 20000)
            f.flush()
        os.kill(p.pid, signal.SIGKILL)
        p.wait(10)
    finally:
        with contextlib.suppress(BrokenPipeError):
            f.close()
    assert sorted(os.listdir(out_dir)) == ["keep.txt"]


def test_a_conversion_writes_the_whole_file_with_the_umask_mode(tmp_path):
    out = tmp_path / "t.iolog"
    n = T.convert(MSR, out, target="/dev/x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask
    lines = out.read_text().splitlines()
    assert lines[:3] == ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    assert len(lines) == n + 4 and lines[-1].endswith("/dev/x close")
    assert os.listdir(tmp_path) == ["t.iolog"]


# ---------------------------------------------------------------- item 14: config messages

BASE = '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n'


def _sim_error(config):
    with pytest.raises(ConfigError) as e:
        opsim.Simulator(config)
    return e.value


def test_toml_syntax_errors_give_line_and_column(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text(BASE + "[ftl\ngc = 'greedy'\n")
    e = _sim_error(str(cfg))
    assert "line 4, column 5" in str(e)
    p = run("simulate", str(cfg))
    assert p.returncode == 2 and "line 4, column 5" in p.stderr, p.stderr


def test_dict_config_errors_name_the_key_not_a_json_position():
    cases = [
        ({"drive": {"user_capacity": "64MiB", "op": float("nan")}}, "drive.op"),
        ({"drive": {"user_capacity": "64MiB", "op": 0.28}, "ftl": {"d": "x"}}, "ftl.d"),
        ({"drive": {"user_capacity": "64MiB", "op": 0.28, "page_sise": 4096}}, "drive.page_sise"),
    ]
    for cfg, key in cases:
        e = _sim_error(cfg)
        assert e.key == key, str(e)
        assert "column" not in str(e) and "line 1" not in str(e), str(e)


def test_sizes_and_percentages_say_what_is_wrong():
    e = _sim_error({"drive": {"user_capacity": "-8MiB", "op": 0.28}})
    assert e.key == "drive.user_capacity" and "negative sizes are not allowed" in str(e), str(e)
    for bad in ("nan%", "inf%", "abc%"):
        e = _sim_error({"drive": {"user_capacity": "64MiB", "op": bad}})
        assert e.key == "drive.op" and "percentage such as" in str(e), str(e)


def test_messages_never_echo_control_bytes():
    e = _sim_error({"drive": {"user_capacity": "64\x00\x1b[2J" + "x" * 1000, "op": 0.28}})
    assert "\x00" not in str(e) and "\x1b" not in str(e), repr(str(e))
    assert len(str(e)) < 400


def test_ftl_d_is_bounded(tmp_path):
    cfg = tmp_path / "d.toml"
    cfg.write_text(BASE + '[ftl]\ngc = "d-choices"\nd = 4294967295\n')
    p = run("simulate", str(cfg), timeout=60)
    assert p.returncode == 2, p.stderr
    assert "ftl.d" in p.stderr and "1024" in p.stderr


def test_remap_scale_on_a_pipe_says_why(tmp_path):
    cfg = tmp_path / "pipe.toml"
    cfg.write_text(BASE + '[workload]\ntype = "trace"\n[workload.trace]\npath = "/dev/stdin"\nremap = "scale"\n')
    with open(MSR, "rb") as f:
        data = f.read()
    p = subprocess.run([*OPSIM, "simulate", str(cfg)], input=data, capture_output=True, timeout=60)
    err = p.stderr.decode()
    assert p.returncode == 2, err
    assert "workload.trace.remap" in err and "pipe" in err, err


def test_simulate_reads_a_fifo_trace_once(tmp_path):
    """The summary ``opsim simulate`` prints of each trace read a pipe before the simulation
    could, which then found it empty; a pipe is now left to the simulation."""
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        f'[workload]\ntype = "trace"\n[workload.trace]\npath = "{fifo}"\nremap = "wrap"\n'
        "[run]\nwarmup_drive_writes = 0\n"
    )
    with open(MSR, "rb") as f:
        t = _feed(fifo, f.read())
    p = subprocess.run([*OPSIM, "simulate", str(cfg), "--json"], capture_output=True, text=True, timeout=120)
    t.join(5)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["trace"]["records"] > 0
