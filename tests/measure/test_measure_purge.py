"""Purge before a test (blkdiscard, nvme format --ses=1, ATA SECURITY ERASE via hdparm), with a
fake command runner and recorded ``hdparm -I`` outputs: the commands issued in order, the
refusals, and nothing run when refused.  No real device is touched."""

import json
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.devices import guard as devices
from opsim.devices.guard import Target
from opsim.errors import CommandError, DeviceError
from opsim.measure import purge as purge_module
from opsim.measure.purge import Completed, purge

HD = Path(__file__).parent.parent / "fixtures" / "measure" / "hdparm"
PLANNER = Path(__file__).parent.parent / "fixtures" / "planner"
READY = (HD / "samsung860-ready.txt").read_text()
PASSWORD_SET = (HD / "samsung860-password-set.txt").read_text()
FROZEN = (HD / "samsung860-frozen.txt").read_text()
LOCKED = (HD / "samsung860-locked.txt").read_text()
NO_SECURITY = (HD / "qemu-harddisk-no-security.txt").read_text()
INTEL320 = (PLANNER / "sata-intel320-hpa" / "hdparm-I.txt").read_text()  # no enhanced erase
DEV = "/dev/sdz"


class FakeRunner:
    """Answers each command from a script: ``hdparm -I`` outputs in order, other commands by their
    first option; records every call (argv and whether it ran uninterruptible)."""

    def __init__(self, identify=(), fail=()):
        self.identify = list(identify)
        self.fail = set(fail)
        self.calls = []

    def __call__(self, argv, timeout=None, uninterruptible=False):
        self.calls.append((argv, uninterruptible))
        if argv[1] == "-I":
            return Completed(0, self.identify.pop(0), "")
        op = next((a for a in argv[1:] if a.startswith("--security") or a in ("format", "-f")), argv[1])
        if op in self.fail:
            return Completed(5, "", f"{op}: Input/output error")
        return Completed(0, "", "")

    @property
    def argvs(self):
        return [a for a, _ in self.calls]


def fake_device(monkeypatch, **kw):
    base = dict(
        path=DEV,
        kind="block",
        size_bytes=500107862016,
        dev_name="sdz",
        sysfs_path="/sys/devices/pci0000:00/0000:00:17.0/ata3/host2/target2:0:0/2:0:0:0/block/sdz",
    )
    base.update(kw)
    monkeypatch.setattr(devices, "probe_target", lambda p: Target(**{**base, "path": p}))


def hd(*args):
    return ["hdparm", *args]


# --------------------------------------------------------------------------- the ATA erase


@pytest.mark.parametrize(
    "method,flag", [("ata-erase", "--security-erase"), ("ata-erase-enhanced", "--security-erase-enhanced")]
)
def test_ata_erase_issues_set_pass_then_erase(monkeypatch, method, flag):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[READY, PASSWORD_SET, READY])
    notes = []
    r = purge(DEV, method, confirm=DEV, runner=run, notify=notes.append)
    assert run.argvs == [
        hd("-I", DEV),
        hd("--user-master", "u", "--security-set-pass", "opsim", DEV),
        hd("-I", DEV),  # the password took: security enabled
        hd("--user-master", "u", flag, "opsim", DEV),
        hd("-I", DEV),  # the erase cleared it again
    ]
    # only the erase runs shielded from Ctrl-C
    assert [u for _, u in run.calls] == [False, False, False, True, False]
    assert r["method"] == method and r["commands"] == run.argvs
    assert r["security_before"]["enabled"] is False and r["security_after"]["enabled"] is False
    assert r["estimated_minutes"] == 2 and "2 min" in notes[0] and "cannot be interrupted" in notes[0]


def test_frozen_refused_with_unfreeze_hint(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[FROZEN])
    with pytest.raises(DeviceError) as e:
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    msg = str(e.value)
    assert "frozen" in msg and "suspend" in msg and "hot-plug" in msg and "not frozen" in msg
    assert run.argvs == [hd("-I", DEV)]  # read-only identify, nothing else


def test_planner_fixture_frozen_micron_refused(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[(PLANNER / "sata-micron1100" / "hdparm-I.txt").read_text()])
    with pytest.raises(DeviceError, match="frozen"):
        purge(DEV, "ata-erase-enhanced", confirm=DEV, runner=run)
    assert run.argvs == [hd("-I", DEV)]


@pytest.mark.parametrize(
    "text,words",
    [
        (LOCKED, ["locked", "--security-unlock"]),
        (PASSWORD_SET, ["already set", "does not know", "--security-disable", "'opsim'"]),
        (NO_SECURITY, ["no ATA Security feature set", "discard"]),
        (READY.replace("\tnot\texpired: security count", "\t\texpired: security count"), ["expired", "power-cycle"]),
    ],
)
def test_security_states_refused_before_any_command(monkeypatch, text, words):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[text])
    with pytest.raises(DeviceError) as e:
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    for w in words:
        assert w in str(e.value)
    assert run.argvs == [hd("-I", DEV)]


