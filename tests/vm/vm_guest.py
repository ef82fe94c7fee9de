"""Boot a throw-away Linux guest under QEMU that runs a list of shell steps against emulated NVMe drives.

The guest is Debian's own kernel (``/boot/vmlinuz-*``, package linux-image-amd64) started by
virtme-ng (``vng``, PyPI package virtme-ng): it shares the host's filesystem read-only over 9p,
so the guest runs this worktree's ``.venv`` opsim and the host's nvme-cli, smartctl, fio, sgdisk
unchanged.  One directory of the host (the run's work directory) is shared read-write: the steps'
outputs land there.  The drives are QEMU's emulated NVMe controllers (``-device nvme``), each
with its namespaces (``-device nvme-ns``) backed by sparse raw images in the same work directory.

One boot runs every step of a :class:`Guest` in order (a step's failure does not stop the next),
then the guest powers off; :meth:`Guest.run` returns each step's exit status, stdout and stderr.

Clean-up: ``vng`` and the QEMU it starts run in their own session; on return, on a boot timeout,
on any exception, on Ctrl-C (KeyboardInterrupt) and on SIGTERM the whole process group is killed
and waited for, and the work directory (images included) is removed.  ``vng`` gets SIGKILL if the
Python process that started it dies (``prctl(PR_SET_PDEATHSIG)``, through :mod:`opsim.childproc`),
and QEMU, vng's grandchild, runs under ``qemu_owned.sh``, which kills it and removes the work
directory within a second or two when that Python process is gone, even after a SIGKILL.

Run as a script (``python tests/vm/vm_guest.py --hold WORKDIR``) it boots a guest that sleeps,
so a test can interrupt it and check that nothing is left (tests/vm/test_vm_cleanup.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VENV_BIN = os.path.join(ROOT, ".venv", "bin")
OPSIM = os.path.join(VENV_BIN, "opsim")

#: the QEMU wrapper that kills QEMU and removes the work directory when this process is gone
QEMU_OWNED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qemu_owned.sh")

#: every QEMU this harness starts carries this string in its command line (its work directory's name)
MARKER = "opsimvm"


#: a guest step's prefix before reading what udev records of a disk (lsblk's PARTLABEL): the
#: kernel's events of a partition table just written are processed first (else lsblk may read
#: the label before udev has, as CI once did: null)
SETTLE = "(command -v udevadm >/dev/null && udevadm settle --timeout=10 || true); "


def ok(view, name: str):
    """The result of the step ``name`` in a guest's results (``view.results``), asserting that it
    exited 0 (the assertion shows the step's output)."""
    r = view.results[name]
    assert r.rc == 0, str(r)
    return r


class GuestError(RuntimeError):
    """The guest did not boot or did not finish its steps (with the tail of its console)."""


class GuestTimeout(GuestError):
    """The guest did not finish within the timeout, or made no progress for its stall limit (it was killed)."""


#: a guest that changes nothing in its work directory (console, a step's start, end or output) for this
#: long is hung; a slow one (software emulation on a loaded machine) goes on as long as it makes progress
STALL_S = 300.0

#: the guest kernel's log, written to the output directory at the end of the steps
KERNEL_LOG = "kernel.log"


def progress_mark(workdir: str) -> tuple:
    """What changes while a guest works: the names, sizes and times of the files in its work directory
    (the console log, and each step's start, output, exit status and end in ``out/``)."""
    mark = []
    for d, _, names in os.walk(workdir):
        for name in names:
            with contextlib.suppress(OSError):
                st = os.stat(os.path.join(d, name))
                mark.append((d, name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(mark))


@dataclasses.dataclass
class Namespace:
    """One namespace of an emulated controller: a sparse raw image of ``size`` bytes."""

    size: int
    lba_size: int = 512
    zoned: bool = False
    zone_size: str = "64M"
    zone_capacity: int = 0  # 0: the zone size
    nsid: int = 0  # 0: its position on the controller (1, 2, ...)

    fdp_ruhs: str = ""  # FDP: the namespace's reclaim unit handles, e.g. "0;1" (QEMU >= 8.0)


@dataclasses.dataclass
class Subsystem:
    """An NVMe subsystem (``-device nvme-subsys``), optionally with Flexible Data Placement
    (QEMU >= 8.0: ``fdp=on``, ``fdp.nruh`` reclaim unit handles of ``fdp.runs`` bytes)."""

    nqn: str
    fdp: bool = False
    fdp_nruh: int = 8
    fdp_nrg: int = 1
    fdp_runs: str = "32M"


@dataclasses.dataclass
class Controller:
    """One emulated NVMe controller (``-device nvme``) and its namespaces, nsid 1, 2, ...
    ``subsys``: the controller joins that subsystem; ``ocp``: it serves OCP's SMART log C0h."""

    serial: str
    namespaces: list[Namespace]
    subsys: Subsystem | None = None
    ocp: bool = False


@dataclasses.dataclass
class SataDisk:
    """A disk on QEMU's AHCI controller (``-device ahci`` + ``ide-hd``): a sparse raw image."""

    serial: str
    size: int


@dataclasses.dataclass(frozen=True)
class Qemu:
    """A QEMU build: its ``qemu-system-x86_64`` and the firmware directories it reads (``-L``)."""

    binary: str
    datadirs: tuple[str, ...] = ()
    #: where its loadable modules are (searched before the system QEMU's compiled-in module directory)
    moduledir: str = ""


@dataclasses.dataclass
class Step:
    name: str
    command: str


@dataclasses.dataclass
class StepResult:
    name: str
    command: str
    rc: int | None  # None: the step never finished
    out: str
    err: str
    seconds: float | None = None  # the step's wall time in the guest

    def __str__(self) -> str:
        return f"[{self.name}] {self.command}\nexit {self.rc}\n--- stdout\n{self.out[-4000:]}\n--- stderr\n{self.err[-4000:]}"


def find_kernel() -> str | None:
    """The newest Debian kernel image in /boot (``vmlinuz-*``), or None."""
    try:
        names = sorted(n for n in os.listdir("/boot") if n.startswith("vmlinuz-"))
    except OSError:
        return None
    return os.path.join("/boot", names[-1]) if names else None


#: where ``make setup`` unpacks Debian's bookworm-backports QEMU (dpkg -x, no system install)
BACKPORTS_DIR = os.path.join(ROOT, ".venv", "qemu-backports")


def backports_qemu() -> Qemu | None:
    """The QEMU unpacked in :data:`BACKPORTS_DIR` if it runs here and is 8.0 or newer (FDP), else None.
    Its firmware: the package's own directory, then Debian's seabios and ipxe (its dependencies)."""
    binary = os.path.join(BACKPORTS_DIR, "usr", "bin", "qemu-system-x86_64")
    if not os.access(binary, os.X_OK):
        return None
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=20).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r"version (\d+)\.", out)
    if not m or int(m.group(1)) < 8:
        return None
    dirs = (os.path.join(BACKPORTS_DIR, "usr", "share", "qemu"), "/usr/share/seabios", "/usr/lib/ipxe/qemu")
    moduledir = os.path.join(BACKPORTS_DIR, "usr", "lib", "x86_64-linux-gnu", "qemu")
    return Qemu(binary, tuple(d for d in dirs if os.path.isdir(d)), moduledir if os.path.isdir(moduledir) else "")


