"""Purge a drive before a test, only when asked (``opsim measure --purge METHOD``).

Methods:

* ``discard``: ``blkdiscard -f DEV`` (TRIM of every LBA; the device may be a partition).
* ``nvme-format``: ``nvme format DEV --ses=1 --force`` (Format NVM with User Data Erase;
  the whole namespace).
* ``ata-erase`` / ``ata-erase-enhanced``: ATA SECURITY ERASE UNIT through hdparm (the whole
  drive): ``hdparm --user-master u --security-set-pass opsim DEV``, then
  ``hdparm --user-master u --security-erase opsim DEV`` (or ``--security-erase-enhanced``).
  The erase clears the password again.  Never chosen automatically.
* ``auto``: ``nvme-format`` for a whole NVMe namespace when nvme-cli is installed, else ``discard``.

Every method first goes through :func:`opsim.devices.guard.guard_destructive` (the device named
twice, not mounted, no signature or in use unless forced); ``nvme-format`` and the ATA erase
also refuse a partition, because they erase the whole drive.  The ATA erase reads the
Security section of ``hdparm -I`` first and refuses, before sending any command, when the
feature set is missing, the drive is *frozen* (the BIOS froze it at boot), *locked* or has a
password set already (opsim does not know it), the password-attempt counter has *expired*, or
the enhanced erase is asked for but not supported; and when the drive sits behind USB (bridges
often drop the long erase command and leave the drive locked).  After the erase, ``hdparm -I``
must show security disabled again; if a step fails after the password was set, opsim disables
the password again (or says which password to disable it with).

``runner(argv, timeout=None, uninterruptible=False) -> Completed`` runs the commands; tests pass a
fake one.  The erase itself runs "uninterruptible": the drive finishes it whatever the host
does, so Ctrl-C only prints a note while opsim waits.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass

from .. import childproc
from ..devices import guard
from ..devices.hdparm import parse_hdparm_security
from ..errors import CommandError, DeviceError

METHODS = ("auto", "discard", "nvme-format", "ata-erase", "ata-erase-enhanced")
WHOLE_DEVICE = ("nvme-format", "ata-erase", "ata-erase-enhanced")
#: the temporary user password for the ATA erase (the erase clears it; printed in every failure)
ATA_PASSWORD = "opsim"

UNFREEZE_HINT = (
    "unfreeze it, then run opsim again: suspend and resume the machine (`systemctl suspend`, or "
    "`echo -n mem > /sys/power/state`, and wake it), or hot-plug the drive (unplug and re-plug its "
    "SATA cable while the machine runs; needs AHCI hot-plug), then check that `hdparm -I {dev}` "
    "shows 'not frozen'"
)


@dataclass
class Completed:
    returncode: int
    stdout: str = ""
    stderr: str = ""


def run_command(argv: list[str], timeout: float | None = None, uninterruptible: bool = False) -> Completed:
    """Run a command and capture its output.  ``uninterruptible``: the command runs in its own
    session (a terminal's Ctrl-C does not reach it) and Ctrl-C only prints a note."""
    try:
        proc = childproc.popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=uninterruptible
        )
    except OSError as e:
        raise CommandError(f"cannot run {argv[0]}: {e.strerror}") from None
    while True:
        try:
            out, err = proc.communicate(timeout=timeout)
            return Completed(proc.returncode, out, err)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
            proc.communicate()
            raise CommandError(f"{' '.join(argv)} did not finish within {timeout:.0f} s") from None
        except KeyboardInterrupt:
            if not uninterruptible:
                proc.send_signal(signal.SIGINT)
                proc.communicate()
                raise
            sys.stderr.write(
                f"\nopsim: {argv[0]} is running an erase the drive cannot abandon; waiting for it to finish\n"
            )


def _find_tool(name: str, package: str) -> str:
    path = shutil.which(name) or (f"/usr/sbin/{name}" if os.path.exists(f"/usr/sbin/{name}") else None)
    if not path:
        raise CommandError(f"{name} is not installed (Debian package {package})")
    return path