def test_enhanced_erase_needs_support(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[INTEL320])
    with pytest.raises(DeviceError, match="does not support ENHANCED"):
        purge(DEV, "ata-erase-enhanced", confirm=DEV, runner=run)
    assert run.argvs == [hd("-I", DEV)]
    # the normal erase is fine on the same drive
    run = FakeRunner(identify=[INTEL320, INTEL320.replace("\tnot\tenabled", "\t\tenabled"), INTEL320])
    purge(DEV, "ata-erase", confirm=DEV, runner=run)
    assert run.argvs[3] == hd("--user-master", "u", "--security-erase", "opsim", DEV)


def test_failed_erase_removes_the_password_again(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[READY, PASSWORD_SET, PASSWORD_SET], fail={"--security-erase"})
    with pytest.raises(CommandError, match="temporary password was removed again"):
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    assert run.argvs[-1] == hd("--user-master", "u", "--security-disable", "opsim", DEV)


def test_failed_disable_says_which_password(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[READY, PASSWORD_SET, PASSWORD_SET], fail={"--security-erase", "--security-disable"})
    with pytest.raises(CommandError) as e:
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    assert "LOCKED after a power cycle" in str(e.value)
    assert f"hdparm --user-master u --security-disable opsim {DEV}" in str(e.value)


def test_set_pass_that_did_not_take_stops_before_erasing(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[READY, READY, READY])
    with pytest.raises(CommandError, match="nothing was erased"):
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    assert not any("--security-erase" in a for a in run.argvs)


# --------------------------------------------------------------------------- the guard, for every method


@pytest.mark.parametrize("method", ["discard", "nvme-format", "ata-erase", "ata-erase-enhanced", "auto"])
def test_missing_confirmation_runs_nothing(monkeypatch, method):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[READY] * 3)
    with pytest.raises(DeviceError, match="naming it again"):
        purge(DEV, method, confirm=None, runner=run)
    with pytest.raises(DeviceError, match="exactly the same path"):
        purge(DEV, method, confirm="/dev/sdy", runner=run)
    assert run.calls == []


@pytest.mark.parametrize("method", ["discard", "ata-erase"])
def test_mounted_refused_even_with_force(monkeypatch, method):
    fake_device(monkeypatch, is_mounted=True, mounted_paths=["/srv"], partitions=["sdz1"])
    run = FakeRunner(identify=[READY] * 3)
    with pytest.raises(DeviceError, match="mounted"):
        purge(DEV, method, confirm=DEV, force=True, runner=run)
    assert run.calls == []


def test_signature_refused_unless_forced(monkeypatch):
    fake_device(monkeypatch, fs_signature="ext4", signatures=["ext4"])
    run = FakeRunner(identify=[READY, PASSWORD_SET, READY])
    with pytest.raises(DeviceError, match="ext4 signature"):
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    assert run.calls == []
    purge(DEV, "ata-erase", confirm=DEV, force=True, runner=run)
    assert len(run.calls) == 5


def test_partition_refused_for_whole_drive_methods(monkeypatch):
    fake_device(monkeypatch, path="/dev/sdz1", dev_name="sdz1", partition_of="sdz")
    run = FakeRunner(identify=[READY])
    for m in ("ata-erase", "ata-erase-enhanced", "nvme-format"):
        with pytest.raises(DeviceError, match=r"partition of /dev/sdz.*whole drive"):
            purge("/dev/sdz1", m, confirm="/dev/sdz1", runner=run)
    assert run.calls == []
    # a partition can be discarded, and auto picks discard for it
    assert purge("/dev/sdz1", "auto", confirm="/dev/sdz1", runner=run)["method"] == "discard"
    assert run.argvs == [["blkdiscard", "-f", "/dev/sdz1"]]


def test_usb_and_nvme_refused_for_ata_erase(monkeypatch):
    fake_device(monkeypatch, sysfs_path="/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/block/sdz")
    run = FakeRunner(identify=[READY])
    with pytest.raises(DeviceError, match="USB"):
        purge(DEV, "ata-erase", confirm=DEV, runner=run)
    fake_device(monkeypatch, path="/dev/nvme0n1", dev_name="nvme0n1")
    with pytest.raises(DeviceError, match="nvme-format"):
        purge("/dev/nvme0n1", "ata-erase", confirm="/dev/nvme0n1", runner=run)
    assert run.calls == []


