"""Read-only probing of measurement targets, and the guard in front of every destructive action.

    >>> t = probe_target("/dev/sdb")          # never writes, never opens for writing
    >>> t.kind, t.size_bytes, t.is_mounted, t.fs_signature, t.in_use
    >>> guard_destructive("/dev/sdb", confirm="/dev/sdb")   # raises DeviceError if unsafe

A target is a regular file (the safe default of ``opsim measure``) or a block device.
``guard_destructive`` refuses, with a message that says why and what to do:

* a path that does not exist, or is neither a regular file nor a block device;
* a confirmation that is not exactly the same path (the "name the device again" flag);
* a block device that is mounted or used as swap, or any of whose partitions (or holders,
  e.g. a device-mapper volume on top of it) is mounted -- ``force`` never overrides this;
* a target holding a filesystem, RAID member or partition-table signature, or in use
  (an exclusive open fails, holders exist, or a file backs a loop device) -- only these two
  are overridden by ``force=True``.

Probing only reads ``/proc``, ``/sys`` and the first bytes via ``blkid -p`` (or ``wipefs -n``,
which never writes with ``-n``), and opens block devices read-only with ``O_EXCL`` to test
whether someone else holds them.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import stat
import subprocess
from dataclasses import asdict, dataclass, field

from .errors import DeviceError

__all__ = ["Target", "probe_target", "guard_destructive"]


@dataclass
class Target:
    path: str
    kind: str  # "file" | "block" | "other" | "missing"
    size_bytes: int | None = None
    is_mounted: bool = False
    mounted_paths: list = field(default_factory=list)
    holders: list = field(default_factory=list)
    partitions: list = field(default_factory=list)
    fs_signature: str | None = None
    in_use: bool = False
    # extra detail (not needed by callers; shown in messages and JSON)
    realpath: str | None = None
    dev_name: str | None = None       # kernel name, e.g. "sdb", "nvme0n1", "loop3"
    partition_of: str | None = None   # for a partition: the kernel name of its disk, e.g. "sdb"
    sysfs_path: str | None = None     # /sys/devices/... of the block device (shows the bus, e.g. usb)
    signatures: list = field(default_factory=list)  # every signature found, e.g. ["gpt", "ext4"]
    in_use_reason: str | None = None
    notes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


# --------------------------------------------------------------------------- helpers


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def _unescape_mount(s: str) -> str:
    # /proc/self/mountinfo escapes space, tab, newline and backslash as \040 etc.
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 3 < len(s) and s[i + 1:i + 4].isdigit():
            out.append(chr(int(s[i + 1:i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _mountinfo(path: str = "/proc/self/mountinfo") -> list[tuple[str, str, str]]:
    """(major:minor, mount point, mount source) for every mount."""
    out = []
    text = _read(path) or ""
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 7 or "-" not in parts:
            continue
        sep = parts.index("-")
        source = parts[sep + 2] if len(parts) > sep + 2 else ""
        out.append((parts[2], _unescape_mount(parts[4]), _unescape_mount(source)))
    return out


def _swaps(path: str = "/proc/swaps") -> list[str]:
    text = _read(path) or ""
    return [_unescape_mount(line.split()[0]) for line in text.splitlines()[1:] if line.split()]


def _sys_block_dir(st_rdev: int) -> str | None:
    d = f"/sys/dev/block/{os.major(st_rdev)}:{os.minor(st_rdev)}"
    return os.path.realpath(d) if os.path.exists(d) else None


def _partitions(sysdir: str) -> list[str]:
    try:
        names = sorted(os.listdir(sysdir))
    except OSError:
        return []
    return [n for n in names if os.path.exists(os.path.join(sysdir, n, "partition"))]


def _holders(sysdir: str) -> list[str]:
    try:
        return sorted(os.listdir(os.path.join(sysdir, "holders")))
    except OSError:
        return []


def _devnum(sysdir: str) -> str | None:
    return _read(os.path.join(sysdir, "dev"))


def _holder_sysdir(name: str) -> str | None:
    d = f"/sys/class/block/{name}"
    return os.path.realpath(d) if os.path.exists(d) else None


def _loop_backing(file_realpath: str) -> list[str]:
    """Loop devices whose backing file is this file."""
    out = []
    try:
        names = os.listdir("/sys/block")
    except OSError:
        return out
    for n in names:
        if not n.startswith("loop"):
            continue
        bf = _read(f"/sys/block/{n}/loop/backing_file")
        if bf and (bf == file_realpath or bf.removesuffix(" (deleted)") == file_realpath):
            out.append(n)
    return sorted(out)


def _signatures(path: str) -> tuple[list[str], list[str]]:
    """Signatures found by ``blkid -p`` (low-level probe, no cache) or ``wipefs -n -J``.

    Returns (signatures, notes).  Neither tool writes: ``blkid -p`` only reads, and
    ``wipefs -n`` is its no-act mode."""
    notes: list[str] = []
    blkid = shutil.which("blkid") or ("/usr/sbin/blkid" if os.path.exists("/usr/sbin/blkid") else None)
    if blkid:
        try:
            r = subprocess.run([blkid, "-p", "-o", "export", path], capture_output=True, text=True,
                               timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            notes.append(f"blkid failed: {e}")
        else:
            if r.returncode == 2:  # nothing found
                return [], notes
            if r.returncode == 0:
                kv = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
                sigs = []
                for key in ("PTTYPE", "TYPE"):
                    if kv.get(key):
                        sigs.append(kv[key])
                if not sigs and kv.get("USAGE"):
                    sigs.append(kv["USAGE"])
                if sigs:
                    return sigs, notes
                # blkid may print only e.g. PART_ENTRY_* for a partition: no content signature
                return [], notes
            notes.append(f"blkid -p exited {r.returncode}: {r.stderr.strip()[:200]}")
    wipefs = shutil.which("wipefs") or ("/usr/sbin/wipefs" if os.path.exists("/usr/sbin/wipefs") else None)
    if wipefs:
        try:
            r = subprocess.run([wipefs, "-n", "-J", path], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            notes.append(f"wipefs failed: {e}")
        else:
            if r.returncode == 0:
                if not r.stdout.strip():
                    return [], notes
                try:
                    doc = json.loads(r.stdout)
                    sigs = [s.get("type") for s in doc.get("signatures", []) if s.get("type")]
                    return list(dict.fromkeys(sigs)), notes
                except ValueError:
                    notes.append("wipefs -J printed no JSON")
            else:
                notes.append(f"wipefs -n exited {r.returncode}: {r.stderr.strip()[:200]}")
    notes.append("no signature probe available (blkid/wipefs missing or failed)")
    return [], notes


def _exclusive_open_fails(path: str) -> tuple[bool, str | None]:
    """For a block device, O_EXCL without O_CREAT asks the kernel for an exclusive claim:
    it fails with EBUSY when the device is mounted, part of md/dm, or held by another
    exclusive opener.  Read-only: nothing is written."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.EBUSY:
            return True, "an exclusive open failed (EBUSY): mounted, in a RAID/LVM/dm stack, or held by a process"
        return False, f"could not open read-only to test exclusivity: {e.strerror}"
    os.close(fd)
    return False, None


