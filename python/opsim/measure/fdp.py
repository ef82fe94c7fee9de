"""Writing with NVMe Flexible Data Placement in ``opsim measure`` (``--fdp``).

fio places writes with FDP only through NVMe passthrough: the ``io_uring_cmd`` engine with
``cmd_type=nvme`` on the namespace's generic character device ``/dev/ngXnY`` (Linux 5.19+),
with ``fdp=1`` and optionally ``fdp_pli=`` (indices into the namespace's placement handle list,
the order ``nvme fdp status`` prints) and ``fdp_pli_select=roundrobin|random``. fio 3.34 added
``fdp``/``fdp_pli``, a later release ``fdp_pli_select``; an older fio stops on the unknown
option, so :func:`check_fio` asks the installed fio (``fio --cmdhelp=NAME``) before anything
runs. A file or a block device cannot carry placement: :func:`generic_device` refuses them.

opsim's safety checks (mounted, signatures, in use; ``--destroy-data``) stay on the namespace's
block device ``/dev/nvmeXnY``, which the user names; fio then writes the same namespace through
``/dev/ngXnY``. Docs: docs/fdp-real-drives.md.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from dataclasses import dataclass

from .. import childproc
from ..errors import CommandError, ConfigError, DeviceError

ENGINE = "io_uring_cmd"
SELECTS = ("roundrobin", "random")
#: a namespace has at most 128 placement handles (Namespace Management's handle list)
MAX_PLI = 128

_BLOCK_RE = re.compile(r"^(?:/dev/)?nvme(\d+)n(\d+)$")
_GENERIC_RE = re.compile(r"^(?:/dev/)?ng(\d+)n(\d+)$")


def parse_pli(text: str) -> tuple[int, ...]:
    """fio's ``fdp_pli`` syntax: ``0,2,5`` or ranges ``0-3,7``; each index once, at most 128."""
    out: list[int] = []
    for part in str(text).split(","):
        p = part.strip()
        m = re.fullmatch(r"(\d+)(?:\s*-\s*(\d+))?", p)
        if not m:
            raise ConfigError(
                f"--fdp-pli: {part!r} in {text!r} is not a placement ID index or range (e.g. 0,2-3)", key="fdp-pli"
            )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise ConfigError(f"--fdp-pli: the range {p!r} runs backwards", key="fdp-pli")
        if hi >= MAX_PLI:
            raise ConfigError(
                f"--fdp-pli: index {hi} is out of range; a namespace has at most {MAX_PLI} placement handles "
                "(indices 0-127, the order `nvme fdp status` lists them)",
                key="fdp-pli",
            )
        for v in range(lo, hi + 1):
            if v in out:
                raise ConfigError(f"--fdp-pli: index {v} is listed twice in {text!r}", key="fdp-pli")
            out.append(v)
    return tuple(out)


def check_options(fdp: bool, pli: str | None, select: str | None, ioengine: str | None, buffered: bool) -> None:
    """The FDP options among themselves and with the engine, before anything is probed or run."""
    if not fdp:
        if pli is not None or select is not None:
            opt = "--fdp-pli" if pli is not None else "--fdp-pli-select"
            raise ConfigError(f"{opt} needs --fdp (write with NVMe Flexible Data Placement)", key="fdp")
        return
    if pli is not None:
        parse_pli(pli)
    if select is not None and select not in SELECTS:
        raise ConfigError(f"--fdp-pli-select: {select!r} is not one of {', '.join(SELECTS)}", key="fdp-pli-select")
    if ioengine is not None and ioengine != ENGINE:
        raise ConfigError(
            f"--ioengine: {ioengine} cannot place writes; --fdp needs fio's {ENGINE} engine (NVMe passthrough on "
            "/dev/ngXnY), which opsim selects: leave --ioengine out",
            key="ioengine",
        )
    if buffered:
        raise ConfigError(
            "--buffered: --fdp writes through NVMe passthrough, which bypasses the page cache; leave --buffered out",
            key="buffered",
        )


def refuse_file_target() -> None:
    raise ConfigError(
        "--fdp: a file cannot carry placement: fio sends FDP placement only as NVMe write commands through "
        "the namespace's generic device (/dev/ngXnY) with the io_uring_cmd engine. Give the namespace: "
        "--device /dev/nvmeXnY --destroy-data=/dev/nvmeXnY",
        key="fdp",
    )


