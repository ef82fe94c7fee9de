"""Issue 12, `opsim measure`: an existing --file is never overwritten unless it is opsim's own
scratch file (or --force); a stop signal or a dying fio keeps the finished rounds and leaves no
fio behind; every option is checked before anything is created or run; --purge takes its value
explicitly.

Most tests use a fake fio (a small script first on PATH) that copies real fio output from the
fixtures, then dies, exits non-zero or hangs when told to; the ones marked ``fio`` run the real
fio on a small file."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from opsim.cli import build_parser, main
from opsim.measure import scratch
from opsim.measure.schema import check_timed

FIX = Path(__file__).parent.parent / "fixtures" / "measure"
ROOT = Path(__file__).parent.resolve().parent.parent

FAKE_FIO = r'''#!{python}
"""A fake fio: rounds 1..FAKE_FIO_OK copy real fio output; then FAKE_FIO_THEN happens."""
import os, shutil, signal, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("fio-3.33")
    sys.exit(0)
state = os.environ["FAKE_FIO_STATE"]
with open(state, "a") as f:
    f.write(f"{{os.getpid()}} {{' '.join(args)}}\n")
with open(state) as f:
    n = len(f.readlines())
opt = dict(a[2:].split("=", 1) for a in args if a.startswith("--") and "=" in a)
if n > int(os.environ.get("FAKE_FIO_OK", "1000000")):
    then = os.environ.get("FAKE_FIO_THEN", "exit")
    if then == "exit":
        sys.stderr.write("fio: pretend I/O error on the target\n")
        sys.exit(3)
    if then == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if then == "hang-ignoring-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    # hang (a child in the same group, as fio's job processes are)
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(1)
    while True:
        time.sleep(1)
fix = os.environ["FAKE_FIO_FIXTURES"]
shutil.copy(os.path.join(fix, "randwrite4k_qd32_libaio_jsonplus.json"), opt["output"])
for kind in ("iops", "clat"):
    shutil.copy(os.path.join(fix, f"randwrite4k_qd32_libaio_{{kind}}.1.log"),
                f"{{opt['write_iops_log']}}_{{kind}}.1.log")
'''


@pytest.fixture
def fake_fio(tmp_path, monkeypatch):
    """Put a fake fio first on PATH; returns a function setting its behaviour and the file
    listing its invocations ("PID argv" per line)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "fio"
    exe.write_text(FAKE_FIO.format(python=sys.executable))
    exe.chmod(0o755)
    state = tmp_path / "fio-calls.txt"
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_FIO_STATE", str(state))
    monkeypatch.setenv("FAKE_FIO_FIXTURES", str(FIX))

    def configure(ok=1000000, then="exit"):
        monkeypatch.setenv("FAKE_FIO_OK", str(ok))
        monkeypatch.setenv("FAKE_FIO_THEN", then)
        return state

    configure()
    return configure


def calls(state: Path) -> list[tuple[int, str]]:
    if not state.exists():
        return []
    return [(int(line.split(" ", 1)[0]), line.split(" ", 1)[1]) for line in state.read_text().splitlines()]


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def digest(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def env_with_src():
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
    return env


# one fake round writes 10 GB (the fixture's), so --capacity-multiple 1 is one round; LONG runs until stopped
WSAT = [
    "measure",
    "wsat",
    "--size",
    "64MiB",
    "--round",
    "1",
    "--qd",
    "4",
    "--capacity-multiple",
    "1",
    "--progress",
    "off",
]
LONG = ["--capacity-multiple", "100000", "--time-cap", "600"]


# --------------------------------------------------------------------------- item 2: --file EXISTING


def test_existing_file_is_refused_and_left_alone(tmp_path, fake_fio, capsys):
    state = fake_fio()
    f = tmp_path / "precious.dat"
    f.write_bytes(os.urandom(3 * 2**20))
    before, mtime = digest(f), f.stat().st_mtime_ns
    out = tmp_path / "out"
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert str(f) in err and "not opsim's scratch file" in err and "--force" in err
    assert digest(f) == before and f.stat().st_mtime_ns == mtime
    assert not out.exists()  # nothing created on refusal
    assert not Path(scratch.record_path(f)).exists()
    assert calls(state) == []  # fio never ran


def test_existing_file_with_force_is_used_and_becomes_scratch(tmp_path, fake_fio, capsys):
    state = fake_fio()
    f = tmp_path / "disposable.dat"
    f.write_bytes(b"x" * 2**20)
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "o"), "--force", "--json"])
    assert rc == 0, capsys.readouterr().err
    assert calls(state)
    assert scratch.is_scratch(f) == (True, "")
    # the next run needs no --force: it is opsim's scratch file now
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "o2"), "--json"])
    assert rc == 0, capsys.readouterr().err


