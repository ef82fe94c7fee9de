"""The destructive-action guard: refused with a clear message and nothing written.

Real loop devices are used when `losetup` works (root, loop module); otherwise those tests
skip and the same logic is covered by the monkeypatched-probe tests below."""

import hashlib
import json
import os
import shutil
import subprocess

import pytest

from opsim.devices import guard as devices
from opsim.devices.guard import Target, guard_destructive, probe_target
from opsim.errors import DeviceError


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def test_missing_path():
    with pytest.raises(DeviceError, match="no such file or block device"):
        guard_destructive("/nonexistent/dev/sdz", confirm="/nonexistent/dev/sdz")


@pytest.mark.parametrize("path,what", [("/dev/null", "character device"), ("/tmp", "directory")])
def test_not_a_file_or_block_device(path, what):
    t = probe_target(path)
    assert t.kind == "other"
    with pytest.raises(DeviceError, match=what):
        guard_destructive(path, confirm=path)


def test_regular_file_ok_and_confirmation_required(tmp_path):
    f = tmp_path / "target.dat"
    f.write_bytes(os.urandom(65536))
    before = digest(f)
    with pytest.raises(DeviceError, match="naming it again"):
        guard_destructive(str(f), confirm=None)
    with pytest.raises(DeviceError, match="not"):
        guard_destructive(str(f), confirm=str(f) + "x")
    with pytest.raises(DeviceError, match="exactly"):
        guard_destructive(str(f), confirm=os.path.basename(f))
    t = guard_destructive(str(f), confirm=str(f))
    assert t.kind == "file" and t.size_bytes == 65536 and not t.in_use
    assert digest(f) == before  # probing never writes


def fake(monkeypatch, **kw):
    base = dict(path="/dev/sdz", kind="block", size_bytes=10**9)
    base.update(kw)
    monkeypatch.setattr(devices, "probe_target", lambda p: Target(**base))


def test_mounted_partition_refused_even_with_force(monkeypatch):
    fake(monkeypatch, is_mounted=True, mounted_paths=["/srv/data"], partitions=["sdz1"])
    with pytest.raises(DeviceError, match=r"mounted.*/srv/data.*--force does not override"):
        guard_destructive("/dev/sdz", confirm="/dev/sdz", force=True)


def test_signature_refused_unless_forced(monkeypatch):
    fake(monkeypatch, fs_signature="gpt", signatures=["gpt"])
    with pytest.raises(DeviceError, match=r"gpt signature.*--force"):
        guard_destructive("/dev/sdz", confirm="/dev/sdz")
    assert guard_destructive("/dev/sdz", confirm="/dev/sdz", force=True).fs_signature == "gpt"


def test_in_use_refused_unless_forced(monkeypatch):
    fake(monkeypatch, in_use=True, in_use_reason="held by dm-0", holders=["dm-0"])
    with pytest.raises(DeviceError, match="in use: held by dm-0"):
        guard_destructive("/dev/sdz", confirm="/dev/sdz")
    guard_destructive("/dev/sdz", confirm="/dev/sdz", force=True)


def test_confirmation_checked_before_anything_else(monkeypatch):
    fake(monkeypatch)
    with pytest.raises(DeviceError, match="/dev/sdy"):
        guard_destructive("/dev/sdz", confirm="/dev/sdy")


def test_mountinfo_parser(tmp_path):
    mi = tmp_path / "mountinfo"
    mi.write_text(
        "36 35 8:17 / /mnt/my\\040disk rw,noatime shared:1 - ext4 /dev/sdb1 rw\n37 35 0:50 / /proc rw - proc proc rw\n"
    )
    assert devices._mountinfo(str(mi)) == [("8:17", "/mnt/my disk", "/dev/sdb1"), ("0:50", "/proc", "proc")]


# --------------------------------------------------------------------------- real loop devices


def _losetup_works():
    if os.geteuid() != 0 or not shutil.which("losetup"):
        return False
    return subprocess.run(["losetup", "-f"], capture_output=True).returncode == 0


needs_loop = pytest.mark.skipif(not _losetup_works(), reason="losetup not usable here (needs root and loop devices)")


@pytest.fixture
def loopdev(tmp_path):
    img = tmp_path / "loop.img"
    with open(img, "wb") as f:
        f.truncate(16 * 2**20)
    dev = subprocess.run(
        ["losetup", "-f", "--show", str(img)], capture_output=True, text=True, check=True
    ).stdout.strip()
    yield dev, img
    subprocess.run(["umount", dev], capture_output=True)
    subprocess.run(["losetup", "-d", dev], capture_output=True)