def find_vng() -> str | None:
    p = os.path.join(VENV_BIN, "vng")
    return p if os.access(p, os.X_OK) else shutil.which("vng")


def missing_tools() -> list[str]:
    """What the guest needs and the host lacks, each with its Debian or PyPI package."""
    need = {
        "qemu-system-x86_64": "qemu-system-x86",
        "busybox": "busybox-static",
        "modprobe": "kmod",
        "nvme": "nvme-cli",
        "smartctl": "smartmontools",
        "fio": "fio",
        "sgdisk": "gdisk",
        "lsblk": "util-linux",
    }
    out = [f"{c} ({p})" for c, p in need.items() if not _which(c)]
    if not find_kernel():
        out.append("/boot/vmlinuz-* (linux-image-amd64)")
    if not find_vng():
        out.append("vng (PyPI virtme-ng)")
    if not os.access(OPSIM, os.X_OK):
        out.append(f"{OPSIM} (make build)")
    return out


def _which(cmd: str) -> str | None:
    return shutil.which(cmd) or next((p for p in (f"/usr/sbin/{cmd}", f"/sbin/{cmd}") if os.access(p, os.X_OK)), None)


def _image(workdir: str, name: str, size: int) -> str:
    img = os.path.join(workdir, f"{name}.img")
    with open(img, "wb") as f:
        f.truncate(size)
    return img