def refuse_generic_as_device(path: str) -> None:
    """``--device /dev/ng0n1``: opsim checks the namespace's block device and derives the rest."""
    m = _GENERIC_RE.match(path)
    if m:
        blk = f"/dev/nvme{m.group(1)}n{m.group(2)}"
        raise DeviceError(
            f"{path} is the generic character device; give the namespace's block device ({blk}, with "
            f"--destroy-data={blk}): opsim checks it (mounted, signatures, in use) and fio writes through {path}",
            key="device",
        )


def generic_device(block_path: str, dev_name: str | None = None) -> str:
    """``/dev/nvme0n1`` -> ``/dev/ng0n1``: the NVMe generic character device of the same namespace.
    A device that is not a whole NVMe namespace (a partition, a SATA/SAS disk, a loop device) is
    refused: fio cannot place its writes."""
    name = dev_name or os.path.basename(os.path.realpath(block_path))
    m = _BLOCK_RE.match(name) or _BLOCK_RE.match(os.path.basename(block_path))
    if not m:
        raise DeviceError(
            f"{block_path} is not an NVMe namespace (/dev/nvmeXnY; a partition or a SATA/SAS/loop device cannot "
            "carry FDP placement)",
            key="device",
        )
    return f"/dev/ng{m.group(1)}n{m.group(2)}"


def check_generic_device(path: str) -> None:
    """The generic device exists and is a character device (the kernel creates it from 5.13)."""
    try:
        st = os.stat(path)
    except OSError as e:
        raise DeviceError(
            f"{path}: {e.strerror}; the NVMe generic character device is needed for FDP placement (Linux 5.13+ "
            "creates /dev/ngXnY, io_uring passthrough needs 5.19+)",
            key="device",
        ) from None
    if not stat.S_ISCHR(st.st_mode):
        raise DeviceError(f"{path} is not a character device (expected the NVMe generic device)", key="device")


def logical_block_size(dev_name: str | None, sys_block: str = "/sys/block") -> int | None:
    """The namespace's LBA size from sysfs (io_uring_cmd writes whole LBAs), or None."""
    if not dev_name:
        return None
    try:
        with open(os.path.join(sys_block, dev_name, "queue", "logical_block_size")) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def check_block_sizes(bs_bytes: dict[str, int], lba: int | None) -> None:
    """NVMe passthrough writes whole LBAs: every block size must be a multiple of the LBA size."""
    if not lba:
        return
    bad = [b for b, n in bs_bytes.items() if n % lba]
    if bad:
        raise ConfigError(
            f"--bs: {', '.join(bad)} is not a multiple of the namespace's {lba}-byte LBA; io_uring_cmd writes "
            "whole LBAs",
            key="bs",
        )


def check_fio(fio: str, version: str, options: list[str]) -> None:
    """The installed fio knows every option (``fio --cmdhelp=NAME`` prints "No such command"
    for an unknown one); refused before the run, so an old fio never starts on the device."""
    missing = []
    for name in options:
        try:
            r = childproc.run([fio, f"--cmdhelp={name}"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise CommandError(f"fio --cmdhelp={name} failed: {e}") from None
        if "no such command" in (r.stdout + r.stderr).lower():
            missing.append(name)
    if missing:
        raise CommandError(
            f"{version or 'this fio'} does not know {', '.join(missing)}: FDP placement needs fio 3.34 or later "
            "(fdp, fdp_pli; fdp_pli_select came later); install a newer fio"
        )


@dataclass(frozen=True)
class FdpPlacement:
    """What ``--fdp`` adds to every fio round, and what the result records as ``placement``."""

    namespace: str  # the block device the user named (checked by the guard)
    device: str  # the generic character device fio writes
    pli: tuple[int, ...] | None = None  # None: fio cycles through every placement ID of the namespace
    select: str | None = None  # None: fio's default, round robin

    def fio_options(self) -> dict[str, str]:
        opts = {"ioengine": ENGINE, "cmd_type": "nvme", "fdp": "1"}
        if self.pli is not None:
            opts["fdp_pli"] = ",".join(str(i) for i in self.pli)
        if self.select is not None:
            opts["fdp_pli_select"] = self.select
        return opts

    def fio_args(self) -> list[str]:
        """The options after the common ones (the engine is set by the plan's ``ioengine``)."""
        return [f"--{k}={v}" for k, v in self.fio_options().items() if k != "ioengine"]

    def to_dict(self) -> dict:
        return {
            "mode": "fdp",
            "namespace": self.namespace,
            "device": self.device,
            "pli": None if self.pli is None else list(self.pli),
            "pli_select": self.select or "roundrobin",
            "pli_select_source": "given" if self.select else "fio default",
            "fio_options": self.fio_options(),
        }


NO_PLACEMENT = {"mode": "none"}