@needs_loop
def test_loop_blank_device_passes(loopdev):
    dev, _img = loopdev
    t = guard_destructive(dev, confirm=dev)
    assert t.kind == "block" and t.size_bytes == 16 * 2**20 and not t.is_mounted and t.fs_signature is None
    with pytest.raises(DeviceError, match="naming it again"):
        guard_destructive(dev, confirm=None)


@needs_loop
def test_loop_formatted_device_refused(loopdev):
    dev, img = loopdev
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 missing")
    subprocess.run(["mkfs.ext4", "-q", dev], check=True)
    before = digest(img)
    with pytest.raises(DeviceError, match=r"ext4 signature"):
        guard_destructive(dev, confirm=dev)
    assert digest(img) == before
    # the backing file is refused too (it backs a loop device and holds ext4)
    with pytest.raises(DeviceError, match="ext4"):
        guard_destructive(str(img), confirm=str(img))
    assert guard_destructive(dev, confirm=dev, force=True).fs_signature == "ext4"
    assert digest(img) == before


@needs_loop
def test_loop_mounted_device_refused_even_with_force(loopdev, tmp_path):
    dev, _img = loopdev
    if not shutil.which("mkfs.ext4"):
        pytest.skip("mkfs.ext4 missing")
    subprocess.run(["mkfs.ext4", "-q", dev], check=True)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    if subprocess.run(["mount", dev, str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("mount not permitted here")
    try:
        t = probe_target(dev)
        assert t.is_mounted and str(mnt) in t.mounted_paths and t.in_use
        with pytest.raises(DeviceError, match="mounted"):
            guard_destructive(dev, confirm=dev, force=True)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)


@needs_loop
def test_loop_partition_mounted_refuses_whole_disk(tmp_path):
    if not shutil.which("sfdisk") and not shutil.which("sgdisk"):
        pytest.skip("no partitioning tool")
    img = tmp_path / "disk.img"
    with open(img, "wb") as f:
        f.truncate(32 * 2**20)
    if shutil.which("sgdisk"):
        subprocess.run(["sgdisk", "-n", "1:2048:0", str(img)], check=True, capture_output=True)
    else:
        subprocess.run(["sfdisk", str(img)], input="2048,\n", text=True, check=True, capture_output=True)
    dev = subprocess.run(
        ["losetup", "-f", "--show", "-P", str(img)], capture_output=True, text=True, check=True
    ).stdout.strip()
    mnt = tmp_path / "m"
    mnt.mkdir()
    try:
        part = dev + "p1"
        if not os.path.exists(part):
            pytest.skip("partition nodes not created (no udev/devtmpfs support)")
        subprocess.run(["mkfs.ext4", "-q", part], check=True)
        if subprocess.run(["mount", part, str(mnt)], capture_output=True).returncode != 0:
            pytest.skip("mount not permitted here")
        t = probe_target(dev)
        assert t.partitions and t.is_mounted
        with pytest.raises(DeviceError, match="mounted"):
            guard_destructive(dev, confirm=dev, force=True)
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True)
        subprocess.run(["losetup", "-d", dev], capture_output=True)


# --------------------------------------------------------------------------- issue 12, item 4: fail closed


class FakeRun:
    """Stands in for subprocess.run in opsim.devices.guard: blkid/wipefs answer as configured."""

    def __init__(self, blkid=(2, "", ""), wipefs=(0, "", "")):
        self.answers = {"blkid": blkid, "wipefs": wipefs}
        self.argvs = []

    def __call__(self, argv, **kw):
        self.argvs.append(argv)
        rc, out, err = self.answers[os.path.basename(argv[0])]
        return subprocess.CompletedProcess(argv, rc, out, err)


@pytest.fixture
def target_file(tmp_path):
    f = tmp_path / "target.dat"
    f.write_bytes(os.urandom(65536))
    return str(f)


def test_probe_that_cannot_read_is_unknown_not_blank(monkeypatch, target_file):
    """blkid exits 2 both for "nothing found" and for "cannot open" (with an error line), and
    wipefs fails: that is "could not check", refused unless --force, and the message says so."""
    monkeypatch.setattr(devices, "_tool", lambda name: f"/usr/sbin/{name}", raising=False)
    monkeypatch.setattr(
        devices.subprocess,
        "run",
        FakeRun(
            blkid=(2, "", f"error: {target_file}: Operation not permitted\n"),
            wipefs=(1, "", f"wipefs: error: {target_file}: probing initialization failed: Operation not permitted\n"),
        ),
    )
    before = digest(target_file)
    with pytest.raises(DeviceError) as e:
        guard_destructive(target_file, confirm=target_file)
    msg = str(e.value)
    assert "could not check" in msg and "Operation not permitted" in msg and "--force" in msg
    t = guard_destructive(target_file, confirm=target_file, force=True)
    assert t.unchecked and t.fs_signature is None
    assert digest(target_file) == before