def test_file_and_missing_targets_refused(tmp_path):
    f = tmp_path / "img"
    f.write_bytes(b"\0" * 4096)
    run = FakeRunner()
    with pytest.raises(DeviceError, match="block devices only"):
        purge(str(f), "discard", confirm=str(f), runner=run)
    with pytest.raises(DeviceError, match="no such file"):
        purge(str(tmp_path / "nope"), "discard", confirm=str(tmp_path / "nope"), runner=run)
    with pytest.raises(DeviceError, match="character device"):
        purge("/dev/null", "discard", confirm="/dev/null", runner=run)
    assert run.calls == [] and f.read_bytes() == b"\0" * 4096


# --------------------------------------------------------------------------- discard and NVMe format


def test_nvme_auto_is_format_with_user_data_erase(monkeypatch):
    fake_device(monkeypatch, path="/dev/nvme0n1", dev_name="nvme0n1")
    run = FakeRunner()
    r = purge("/dev/nvme0n1", "auto", confirm="/dev/nvme0n1", runner=run)
    assert r["method"] == "nvme-format"
    assert run.calls == [(["nvme", "format", "/dev/nvme0n1", "--ses=1", "--force"], True)]


def test_discard_failure_is_a_command_error(monkeypatch):
    fake_device(monkeypatch)
    run = FakeRunner(fail={"-f"})
    with pytest.raises(CommandError, match="blkdiscard"):
        purge(DEV, "discard", confirm=DEV, runner=run)
    with pytest.raises(DeviceError, match="not an NVMe"):
        purge(DEV, "nvme-format", confirm=DEV, runner=run)


# --------------------------------------------------------------------------- the CLI


def test_cli_frozen_drive_exit_2_and_no_test_run(monkeypatch, tmp_path, capsys):
    fake_device(monkeypatch)
    run = FakeRunner(identify=[FROZEN])
    monkeypatch.setattr(purge_module, "run_command", run)
    monkeypatch.setattr(purge_module.shutil, "which", lambda name: f"/usr/sbin/{name}")
    import opsim.measure as M

    monkeypatch.setattr(M, "run", lambda plan, progress=None, **kw: pytest.fail("the test must not start"))
    rc = main(
        ["measure", "wsat", "--device", DEV, f"--destroy-data={DEV}", "--purge", "ata-erase", "-o", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "frozen" in err and "suspend" in err
    assert run.argvs == [["/usr/sbin/hdparm", "-I", DEV]]
    assert not (tmp_path / "o" / "result.json").exists()


def test_cli_purge_then_smart_then_test(monkeypatch, tmp_path, capsys):
    """--purge and --smart on a (fake) device: purge first, SMART snapshots around the test,
    the interval WAF in the result."""
    from test_smart_waf import MICRON, _bump  # the real Micron 5300 smartctl output

    fake_device(monkeypatch)
    order = []
    run = FakeRunner(identify=[READY, PASSWORD_SET, READY])
    monkeypatch.setattr(
        purge_module, "run_command", lambda argv, **kw: (order.append("purge:" + argv[1]), run(argv, **kw))[1]
    )
    monkeypatch.setattr(purge_module.shutil, "which", lambda name: name)
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    snaps = iter(
        [{"format": "opsim-smart-snapshot", "smartctl": before}, {"format": "opsim-smart-snapshot", "smartctl": after}]
    )
    import opsim.measure as M
    import opsim.smart as S

    monkeypatch.setattr(S, "take_snapshot", lambda dev: (order.append("smart"), next(snaps))[1])
    monkeypatch.setattr(
        M,
        "run",
        lambda plan, progress=None, **kw: (
            order.append("test"),
            {
                "test": plan.test,
                "target": {"path": plan.target, "kind": plan.target_kind, "span_bytes": 1, "offset_bytes": 0},
                "fio_version": "fio-3.33",
                "rounds": [],
                "interrupted": False,
            },
        )[1],
    )
    rc = main(
        [
            "measure",
            "wsat",
            "--device",
            DEV,
            f"--destroy-data={DEV}",
            "--purge",
            "ata-erase",
            "--smart",
            "-o",
            str(tmp_path / "o"),
            "--json",
        ]
    )
    out = capsys.readouterr()
    assert rc == 0, out.err
    d = json.loads(out.out)
    assert order == [
        "purge:-I",
        "purge:--user-master",
        "purge:-I",
        "purge:--user-master",
        "purge:-I",
        "smart",
        "test",
        "smart",
    ]
    assert d["purge"]["method"] == "ata-erase" and len(d["purge"]["commands"]) == 5
    assert d["smart"]["available"] and d["smart"]["waf"] == pytest.approx(3.5)
    assert (tmp_path / "o" / "smart-before.json").exists() and (tmp_path / "o" / "smart-after.json").exists()
