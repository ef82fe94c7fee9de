"""Issue 23, items 1 and 9: output targets (docs/reliability.md, "Writing files").

1. ``--json-file /dev/null`` (and ``-o /dev/null``) renamed a temporary file over the device
   node, which became a regular file.  A character device or a FIFO is now written in place;
   any other existing non-regular file (block device, socket) is refused with exit 2.
9. An output that is one of the command's inputs (``trace convert X -o X``, ``report R -o R``,
   ``simulate C --json-file C``, also through a symbolic or a hard link) replaced the input;
   it is refused with exit 2 before any work.  A symbolic link at an output is followed by
   the Python writer and the core's alike: the file it names is replaced, the link stays.

Device nodes are made with mknod in the test's directory (we run as root), never /dev's own.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import socket
import stat
import threading
import time
from pathlib import Path

import pytest

from opsim import _output, cli
from opsim.errors import InputError

ROOT = Path(__file__).parent.resolve().parent.parent
TRACE = ROOT / "tests" / "fixtures" / "traces" / "msr_hm_0.csv"
PRESET = ROOT / "crates" / "opsim-core" / "presets" / "intel-320-160gb.toml"
CONFIG = (
    '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
    "[run]\nwarmup_drive_writes = 0.5\nmeasure_drive_writes = 0.5\n"
)


def _digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _null(p: Path) -> Path:
    """A character device with /dev/null's numbers, made here."""
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:  # pragma: no cover - CI runs as root
        pytest.skip("mknod needs root")
    return p


def _is_null(p: Path) -> bool:
    st = os.lstat(p)
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


def _run(capsys, argv) -> tuple[int, str]:
    code = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.err


@pytest.fixture
def cfg(tmp_path) -> Path:
    p = tmp_path / "c.toml"
    p.write_text(CONFIG)
    return p


@pytest.fixture(scope="module")
def result(tmp_path_factory) -> Path:
    """One simulate result document, for report and plot."""
    d = tmp_path_factory.mktemp("result")
    (d / "c.toml").write_text(CONFIG)
    res = d / "r.json"
    assert cli.main(["simulate", str(d / "c.toml"), "--json-file", str(res)]) == 0
    return res


def _trace(tmp_path: Path) -> Path:
    t = tmp_path / "t.csv"
    shutil.copy(TRACE, t)
    return t


# ----------------------------------------------------------------- item 1: device nodes


def _argv(kind: str, tmp_path: Path, cfg: Path, result: Path, out: Path) -> list:
    return {
        "simulate": ["simulate", cfg, "--json-file", out],
        "trace-convert": ["trace", "convert", _trace(tmp_path), "-o", out],
        "trace-info": ["trace", "info", _trace(tmp_path), "--json-file", out],
        "report": ["report", result, "-o", out],
        "plot": ["plot", "waf-op", result, "-o", out],
    }[kind]


KINDS = ["simulate", "trace-convert", "trace-info", "report", "plot"]


@pytest.mark.slow
@pytest.mark.parametrize("kind", KINDS)
def test_a_character_device_output_stays_a_device(tmp_path, capsys, cfg, result, kind):
    """Item 1: the device node became a regular file holding the output."""
    node = _null(tmp_path / ("null.png" if kind == "plot" else "null"))
    before = sorted(os.listdir(tmp_path))
    code, err = _run(capsys, _argv(kind, tmp_path, cfg, result, node))
    assert code == 0, err
    assert _is_null(node), "the device node was replaced"
    after = sorted(os.listdir(tmp_path))
    assert [n for n in after if n not in before and n != "t.csv"] == [], "a temporary file was left"


def test_the_python_writer_keeps_a_device(tmp_path):
    node = _null(tmp_path / "null")
    _output.atomic_write_text(node, "gone")
    _output.atomic_write(node, lambda f: f.write(b"\0" * 100_000), binary=True)
    assert _is_null(node) and os.listdir(tmp_path) == ["null"]


def test_the_core_writer_keeps_a_device(tmp_path):
    from opsim import trace

    node = _null(tmp_path / "null")
    assert trace.convert(str(TRACE), str(node)) > 0
    assert _is_null(node) and os.listdir(tmp_path) == ["null"]