def qemu_drive_opts(
    controllers: list[Controller], workdir: str, tag: str, sata: list[SataDisk] | None = None
) -> tuple[list[str], list[str]]:
    """QEMU options for the controllers and SATA disks (each image created sparse in ``workdir``) and the images."""
    opts: list[str] = []
    images: list[str] = []
    subsystems: dict[str, str] = {}
    for c, ctrl in enumerate(controllers):
        cid = f"nvme{c}"
        dev = f"nvme,id={cid},serial={ctrl.serial}"
        if ctrl.subsys is not None:
            ss = ctrl.subsys
            if ss.nqn not in subsystems:
                subsystems[ss.nqn] = f"subsys{len(subsystems)}"
                sdev = f"nvme-subsys,id={subsystems[ss.nqn]},nqn={ss.nqn}"
                if ss.fdp:
                    sdev += f",fdp=on,fdp.runs={ss.fdp_runs},fdp.nrg={ss.fdp_nrg},fdp.nruh={ss.fdp_nruh}"
                opts += ["-device", sdev]
            dev += f",subsys={subsystems[ss.nqn]}"
        if ctrl.ocp:
            dev += ",ocp=on"
        opts += ["-device", dev]
        for n, ns in enumerate(ctrl.namespaces, 1):
            img = _image(workdir, f"{cid}n{n}", ns.size)
            images.append(img)
            did = f"{cid}n{n}"
            opts += ["-drive", f"if=none,file={img},format=raw,id={did}"]
            dev = f"nvme-ns,drive={did},bus={cid},nsid={ns.nsid or n},logical_block_size={ns.lba_size},physical_block_size={ns.lba_size}"
            if ns.zoned:
                dev += f",zoned=true,zoned.zone_size={ns.zone_size}"
                if ns.zone_capacity:
                    dev += f",zoned.zone_capacity={ns.zone_capacity}"
            if ns.fdp_ruhs:
                dev += f",fdp.ruhs={ns.fdp_ruhs}"
            opts += ["-device", dev]
    if sata:
        opts += ["-device", "ahci,id=ahci0"]
        for i, disk in enumerate(sata):
            img = _image(workdir, f"sata{i}", disk.size)
            images.append(img)
            opts += ["-drive", f"if=none,file={img},format=raw,id=sata{i}"]
            opts += ["-device", f"ide-hd,drive=sata{i},bus=ahci0.{i},serial={disk.serial}"]
    return opts, images


#: the 9p tag of a second, read-only export of the host's root (a virtio-9p channel mounts once: virtme-ng's
#: root export cannot be mounted again with other options)
CACHE_TAG = "opsimcache"
CACHE_QEMU_OPTS = ["-virtfs", f"local,path=/,mount_tag={CACHE_TAG},security_model=none,readonly=on,multidevs=remap"]

#: the host's directories every opsim step reads: Python, the venv, the source, /usr (libraries, tools)
CACHED_DIRS = tuple(
    dict.fromkeys(
        (os.path.realpath(sys.base_prefix), os.path.join(ROOT, ".venv"), os.path.join(ROOT, "python"), "/usr")
    )
)


