"""The limit opsim puts on a fio run follows the work (issue 36): fio is stopped when its status lines
report no I/O for ``stall_s`` seconds, never because a slow machine made a working run long."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
import time
from pathlib import Path

import pytest

from opsim.measure import fio as fio_mod
from opsim.measure.fio import FioFailed, run_fio
from opsim.measure.fio_progress import FioProgress, reports_io

FIX = Path(__file__).parent.parent / "fixtures" / "measure"


def lines(name: str) -> list[str]:
    return [x for x in (FIX / name).read_text().replace("\r", "\n").splitlines() if x.strip()]


def test_real_status_lines_read_as_fio_meant_them():
    mixed = lines("fio-3.33-eta-randrw-rate-limited.txt")
    assert [reports_io(x) for x in mixed] == [None, True, True, True]  # start-up line: no rates yet
    think = lines("fio-3.33-eta-write-thinktime.txt")
    assert [reports_io(x) for x in think] == [None, True, None]  # an interval without I/O has no rates
    assert reports_io("Jobs: 1 (f=1): [w(1)][50.0%][w=0KiB/s][w=0 IOPS][eta 00m:05s]") is False
    assert reports_io("Jobs: 1 (f=1): [m(1)][5.0%][r=0KiB/s,w=4KiB/s][r=0,w=1 IOPS][eta 00m:05s]") is True


def test_progress_counts_only_intervals_with_io():
    p = FioProgress(start=0.0, stall_s=10.0)
    p.feed("Jobs: 1 (f=1)\r", 5.0)
    assert not p.stalled(9.0) and p.stalled(10.5)  # start-up counts against the limit
    p.feed("Jobs: 1 (f=1): [w(1)][10.0%][w=4KiB/s][w=1 IOPS][eta 00m:09s]\r", 10.2)
    assert not p.stalled(20.0)
    for t in range(21, 40):  # fio alive, printing, but moving nothing
        p.feed("Jobs: 1 (f=1): [w(1)][10.0%][w=0KiB/s][w=0 IOPS][eta 00m:09s]\r", float(t))
        assert p.stalled(float(t)) == (t - 10.2 > 10.0)
    assert "no I/O for" in p.reason(39.0)
    # a line split across two reads is still one line
    q = FioProgress(start=0.0, stall_s=1.0)
    q.feed("Jobs: 1 (f=1): [w(1)][10.0%][w=4KiB/s][w=1", 5.0)
    assert q.stalled(5.0)
    q.feed(" IOPS][eta 00m:09s]\r", 5.5)
    assert not q.stalled(6.0)


FAKE = textwrap.dedent(
    """\
    import os, shutil, sys, time
    out = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--output="))
    mode, seconds = os.environ["FAKE_MODE"], float(os.environ["FAKE_SECONDS"])
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        iops = "w=50" if mode == "working" else "w=0"
        sys.stdout.write(f"Jobs: 1 (f=1): [w(1)][50.0%][w=200KiB/s][{iops} IOPS][eta 00m:01s]\\r")
        sys.stdout.flush()
        time.sleep(0.2)
    shutil.copy(os.environ["FAKE_JSON"], out)
    """
)


@pytest.fixture
def fake_fio(tmp_path, monkeypatch):
    script = tmp_path / "fakefio.py"
    script.write_text(FAKE)
    monkeypatch.setenv("FAKE_JSON", str(FIX / "randwrite4k_qd32_libaio_jsonplus.json"))
    return [sys.executable, str(script)]


@pytest.mark.slow
def test_a_working_run_longer_than_the_stall_limit_is_not_stopped(fake_fio, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "working")
    monkeypatch.setenv("FAKE_SECONDS", "3")
    doc = run_fio(fake_fio, str(tmp_path / "r.json"), stall_s=1.0)
    assert doc["jobs"]


def test_a_run_that_moves_nothing_is_stopped_after_the_stall_limit(fake_fio, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_MODE", "stuck")
    monkeypatch.setenv("FAKE_SECONDS", "60")
    t0 = time.monotonic()
    with pytest.raises(FioFailed, match=r"fio reported no I/O for [12] s"):
        run_fio(fake_fio, str(tmp_path / "r.json"), stall_s=1.5)
    assert time.monotonic() - t0 < 10


@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None and not os.environ.get("CI"), reason="fio not installed")
def test_real_fio_slower_than_the_stall_limit_finishes(tmp_path):
    """Real fio, rate-limited to a trickle for 10 s, with a 5 s stall limit: its status lines say it
    is working every second, so it runs to its end (twice as long as the limit).  fio 3.33 prints
    its first line with rates 3.2-4.2 s after it starts (the lines before carry none), so a shorter
    limit would stop it before it ever reports: 3 s did, on a quiet machine."""
    argv = [shutil.which("fio") or "fio", "--name=t", f"--filename={tmp_path / 'f'}", "--size=4M", "--rw=randwrite"]
    argv += ["--bs=4k", "--ioengine=psync", "--time_based", "--runtime=10", "--rate_iops=20"]
    doc = run_fio(argv, str(tmp_path / "r.json"), stall_s=5.0)
    assert doc["jobs"][0]["write"]["total_ios"] > 0
    assert fio_mod.ETA_ARGS[0] == "--eta=always"