def _tail(r: Completed) -> str:
    lines = (r.stderr or r.stdout or "").strip().splitlines()
    return " | ".join(lines[-3:]) if lines else "no message"


class _Session:
    """The commands of one purge, recorded in the order they ran."""

    def __init__(self, runner, tool):
        self.runner, self.tool, self.commands = runner, tool, []

    def run(self, argv, **kw) -> Completed:
        self.commands.append(list(argv))
        return self.runner(list(argv), **kw)


def purge(
    device, method: str = "auto", confirm: str | None = None, force: bool = False, runner=None, notify=None
) -> dict:
    """Purge ``device`` with ``method``; return ``{"method", "commands", ...}``.

    Raises :class:`DeviceError` (nothing run) when the guard or a precondition refuses, and
    :class:`CommandError` when a command fails."""
    if method not in METHODS:
        raise DeviceError(f"purge: unknown method {method!r}; one of {', '.join(METHODS)}", key="purge")
    device = os.fspath(device)
    target = guard.guard_destructive(device, confirm, force=force)
    if target.kind != "block":
        raise DeviceError(f"{device}: purge works on block devices only (this is a {target.kind})", key="device")
    tool = (lambda name, package: name) if runner is not None else _find_tool
    s = _Session(runner or run_command, tool)
    name = target.dev_name or os.path.basename(os.path.realpath(device))
    is_nvme = name.startswith("nvme")
    if method == "auto":
        method = (
            "nvme-format"
            if (is_nvme and not target.partition_of and (runner is not None or shutil.which("nvme")))
            else "discard"
        )
    if method in WHOLE_DEVICE and target.partition_of:
        raise DeviceError(
            f"{device} is a partition of /dev/{target.partition_of}; {method} erases the whole "
            f"drive, so name the whole drive (/dev/{target.partition_of}) or use --purge discard",
            key="device",
        )
    say = notify or (lambda msg: None)
    out = {"method": method, "device": device, "commands": s.commands}
    if method == "discard":
        r = s.run([s.tool("blkdiscard", "util-linux"), "-f", device])
        if r.returncode:
            raise CommandError(f"purge failed: blkdiscard {device}: {_tail(r)}")
    elif method == "nvme-format":
        if not is_nvme:
            raise DeviceError(f"{device} is not an NVMe namespace; use --purge discard or ata-erase", key="device")
        say(f"purge: nvme format {device} --ses=1 (user data erase)")
        r = s.run([s.tool("nvme", "nvme-cli"), "format", device, "--ses=1", "--force"], uninterruptible=True)
        if r.returncode:
            raise CommandError(f"purge failed: nvme format {device} --ses=1: {_tail(r)}")
    else:
        if is_nvme:
            raise DeviceError(
                f"{device} is an NVMe drive: ATA SECURITY ERASE does not apply; use --purge nvme-format", key="device"
            )
        if target.sysfs_path and "/usb" in target.sysfs_path:
            raise DeviceError(
                f"{device} is attached through USB: USB-SATA bridges often drop the long "
                "SECURITY ERASE command and leave the drive locked; connect it to a SATA port",
                key="device",
            )
        out.update(_ata_erase(s, device, enhanced=method == "ata-erase-enhanced", say=say))
    return out


def _identify(s: _Session, dev: str) -> dict:
    r = s.run([s.tool("hdparm", "hdparm"), "-I", dev])
    if r.returncode:
        raise CommandError(f"hdparm -I {dev} failed: {_tail(r)}")
    return parse_hdparm_security(r.stdout)