def cached_mounts(dirs: tuple[str, ...] = CACHED_DIRS) -> str:
    """Shell lines that put ``dirs`` under a second mount of the host's root with the guest's page cache
    (9p ``cache=loose``).  virtme-ng mounts the root without one, so every stat and read of Python's and
    opsim's files crosses 9p again: under TCG each opsim command then spends 10-20 s starting.  The host's
    files do not change while a guest runs, and the guest's outputs go to the work directory, a mount of
    its own.  Where the mount fails the steps run on the uncached root, only slower."""
    c = "/run/opsim-cached"
    opts = "ro,version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose"
    binds = " && ".join(f"mount --bind {c}{shlex.quote(d)} {shlex.quote(d)}" for d in dirs)
    return f"mkdir -p {c} && mount -t 9p -o {opts} {CACHE_TAG} {c} && {binds} || echo 'no cached mount' >&2"


def guest_script(steps: list[Step], outdir: str) -> str:
    """The shell script the guest runs: each step's stdout, stderr and exit status into ``outdir``."""
    lines = [
        "#!/bin/bash",
        cached_mounts(),
        f"cd {shlex.quote(ROOT)}",
        f"export PATH={shlex.quote(VENV_BIN)}:/usr/sbin:/usr/bin:/sbin:/bin",
    ]
    # files a step leaves in $KEEP are read back into Guest.files
    lines.append(f'export KEEP={shlex.quote(os.path.join(outdir, "keep"))}; mkdir -p "$KEEP"')
    # the kernel numbers controllers in probe order, not in QEMU's: $CTRL_<serial> names each one
    lines.append("for c in /sys/class/nvme/nvme*; do s=$(tr -d ' ' <$c/serial); export \"CTRL_$s=/dev/${c##*/}\"; done")
    # ... and $SATA_<serial> each AHCI disk (sda, sdb... follow the probe order too)
    lines.append(
        'while read -r n s; do [ -n "$s" ] && export "SATA_$s=/dev/$n"; done < <(lsblk -dn -o NAME,SERIAL -I 8)'
    )
    for i, s in enumerate(steps):
        base = shlex.quote(os.path.join(outdir, f"{i:03d}"))
        lines.append(
            f"date +%s.%N >{base}.t0; ( {s.command} ) >{base}.out 2>{base}.err </dev/null; echo $? >{base}.rc; "
            f"date +%s.%N >{base}.t1"
        )
    # the guest kernel's log: what the emulated devices did besides the steps (an NVMe timeout, a reset)
    lines.append(f"dmesg >{shlex.quote(os.path.join(outdir, KERNEL_LOG))} 2>&1")
    lines.append(f"sync; echo ok >{shlex.quote(os.path.join(outdir, 'done'))}")
    return "\n".join(lines) + "\n"


