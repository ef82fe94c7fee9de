"""Issue 36, item 3 and the sweep's part of item 5: `opsim sweep` refuses more workers than
CPUs before any cluster starts, Ctrl-C while its LocalCluster starts exits 130 without a
worker's traceback, a scheduler address is checked before connecting, and a grid value out
of its own range is refused up front (docs/sweeps.md, "Validation")."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

import opsim
from opsim.errors import InputError
from opsim.sweep.run import _cpu_count

GRID = textwrap.dedent("""\
    [drive]
    user_capacity = "64MiB"
    pages_per_block = 64
    [run]
    precondition = "analytic"
    warmup_drive_writes = 0.5
    measure_drive_writes = 1
    [sweep.grid]
    "drive.op" = [0.07, 0.28]
""")


def _cli(args, **kw):
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "opsim.cli", *args], capture_output=True, text=True, timeout=120, **kw)
    return p.returncode, p.stderr, time.monotonic() - t0


@pytest.fixture
def grid(tmp_path):
    g = tmp_path / "grid.toml"
    g.write_text(GRID)
    return g


def test_more_workers_than_cpus_is_refused_before_the_grid_is_read(tmp_path):
    n = _cpu_count() + 1
    with pytest.raises(InputError, match=rf"workers: {n:,} worker processes on {_cpu_count()} CPU"):
        opsim.sweep(str(tmp_path / "no-such-grid.toml"), workers=n)  # the workers first, not the file


def test_cli_workers_1000_exits_2_at_once(grid, tmp_path):
    code, err, took = _cli(["sweep", str(grid), "--workers", "1000", "-o", str(tmp_path / "o.parquet")])
    assert code == 2 and "workers: 1,000 worker processes" in err and "give" in err, err
    assert "Traceback" not in err and took < 30
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.slow
@pytest.mark.parametrize(
    "address,says",
    [
        ("tcp://256.0.0.1:80", "neither an IP address nor a host name"),
        ("tcp://localhost:99999", "a port is 1 to 65535"),
        ("foo://x:1", "protocol 'foo'"),
        ("127.0.0.1:8786", "tcp://HOST:PORT"),
    ],
)
def test_a_bad_scheduler_address_exits_2_before_connecting(grid, tmp_path, address, says):
    code, err, _ = _cli(["sweep", str(grid), "--scheduler", address, "-o", str(tmp_path / "o.parquet")])
    assert code == 2 and "scheduler" in err and says in err, err
    import distributed  # noqa: F401  (imported before the clock starts)

    t0 = time.monotonic()
    with pytest.raises(InputError, match="scheduler"):
        opsim.sweep(str(grid), scheduler=address)
    assert time.monotonic() - t0 < 5  # the 256.0.0.1 waited 15 s


def test_nothing_listening_at_the_scheduler_fails_at_once(grid, tmp_path):
    from opsim.errors import CommandError

    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, err, _ = _cli(["sweep", str(grid), "--scheduler", f"tcp://127.0.0.1:{port}", "-o", str(tmp_path / "o.p")])
    assert code == 1 and "cannot connect to the Dask scheduler" in err, err
    import distributed  # noqa: F401

    t0 = time.monotonic()
    with pytest.raises(CommandError, match="cannot connect"):
        opsim.sweep(str(grid), scheduler=f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - t0 < 5  # Dask's client retried for its 15 s timeout


def test_a_grid_value_out_of_its_range_is_refused_up_front(tmp_path):
    g = tmp_path / "g.toml"
    g.write_text(GRID.replace("[0.07, 0.28]", "[0.07, -1.0]"))
    with pytest.raises(InputError, match=r"sweep\.grid\.drive\.op\[1\]: -1 is out of range"):
        opsim.sweep(str(g), workers=0)
    g.write_text(GRID + '"drive.pages_per_block" = [0]\n')
    with pytest.raises(InputError, match=r"sweep\.grid\.drive\.pages_per_block\[0\]: 0 is out of range"):
        opsim.sweep(str(g), workers=0)


def test_a_combination_still_fails_its_point_only(tmp_path):
    """An OP too small for this drive is a combination: its point fails when it runs, as before."""
    g = tmp_path / "g.toml"
    g.write_text(GRID.replace("[0.07, 0.28]", "[0.001, 0.28]"))
    df = opsim.sweep(str(g), workers=0)
    assert sorted(df["status"]) == ["error", "ok"]


def test_ctrl_c_while_the_cluster_starts_exits_130_without_tracebacks(grid, tmp_path):
    """SIGINT to the whole process group (a terminal's Ctrl-C) while the LocalCluster's workers
    are still starting: exit 130, no worker's KeyboardInterrupt traceback, within a few seconds
    (1-2 s on an idle machine; the bound leaves room for a loaded one)."""
    out = tmp_path / "o.parquet"
    p = subprocess.Popen(
        [sys.executable, "-m", "opsim.cli", "sweep", str(grid), "--workers", str(min(2, _cpu_count())), "-o", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    # once the worker processes exist (forked by the cluster's start-up), interrupt them all
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        kids = subprocess.run(["pgrep", "-s", str(p.pid)], capture_output=True, text=True).stdout.split()
        if len(kids) >= 3:  # opsim, the fork server (and its resource tracker), a worker
            break
        time.sleep(0.05)
    assert p.poll() is None, "the sweep ended before the signal"
    t0 = time.monotonic()
    os.killpg(p.pid, signal.SIGINT)
    try:
        _, err = p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail("still running 30 s after Ctrl-C")
    took = time.monotonic() - t0
    assert p.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert took < 6, took