def test_new_file_is_created_and_recognised_as_scratch_next_time(tmp_path, fake_fio, capsys):
    fake_fio()
    f = tmp_path / "new.dat"
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "a"), "--json"])
    assert rc == 0, capsys.readouterr().err
    assert f.is_file() and scratch.is_scratch(f)[0]
    rec = json.loads(Path(scratch.record_path(f)).read_text())
    assert rec["format"] == "opsim-scratch" and rec["ino"] == f.stat().st_ino
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "b"), "--json"])
    assert rc == 0, capsys.readouterr().err
    # the default scratch file in a re-used output directory, too
    out = tmp_path / "same"
    for again in ([], ["--replace"]):  # --replace: the directory holds the first run's results
        rc = main([*WSAT, "--time-cap", "2", "-o", str(out), "--json", *again])
        assert rc == 0, capsys.readouterr().err
    assert scratch.is_scratch(out / "opsim-measure.dat")[0]


def test_scratch_file_changed_or_replaced_is_refused(tmp_path, fake_fio, capsys):
    fake_fio()
    f = tmp_path / "s.dat"
    assert main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "a"), "--json"]) == 0
    capsys.readouterr()
    # written after opsim left it
    with open(f, "ab") as fh:
        fh.write(b"user data")
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "b")])
    assert rc == 2 and "changed since opsim last wrote it" in capsys.readouterr().err
    # replaced by another file of the same size (a new inode), record left behind
    assert main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "c"), "--force", "--json"]) == 0
    capsys.readouterr()
    other = tmp_path / "other"
    other.write_bytes(b"y" * f.stat().st_size)
    os.replace(other, f)
    before = digest(f)
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "d")])
    assert rc == 2 and "not opsim's scratch file" in capsys.readouterr().err
    assert digest(f) == before and not (tmp_path / "d").exists()


def test_foreign_record_slot_is_refused(tmp_path, fake_fio, capsys):
    fake_fio()
    f = tmp_path / "t.dat"
    slot = Path(scratch.record_path(f))
    slot.write_text("my notes, not opsim's")
    rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "o")])
    assert rc == 2 and "is not an opsim scratch record" in capsys.readouterr().err
    assert slot.read_text() == "my notes, not opsim's" and not f.exists() and not (tmp_path / "o").exists()


