"""Issue 23 item 2: bounded work on absurd values.

Every ``[timing]`` value has a bound checked before the model is built (exit 2 naming the
key and the bound; docs/timed.md, "Bounds"): ``timing.t_erase_us = 1e15`` used to be
accepted, the recorder then sized its per-interval series by simulated time (8-12 GB and
growing, Ctrl-C ignored, SIGABRT under a memory limit).  And under a 2 GiB address-space
limit (``prlimit --as``) no command aborts: each finishes or refuses with exit 2.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.resolve().parent.parent
OPSIM = [sys.executable, "-m", "opsim.cli"]
TRACE = ROOT / "tests" / "fixtures" / "traces" / "msr_hm_0.csv"
INPUTS = ROOT / "crates" / "opsim-core" / "presets" / "inputs"

#: the address-space limit of the acceptance (prlimit --as=2147483648)
AS_LIMIT = 2 << 30

SMALL = '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[run]\nwarmup_drive_writes = 0.5\nmeasure_drive_writes = 1\n'


def opsim(*args: str, cwd: Path, limit: int | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    def preexec() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    env = os.environ | {"PYTHONPATH": ""}
    env.pop("OPSIM_MEMORY_LIMIT", None)
    return subprocess.run(
        [*OPSIM, *args], capture_output=True, text=True, cwd=cwd, env=env, preexec_fn=preexec, timeout=timeout
    )


@pytest.mark.parametrize(
    ("line", "key", "bound"),
    [
        ("t_erase_us = 1e15", "timing.t_erase_us", "at most 10000000 us"),
        ("t_read_us = 1e300", "timing.t_read_us", "at most 10000000 us"),
        ("t_prog_page_us = [500, 600, 1e12]", "timing.t_prog_page_us", "at most 10000000 us"),
        ("fw_overhead_us = 1e9", "timing.fw_overhead_us", "at most 1000000 us"),
        ("series_interval_s = 1e-12", "timing.series_interval_s", "expected 0.000001 to 1000000 s"),
        ("channel_mbps = 1e-9", "timing.channel_mbps", "expected 0.1 to 10000000 MB/s"),
        ("arrival_iops = 1e-9", "timing.arrival_iops", "expected 0.01 to 1000000000"),
        ("max_time_s = 1e300", "timing.max_time_s", "at most 100000000 s"),
    ],
)
def test_an_absurd_timing_value_exits_2_within_a_second(tmp_path, line, key, bound):
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"{SMALL}[timing]\n{line}\n")
    t, cpu = time.monotonic(), _children_cpu()
    r = opsim("simulate", str(cfg), cwd=tmp_path, timeout=30)
    elapsed, cpu = time.monotonic() - t, _children_cpu() - cpu
    assert r.returncode == 2, r.stderr
    assert key in r.stderr and bound in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    # refused before any work: under a second of the process's CPU (start-up included; the wall
    # clock of a loaded machine is no measure of the work done), and well within the clock
    assert cpu < 1.0, f"{cpu:.2f} s of CPU"
    assert elapsed < 10.0, f"{elapsed:.2f} s"


def _children_cpu() -> float:
    """CPU seconds (user and system) of the child processes this test has waited for."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _inputs(d: Path) -> None:
    (d / "small.toml").write_text(SMALL)
    (d / "timed.toml").write_text(SMALL + "[timing]\nqueue_depth = 8\n")
    (d / "erase.toml").write_text(SMALL + "[timing]\nt_erase_us = 1e15\n")
    # a series of a million points (a 1 us interval over ~1 s simulated): more than the
    # limit leaves room for in the result (it was a Python MemoryError, "internal error")
    (d / "series.toml").write_text(SMALL + "[timing]\nqueue_depth = 8\nseries_interval_s = 1.1e-6\n")
    (d / "huge.toml").write_text('[drive]\nuser_capacity = "100TB"\nop = 0.07\n')
    (d / "grid.toml").write_text(SMALL.replace("64MiB", "32MiB") + '[sweep.grid]\n"drive.op" = [0.2, 0.28]\n')
    (d / "ds.toml").write_text(
        '[drive]\nnative = "480GB"\ninterface = "sata"\ncell = "tlc"\n'
        "[datasheet]\nseq_write_mbps = 450\nrand_write_iops = 9000\nfob_write_iops = 80000\n"
    )


#: (command, the exit codes it may end with under the limit: 0 done, 2 refused)
COMMANDS = [
    (["simulate", "small.toml", "--json-file", "small.json"], {0}),
    (["simulate", "timed.toml", "--json-file", "timed.json"], {0}),
    (["simulate", "erase.toml"], {2}),
    (["simulate", "series.toml"], {2}),
    (["simulate", "huge.toml"], {2}),
    (["simulate", str(ROOT / "examples" / "pts-1tib.toml")], {2}),
    (["trace", "info", str(TRACE)], {0}),
    (["trace", "convert", str(TRACE), "-o", "t.iolog"], {0}),
    (["report", "small.json", "timed.json", "-o", "r.html"], {0}),
    (["plot", "saturation", "timed.json", "-o", "s.png"], {0}),
    (["calibrate", "--datasheet", "ds.toml", "--predict", "447GiB", "--bound-only"], {0}),
    (["calibrate", "--datasheet", str(INPUTS / "intel-320-160gb.toml"), "--bound-only"], {0}),
    # the confirmation on a scale model under the limit: a 10% grid confirms in two runs (0.5%: six)
    (["advise", "--preset", "samsung-840-pro-256gb", "--min-dwpd", "1", "--pe", "3000", "--step", "10%"], {0}),
    (["sweep", "grid.toml", "-o", "g.parquet", "--workers", "0"], {0}),
    (["presets"], {0}),
]


@pytest.mark.slow
def test_no_command_aborts_under_a_2gib_address_space_limit(tmp_path):
    _inputs(tmp_path)
    for args, codes in COMMANDS:
        r = opsim(*args, cwd=tmp_path, limit=AS_LIMIT)
        what = f"opsim {' '.join(args)}: exit {r.returncode}\n{r.stderr[-2000:]}"
        assert r.returncode in codes, what
        assert "internal error" not in r.stderr and "Traceback" not in r.stderr, what
        assert "memory allocation of" not in r.stderr, what


def test_a_python_memory_error_is_a_plain_failure_not_an_internal_error(capsys):
    """Past the core's estimate, a MemoryError in Python says 'out of memory' (exit 1), no traceback."""
    import argparse

    from opsim import cli

    def boom(args):
        raise MemoryError

    args = argparse.Namespace(func=boom, json=False, json_file=None)
    assert cli._run(cli.build_parser(), args) == 1
    err = capsys.readouterr().err
    assert "out of memory" in err and "internal error" not in err