# --------------------------------------------------------------------------- probe


def probe_target(path) -> Target:
    """Describe ``path`` without writing anything."""
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return Target(path=path, kind="missing")
    except OSError as e:
        return Target(path=path, kind="missing", notes=[f"stat failed: {e.strerror}"])
    real = os.path.realpath(path)
    if stat.S_ISREG(st.st_mode):
        t = Target(path=path, kind="file", size_bytes=st.st_size, realpath=real)
        loops = _loop_backing(real)
        if loops:
            t.holders = loops
            t.in_use = True
            t.in_use_reason = f"the file backs loop device(s) {', '.join('/dev/' + n for n in loops)}"
            mounts = _mountinfo()
            for n in loops:
                sd = _holder_sysdir(n)
                if sd:
                    t.mounted_paths += _mounts_of(sd, mounts, _swaps())
            t.is_mounted = bool(t.mounted_paths)
        if st.st_size > 0:
            t.signatures, notes = _signatures(path)
            t.notes += notes
            t.fs_signature = t.signatures[0] if t.signatures else None
        return t
    if not stat.S_ISBLK(st.st_mode):
        kind_name = ("directory" if stat.S_ISDIR(st.st_mode) else "character device" if stat.S_ISCHR(st.st_mode)
                     else "fifo" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode)
                     else "special file")
        return Target(path=path, kind="other", realpath=real, notes=[f"{path} is a {kind_name}"])

    t = Target(path=path, kind="block", realpath=real)
    sysdir = _sys_block_dir(st.st_rdev)
    if sysdir is None:
        t.notes.append("no /sys/dev/block entry; mount and holder checks use /proc only")
    else:
        t.dev_name = os.path.basename(sysdir)
        t.sysfs_path = sysdir
        if os.path.exists(os.path.join(sysdir, "partition")):
            t.partition_of = os.path.basename(os.path.dirname(sysdir))
        sectors = _read(os.path.join(sysdir, "size"))
        if sectors and sectors.isdigit():
            t.size_bytes = int(sectors) * 512  # sysfs size is always in 512-byte units
        t.partitions = _partitions(sysdir)
        holders = set(_holders(sysdir))
        for p in t.partitions:
            holders.update(_holders(os.path.join(sysdir, p)))
        t.holders = sorted(holders)
    mounts, swaps = _mountinfo(), _swaps()
    paths = _mounts_of(sysdir, mounts, swaps, extra_paths={real})
    # mounts on holders (LVM/dm/md volumes built on the device), one level down and beyond
    seen = set()
    todo = list(t.holders)
    while todo:
        h = todo.pop()
        if h in seen:
            continue
        seen.add(h)
        hs = _holder_sysdir(h)
        if not hs:
            continue
        for mp in _mounts_of(hs, mounts, swaps):
            paths.append(f"{mp} (via {h})")
        todo += _holders(hs)
    t.mounted_paths = list(dict.fromkeys(paths))
    t.is_mounted = bool(t.mounted_paths)
    t.signatures, notes = _signatures(path)
    t.notes += notes
    t.fs_signature = t.signatures[0] if t.signatures else None
    busy, why = _exclusive_open_fails(path)
    if busy:
        t.in_use, t.in_use_reason = True, why
    elif why:
        t.notes.append(why)
    if t.holders and not t.in_use:
        t.in_use, t.in_use_reason = True, f"held by {', '.join(t.holders)}"
    return t