def test_scratch_file_held_open_by_another_process_is_refused(tmp_path, fake_fio, capsys):
    fake_fio()
    f = tmp_path / "h.dat"
    assert main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "a"), "--json"]) == 0
    capsys.readouterr()
    with open(f, "rb") as fh:
        holder = subprocess.Popen(["sleep", "60"], stdin=fh)
    try:
        rc = main([*WSAT, "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "b")])
        err = capsys.readouterr().err
        assert rc == 2 and f"held open by process {holder.pid} (sleep)" in err, err
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_real_fio_rerun_on_its_scratch_file_and_refusal_of_others(tmp_path, capsys):
    """With the real fio writing the file: the record still matches after fio's writes."""
    f = tmp_path / "real.dat"
    argv = ["measure", "wsat", "--size", "16MiB", "--round", "1", "--time-cap", "1", "--qd", "4", "--json"]
    assert main([*argv, "--file", str(f), "-o", str(tmp_path / "a")]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert f.stat().st_size == 16 * 2**20 and scratch.is_scratch(f)[0]
    assert main([*argv, "--file", str(f), "-o", str(tmp_path / "b")]) == 0, capsys.readouterr().err
    capsys.readouterr()
    g = tmp_path / "mine.dat"
    g.write_bytes(b"z" * 2**20)
    assert main([*argv, "--file", str(g), "-o", str(tmp_path / "c")]) == 2
    assert g.read_bytes() == b"z" * 2**20 and not (tmp_path / "c").exists()


# --------------------------------------------------------------------------- item 3: signals, fio failures


def _start(args, tmp_path):
    return subprocess.Popen(
        [sys.executable, "-m", "opsim.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env_with_src(),
        cwd=tmp_path,
    )


def _wait_for_calls(state, n, proc, timeout=30):
    deadline = time.monotonic() + timeout
    while len(calls(state)) < n:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "fio was not started"
        time.sleep(0.05)
    time.sleep(0.3)


@pytest.mark.parametrize("sig,code", [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
@pytest.mark.parametrize("then", ["hang", "hang-ignoring-term"])
def test_signal_stops_fio_and_keeps_finished_rounds(tmp_path, fake_fio, sig, code, then):
    """The signal goes to opsim alone (as `kill PID` sends it): fio's whole process group is
    stopped (SIGKILL after the grace time when it ignores SIGTERM), the three finished rounds
    are written, marked interrupted, and the exit code is 128 + the signal."""
    state = fake_fio(ok=3, then=then)
    out = tmp_path / "o"
    proc = _start([*WSAT, *LONG, "-o", str(out), "--json"], tmp_path)
    _wait_for_calls(state, 4, proc)
    fio_pid = calls(state)[-1][0]
    group = [p for p in map(int, filter(str.isdigit, os.listdir("/proc"))) if _pgid(p) == fio_pid]
    assert fio_pid in group and len(group) == 2  # fio and its child (a "job")
    t0 = time.monotonic()
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=20)
    stopped_in = time.monotonic() - t0
    assert proc.returncode == code, stderr
    assert stopped_in < 6  # grace 2 s, then SIGKILL
    assert not any(alive(p) for p in group)  # nothing of fio's group is left
    d = json.loads(stdout)
    kept = json.loads((out / "result.json").read_text())
    for doc in (d, kept):
        assert doc["interrupted"] is True and doc["interrupted_by"] == signal.Signals(sig).name
        assert len(doc["rounds"]) == 3 and doc["error"] is None
        assert check_timed(doc) == []
    assert not list(out.glob(".opsim-*"))  # no temporary file left


def _pgid(pid):
    try:
        return os.getpgid(pid)
    except OSError:
        return None


@pytest.mark.parametrize(
    "then,msg", [("exit", "fio exited 3: fio: pretend I/O error on the target"), ("kill", "fio was killed by SIGKILL")]
)
def test_fio_dying_keeps_finished_rounds_and_exits_1(tmp_path, fake_fio, capsys, then, msg):
    state = fake_fio(ok=2, then=then)
    out = tmp_path / "o"
    rc = main([*WSAT, *LONG, "-o", str(out), "--json"])
    cap = capsys.readouterr()
    assert rc == 1
    assert msg in cap.err and "2 round(s) completed before are kept" in cap.err
    assert len(calls(state)) == 3
    for doc in (json.loads(cap.out), json.loads((out / "result.json").read_text())):
        assert len(doc["rounds"]) == 2 and doc["interrupted"] is False
        assert msg in doc["error"] and doc["stop_reason"].startswith("fio failed")
        assert check_timed(doc) == []


def test_fio_failing_in_the_first_round_is_reported(tmp_path, fake_fio, capsys):
    fake_fio(ok=0, then="exit")
    out = tmp_path / "o"
    rc = main([*WSAT, *LONG, "-o", str(out)])
    cap = capsys.readouterr()
    assert rc == 1 and "fio exited 3" in cap.err and "FAILED" in cap.out
    doc = json.loads((out / "result.json").read_text())
    assert doc["rounds"] == [] and doc["measurement_window"]["rounds"] is None


@pytest.mark.slow
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_sigterm_with_real_fio(tmp_path):
    """The real fio on a small file: SIGTERM to opsim stops fio within seconds, nothing holds
    the file open afterwards, the finished rounds are in result.json, exit 143."""
    out = tmp_path / "o"
    proc = _start(
        [
            "measure",
            "wsat",
            "--size",
            "32MiB",
            "--round",
            "1",
            "--time-cap",
            "120",
            "--qd",
            "4",
            "--capacity-multiple",
            "100000",
            "-o",
            str(out),
            "--json",
        ],
        tmp_path,
    )
    deadline = time.monotonic() + 40
    while not list(out.glob("round-003*.json")) and time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    time.sleep(0.4)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    stdout, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr
    assert time.monotonic() - t0 < 5
    target = (out / "opsim-measure.dat").resolve()
    st = target.stat()
    holders = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                s = os.stat(f"/proc/{pid}/fd/{fd}")
                if (s.st_dev, s.st_ino) == (st.st_dev, st.st_ino):
                    holders.append(pid)
        except OSError:
            continue
    assert holders == []  # no fio left writing to the target
    d = json.loads((out / "result.json").read_text())
    assert d["interrupted_by"] == "SIGTERM" and len(d["rounds"]) >= 2
    assert json.loads(stdout)["rounds"] == d["rounds"]
    assert scratch.is_scratch(target)[0]  # sealed after the stop: a re-run may use it


# --------------------------------------------------------------------------- items 12, 13: checks up front


BAD = [
    ("--span=nan%", "--span"),
    ("--span=abc%", "--span"),
    ("--span=inf%", "--span"),
    ("--span=-5%", "--span"),
    ("--span=150%", "--span"),
    ("--span=0%", "--span"),
    ("--span=0.00001%", "--span"),
    ("--span=nan", "span"),
    ("--span=1TiB", "--span"),
    ("--span=-8MiB", "span"),
    ("--span=", "span"),
    ("--time-cap=nan", "--time-cap"),
    ("--time-cap=inf", "--time-cap"),
    ("--time-cap=-1", "--time-cap"),
    ("--time-cap=0", "--time-cap"),
    ("--capacity-multiple=nan", "--capacity-multiple"),
    ("--capacity-multiple=-inf", "--capacity-multiple"),
    ("--qd=0", "--qd"),
    ("--qd=-3", "--qd"),
    ("--qd=1000000", "--qd"),
    ("--threads=0", "--threads"),
    ("--threads=100000", "--threads"),
    ("--round=0", "--round"),
    ("--max-rounds=0", "--max-rounds"),
    ("--precondition=-1", "--precondition"),
    ("--size=nan", "size"),
    ("--size=-8MiB", "size"),
    ("--size=4KiB", "--size"),
    ("--size=1PiB", "--size"),
    ("--bs=nan", "bs"),
    ("--bs=1000", "--bs"),
    ("--bs=1g", "--bs"),
    ("--rwmix=50/60", "--rwmix"),
    ("--fio-steadystate=iops_slope:nan%", "--fio-steadystate"),
]


@pytest.mark.parametrize("opt,key", BAD, ids=[b[0] for b in BAD])
def test_bad_numbers_refused_up_front_with_nothing_created(tmp_path, monkeypatch, fake_fio, capsys, opt, key):
    state = fake_fio()
    monkeypatch.chdir(tmp_path)
    before = sorted(os.listdir(tmp_path))
    size = [] if opt.startswith("--size") else ["--size", "64MiB"]
    rc = main(["measure", "wsat", *size, opt])  # the default output folder goes in the cwd
    err = capsys.readouterr().err
    assert rc == 2, err
    assert key in err and "internal error" not in err, err
    assert sorted(os.listdir(tmp_path)) == before  # no output folder, no scratch file
    assert calls(state) == []


def test_argparse_garbage_is_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main(["measure", "wsat", "--qd", "abc"])
    assert e.value.code == 2 and "--qd" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["missing-parent", "a-file", "read-only", "full"])
def test_unwritable_output_dir_fails_before_fio(tmp_path, monkeypatch, fake_fio, capsys, case):
    state = fake_fio()
    if case == "missing-parent":
        out = tmp_path / "no" / "such" / "dir"
    elif case == "a-file":
        out = tmp_path / "afile"
        out.write_text("x")
    elif case == "read-only":
        ro = tmp_path / "ro"
        ro.mkdir()
        out = ro / "out"
        real_access = os.access
        monkeypatch.setattr(os, "access", lambda p, m, **kw: False if str(p) == str(ro) else real_access(p, m, **kw))
    else:
        out = tmp_path / "out"
        real = os.statvfs
        monkeypatch.setattr(
            os,
            "statvfs",
            lambda p: (
                os.statvfs_result((4096, 4096, 100, 0, 0, 10, 0, 0, 0, 255))
                if str(p).startswith(str(tmp_path))
                else real(p)
            ),
        )
    before = sorted(p.name for p in tmp_path.iterdir())
    rc = main([*WSAT, "--time-cap", "2", "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and (str(out) in err or str(out.parent) in err) and "internal error" not in err, err
    assert calls(state) == [] and sorted(p.name for p in tmp_path.iterdir()) == before


def test_file_target_that_does_not_fit_is_refused(tmp_path, monkeypatch, fake_fio, capsys):
    state = fake_fio()
    f = tmp_path / "big.dat"
    rc = main([*WSAT[:2], "--size", "1PiB", "--file", str(f), "--time-cap", "2", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "--size" in err and "does not fit" in err
    assert not f.exists() and not (tmp_path / "o").exists() and calls(state) == []


# --------------------------------------------------------------------------- --purge takes its value explicitly


def test_purge_needs_its_method():
    p = build_parser()
    with pytest.raises(SystemExit):
        p.parse_args(["measure", "--device", "/dev/sdz", "--purge", "wsat"])  # "wsat" is no method
    with pytest.raises(SystemExit):
        p.parse_args(["measure", "wsat", "--device", "/dev/sdz", "--purge"])  # a value is required
    a = p.parse_args(["measure", "--purge", "auto", "wsat", "--device", "/dev/sdz"])
    assert a.purge == "auto" and a.test == "wsat"


def test_no_measure_option_with_an_optional_value():
    p = build_parser()
    sub = next(a for a in p._actions if a.dest == "command").choices["measure"]
    optional = [a.option_strings for a in sub._actions if a.option_strings and a.nargs == "?"]
    assert optional == [], optional
