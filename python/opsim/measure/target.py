"""The target of ``opsim measure``: a file (opsim's scratch file, created or checked, with room
for it) or a guarded block device (with its FDP placement), the write-cache note, and the
scratch file sealed after the run.  Every check runs before anything is created or written."""

from __future__ import annotations

import os
from typing import Any

from .._output import check_writable_file
from ..devices import guard
from ..errors import ConfigError, DeviceError, OpsimError
from ..units import fmt_bytes, parse_size
from . import fdp, scratch

SYS_BLOCK = "/sys/block"


def write_cache(stated: str | None, tgt) -> tuple[dict, list]:
    """The write-cache note: what the user stated and what the kernel reports for the device
    (``queue/write_cache``: "write back" = a volatile cache the kernel flushes, "write through" =
    none or disabled).  Read-only."""
    out: dict[str, Any] = {"stated": stated, "detected": None, "source": None}
    warnings: list[str] = []
    if tgt is None:
        out["note"] = "file target: a filesystem and the page cache sit between fio and the drive"
        return out, warnings
    disk = tgt.partition_of or tgt.dev_name
    path = f"{SYS_BLOCK}/{disk}/queue/write_cache" if disk else None
    if path is not None:
        try:
            with open(path) as f:
                out["detected"], out["source"] = f.read().strip(), path
        except OSError:
            pass
    kernel = {"write back": "on", "write through": "off"}.get(out["detected"] or "")
    if stated and kernel and stated != kernel:
        warnings.append(f"--write-cache {stated} but the kernel reports {out['detected']!r} for {disk} ({path})")
    return out, warnings


def _existing_ancestor(d: str) -> str:
    while d and not os.path.isdir(d) and os.path.dirname(d) != d:
        d = os.path.dirname(d)
    return d


def _free_bytes(d: str) -> int | None:
    try:
        st = os.statvfs(d)
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def file_target(file: str | None, size: str, outdir: str, force: bool) -> tuple[str, int, bool]:
    """Check a file target; returns (path, size in bytes, whether opsim must create it).

    A file that does not exist is created by opsim (after every check); an existing one is
    written only if it is opsim's scratch file (:mod:`opsim.measure.scratch`) or with --force,
    and never while it backs a mounted loop device."""
    total = parse_size(size, key="size")
    if total < 2**20:
        raise ConfigError(f"--size: {size} is less than 1MiB", key="size")
    target = file or os.path.join(outdir, "opsim-measure.dat")
    if file:
        check_writable_file(target, key="file")
    t = guard.probe_target(target)
    if t.kind == "missing" and os.path.lexists(target):
        raise DeviceError(f"{target} is a symbolic link to nothing; give the file itself", key="file")
    if t.kind == "other":
        raise DeviceError(f"{target}: {t.notes[0] if t.notes else 'not a regular file'}", key="file")
    if t.kind == "block":
        raise DeviceError(f"{target} is a block device: use --device {target} --destroy-data={target}", key="file")
    create = t.kind == "missing"
    if not create:
        if t.is_mounted:
            raise DeviceError(
                f"{target} backs a mounted loop device ({', '.join(t.mounted_paths)}); --force does not override this",
                key="file",
            )
        ours, why = scratch.is_scratch(target)
        problems = [] if ours else [f"it exists and is not opsim's scratch file ({why})"]
        if t.fs_signature and not ours:
            problems.append(f"it holds a {'/'.join(t.signatures)} signature")
        if t.in_use:
            problems.append(f"it is in use: {t.in_use_reason}")
        # whether someone holds it open must be known; its signatures need not be (ours, or refused)
        problems += [
            f"opsim could not check it ({u}), and refuses what it cannot check"
            for u in t.unchecked
            if not u.startswith("signatures:")
        ]
        if problems and not force:
            raise DeviceError(
                f"{target}: refusing to overwrite it with random data: {'; '.join(problems)}. "
                "Give a path that does not exist yet (opsim creates it), or add --force if "
                "its contents are disposable",
                key="file",
            )
    scratch.check_record_slot(target)
    free = _free_bytes(_existing_ancestor(os.path.dirname(os.path.realpath(target))))
    grow = total - (t.size_bytes or 0)
    if free is not None and grow > free:
        raise ConfigError(
            f"--size: {fmt_bytes(total)} does not fit beside {target}: {fmt_bytes(free)} free on its filesystem",
            key="size",
        )
    return target, total, create


def seal(target: str) -> str | None:
    """Record the scratch file as opsim left it; a warning instead of an error when that fails
    (the result matters more: the next run then refuses the file unless --force)."""
    try:
        scratch.seal(target)
    except (OpsimError, OSError) as e:
        return f"could not record {target} as opsim's scratch file ({e}); the next run needs --force for it"
    return None


def device_target(device: str, destroy_data, force: bool, fdp_given: bool, pli, pli_select):
    """The guarded block device (a :class:`~opsim.devices.guard.Target`) and, with --fdp, its
    placement (the generic device and the handle list)."""
    if fdp_given:
        fdp.refuse_generic_as_device(device)
    tgt = guard.guard_destructive(device, destroy_data, force=force)
    if tgt.kind != "block":
        raise DeviceError(f"{device}: --device needs a block device; use --file for files", key="device")
    if (tgt.size_bytes or 0) <= 0:
        raise DeviceError(f"{device}: cannot tell the device's size (/sys/block)", key="device")
    placement = None
    if fdp_given:
        generic = fdp.generic_device(device, tgt.dev_name)
        fdp.check_generic_device(generic)
        placement = fdp.FdpPlacement(
            namespace=device,
            device=generic,
            pli=fdp.parse_pli(pli) if pli is not None else None,
            select=pli_select,
        )
    return tgt, placement
