"""Issue 12 on the Python side: a symlinked sweep output keeps its lock and its link
(item 5); a binary or non-UTF-8 config is a clear input error (item 13); output paths are
refused before any work (item 12); messages name the input without echoing raw bytes
(item 14)."""

from __future__ import annotations

import os

import pytest

import opsim
from opsim import cli
from opsim.sweep import load_grid, run_sweep
from opsim.sweep.store import _Store

GRID = """\
[drive]
user_capacity = "64MiB"
pages_per_block = 64
[run]
precondition = "analytic"
warmup_drive_writes = 0.2
measure_drive_writes = 0.2
[sweep]
seed = 7
[sweep.grid]
"drive.op" = [0.1, 0.28]
"""


def test_symlinked_sweep_output_shares_the_lock_and_keeps_the_link(tmp_path):
    """Item 5: the lock sat beside the link, so a sweep through the link and one through the
    real name both wrote; and the result replaced the link with a plain file."""
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    real = tmp_path / "data" / "r.parquet"
    real.parent.mkdir()
    link = tmp_path / "r.parquet"
    link.symlink_to(real)

    store = _Store(str(real), load_grid(grid), fresh=False)
    try:
        with pytest.raises(opsim.InputError, match="another opsim sweep is writing"):
            run_sweep(grid, link, workers=0)
    finally:
        store.close()

    res = run_sweep(grid, link, workers=0)
    assert res.summary["computed"] == 2
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.is_file() and real.stat().st_size > 0
    assert sorted(os.listdir(tmp_path)) == ["data", "g.toml", "r.parquet"]
    assert sorted(os.listdir(real.parent)) == ["r.parquet"]  # no lock or temporary file left


@pytest.mark.parametrize(
    "content",
    [
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",  # a binary file
        b'[drive]\nuser_capacity = "1GiB" # caf\xe9\n',  # Latin-1, not UTF-8
    ],
)
def test_binary_or_non_utf8_config_is_an_input_error(tmp_path, capsys, content):
    """Item 13: was 'internal error: UnicodeDecodeError'."""
    cfg = tmp_path / "bad.toml"
    cfg.write_bytes(content)
    code = cli.main(["simulate", str(cfg)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("opsim: error: config") and "UTF-8" in err and "internal error" not in err
    assert "\x00" not in err


def test_config_api_reports_non_utf8_as_config_error(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_bytes(b"\xff\xfe[drive]\n")
    with pytest.raises(opsim.ConfigError, match="UTF-8"):
        opsim.simulate(cfg)


def test_config_path_that_is_a_directory(tmp_path, capsys):
    code = cli.main(["simulate", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and "directory" in err and "internal error" not in err


def test_plan_on_a_character_device_says_what_is_wrong(capsys):
    """Item 14: `opsim plan /dev/null` said "cannot tell the interface (None)"."""
    code = cli.main(["plan", "/dev/null"])
    err = capsys.readouterr().err
    assert code == 2 and "neither a block device nor an image file" in err and "None" not in err


def test_plan_interface_unknown_names_what_the_probe_lacked():
    from opsim.errors import InputError
    from opsim.planner.plan import make_plan

    with pytest.raises(InputError, match=r"found no interface.*--interface sata\|nvme\|sas"):
        make_plan({"path": "/dev/sdz", "interface": None, "sector_size": 512})


def test_error_messages_never_echo_raw_control_bytes(capsys):
    """Item 14: raw NUL bytes (and terminal escapes) from the input were echoed."""
    code = cli.main(["capacity", "--native", "480\x00GB\x1b[31m"])
    err = capsys.readouterr().err
    assert code == 2
    assert "\x00" not in err and "\x1b" not in err and "\\x00" in err


def test_negative_size_says_negative():
    """Item 14: "-8MiB" was "unknown unit" in the core and "not a size" here."""
    from opsim.units import parse_size

    with pytest.raises(opsim.InputError, match="cannot be negative"):
        parse_size("-8MiB", key="size")


@pytest.mark.parametrize(
    "argv,message",
    [
        (["capacity", "--native", "-8MiB"], "native: a size cannot be negative"),  # was "expected one argument"
        (
            ["plan", "--interface", "sata", "--native", "480GB", "--op", "-5%", "--op-basis", "user"],
            "op: -5% cannot be negative",
        ),
        (["advise", "--preset", "samsung-840-pro-256gb", "--min-iops", "nanx"], "'nanx' is not a finite number"),
    ],
)
def test_negative_and_non_finite_values_reach_their_checks(capsys, argv, message):
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
