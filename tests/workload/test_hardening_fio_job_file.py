"""Issue 36 item 1: a fio job file that is not a regular file is refused at once.

``[workload] type = "fio"`` with ``job`` a FIFO blocked in open(2) for good (and ignored
Ctrl-C and SIGTERM); ``job = "/dev/zero"`` read without end (4.9 GB in 10 s); the same in a
sweep's points; ``opsim advise --fio FIFO`` said "no such file".  The core now reads the job
through the helper every whole-file read uses (``opsim_core::userfile::read_regular``): a
FIFO, a device or a directory is refused before it is read (exit 2, naming ``workload.job``
or ``--fio`` and what the path is), a file over the cap is refused unread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import opsim
from opsim.errors import InputError

OPSIM = [sys.executable, "-m", "opsim.cli"]
#: the whole command (Python start-up included) must be over well within this
REFUSED_WITHIN_S = 15.0
#: a refused job is never read: the process stays this small (the old code reached GBs)
MAX_RSS_MB = 300

# runs the command and prints its exit code and the largest resident set of its children (KiB)
MAXRSS = (
    "import resource, subprocess, sys\n"
    "try:\n"
    f"    p = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout={REFUSED_WITHIN_S})\n"
    "except subprocess.TimeoutExpired:\n"
    "    print('timeout 0'); sys.exit()\n"
    "sys.stderr.write(p.stderr)\n"
    "print(p.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def config(tmp_path, job) -> str:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        f'[workload]\ntype = "fio"\njob = "{job}"\n'
        "[run]\nwarmup_drive_writes = 1\nmeasure_drive_writes = 1\n"
    )
    return str(cfg)


def run_measured(*args) -> tuple[int | str, float, str]:
    """(exit code or "timeout", max RSS in MB, stderr) of ``opsim ARGS``, killed after
    :data:`REFUSED_WITHIN_S` (a blocked open(2) does not die of SIGTERM)."""
    p = subprocess.run(
        [sys.executable, "-c", MAXRSS, *OPSIM, *map(str, args)], capture_output=True, text=True, timeout=60
    )
    code, kib = p.stdout.split()
    return (code if code == "timeout" else int(code)), int(kib) / 1024, p.stderr


def not_regular(tmp_path, what: str) -> str:
    """A path that is ``what``: "a FIFO", "a character device" (/dev/zero) or "a directory"."""
    if what == "a FIFO":
        os.mkfifo(tmp_path / "job.fio")
        return str(tmp_path / "job.fio")
    if what == "a directory":
        (tmp_path / "jobs").mkdir()
        return str(tmp_path / "jobs")
    return "/dev/zero"


KINDS = ["a FIFO", "a character device", "a directory"]


@pytest.mark.parametrize("what", KINDS)
def test_simulate_refuses_a_job_that_is_not_a_regular_file_at_once(tmp_path, what):
    job = not_regular(tmp_path, what)
    code, mb, err = run_measured("simulate", config(tmp_path, job))
    assert code == 2, err
    assert f"workload.job: {job}: {what}, not a regular file" in err, err
    assert mb < MAX_RSS_MB, f"max RSS {mb:.0f} MB"


def test_simulate_refuses_a_job_over_the_cap_unread(tmp_path):
    big = tmp_path / "big.fio"
    with open(big, "wb") as f:
        f.write(b"[a]\nrw=randwrite\n")
        f.truncate(1 << 30)  # sparse: 1 GiB
    code, mb, err = run_measured("simulate", config(tmp_path, big))
    assert code == 2, err
    assert f"workload.job: {big}: 1073741824 bytes; a fio job file is at most 1048576 bytes" in err, err
    assert mb < MAX_RSS_MB, f"max RSS {mb:.0f} MB"


@pytest.mark.parametrize("what", KINDS)
def test_advise_fio_names_the_real_reason(tmp_path, what):
    job = not_regular(tmp_path, what)
    code, _, err = run_measured("advise", "--preset", "micron-7450-pro-960gb", "--fio", job, "--min-dwpd", "1")
    assert code == 2, err
    assert f"--fio: {os.path.abspath(job)}: {what}, not a regular file" in err, err
    assert "no such file" not in err


def test_advise_fio_on_a_missing_file_says_so(tmp_path):
    code, _, err = run_measured("advise", "--preset", "micron-7450-pro-960gb", "--fio", tmp_path / "nope.fio")
    assert code == 2, err
    assert f"--fio: {tmp_path / 'nope.fio'}: does not exist" in err, err


def test_a_sweep_whose_job_is_a_fifo_fails_its_points_at_once(tmp_path):
    """A job file is a value the point reads when it runs (docs/sweeps.md: exit 1, the
    failed points named): each point fails at once with the reason, none blocks."""
    os.mkfifo(tmp_path / "job.fio")
    grid = tmp_path / "grid.toml"
    base = Path(config(tmp_path, "job.fio")).read_text()
    grid.write_text(base + '[sweep.grid]\n"drive.op" = [0.2, 0.28]\n')
    out = tmp_path / "r.parquet"
    p = subprocess.run(
        [*OPSIM, "sweep", str(grid), "--workers", "0", "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=REFUSED_WITHIN_S * 4,
    )
    assert p.returncode == 1, p.stderr
    rows = json.loads(p.stdout)["rows"]
    assert [(r["status"], r["error_type"]) for r in rows] == [("error", "WorkloadError")] * 2, rows
    for r in rows:
        assert r["error_key"] == "workload.job", r
        assert f"{tmp_path / 'job.fio'}: a FIFO, not a regular file" in r["error_message"], r


def _in_thread(fn, *args):
    """``fn(*args)``'s exception (None if it returned); a failure if it still runs after 10 s
    (the old code blocked in open(2) on a FIFO, or read /dev/zero without end)."""
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
    assert box, f"{fn.__name__} still running after 10 s"
    return box[0]


@pytest.mark.parametrize("what", ["a FIFO", "a character device"])
def test_the_python_api_refuses_a_job_that_is_not_a_regular_file(tmp_path, what):
    from opsim.workload.fio import fio_workload

    job = not_regular(tmp_path, what)
    t = time.monotonic()
    cfg = {"drive": {"user_capacity": "64MiB", "op": 0.28}, "workload": {"type": "fio", "job": job}}
    e = _in_thread(opsim.simulate, cfg)
    assert isinstance(e, InputError) and e.key == "workload.job", repr(e)
    assert f"{what}, not a regular file" in str(e), repr(e)
    e = _in_thread(fio_workload, job)
    assert isinstance(e, InputError) and f"{what}, not a regular file" in str(e), repr(e)
    assert time.monotonic() - t < 10
