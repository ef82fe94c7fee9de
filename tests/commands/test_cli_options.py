"""The CLI's option conventions (issue 12): no option takes an optional value that could
swallow a positional argument, ``--json`` is a plain flag, ``--json-file FILE`` is checked
before the work and written atomically, and output paths that cannot be written are refused
with exit 2 before anything runs."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from opsim import cli

SMART = Path(__file__).parent.resolve().parent.parent.parent / "shared" / "fixtures" / "smartctl"
SNAPSHOT = "smartctl_exporter__sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """(command path, parser) for the top parser and every sub-command's, recursively."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, (*path, name))


def test_no_option_takes_an_optional_value():
    """An option whose value is optional (nargs '?' or '*') takes the next word when it is
    there: ``--json before.json after.json`` once wrote its JSON over before.json."""
    parser = cli.build_parser()
    seen = 0
    offenders = []
    for path, p in _walk(parser):
        for a in p._actions:
            if not a.option_strings:
                continue
            seen += 1
            if a.nargs in ("?", "*"):
                offenders.append(f"opsim {' '.join(path)} {'/'.join(a.option_strings)} (nargs={a.nargs!r})")
    assert seen > 50, "the walk must reach every sub-command's options"
    assert offenders == []


def test_walk_reaches_nested_subcommands():
    paths = {p for p, _ in _walk(cli.build_parser())}
    assert ("smart", "waf") in paths and ("trace", "convert") in paths


def test_json_is_a_flag_on_every_command():
    for path, p in _walk(cli.build_parser()):
        if not path or any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        flags = {s: a for a in p._actions for s in a.option_strings}
        assert "--json" in flags and flags["--json"].nargs == 0, path
        assert "--json-file" in flags and flags["--json-file"].nargs is None, path


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.mark.skipif(not SMART.is_dir(), reason="../shared/fixtures is not beside the repository")
def test_smart_waf_json_before_after_leaves_both_files(tmp_path, capsys):
    """Item 1: ``opsim smart waf --json A B`` used to write its JSON over A, then compute the
    lifetime WAF of B alone and exit 0."""
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    shutil.copy(SMART / SNAPSHOT, a)
    shutil.copy(SMART / SNAPSHOT, b)
    da, db = _digest(a), _digest(b)
    code = cli.main(["smart", "waf", "--json", str(a), str(b)])
    out = capsys.readouterr()
    assert _digest(a) == da and _digest(b) == db
    assert sorted(os.listdir(tmp_path)) == ["after.json", "before.json"]
    # both files were taken as the interval's two ends (the same snapshot twice: nothing was
    # written in between, which the interval form reports as an error or an empty interval)
    if code == 0:
        doc = json.loads(out.out)
        assert "interval" in json.dumps(doc).lower() or "before" in json.dumps(doc).lower()
    else:
        assert code == 2 and "error" in out.err


def _sim_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        "[run]\nwarmup_drive_writes = 0.5\nmeasure_drive_writes = 0.5\n"
    )
    return cfg


@pytest.mark.parametrize("where", ["missing-dir", "is-dir", "read-only-dir"])
def test_json_file_that_cannot_be_written_is_refused_before_the_work(tmp_path, capsys, monkeypatch, where):
    """Item 12: an output path that cannot be written failed with "internal error" after
    the work was done, throwing the result away."""
    cfg = _sim_config(tmp_path)
    if where == "missing-dir":
        target = tmp_path / "nope" / "r.json"
    elif where == "is-dir":
        target = tmp_path / "adir"
        target.mkdir()
    else:
        ro = tmp_path / "ro"
        ro.mkdir()
        target = ro / "r.json"
        if os.geteuid() == 0:  # root writes anywhere: pretend the directory is read-only
            real_access = os.access
            monkeypatch.setattr(
                os, "access", lambda p, m, **kw: False if os.fspath(p) == str(ro) else real_access(p, m, **kw)
            )
        else:  # pragma: no cover - CI runs as root
            ro.chmod(0o500)
    ran = []
    from opsim import sim

    monkeypatch.setattr(sim, "_core", lambda: ran.append(1) or pytest.fail("the simulation started"))
    code = cli.main(["simulate", str(cfg), "--json-file", str(target)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "--json-file" in err and "internal error" not in err
    assert ran == [], "the simulation must not start"


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{res}", "-o", "{missing}/r.html"],
        ["plot", "saturation", "{res}", "-o", "{missing}/p.png"],
    ],
)
def test_report_and_plot_outputs_checked_before_the_work(tmp_path, capsys, argv):
    res = tmp_path / "r.json"
    code = cli.main(["simulate", str(_sim_config(tmp_path)), "--json-file", str(res)])
    assert code == 0
    capsys.readouterr()
    args = [a.format(res=res, missing=tmp_path / "missing") for a in argv]
    code = cli.main(args)
    err = capsys.readouterr().err
    assert code == 2 and "does not exist" in err and "internal error" not in err


def test_atomic_write_fsyncs_file_and_directory(tmp_path, monkeypatch):
    """Item 6: the atomic writer fsyncs the file before the rename and the directory after."""
    from opsim import _output

    synced: list[str] = []
    real_fsync = os.fsync

    def spy(fd):
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real_fsync(fd)

    monkeypatch.setattr(os, "fsync", spy)
    target = tmp_path / "out.txt"
    _output.atomic_write_text(target, "hello")
    assert target.read_text() == "hello\n"
    assert len(synced) == 2
    assert Path(synced[0]).name.startswith(".opsim-")  # the temporary file, before the rename
    assert synced[1] == str(tmp_path)  # then the directory
    assert os.listdir(tmp_path) == ["out.txt"]


def test_atomic_write_follows_a_symlink_and_keeps_it(tmp_path):
    from opsim import _output

    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    _output.atomic_write_text(link, "new")
    assert link.is_symlink() and real.read_text() == "new\n"


def test_atomic_write_error_names_the_path(tmp_path):
    from opsim import _output
    from opsim.errors import InputError

    with pytest.raises(InputError, match="missing"):
        _output.atomic_write_text(tmp_path / "missing" / "x.txt", "x")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