def processes_with(marker: str) -> list[int]:
    """PIDs of live processes whose command line contains ``marker``."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmd and state != "Z":
            pids.append(int(d))
    return pids


class Guest:
    """A guest to boot once: its controllers, its steps, its accelerator and timeout."""

    def __init__(
        self,
        controllers: list[Controller],
        *,
        accel: str = "tcg",
        timeout: float = 180.0,
        stall: float = STALL_S,
        memory: str = "1G",
        workroot: str | None = None,
        sata: list[SataDisk] | None = None,
        qemu: Qemu | None = None,
    ) -> None:
        self.controllers = controllers
        self.sata = sata or []
        self.qemu = qemu
        self.accel = accel
        self.timeout = timeout  # a cap on the whole run (boot, steps, power-off)
        self.stall = stall  # ... and on the time without progress (see progress_mark)
        self.memory = memory
        self.steps: list[Step] = []
        # a unique tag in every QEMU command line and drive serial: what the clean-up checks look for
        self.workdir = tempfile.mkdtemp(prefix=f"{MARKER}-", dir=workroot)
        self.tag = os.path.basename(self.workdir).split("-", 1)[1]
        self.boot_seconds: float | None = None
        self.console = ""
        self.files: dict[str, str] = {}  # what the steps left in $KEEP, as text ...
        self.blobs: dict[str, bytes] = {}  # ... and as bytes
        self.results: dict[str, StepResult] = {}
        self.kernel_log = ""  # the guest kernel's log at power-off (dmesg)

    def step(self, name: str, command: str) -> None:
        self.steps.append(Step(name, command))

    def opsim(self, name: str, args: str) -> None:
        self.step(name, self.opsim_cmd(args))

    @staticmethod
    def opsim_cmd(args: str) -> str:
        """The command line of this worktree's opsim with ``args`` (shell syntax, $CTRL_x allowed)."""
        return f"{shlex.quote(OPSIM)} {args}"

    @property
    def outdir(self) -> str:
        return os.path.join(self.workdir, "out")

    def argv(self, script: str) -> list[str]:
        vng = find_vng()
        kernel = find_kernel()
        if not vng or not kernel:
            raise GuestError("virtme-ng or the kernel is missing: " + ", ".join(missing_tools()))
        qopts, _ = qemu_drive_opts(self.controllers, self.workdir, self.tag, self.sata)
        qopts += CACHE_QEMU_OPTS
        if self.qemu is not None:
            # no audio backend: QEMU then loads no audio driver module (this build would otherwise load the
            # system QEMU's audio and UI modules, refuse them as another build's and abort; QEMU >= 8.2 syntax)
            qopts += ["-audio", "none"]
            for d in self.qemu.datadirs:
                qopts += ["-L", d]
        argv = [vng, "--run", kernel, "--force-9p", "--disable-microvm", "--memory", self.memory, "--cpus", "1"]
        argv += ["--qemu", QEMU_OWNED]
        if self.accel != "kvm":
            argv.append("--disable-kvm")
        argv += ["--rwdir", self.workdir]
        if qopts:  # one argument with "=": argparse would take a value starting with "-" for an option
            argv.append("--qemu-opts=" + " ".join(shlex.quote(o) for o in qopts))
        argv += ["--exec", f"bash {shlex.quote(script)}"]
        return argv

    def run(self) -> dict[str, StepResult]:
        """Boot, run every step, power off; always kill what is left and remove the work directory.

        SIGTERM (a cancelled CI job) is turned into SystemExit while the guest runs, so the
        clean-up runs for it as for Ctrl-C; the previous handler is restored afterwards."""
        main = threading.current_thread() is threading.main_thread()
        old = signal.signal(signal.SIGTERM, _terminated) if main else None
        try:
            return self._run()
        finally:
            self.cleanup()
            if main:
                signal.signal(signal.SIGTERM, old)

    def _run(self) -> dict[str, StepResult]:
        os.makedirs(self.outdir)
        script = os.path.join(self.workdir, "steps.sh")
        with open(script, "w") as f:
            f.write(guest_script(self.steps, self.outdir))
        log_path = os.path.join(self.workdir, "console.log")
        t0 = time.monotonic()
        with open(log_path, "wb") as log:
            env = dict(
                os.environ,
                PATH=f"{VENV_BIN}:{os.environ.get('PATH', '/usr/bin:/bin')}",
                OPSIM_VM_QEMU=self.qemu.binary if self.qemu else (_which("qemu-system-x86_64") or "qemu-system-x86_64"),
                OPSIM_VM_OWNER=str(os.getpid()),
                OPSIM_VM_WORKDIR=self.workdir,
            )
            if self.qemu is not None and self.qemu.moduledir:  # its own build's modules first, not the system's
                env["QEMU_MODULE_DIR"] = self.qemu.moduledir
            self._proc = _popen(
                self.argv(script), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
            rc = self._wait(t0, log_path)
        self.boot_seconds = time.monotonic() - t0
        self.console = _tail(log_path)
        if not os.path.exists(os.path.join(self.outdir, "done")):
            raise GuestError(f"the guest stopped before its steps were done (vng exit {rc}); console:\n{self.console}")
        with open(os.path.join(self.outdir, KERNEL_LOG), errors="replace") as f:
            self.kernel_log = f.read()
        keep = os.path.join(self.outdir, "keep")
        for d, _, names in sorted(os.walk(keep)):
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(d, name), keep)
                with open(os.path.join(d, name), "rb") as f:
                    self.blobs[rel] = f.read()
                self.files[rel] = self.blobs[rel].decode(errors="replace")
        return {s.name: self._result(i, s) for i, s in enumerate(self.steps)}

    def _wait(self, t0: float, log_path: str) -> int:
        """vng's exit status; GuestTimeout when the run passes its cap or stalls."""
        mark, moved = progress_mark(self.workdir), time.monotonic()
        while True:
            try:
                return self._proc.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass
            now = time.monotonic()
            new = progress_mark(self.workdir)
            if new != mark:
                mark, moved = new, now
            why = None
            if now - t0 > self.timeout:
                why = f"did not finish within {self.timeout:.0f} s"
            elif now - moved > self.stall:
                why = f"made no progress for {now - moved:.0f} s (nothing in its work directory changed)"
            if why:
                self.console = _tail(log_path)
                raise GuestTimeout(f"the guest {why} (killed); console:\n{self.console}")

    def _result(self, i: int, s: Step) -> StepResult:
        base = os.path.join(self.outdir, f"{i:03d}")

        def read(ext: str) -> str:
            try:
                with open(f"{base}.{ext}", errors="replace") as f:
                    return f.read()
            except OSError:
                return ""

        rc = read("rc").strip()
        try:
            seconds = float(read("t1")) - float(read("t0"))
        except ValueError:
            seconds = None
        rc_i = int(rc) if rc.lstrip("-").isdigit() else None
        return StepResult(s.name, s.command, rc_i, read("out"), read("err"), seconds)

    def cleanup(self) -> None:
        proc = getattr(self, "_proc", None)
        if (proc is not None and proc.poll() is None) or processes_with(self.tag):
            _kill_group(proc)
        for pid in processes_with(self.tag):  # anything that left the group (never seen; belt and braces)
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.workdir, ignore_errors=True)