def test_no_probe_tool_is_unknown(monkeypatch, target_file):
    monkeypatch.setattr(devices, "_tool", lambda name: None, raising=False)
    monkeypatch.setattr(devices.shutil, "which", lambda name: None)
    monkeypatch.setattr(
        devices.os.path, "exists", lambda p: False if p.startswith("/usr/sbin/") else os.path.lexists(p)
    )
    with pytest.raises(DeviceError, match=r"could not check.*util-linux.*--force"):
        guard_destructive(target_file, confirm=target_file)


def test_target_that_cannot_be_read_is_unknown(monkeypatch, target_file):
    """Whatever a probe's exit status says, a target opsim cannot read itself was not probed."""
    monkeypatch.setattr(devices, "_readable", lambda p: f"cannot read {p}: Input/output error", raising=False)
    with pytest.raises(DeviceError, match=r"could not check.*Input/output error"):
        guard_destructive(target_file, confirm=target_file)


def test_blkid_nothing_found_is_blank(monkeypatch, target_file):
    """The other side: exit 2 without an error line is "no signature" (no needless refusal)."""
    monkeypatch.setattr(devices, "_tool", lambda name: f"/usr/sbin/{name}", raising=False)
    monkeypatch.setattr(devices.subprocess, "run", FakeRun(blkid=(2, "", "")))
    t = guard_destructive(target_file, confirm=target_file)
    assert t.fs_signature is None and not t.unchecked


def test_blkid_ambivalent_is_a_signature(monkeypatch, target_file):
    monkeypatch.setattr(devices, "_tool", lambda name: f"/usr/sbin/{name}", raising=False)
    monkeypatch.setattr(
        devices.subprocess,
        "run",
        FakeRun(blkid=(8, "", ""), wipefs=(0, json.dumps({"signatures": [{"type": "ext4"}, {"type": "dos"}]}), "")),
    )
    with pytest.raises(DeviceError, match=r"ext4/dos signature"):
        guard_destructive(target_file, confirm=target_file)


def test_file_held_open_by_another_process_refused_unless_forced(target_file):
    with open(target_file, "rb") as f:
        holder = subprocess.Popen(["sleep", "60"], stdin=f)
    try:
        t = probe_target(target_file)
        assert t.in_use and f"{holder.pid} (sleep)" in t.open_by
        with pytest.raises(DeviceError, match=rf"in use: held open by process {holder.pid} \(sleep\).*--force"):
            guard_destructive(target_file, confirm=target_file)
        assert guard_destructive(target_file, confirm=target_file, force=True).in_use
    finally:
        holder.kill()
        holder.wait()
    assert not probe_target(target_file).in_use


def test_proc_unreadable_is_unknown(monkeypatch, target_file, tmp_path):
    monkeypatch.setattr(devices._open_by_others, "__defaults__", (str(tmp_path / "no-proc"),))
    with pytest.raises(DeviceError, match=r"could not check.*cannot list"):
        guard_destructive(target_file, confirm=target_file)


@needs_loop
def test_loop_device_held_open_non_exclusively_is_refused(loopdev):
    """A process that opened the device without O_EXCL (dd, a VM...) is not seen by the
    exclusive-open test; the /proc scan finds it."""
    dev, _img = loopdev
    with open(dev, "rb") as f:
        holder = subprocess.Popen(["sleep", "60"], stdin=f)
    try:
        with pytest.raises(DeviceError, match=rf"held open by process {holder.pid} \(sleep\)"):
            guard_destructive(dev, confirm=dev)
        guard_destructive(dev, confirm=dev, force=True)
    finally:
        holder.kill()
        holder.wait()
    guard_destructive(dev, confirm=dev)


@needs_loop
def test_loop_device_exclusive_test_impossible_is_unknown(monkeypatch, loopdev):
    dev, _img = loopdev
    why = "could not open read-only with O_EXCL to test exclusive use: Operation not permitted"
    monkeypatch.setattr(devices, "_exclusive_open", lambda p: (False, why), raising=False)
    with pytest.raises(DeviceError, match=r"could not check.*exclusive use.*Operation not permitted"):
        guard_destructive(dev, confirm=dev)
    guard_destructive(dev, confirm=dev, force=True)


@needs_loop
def test_loop_device_mount_table_unreadable_is_unknown(monkeypatch, loopdev):
    dev, _img = loopdev

    def unreadable(path="/proc/self/mountinfo"):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(devices, "_mountinfo", unreadable)
    with pytest.raises(DeviceError, match=r"could not check.*mount table"):
        guard_destructive(dev, confirm=dev)
