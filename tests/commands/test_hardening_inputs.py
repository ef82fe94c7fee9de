"""Inputs that hang, read without end, or nest too deep (issue 23, items 3-5).

* A FIFO trace with no writer: ``opsim trace info`` and ``opsim simulate`` stop on Ctrl-C
  (exit 130 within 2 s); they blocked in open(2) for good (the core's open retried on EINTR).
  A writer that comes late is still read.
* A config that is a FIFO or a character device is refused (exit 2) before it is read;
  ``opsim simulate /dev/zero`` read 5.5 GB in 9 s.  A config over the cap is refused unread.
* Configs nested 5,000 deep (TOML, JSON, a dict given to the API) are a ConfigError (exit 2)
  naming the line or the key path; they were RecursionError ("internal error", exit 1).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import opsim
import opsim.sim
import opsim.trace
from opsim import userfile
from opsim.errors import ConfigError

ROOT = Path(__file__).parent.resolve().parent.parent
MSR = ROOT / "tests" / "fixtures" / "traces" / "msr_hm_0.csv"
OPSIM = [sys.executable, "-m", "opsim.cli"]
STOP_WITHIN_S = 2.0

# runs the command and prints its exit code and the largest resident set of its children (KiB)
MAXRSS = (
    "import resource, subprocess, sys\n"
    "p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=60)\n"
    "sys.stderr.write(p.stderr)\n"
    "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)

SMALL = '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'


def run(*args, timeout=60):
    return subprocess.run(OPSIM + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)


def run_measured(*args):
    """(exit code, max RSS in MB, stderr, seconds) of ``opsim ARGS``."""
    t = time.monotonic()
    p = subprocess.run(
        [sys.executable, "-c", MAXRSS, *OPSIM, *map(str, args)], capture_output=True, text=True, timeout=120
    )
    code, kib = p.stdout.split()
    return int(code), int(kib) / 1024, p.stderr, time.monotonic() - t


def _waiting_on(pid: int, path: Path) -> bool:
    """Whether process ``pid`` holds ``path`` open, or sleeps in the kernel's FIFO open."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
        if any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in fds):
            return True
        with open(f"/proc/{pid}/wchan") as f:
            wchan = f.read()
        return "fifo" in wchan or "partner" in wchan
    except OSError:
        return False