def _refuse_unless_ready(dev: str, sec: dict, enhanced: bool) -> None:
    """Raise DeviceError, with what to do, unless the drive can take SET PASSWORD + ERASE now."""
    if not sec or not sec.get("supported"):
        raise DeviceError(
            f"{dev}: hdparm -I shows no ATA Security feature set (not an ATA drive, a drive "
            "without it, or a bridge/controller that hides it); use --purge discard",
            key="device",
        )
    if sec.get("frozen"):
        raise DeviceError(
            f"{dev}: ATA security is frozen (the BIOS/UEFI sent SECURITY FREEZE LOCK at boot), "
            "so the drive refuses SECURITY ERASE until its next power-on; " + UNFREEZE_HINT.format(dev=dev),
            key="device",
        )
    if sec.get("locked"):
        raise DeviceError(
            f"{dev}: the drive is locked by a security password, so opsim cannot read it to check "
            f"what it holds; unlock it (hdparm --user-master u --security-unlock PASSWORD {dev}), "
            "check it, and disable the password first",
            key="device",
        )
    if sec.get("enabled"):
        raise DeviceError(
            f"{dev}: a security password is already set and opsim does not know it; disable it "
            f"first (hdparm --user-master u --security-disable PASSWORD {dev}; if an earlier opsim "
            f"purge was interrupted, the password is {ATA_PASSWORD!r})",
            key="device",
        )
    if sec.get("expired"):
        raise DeviceError(
            f"{dev}: the drive's password-attempt counter has expired; power-cycle the drive and try again",
            key="device",
        )
    if enhanced and not sec.get("enhanced_erase"):
        raise DeviceError(
            f"{dev}: the drive does not support ENHANCED SECURITY ERASE; use --purge ata-erase", key="device"
        )


def _ata_erase(s: _Session, dev: str, enhanced: bool, say) -> dict:
    hdparm = s.tool("hdparm", "hdparm")
    before = _identify(s, dev)
    _refuse_unless_ready(dev, before, enhanced)
    minutes = before.get("enhanced_erase_minutes" if enhanced else "erase_minutes")

    def restore(why: str):
        """After a failure with the password possibly set: disable it, or say how."""
        try:
            now = _identify(s, dev)
        except CommandError:
            now = {"enabled": True}
        if not now.get("enabled"):
            raise CommandError(f"{why}; the drive's security is disabled again and nothing else was changed")
        r = s.run([hdparm, "--user-master", "u", "--security-disable", ATA_PASSWORD, dev])
        if r.returncode == 0:
            raise CommandError(f"{why}; the temporary password was removed again (security disabled)")
        raise CommandError(
            f"{why}; the drive still has the user password {ATA_PASSWORD!r} set and will be "
            f"LOCKED after a power cycle: run `hdparm --user-master u --security-disable "
            f"{ATA_PASSWORD} {dev}` now ({_tail(r)})"
        )

    r = s.run([hdparm, "--user-master", "u", "--security-set-pass", ATA_PASSWORD, dev])
    if r.returncode:
        restore(f"SECURITY SET PASSWORD failed ({_tail(r)}), nothing was erased")
    mid = _identify(s, dev)
    if not mid.get("enabled") or mid.get("frozen") or mid.get("locked"):
        restore(
            "after SECURITY SET PASSWORD the drive does not show security 'enabled' (and unlocked, not "
            "frozen); nothing was erased"
        )
    flag = "--security-erase-enhanced" if enhanced else "--security-erase"
    more = before.get(("enhanced_erase" if enhanced else "erase") + "_minutes_more_than")
    est = f"the drive estimates {'more than ' if more else ''}{minutes} min" if minutes else "no time estimate"
    say(f"purge: ATA {'ENHANCED ' if enhanced else ''}SECURITY ERASE of {dev} ({est}); it cannot be interrupted")
    r = s.run([hdparm, "--user-master", "u", flag, ATA_PASSWORD, dev], uninterruptible=True)
    if r.returncode:
        restore(f"SECURITY ERASE failed ({_tail(r)})")
    after = _identify(s, dev)
    if after.get("enabled"):
        restore("the erase finished but the drive still shows security 'enabled'")
    return {"enhanced": enhanced, "estimated_minutes": minutes, "security_before": before, "security_after": after}