class _FifoReader(threading.Thread):
    """Reads a FIFO until its writer closes it, without blocking the test when no writer
    ever comes (the old code renamed a file over the FIFO instead of writing into it)."""

    def __init__(self, path: Path):
        super().__init__(daemon=True)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = b""
        self.stop = threading.Event()

    def run(self):
        quiet_since = None
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:  # a writer is there, nothing to read yet
                chunk, quiet_since = None, None
            if chunk:
                self.data += chunk
                continue
            if chunk == b"" and self.data:  # the writer closed it: done
                break
            if self.stop.is_set():  # no writer ever came: give up a second after the command
                quiet_since = quiet_since or time.monotonic()
                if time.monotonic() - quiet_since > 1:
                    break
            time.sleep(0.01)
        os.close(self.fd)


@pytest.mark.parametrize("kind", ["simulate", "trace-convert"])
def test_a_fifo_output_is_written_into(tmp_path, capsys, cfg, result, kind):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = _FifoReader(fifo)
    reader.start()
    try:
        code, err = _run(capsys, _argv(kind, tmp_path, cfg, result, fifo))
    finally:
        reader.stop.set()
        reader.join(30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode), "the FIFO was replaced"
    text = reader.data.decode()
    if kind == "simulate":
        assert json.loads(text)["op"]["user"] == pytest.approx(0.28, abs=0.01)
    else:
        assert text.startswith("fio version 3 iolog")


def _special(tmp_path: Path, what: str) -> tuple[Path, object]:
    p = tmp_path / what
    if what == "block-device":
        try:
            os.mknod(p, 0o600 | stat.S_IFBLK, os.makedev(7, 250))  # an unused loop device number
        except PermissionError:  # pragma: no cover
            pytest.skip("mknod needs root")
        return p, None
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(p))
    return p, s


@pytest.mark.parametrize("what", ["block-device", "socket"])
@pytest.mark.parametrize("kind", ["simulate", "trace-convert", "report"])
def test_other_special_files_are_refused_before_the_work(tmp_path, capsys, monkeypatch, cfg, result, kind, what):
    """Item 1: a block device or a socket was renamed over (or the simulation ran first)."""
    from opsim import sim
    from opsim.report import document as report  # where report.write finds build

    target, keep = _special(tmp_path, what)
    mode = os.lstat(target).st_mode
    monkeypatch.setattr(sim, "_core", lambda: pytest.fail("the simulation started"))
    monkeypatch.setattr(report, "build", lambda *a, **k: pytest.fail("the report was built"))
    argv = _argv(kind, tmp_path, cfg, result, target)
    if kind == "trace-convert":
        monkeypatch.setattr(importlib.import_module("opsim.trace"), "convert", lambda *a, **k: pytest.fail("ran"))
    code, err = _run(capsys, argv)
    assert code == 2, err
    assert what.replace("-", " ") in err and str(target) in err
    assert ("--json-file" if kind == "simulate" else "--output") in err
    assert os.lstat(target).st_mode == mode
    del keep


def test_the_writers_refuse_a_block_device(tmp_path):
    from opsim import trace

    blk, _ = _special(tmp_path, "block-device")
    with pytest.raises(InputError, match="block device"):
        _output.atomic_write_text(blk, "x")
    with pytest.raises(InputError, match="block device"):
        trace.convert(str(TRACE), str(blk))
    assert stat.S_ISBLK(os.lstat(blk).st_mode)


# ----------------------------------------------------------------- item 9: output = input


def _link(tmp_path: Path, src: Path, how: str) -> Path:
    if how == "same":
        return src
    p = tmp_path / f"{how}-link{src.suffix}"
    if how == "symlink":
        p.symlink_to(src.name)
    else:
        os.link(src, p)
    return p


HOW = ["same", "symlink", "hardlink"]