def _mounts_of(sysdir: str | None, mounts, swaps, extra_paths=()) -> list[str]:
    """Mount points (and swap) of the device at ``sysdir`` or any of its partitions, matched
    by device number or by device path (``extra_paths``: more paths naming the device)."""
    devs, nums = set(extra_paths), set()
    if sysdir:
        devs.add(f"/dev/{os.path.basename(sysdir)}")
        nums.add(_devnum(sysdir))
        for p in _partitions(sysdir):
            devs.add(f"/dev/{p}")
            nums.add(_devnum(os.path.join(sysdir, p)))
    nums.discard(None)
    out = []
    for mdn, mp, src in mounts:
        if mdn in nums or (src.startswith("/dev/") and os.path.realpath(src) in devs):
            out.append(mp)
    for s in swaps:
        if os.path.realpath(s) in devs:
            out.append(f"[swap {s}]")
    return out


# --------------------------------------------------------------------------- guard


def guard_destructive(path, confirm: str | None, force: bool = False) -> Target:
    """Return the probed target if it is safe to overwrite, else raise :class:`DeviceError`.

    ``confirm`` must be exactly ``path`` (the user names the device twice).  ``force``
    overrides only the signature and in-use checks; a mounted device is always refused."""
    path = os.fspath(path)
    t = probe_target(path)
    if t.kind == "missing":
        raise DeviceError(f"{path}: no such file or block device", key="device")
    if t.kind == "other":
        what = t.notes[0] if t.notes else f"{path} is not a regular file or block device"
        raise DeviceError(f"{what}; opsim only writes to a regular file or a block device", key="device")
    if confirm is None or confirm == "":
        raise DeviceError(f"{path}: writing destroys its data; confirm by naming it again "
                          f"(e.g. --destroy-data={path})", key="confirm")
    if confirm != path:
        raise DeviceError(f"{path}: the confirmation names {confirm!r}, not {path!r}; "
                          f"name exactly the same path again (--destroy-data={path})", key="confirm")
    if t.is_mounted:
        raise DeviceError(f"{path} is mounted or in use as swap ({', '.join(t.mounted_paths)}); "
                          "unmount it and every partition first (--force does not override this)",
                          key="device")
    problems = []
    if t.fs_signature:
        problems.append(f"it holds a {'/'.join(t.signatures) or t.fs_signature} signature "
                        "(filesystem, RAID member or partition table)")
    if t.in_use:
        problems.append(f"it is in use: {t.in_use_reason or 'busy'}")
    if problems and not force:
        raise DeviceError(f"{path}: refusing to overwrite: {'; '.join(problems)}. "
                          "If you are sure the data is disposable, add --force", key="device")
    return t
