"""opsim measure --fdp: writes with NVMe Flexible Data Placement through fio's io_uring_cmd engine
on the namespace's generic device /dev/ngXnY (fdp=1, fdp_pli=, fdp_pli_select=); what fio would
reject is refused up front (exit 2, the option named) and the result records the placement.

No FDP drive is needed: the device checks are replaced where a test says so, and fio by the
recorded fio output (tests/fixtures/measure), as in tests/measure/test_measure_schema.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import recorded_fio
from opsim.cli import main
from opsim.devices import guard as devices
from opsim.errors import CommandError, ConfigError, DeviceError
from opsim.measure import fdp as F
from opsim.measure import fio as fio_mod
from opsim.measure import runner
from opsim.measure.schema import check_timed

PLACEMENT = F.FdpPlacement(namespace="/dev/nvme0n1", device="/dev/ng0n1", pli=(0, 1), select="random")


def _code(argv) -> int:
    """``opsim ARGV``'s exit code (argparse's usage errors exit through SystemExit)."""
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code or 0)


def _fake_fio(monkeypatch, seen: list):
    """fio replaced by its recorded output; every argv it was given is kept in ``seen``."""
    recorded_fio.replay(monkeypatch, seen.append)


def _run_plan(tmp_path, fdp):
    plan = runner.Plan(
        test="wsat",
        target="/dev/nvme0n1",
        target_kind="block",
        capacity_bytes=256 * 2**20,
        outdir=str(tmp_path / "out"),
        round_s=20,
        bs=("4k",),
        capacity_multiple=0.5,
        fdp=fdp,
    )
    return plan, json.loads(json.dumps(runner.run(plan, runner.Progress("off"))))


# ---------------------------------------------------------------- the fio job


def test_fdp_job_carries_the_placement_options(tmp_path, monkeypatch):
    seen: list = []
    _fake_fio(monkeypatch, seen)
    plan, d = _run_plan(tmp_path, PLACEMENT)
    assert seen, "fio ran"
    for argv in seen:
        job = " ".join(argv)
        assert "--filename=/dev/ng0n1" in argv  # the generic device, not the block device
        assert "--ioengine=io_uring_cmd" in argv and "--cmd_type=nvme" in argv
        assert "--fdp=1" in argv and "--fdp_pli=0,1" in argv and "--fdp_pli_select=random" in argv
        assert "libaio" not in job and "/dev/nvme0n1" not in job
    assert plan.ioengine == "io_uring_cmd"
    assert d["parameters"]["ioengine"] == "io_uring_cmd"
    assert d["placement"] == {
        "mode": "fdp",
        "namespace": "/dev/nvme0n1",
        "device": "/dev/ng0n1",
        "pli": [0, 1],
        "pli_select": "random",
        "pli_select_source": "given",
        "fio_options": {
            "ioengine": "io_uring_cmd",
            "cmd_type": "nvme",
            "fdp": "1",
            "fdp_pli": "0,1",
            "fdp_pli_select": "random",
        },
    }
    assert d["target"]["path"] == "/dev/nvme0n1"
    assert check_timed(d) == []  # still the timed simulator's schema


def test_fdp_defaults_leave_fio_its_own(tmp_path, monkeypatch):
    """Without --fdp-pli and --fdp-pli-select fio cycles round robin through every placement ID
    of the namespace; opsim passes neither option (fio 3.34 knows only fdp and fdp_pli)."""
    seen: list = []
    _fake_fio(monkeypatch, seen)
    _, d = _run_plan(tmp_path, F.FdpPlacement(namespace="/dev/nvme0n1", device="/dev/ng0n1"))
    assert "--fdp=1" in seen[0]
    assert not any(a.startswith(("--fdp_pli", "--fdp_pli_select")) for a in seen[0])
    assert d["placement"]["pli"] is None
    assert (d["placement"]["pli_select"], d["placement"]["pli_select_source"]) == ("roundrobin", "fio default")


def test_without_fdp_nothing_changes(tmp_path, monkeypatch):
    seen: list = []
    _fake_fio(monkeypatch, seen)
    _, d = _run_plan(tmp_path, None)
    assert "--filename=/dev/nvme0n1" in seen[0] and "--ioengine=libaio" in seen[0]
    assert not any(a.startswith(("--fdp", "--cmd_type")) for a in seen[0])
    assert d["placement"] == {"mode": "none"}


@pytest.mark.skipif(shutil.which("fio") is None, reason="fio not installed")
def test_a_fio_that_knows_fdp_parses_the_options():
    """Where the installed fio has FDP (3.34+), it parses opsim's options (--parse-only)."""
    fio = shutil.which("fio")
    assert fio is not None
    try:
        F.check_fio(fio, fio_mod.fio_version(fio), ["fdp", "fdp_pli", "fdp_pli_select"])
    except CommandError as e:
        pytest.skip(str(e))
    args = ["--name=x", "--filename=/dev/null", "--ioengine=io_uring_cmd", *PLACEMENT.fio_args()]
    r = subprocess.run([fio, "--parse-only", *args], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# ---------------------------------------------------------------- the pieces


def test_parse_pli():
    assert F.parse_pli("0") == (0,)
    assert F.parse_pli("0,2-4, 7") == (0, 2, 3, 4, 7)
    for bad, msg in [
        ("", "not a placement ID"),
        ("a", "not a placement ID"),
        ("-1", "not a placement ID"),
        ("3-1", "backwards"),
        ("0,0", "twice"),
        ("1,0-2", "twice"),
        ("128", "at most 128"),
    ]:
        with pytest.raises(ConfigError, match=msg) as e:
            F.parse_pli(bad)
        assert e.value.key == "fdp-pli"


def test_generic_device_of_a_namespace():
    assert F.generic_device("/dev/nvme0n1") == "/dev/ng0n1"
    assert F.generic_device("/dev/disk/by-id/x", "nvme12n3") == "/dev/ng12n3"
    for path, name in [("/dev/sdb", "sdb"), ("/dev/nvme0n1p1", "nvme0n1p1"), ("/dev/loop0", "loop0")]:
        with pytest.raises(DeviceError, match="not an NVMe namespace"):
            F.generic_device(path, name)
    with pytest.raises(DeviceError, match="No such file"):
        F.check_generic_device("/dev/ng-does-not-exist")
    with pytest.raises(DeviceError, match="not a character device"):
        F.check_generic_device("/")


def test_block_sizes_must_be_whole_lbas():
    F.check_block_sizes({"4k": 4096, "8k": 8192}, 4096)
    F.check_block_sizes({"512": 512}, None)  # LBA size unknown: nothing to check
    with pytest.raises(ConfigError, match="4096-byte LBA") as e:
        F.check_block_sizes({"512": 512, "4k": 4096}, 4096)
    assert e.value.key == "bs"


def _fake_fio_binary(tmp_path, knows: set[str]) -> str:
    exe = tmp_path / "fio"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        f"known = {sorted(knows)!r}\n"
        "name = sys.argv[1].split('=', 1)[1]\n"
        "print(name + ': help' if name in known else 'No such command: ' + name)\n"
    )
    exe.chmod(0o755)
    return str(exe)