@pytest.mark.parametrize("how", HOW)
def test_simulate_json_file_over_its_config(tmp_path, capsys, monkeypatch, cfg, how):
    from opsim import sim

    monkeypatch.setattr(sim, "_core", lambda: pytest.fail("the simulation started"))
    d = _digest(cfg)
    code, err = _run(capsys, ["simulate", cfg, "--json-file", _link(tmp_path, cfg, how)])
    assert code == 2 and "--json-file" in err and "same file" in err, err
    assert _digest(cfg) == d


@pytest.mark.parametrize("named", ["trace", "drive file"])
def test_simulate_json_file_over_a_file_the_config_names(tmp_path, capsys, monkeypatch, named):
    from opsim import sim

    if named == "trace":
        inp = _trace(tmp_path)
        text = '[drive]\nuser_capacity = "64MiB"\nop = 0.28\n[workload]\ntype = "trace"\n'
        text += '[workload.trace]\npath = "t.csv"\n'
    else:
        inp = tmp_path / "drive.toml"
        shutil.copy(PRESET, inp)
        text = 'preset = "./drive.toml"\n'
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    monkeypatch.setattr(sim, "_core", lambda: pytest.fail("the simulation started"))
    d = _digest(inp)
    code, err = _run(capsys, ["simulate", cfg, "--json-file", _link(tmp_path, inp, "symlink")])
    assert code == 2 and "--json-file" in err and "same file" in err, err
    assert _digest(inp) == d


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("opt", ["-o", "--json-file"])
def test_trace_convert_over_its_input(tmp_path, capsys, how, opt):
    t = _trace(tmp_path)
    d = _digest(t)
    out = ["-o", tmp_path / "out.log"] if opt == "--json-file" else []
    code, err = _run(capsys, ["trace", "convert", t, *out, opt, _link(tmp_path, t, how)])
    assert code == 2 and opt.lstrip("-")[:4] in err and "same file" in err, err
    assert _digest(t) == d
    assert not (tmp_path / "out.log").exists()


def test_trace_convert_api_over_its_input(tmp_path):
    """The core refuses too (the Python API calls it directly)."""
    from opsim import trace

    t = _trace(tmp_path)
    d = _digest(t)
    for how in HOW:
        with pytest.raises(InputError, match="input file"):
            trace.convert(str(t), str(_link(tmp_path, t, how)))
    assert _digest(t) == d


@pytest.mark.parametrize("how", HOW)
def test_report_over_its_input(tmp_path, capsys, result, how):
    r = tmp_path / "r.json"
    shutil.copy(result, r)
    d = _digest(r)
    code, err = _run(capsys, ["report", r, "-o", _link(tmp_path, r, how)])
    assert code == 2 and "--output" in err and "same file" in err, err
    assert _digest(r) == d


def test_plot_over_its_input(tmp_path, capsys, result):
    r = tmp_path / "r.png"  # a result document under a figure's name
    shutil.copy(result, r)
    d = _digest(r)
    code, err = _run(capsys, ["plot", "waf-op", r, "-o", r])
    assert code == 2 and "--output" in err and "same file" in err, err
    assert _digest(r) == d


def test_json_file_over_the_other_output(tmp_path, capsys, result):
    out = tmp_path / "r.html"
    code, err = _run(capsys, ["report", result, "-o", out, "--json-file", out])
    assert code == 2 and "--json-file" in err and "same file" in err, err
    assert not out.exists()


def test_calibrate_over_its_datasheet(tmp_path, capsys, monkeypatch):
    calibrate = importlib.import_module("opsim.calibrate")
    monkeypatch.setattr(calibrate, "calibrate", lambda *a, **k: pytest.fail("the fit started"))
    ds = tmp_path / "ds.toml"
    ds.write_text(
        '[drive]\nnative = "480GB"\ninterface = "sata"\ncell = "tlc"\n'
        "[datasheet]\nseq_write_mbps = 450\nrand_write_iops = 9000\nfob_write_iops = 80000\n"
    )
    d = _digest(ds)
    code, err = _run(capsys, ["calibrate", "--datasheet", ds, "-o", _link(tmp_path, ds, "hardlink")])
    assert code == 2 and "output" in err and "same file" in err, err
    assert _digest(ds) == d