def sigint_when_waiting(args, fifo: Path) -> tuple[subprocess.Popen, str, float]:
    """Start ``opsim ARGS``, wait until it waits on ``fifo``, send SIGINT: (process, stderr,
    seconds from the signal to the exit)."""
    p = subprocess.Popen(OPSIM + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _waiting_on(p.pid, fifo):
        assert p.poll() is None, p.communicate()
        assert time.monotonic() < deadline, "never reached the FIFO"
        time.sleep(0.05)
    time.sleep(0.3)  # into the wait
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail("still running 10 s after SIGINT (blocked in the FIFO's open)")
    return p, err, time.monotonic() - t


# ---------------------------------------------------------------- item 3: FIFOs that never get a writer


def test_trace_info_on_a_fifo_without_writer_stops_on_ctrl_c(tmp_path):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    p, err, took = sigint_when_waiting(["trace", "info", fifo], fifo)
    assert p.returncode == 130, err
    assert took < STOP_WITHIN_S, took
    assert "internal error" not in err


NAMESPACES = """[run]
interleave = "bytes"
[[namespace]]
capacity = "50%"
share = 0.5
[namespace.workload]
type = "trace"
[namespace.workload.trace]
path = "{fifo}"
remap = "wrap"
[[namespace]]
capacity = "50%"
share = 0.5
"""


@pytest.mark.parametrize("where", ["workload", "namespace"])
def test_simulate_with_a_fifo_trace_without_writer_stops_on_ctrl_c(tmp_path, where):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    cfg = tmp_path / "c.toml"
    if where == "workload":
        cfg.write_text(SMALL + f'[workload]\ntype = "trace"\n[workload.trace]\npath = "{fifo}"\nremap = "wrap"\n')
    else:  # a namespace's trace did not get the interrupt hook
        cfg.write_text(SMALL + NAMESPACES.format(fifo=fifo))
    p, err, took = sigint_when_waiting(["simulate", cfg], fifo)
    assert p.returncode == 130, err
    assert took < STOP_WITHIN_S, took


def test_trace_info_reads_a_fifo_whose_writer_comes_late(tmp_path):
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    p = subprocess.Popen([*OPSIM, "trace", "info", "--json", str(fifo)], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not _waiting_on(p.pid, fifo):
        assert p.poll() is None and time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.3)  # the reader waits first; then the writer comes
    with open(fifo, "wb") as f:
        f.write(MSR.read_bytes())
    out, _ = p.communicate(timeout=60)
    assert p.returncode == 0
    assert json.loads(out)["records"] == opsim.trace.info(MSR)["records"]


def test_a_config_that_is_a_fifo_is_refused_at_once(tmp_path):
    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    t = time.monotonic()
    p = run("simulate", fifo, timeout=30)
    assert p.returncode == 2, p.stderr
    assert f"config file {fifo}: a FIFO, not a regular file" in p.stderr
    assert time.monotonic() - t < 10
    with pytest.raises(ConfigError, match="a FIFO, not a regular file"):
        opsim.Simulator(fifo)


def test_a_config_that_is_a_directory_names_it(tmp_path):
    with pytest.raises(ConfigError, match="a directory, not a regular file"):
        opsim.simulate(tmp_path)


# ---------------------------------------------------------------- item 4: reads without end


def test_a_config_that_is_a_character_device_is_refused_unread(tmp_path):
    zero = tmp_path / "zero"
    os.mknod(zero, 0o600 | stat.S_IFCHR, os.makedev(1, 5))  # what /dev/zero is
    code, mb, err, took = run_measured("simulate", zero)
    assert code == 2, err
    assert f"config file {zero}: a character device, not a regular file" in err
    assert mb < 150, f"max RSS {mb:.0f} MB"
    assert took < 30


def test_a_config_over_the_cap_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    with open(big, "wb") as f:
        f.write(SMALL.encode())
        f.truncate(1 << 30)  # sparse: 1 GiB
    code, mb, err, _ = run_measured("simulate", big)
    assert code == 2, err
    assert f"config file {big}: 1,073,741,824 bytes; the limit is 4 MiB" in err
    assert mb < 150, f"max RSS {mb:.0f} MB"  # the old code read all of it


def test_read_bytes_refuses_a_file_that_grew_past_the_cap(tmp_path, monkeypatch):
    f = tmp_path / "c.toml"
    f.write_bytes(b"x" * 100)
    assert userfile.read_bytes(f, what="config file", cap=100) == b"x" * 100
    with pytest.raises(opsim.InputError, match=r"c\.toml: 100 bytes; the limit is 50 bytes"):
        userfile.read_bytes(f, what="config file", cap=50)

    def small(st):  # the size seen before the read says 10, the read finds more
        return os.stat_result((*st[:6], 10, *st[7:]))

    real_stat, real_fstat = os.stat, os.fstat
    monkeypatch.setattr(os, "stat", lambda p: small(real_stat(p)))
    monkeypatch.setattr(os, "fstat", lambda fd: small(real_fstat(fd)))
    with pytest.raises(opsim.InputError, match="grew past the limit of 50 bytes while it was read"):
        userfile.read_bytes(f, what="config file", cap=50)


# ---------------------------------------------------------------- item 5: nesting


def _deep_dict(n: int) -> dict:
    d: dict = {}
    x = d
    for _ in range(n):
        x["a"] = {}
        x = x["a"]
    return d


@pytest.mark.parametrize(
    "body,line",
    [
        ("x = " + "[" * 5000 + "]" * 5000 + "\n", 5),  # arrays
        ("x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n", 5),  # inline tables
        (".".join(["a"] * 100_000) + " = 1\n", 5),  # dotted keys (tomllib is quadratic on them)
        ("[" + ".".join(["a"] * 5000) + "]\nx = 1\n", 5),  # a table header
    ],
    ids=["arrays", "inline-tables", "dotted-key", "header"],
)
def test_a_toml_config_nested_5000_deep_exits_2_naming_the_line(tmp_path, body, line):
    cfg = tmp_path / "deep.toml"
    cfg.write_text(SMALL + body)
    t = time.monotonic()
    p = run("simulate", cfg, timeout=60)
    assert p.returncode == 2, p.stderr
    assert f"config file {cfg}:{line}: nested too deeply: a config nests at most 64 levels" in p.stderr, p.stderr
    assert "RecursionError" not in p.stderr and time.monotonic() - t < 30


def test_a_dict_nested_5000_deep_is_a_config_error_naming_the_key_path():
    for call in (opsim.simulate, opsim.Simulator, opsim.sim.describe):
        with pytest.raises(ConfigError, match=r"^a\.a\.a\.a.*: nested too deeply") as e:
            call(_deep_dict(5000))
        assert e.value.key.startswith("a.a.a")
    lists: list = []
    x = lists
    for _ in range(5000):
        x.append([])
        x = x[0]
    with pytest.raises(ConfigError, match=r"^drive\.x\[0\]\[0\].*nested too deeply"):
        opsim.simulate({"drive": {"x": lists}})


def test_json_nested_5000_deep_is_a_config_error_from_the_core():
    from opsim.sim import _core

    text = '{"a": ' * 5000 + "1" + "}" * 5000
    with pytest.raises(ConfigError, match="nested too deeply"):
        _core().describe(text, "json")
    text = '{"drive": {"x": ' + "[" * 70 + "]" * 70 + "}}"
    with pytest.raises(ConfigError, match=r"drive\.x\[0\].*nested too deeply: a config nests at most 64 levels"):
        _core().describe(text, "json")


def test_the_nesting_limit_leaves_real_configs_alone(tmp_path):
    texts = [p.read_text() for p in (ROOT / "examples").glob("*.toml")]
    texts += [p.read_text() for p in (ROOT / "crates" / "opsim-core" / "presets").glob("*.toml")]
    assert texts
    for t in texts:
        assert userfile.toml_too_deep(t) is None
    # brackets, braces and dots inside strings and comments do not count
    quoted = SMALL + 'name = "' + "[{." * 200 + '"\n' + "# " + "[" * 200 + "\n" + "x = '''\n" + "{" * 200 + "\n'''\n"
    assert userfile.toml_too_deep(quoted) is None
    # 60 levels is within the limit; 70 is not
    assert userfile.toml_too_deep("x = " + "[" * 60 + "]" * 60) is None
    assert userfile.toml_too_deep("a = 1\nx = " + "[" * 70 + "]" * 70) == 2
    userfile.check_nesting(_deep_dict(63))
    with pytest.raises(ConfigError):
        userfile.check_nesting(_deep_dict(65))


def test_the_python_and_core_limits_agree():
    from opsim.sim import _core

    ok = '{"drive": {"x": ' + "[" * 61 + "]" * 61 + "}}"
    deep = '{"drive": {"x": ' + "[" * 64 + "]" * 64 + "}}"
    for text, refused in ((ok, False), (deep, True)):
        try:
            _core().describe(text, "json")
            nested = False
        except ConfigError as e:
            nested = "nested too deeply" in str(e)
        assert nested == refused
        try:
            userfile.check_nesting(json.loads(text))
            py_refused = False
        except ConfigError:
            py_refused = True
        assert py_refused == refused


# ---------------------------------------------------------------- every other file read whole


def _readers():
    from opsim import results
    from opsim.calibrate import inputs, measured
    from opsim.planner.advise.tenants import load_tenants
    from opsim.sweep.grid import load_grid

    return {
        "tenants": load_tenants,
        "grid": load_grid,
        "result": results.load,
        "datasheet": inputs.read_datasheet,
        "points": inputs.read_points,
        "measured": measured.read_measured,
    }


def _in_thread(fn, *args):
    """``fn(*args)``'s exception (None if it returned), or a failure if it is still running
    after 10 s (the old code blocked in open(2) on a FIFO)."""
    box: list = []

    def call():
        try:
            fn(*args)
            box.append(None)
        except BaseException as e:  # handed to the test
            box.append(e)

    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(10)
    assert box, f"{fn.__name__} still blocked 10 s on a FIFO"
    return box[0]


@pytest.mark.parametrize("name", ["tenants", "grid", "result", "datasheet", "points", "measured"])
def test_every_file_read_whole_refuses_a_fifo_and_a_device_unread(tmp_path, name):
    fifo = tmp_path / f"{name}.fifo"
    os.mkfifo(fifo)
    e = _in_thread(_readers()[name], str(fifo))
    assert isinstance(e, opsim.InputError) and "a FIFO, not a regular file" in str(e), repr(e)
    zero = tmp_path / f"{name}.zero"
    os.mknod(zero, 0o600 | stat.S_IFCHR, os.makedev(1, 5))
    e = _in_thread(_readers()[name], str(zero))
    assert isinstance(e, opsim.InputError) and "a character device, not a regular file" in str(e), repr(e)


@pytest.mark.parametrize("name", ["tenants", "grid", "datasheet"])
def test_toml_inputs_nested_too_deep_name_the_line(tmp_path, name):
    f = tmp_path / f"{name}.toml"
    f.write_text("# a comment\n" + ".".join(["a"] * 100_000) + " = 1\n")
    e = _in_thread(_readers()[name], str(f))
    assert isinstance(e, opsim.InputError) and f"{f}:2: nested too deeply" in str(e), repr(e)


@pytest.mark.parametrize("name", ["result", "measured"])
def test_json_inputs_nested_too_deep_are_input_errors(tmp_path, name):
    f = tmp_path / f"{name}.json"
    f.write_text('{"a": ' * 5000 + "1" + "}" * 5000)
    e = _in_thread(_readers()[name], str(f))
    assert isinstance(e, opsim.InputError) and "nested too deeply" in str(e), repr(e)