def test_an_old_fio_is_refused_before_the_run(tmp_path):
    old = _fake_fio_binary(tmp_path, set())
    with pytest.raises(CommandError, match=r"fio-3\.33 does not know fdp, fdp_pli: FDP placement needs fio 3\.34"):
        F.check_fio(old, "fio-3.33", ["fdp", "fdp_pli"])
    new = _fake_fio_binary(tmp_path, {"fdp", "fdp_pli"})
    F.check_fio(new, "fio-3.34", ["fdp", "fdp_pli"])
    with pytest.raises(CommandError, match="does not know fdp_pli_select"):
        F.check_fio(new, "fio-3.34", ["fdp", "fdp_pli", "fdp_pli_select"])


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize(
    "argv,field",
    [
        (["--fdp"], "--fdp"),  # a file target cannot carry placement
        (["--fdp-pli", "0"], "--fdp"),
        (["--fdp-pli-select", "random"], "--fdp"),
        (["--fdp", "--fdp-pli", "0,x"], "--fdp-pli"),
        (["--fdp", "--fdp-pli", "200"], "--fdp-pli"),
        (["--fdp", "--ioengine", "libaio"], "--ioengine"),
        (["--fdp", "--buffered"], "--buffered"),
        (["--fdp", "--device", "/dev/ng0n1", "--destroy-data=/dev/ng0n1"], "/dev/nvme0n1"),
    ],
)
def test_refused_up_front_with_nothing_created(tmp_path, monkeypatch, capsys, argv, field):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    rc = main(["measure", "wsat", *argv, "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert field in err and "internal error" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_file_target_message_says_how(tmp_path, capsys):
    assert main(["measure", "iops", "--fdp", "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "a file cannot carry placement" in err and "--device /dev/nvmeXnY" in err and "io_uring_cmd" in err


def test_bad_select_is_a_usage_error(tmp_path):
    assert _code(["measure", "wsat", "--fdp", "--fdp-pli-select", "sideways", "-o", str(tmp_path / "o")]) == 2


def test_fdp_on_a_regular_file_named_as_device(tmp_path, capsys):
    f = tmp_path / "img"
    f.write_bytes(b"\0" * 4096)
    rc = main(["measure", "wsat", "--fdp", "--device", str(f), f"--destroy-data={f}", "-o", str(tmp_path / "o")])
    assert rc == 2 and "block device" in capsys.readouterr().err
    assert f.read_bytes() == b"\0" * 4096


class _Namespace:
    """An NVMe namespace as the guard would describe it (no drive in the test machine)."""

    def __init__(self, monkeypatch, lba=4096, fio_knows=("fdp", "fdp_pli", "fdp_pli_select"), tmp_path=None):
        self.checked: list = []
        tgt = devices.Target(path="/dev/nvme0n1", kind="block", size_bytes=256 * 2**20, dev_name="nvme0n1")
        monkeypatch.setattr(devices, "guard_destructive", lambda p, c, force=False: self.checked.append((p, c)) or tgt)
        monkeypatch.setattr(F, "check_generic_device", lambda p: self.checked.append(p))
        monkeypatch.setattr(F, "logical_block_size", lambda name: lba)
        assert tmp_path is not None
        exe = _fake_fio_binary(tmp_path, set(fio_knows))
        monkeypatch.setattr(fio_mod, "fio_binary", lambda: exe)
        monkeypatch.setattr(fio_mod, "fio_version", lambda fio=None: "fio-3.36")


def test_end_to_end_on_a_namespace(tmp_path, monkeypatch, capsys):
    ns = _Namespace(monkeypatch, tmp_path=tmp_path)
    seen: list = []
    _fake_fio(monkeypatch, seen)
    out = tmp_path / "run"
    argv = ["measure", "wsat", "--device", "/dev/nvme0n1", "--destroy-data=/dev/nvme0n1", "--fdp"]
    rc = main([*argv, "--fdp-pli", "1", "--fdp-pli-select", "roundrobin", "--round", "1", "-o", str(out), "--json"])
    cap = capsys.readouterr()
    assert rc == 0, cap.err
    d = json.loads(cap.out)
    assert ns.checked == [("/dev/nvme0n1", "/dev/nvme0n1"), "/dev/ng0n1"]  # the block device guarded
    assert d["placement"]["device"] == "/dev/ng0n1" and d["placement"]["pli"] == [1]
    assert all("--fdp_pli=1" in a and "--fdp_pli_select=roundrobin" in a for a in seen)
    assert json.loads((out / "result.json").read_text())["placement"] == d["placement"]
    # the table says it too
    monkeypatch.chdir(tmp_path)
    rc = main([*argv, "--round", "1", "-o", str(tmp_path / "run2")])
    assert rc == 0
    assert "FDP via /dev/ng0n1: fdp_pli all (roundrobin)" in capsys.readouterr().out


def test_block_size_below_the_lba_is_refused(tmp_path, monkeypatch, capsys):
    _Namespace(monkeypatch, lba=4096, tmp_path=tmp_path)
    seen: list = []
    _fake_fio(monkeypatch, seen)
    argv = ["measure", "wsat", "--device", "/dev/nvme0n1", "--destroy-data=/dev/nvme0n1", "--fdp", "--bs", "512"]
    rc = main([*argv, "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "--bs" in err and "4096-byte LBA" in err
    assert seen == [] and not (tmp_path / "o").exists()


def test_old_fio_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    _Namespace(monkeypatch, fio_knows=(), tmp_path=tmp_path)
    seen: list = []
    _fake_fio(monkeypatch, seen)
    argv = ["measure", "wsat", "--device", "/dev/nvme0n1", "--destroy-data=/dev/nvme0n1", "--fdp"]
    rc = main([*argv, "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and "fio-3.36 does not know fdp" in err
    assert seen == [] and not (tmp_path / "o").exists()
