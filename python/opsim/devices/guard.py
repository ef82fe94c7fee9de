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
* a host-managed zoned device, and a target this user may not read and write (a non-root user
  and a block device, typically: the open for writing would fail) -- ``force`` never overrides
  these either;
* a target holding a filesystem, RAID member or partition-table signature, or in use
  (an exclusive open fails, holders exist, a file backs a loop device, or another process
  holds it open: a ``/proc/*/fd`` link to the same inode or device);
* a target where one of these checks could not be made (the probe could not run or could not
  read the target, the exclusive open failed for another reason than EBUSY, the mount table
  or ``/proc`` could not be read): opsim fails closed, "unknown" is refused like "yes".

Only the last three are overridden by ``force=True`` (the message says so); a mounted device,
a zoned one and one this user may not write never are.

Probing only reads ``/proc``, ``/sys`` and the first bytes (itself, and via ``blkid -p`` or
``wipefs -n``, which never writes with ``-n``), and opens block devices read-only with
``O_EXCL`` to test whether someone else holds them.

Limits of the open-file check: only processes visible in this PID namespace are seen, and
without root the descriptors of other users' processes cannot be read (for a block device that
is "unknown" and refused without ``force``; for a regular file it is noted only, since another
user's process could open the file only where its permissions allow).
"""

from __future__ import annotations

import errno
import grp
import json
import os
import shutil
import stat
import subprocess
from dataclasses import asdict, dataclass, field

from .. import childproc
from ..errors import DeviceError

__all__ = ["Target", "guard_destructive", "overridable_problems", "probe_target"]


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
    dev_name: str | None = None  # kernel name, e.g. "sdb", "nvme0n1", "loop3"
    partition_of: str | None = None  # for a partition: the kernel name of its disk, e.g. "sdb"
    sysfs_path: str | None = None  # /sys/devices/... of the block device (shows the bus, e.g. usb)
    signatures: list = field(default_factory=list)  # every signature found, e.g. ["gpt", "ext4"]
    in_use_reason: str | None = None
    notes: list = field(default_factory=list)
    # checks that could not be made (fail closed: each is refused unless force), e.g.
    # "signatures: blkid -p: error: /dev/sdz: Operation not permitted"
    unchecked: list = field(default_factory=list)
    open_by: list = field(default_factory=list)  # "PID (comm)" of other processes holding it open
    zoned: str | None = None  # /sys/block/DEV/queue/zoned when not "none": host-aware or host-managed

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
        if s[i] == "\\" and i + 3 < len(s) and s[i + 1 : i + 4].isdigit():
            out.append(chr(int(s[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _mountinfo(path: str = "/proc/self/mountinfo") -> list[tuple[str, str, str]]:
    """(major:minor, mount point, mount source) for every mount; raises :class:`OSError` when
    the mount table cannot be read (the caller treats that as "unknown", not "not mounted")."""
    out = []
    with open(path) as f:
        text = f.read()
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 7 or "-" not in parts:
            continue
        sep = parts.index("-")
        source = parts[sep + 2] if len(parts) > sep + 2 else ""
        out.append((parts[2], _unescape_mount(parts[4]), _unescape_mount(source)))
    return out


def _swaps(path: str = "/proc/swaps") -> list[str]:
    """Swap devices and files; raises :class:`OSError` when the table cannot be read."""
    with open(path) as f:
        text = f.read()
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
    out: list[str] = []
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


def _tool(name: str) -> str | None:
    return shutil.which(name) or (f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None)


def _readable(path: str) -> str | None:
    """None if the first bytes of ``path`` can be read (read-only open), else why not.  A probe
    that cannot read the target proves nothing, whatever its exit status says."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as e:
        return f"cannot open {path} read-only: {e.strerror}"
    try:
        os.read(fd, 4096)
    except OSError as e:
        return f"cannot read {path}: {e.strerror}"
    finally:
        os.close(fd)
    return None


def _first_line(text: str) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0][:200] if lines else "no message"


def _signatures(path: str) -> tuple[list[str], list[str], str | None]:
    """Signatures found by ``blkid -p`` (low-level probe, no cache) or ``wipefs -n -J``.

    Returns (signatures, notes, unknown): ``unknown`` is None when the probe ran and read the
    target, else why it could not be checked -- the caller must not read that as "no
    signature".  Neither tool writes: ``blkid -p`` only reads, and ``wipefs -n`` is its no-act
    mode.  blkid exits 2 both for "nothing found" and for "could not open the device" (with an
    ``error:`` line on stderr), so a failed open is caught by reading the target first and by
    that message."""
    notes: list[str] = []
    why = _readable(path)
    if why:
        return [], notes, why
    failures: list[str] = []
    blkid = _tool("blkid")
    ambivalent = False
    if blkid:
        found, ambivalent = _blkid_signatures(blkid, path, notes, failures)
        if found is not None:
            return found, notes, None
    wipefs = _tool("wipefs")
    if wipefs:
        found = _wipefs_signatures(wipefs, path, failures)
        if found is not None:
            if ambivalent and not found:
                found = ["several signatures (blkid: ambivalent)"]
            return found, notes, None
    if ambivalent:
        return ["several signatures (blkid: ambivalent)"], notes, None
    if not blkid and not wipefs:
        failures.append("neither blkid nor wipefs is installed (Debian package util-linux)")
    return [], notes, "; ".join(failures)


def _blkid_signatures(blkid: str, path: str, notes: list[str], failures: list[str]) -> tuple[list[str] | None, bool]:
    """``blkid -p``'s signatures (None: it could not say; a failure or its ambivalence noted) and
    whether it found several (ambivalent: wipefs lists them)."""
    try:
        r = childproc.run([blkid, "-p", "-o", "export", path], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        failures.append(f"blkid -p failed: {e}")
        return None, False
    if r.returncode == 2 and not r.stderr.strip():  # nothing found
        return [], False
    if r.returncode == 0:
        kv = dict(line.split("=", 1) for line in r.stdout.splitlines() if "=" in line)
        sigs = [kv[key] for key in ("PTTYPE", "TYPE") if kv.get(key)]
        if not sigs and kv.get("USAGE"):
            sigs.append(kv["USAGE"])
        # blkid may print only e.g. PART_ENTRY_* for a partition: no content signature
        return sigs, False
    if r.returncode == 8:  # ambivalent: several signatures; wipefs lists them
        notes.append("blkid -p: ambivalent result (several signatures)")
        return None, True
    failures.append(f"blkid -p exited {r.returncode}: {_first_line(r.stderr)}")
    return None, False


def _wipefs_signatures(wipefs: str, path: str, failures: list[str]) -> list[str] | None:
    """``wipefs -n -J``'s signatures, each once (None: it could not say; the failure noted)."""
    try:
        r = childproc.run([wipefs, "-n", "-J", path], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as e:
        failures.append(f"wipefs -n failed: {e}")
        return None
    if r.returncode != 0:
        failures.append(f"wipefs -n exited {r.returncode}: {_first_line(r.stderr)}")
        return None
    if not r.stdout.strip():
        return []
    try:
        doc = json.loads(r.stdout)
        sigs = [s.get("type") for s in doc.get("signatures", []) if s.get("type")]
    except (ValueError, AttributeError):
        failures.append("wipefs -n -J printed no JSON")
        return None
    return list(dict.fromkeys(sigs))


def _exclusive_open(path: str) -> tuple[bool, str | None]:
    """For a block device, O_EXCL without O_CREAT asks the kernel for an exclusive claim:
    it fails with EBUSY when the device is mounted, swap, part of md/dm, or held by another
    exclusive opener.  Read-only: nothing is written.

    Returns (busy, unknown): ``unknown`` says why the test could not be made (any other error
    than EBUSY), which is not "free"."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_EXCL | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        if e.errno == errno.EBUSY:
            return True, None
        return False, f"could not open read-only with O_EXCL to test exclusive use: {e.strerror}"
    os.close(fd)
    return False, None


PROC = "/proc"


def _open_by_others(match, proc: str = PROC) -> tuple[list[str], int, str | None]:
    """Other processes holding the target open: every ``/proc/PID/fd/N`` is stat'ed (which
    follows the link to the open file, deleted or not) and ``match(stat_result)`` decides.

    Returns (["PID (comm)", ...], processes whose descriptors could not be read, unknown):
    ``unknown`` is set when ``/proc`` itself cannot be listed."""
    me = os.getpid()
    try:
        pids = [int(n) for n in os.listdir(proc) if n.isdigit()]
    except OSError as e:
        return [], 0, f"cannot list {proc} to look for processes holding it open: {e.strerror}"
    found, hidden = [], 0
    for pid in sorted(pids):
        if pid == me:
            continue
        fd_dir = f"{proc}/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except FileNotFoundError:
            continue  # the process has exited
        except OSError:
            hidden += 1
            continue
        for fd in fds:
            try:
                st = os.stat(f"{fd_dir}/{fd}")
            except OSError:
                continue  # closed meanwhile, or a descriptor of something that cannot be stat'ed
            if match(st):
                comm = _read(f"{proc}/{pid}/comm") or "?"
                found.append(f"{pid} ({comm})")
                break
    return found, hidden, None


def _same_inode(st_target):
    return lambda st: st.st_dev == st_target.st_dev and st.st_ino == st_target.st_ino


def _block_devnums(st_target, sysdir: str | None) -> set:
    """The device number of the block device and of its partitions."""
    nums = {st_target.st_rdev}
    if sysdir:
        for p in _partitions(sysdir):
            dn = _devnum(os.path.join(sysdir, p))
            if dn and ":" in dn:
                ma, mi = dn.split(":", 1)
                if ma.isdigit() and mi.isdigit():
                    nums.add(os.makedev(int(ma), int(mi)))
    return nums


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
        return _probe_file(path, real, st)
    if not stat.S_ISBLK(st.st_mode):
        kind_name = (
            "directory"
            if stat.S_ISDIR(st.st_mode)
            else "character device"
            if stat.S_ISCHR(st.st_mode)
            else "fifo"
            if stat.S_ISFIFO(st.st_mode)
            else "socket"
            if stat.S_ISSOCK(st.st_mode)
            else "special file"
        )
        return Target(path=path, kind="other", realpath=real, notes=[f"{path} is a {kind_name}"])
    return _probe_block(path, real, st)


def _probe_file(path: str, real: str, st) -> Target:
    t = Target(path=path, kind="file", size_bytes=st.st_size, realpath=real)
    reasons = []
    loops = _loop_backing(real)
    if loops:
        t.holders = loops
        reasons.append(f"the file backs loop device(s) {', '.join('/dev/' + n for n in loops)}")
        try:
            mounts, swaps = _mountinfo(), _swaps()
        except OSError as e:
            t.unchecked.append(f"mounts of its loop device(s): cannot read the mount table ({e.strerror})")
        else:
            for n in loops:
                sd = _holder_sysdir(n)
                if sd:
                    t.mounted_paths += _mounts_of(sd, mounts, swaps)
        t.is_mounted = bool(t.mounted_paths)
    t.open_by, hidden, unknown = _open_by_others(_same_inode(st))
    if unknown:
        t.unchecked.append(f"open by another process: {unknown}")
    if hidden:
        t.notes.append(f"the open files of {hidden} process(es) of other users could not be read (not root)")
    if t.open_by:
        reasons.append(f"held open by process {', '.join(t.open_by)}")
    if reasons:
        t.in_use, t.in_use_reason = True, "; ".join(reasons)
    if st.st_size > 0:
        t.signatures, notes, unknown = _signatures(path)
        t.notes += notes
        if unknown:
            t.unchecked.append(f"signatures: {unknown}")
        t.fs_signature = t.signatures[0] if t.signatures else None
    return t


def _probe_block(path: str, real: str, st) -> Target:
    t = Target(path=path, kind="block", realpath=real)
    sysdir = _sys_block_dir(st.st_rdev)
    if sysdir is None:
        t.unchecked.append("partitions and holders: no /sys/dev/block entry for the device")
    else:
        _read_sysfs(t, sysdir)
    t.mounted_paths = _mounted_paths(t, sysdir, real)
    t.is_mounted = bool(t.mounted_paths)
    t.signatures, notes, unknown = _signatures(path)
    t.notes += notes
    if unknown:
        t.unchecked.append(f"signatures: {unknown}")
    t.fs_signature = t.signatures[0] if t.signatures else None
    reasons = []
    busy, unknown = _exclusive_open(path)
    if busy:
        reasons.append("an exclusive open failed (EBUSY): mounted, in a RAID/LVM/dm stack, or held by a process")
    elif unknown:
        t.unchecked.append(f"exclusive use: {unknown}")
    if t.holders:
        reasons.append(f"held by {', '.join(t.holders)}")
    nums = _block_devnums(st, sysdir)
    t.open_by, hidden, unknown = _open_by_others(lambda s: stat.S_ISBLK(s.st_mode) and s.st_rdev in nums)
    if unknown:
        t.unchecked.append(f"open by another process: {unknown}")
    elif hidden:
        t.unchecked.append(
            f"open by another process: the open files of {hidden} process(es) could not be read (run as root)"
        )
    if t.open_by:
        reasons.append(f"held open by process {', '.join(t.open_by)}")
    if reasons:
        t.in_use, t.in_use_reason = True, "; ".join(reasons)
    return t


def _read_sysfs(t: Target, sysdir: str) -> None:
    """The block device's name, partition, size, zoned model, partitions and holders (sysfs)."""
    t.dev_name = os.path.basename(sysdir)
    t.sysfs_path = sysdir
    if os.path.exists(os.path.join(sysdir, "partition")):
        t.partition_of = os.path.basename(os.path.dirname(sysdir))
    sectors = _read(os.path.join(sysdir, "size"))
    if sectors and sectors.isdigit():
        t.size_bytes = int(sectors) * 512  # sysfs size is always in 512-byte units
    zoned = _read(os.path.join(sysdir, "queue", "zoned"))
    t.zoned = zoned if zoned and zoned != "none" else None
    t.partitions = _partitions(sysdir)
    holders = set(_holders(sysdir))
    for p in t.partitions:
        holders.update(_holders(os.path.join(sysdir, p)))
    t.holders = sorted(holders)


def _mounted_paths(t: Target, sysdir: str | None, real: str) -> list[str]:
    """Where the device, its partitions and its holders (LVM/dm/md volumes built on it, one level
    down and beyond) are mounted or swapped on; a mount table that cannot be read is noted."""
    try:
        mounts, swaps = _mountinfo(), _swaps()
    except OSError as e:
        t.unchecked.append(f"mounts: cannot read the mount table ({e.strerror})")
        mounts, swaps = [], []
    paths = _mounts_of(sysdir, mounts, swaps, extra_paths={real})
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
    return list(dict.fromkeys(paths))


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
    overrides only the signature, in-use and could-not-check refusals
    (:func:`overridable_problems`); a mounted device is always refused."""
    path = os.fspath(path)
    t = probe_target(path)
    if t.kind == "missing":
        raise DeviceError(f"{path}: no such file or block device", key="device")
    if t.kind == "other":
        what = t.notes[0] if t.notes else f"{path} is not a regular file or block device"
        raise DeviceError(f"{what}; opsim only writes to a regular file or a block device", key="device")
    if confirm is None or confirm == "":
        raise DeviceError(
            f"{path}: writing destroys its data; confirm by naming it again (e.g. --destroy-data={path})", key="confirm"
        )
    if confirm != path:
        raise DeviceError(
            f"{path}: the confirmation names {confirm!r}, not {path!r}; "
            f"name exactly the same path again (--destroy-data={path})",
            key="confirm",
        )
    if t.is_mounted:
        raise DeviceError(
            f"{path} is mounted or in use as swap ({', '.join(t.mounted_paths)}); "
            "unmount it and every partition first (--force does not override this)",
            key="device",
        )
    if t.zoned == "host-managed":
        raise DeviceError(
            f"{path} is a host-managed zoned block device (a ZNS namespace): it accepts only sequential "
            "writes at each zone's write pointer, and opsim writes at any offset (fio's workloads, a GPT "
            "backup header at the end); refused, nothing written (--force does not override this)",
            key="device",
        )
    denied = _no_write_access(path, t)
    if denied:
        raise DeviceError(denied, key="device")
    problems = overridable_problems(t)
    if problems and not force:
        raise DeviceError(
            f"{path}: refusing to overwrite: {'; '.join(problems)}. "
            "If you are sure the data is disposable, add --force",
            key="device",
        )
    return t


def _no_write_access(path: str, t: Target) -> str | None:
    """Why this user may not write ``path`` (a non-root user and a block device, typically), or None.
    --force cannot help: the open for writing would fail after the checks."""
    if t.kind not in ("block", "file") or not os.path.exists(path):
        return None
    if os.access(path, os.R_OK | os.W_OK, effective_ids=True):
        return None
    try:
        st = os.stat(path)
        group = grp.getgrgid(st.st_gid).gr_name
    except (OSError, KeyError):
        group = "its group"
    need = "root (sudo) or membership of the group " + repr(group) if t.kind == "block" else "write permission"
    return (
        f"{path}: this user (uid {os.geteuid()}) may not read and write it: writing it needs {need}; "
        "refused, nothing written (--force does not override this)"
    )


def overridable_problems(t: Target) -> list[str]:
    """What ``force`` may override, one phrase each: a signature, use by someone else, and every
    check that could not be made (refused as if it had found something)."""
    problems = []
    if t.fs_signature:
        problems.append(
            f"it holds a {'/'.join(t.signatures) or t.fs_signature} signature "
            "(filesystem, RAID member or partition table)"
        )
    if t.in_use:
        problems.append(f"it is in use: {t.in_use_reason or 'busy'}")
    if t.unchecked:
        problems.append(f"opsim could not check it ({'; '.join(t.unchecked)}), and refuses what it cannot check")
    return problems