def _terminated(signum, frame):
    raise SystemExit(128 + signum)


def _popen(argv: list[str], **kw) -> subprocess.Popen:
    """vng in its own session (Ctrl-C on the terminal reaches only pytest, which then kills the group),
    dying with this process."""
    from opsim import childproc

    return childproc.popen(argv, start_new_session=True, **kw)


def _kill_group(proc: subprocess.Popen | None) -> None:
    if proc is None:
        return
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        # the leader is gone; the rest of the group (QEMU) too?
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)


def _tail(path: str, n: int = 6000) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - n))
            return f.read().decode(errors="replace")
    except OSError:
        return ""


def probe_accel(timeout: float = 30.0) -> str:
    """``kvm`` if a guest actually boots with KVM within ``timeout`` seconds, else ``tcg``
    (``/dev/kvm`` opening is not enough: under nested virtualisation a KVM guest can hang)."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg"
    g = Guest([], accel="kvm", timeout=timeout)
    g.step("true", "true")
    try:
        r = g.run()
    except GuestError:
        return "tcg"
    return "kvm" if r["true"].rc == 0 else "tcg"


def _hold(workroot: str) -> None:
    """Boot a guest that sleeps (for the Ctrl-C test); prints the tag, then waits."""
    g = Guest([Controller("hold", [Namespace(64 << 20)])], timeout=600, workroot=workroot)
    g.step("sleep", "sleep 600")
    print(g.tag, flush=True)
    g.run()


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--hold":
        _hold(sys.argv[2])
    else:
        sys.exit("usage: vm_guest.py --hold WORKROOT")