def test_demo_over_its_drive_file(tmp_path, capsys, monkeypatch):
    demo = importlib.import_module("opsim.commands.demo")
    monkeypatch.setattr(demo, "simulate_all", lambda *a, **k: pytest.fail("the simulations started"))
    drive = tmp_path / "drive.toml"
    shutil.copy(PRESET, drive)
    d = _digest(drive)
    code, err = _run(capsys, ["demo", "--drive", drive, "-o", _link(tmp_path, drive, "symlink")])
    assert code == 2 and "--output" in err and "same file" in err, err
    assert _digest(drive) == d


def test_sweep_over_its_grid(tmp_path, capsys, monkeypatch):
    sweep = importlib.import_module("opsim.sweep")
    monkeypatch.setattr(sweep, "run_sweep", lambda *a, **k: pytest.fail("the sweep started"))
    grid = tmp_path / "grid.toml"
    grid.write_text(CONFIG + '[sweep]\n[sweep.grid]\n"drive.op" = [0.1, 0.2]\n')
    d = _digest(grid)
    code, err = _run(capsys, ["sweep", grid, "--workers", "0", "--fresh", "-o", grid])
    assert code == 2 and "--output" in err and "same file" in err, err
    assert _digest(grid) == d


def test_sweep_json_file_over_its_default_results_file(tmp_path, capsys, monkeypatch):
    """The default -o (GRID.parquet) is not on the command line: checked by the command."""
    sweep = importlib.import_module("opsim.sweep")
    monkeypatch.setattr(sweep, "run_sweep", lambda *a, **k: pytest.fail("the sweep started"))
    grid = tmp_path / "grid.toml"
    grid.write_text(CONFIG + '[sweep]\n[sweep.grid]\n"drive.op" = [0.1, 0.2]\n')
    code, err = _run(capsys, ["sweep", grid, "--workers", "0", "--json-file", tmp_path / "grid.parquet"])
    assert code == 2 and "--json-file" in err and "same file" in err, err


def test_smart_snapshot_over_its_device(tmp_path, capsys, monkeypatch):
    smart = importlib.import_module("opsim.smart")
    monkeypatch.setattr(smart, "take_snapshot", lambda *a, **k: pytest.fail("the drive was read"))
    img = tmp_path / "disk.img"
    img.write_bytes(b"\1" * 4096)
    d = _digest(img)
    code, err = _run(capsys, ["smart", "snapshot", img, "-o", _link(tmp_path, img, "symlink")])
    assert code == 2 and "--output" in err and "same file" in err, err
    assert _digest(img) == d


def test_validate_markdown_and_json_file_on_one_file(tmp_path, capsys, monkeypatch):
    validation = importlib.import_module("opsim.validation")
    monkeypatch.setattr(validation, "run_oracles", lambda *a, **k: pytest.fail("the suite started"))
    out = tmp_path / "v.md"
    code, err = _run(capsys, ["validate", "--markdown", out, "--json-file", out])
    assert code == 2 and "--json-file" in err and "same file" in err, err
    assert not out.exists()


# ----------------------------------------------------------------- symbolic links


@pytest.mark.parametrize("dangling", [False, True], ids=["link", "dangling-link"])
def test_both_writers_follow_a_symlink_and_keep_it(tmp_path, capsys, cfg, dangling):
    """The Python writer (``--json-file``) and the core's (``trace convert -o``) treat a link
    the same way: the file it names is written, the link stays (the core replaced the link)."""
    t = _trace(tmp_path)
    for argv, name in (
        (["simulate", cfg, "--json-file"], "py"),
        (["trace", "convert", t, "-o"], "core"),
    ):
        real = tmp_path / f"{name}-real.out"
        if not dangling:
            real.write_text("old\n")
        link = tmp_path / f"{name}-link.out"
        link.symlink_to(real.name)
        code, err = _run(capsys, [*argv, link])
        assert code == 0, err
        assert link.is_symlink() and os.readlink(link) == real.name, name
        assert real.read_text() != "old\n", name


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(pytest.main([__file__, "-q"]))
