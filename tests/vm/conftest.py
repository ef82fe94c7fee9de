"""Fixtures of the QEMU guest tests (tests/vm/): the accelerator, a guest factory, and the boot
times printed at the end of the run.

The tests skip only when the guest cannot be had: QEMU, the kernel image, virtme-ng or a tool the
guest runs is missing (``make setup`` installs them all).  ``OPSIM_VM_ACCEL=tcg|kvm`` forces the
accelerator; otherwise a probe boot decides, once per machine (kept in pytest's cache).
``OPSIM_VM_CAPTURE=DIR`` keeps every file the steps left in ``$KEEP`` under ``DIR/MODULE/`` (the
real outputs the fixtures under tests/fixtures/ were taken from)."""

from __future__ import annotations

import dataclasses
import functools
import os
import subprocess

import pytest
import vm_guest

#: (test module, seconds from starting vng to the guest's power-off)
BOOTS: list[tuple[str, float]] = []
#: (seconds in the guest, step name) of every step of the session's guests
STEPS: list[tuple[float, str]] = []


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.vm)


@pytest.fixture(scope="session")
def vm_tools():
    missing = vm_guest.missing_tools()
    if missing:
        pytest.skip(f"QEMU guest tests: cannot boot a guest here, missing {', '.join(missing)} (make setup)")


def _versions() -> str:
    try:
        q = subprocess.run(["qemu-system-x86_64", "--version"], capture_output=True, text=True, timeout=20)
        qemu = q.stdout.splitlines()[0] if q.stdout else "?"
    except (OSError, subprocess.TimeoutExpired):
        qemu = "?"
    return f"{qemu} {vm_guest.find_kernel()} {os.uname().release}"


def _accel(config) -> str:
    """kvm if a guest boots with KVM here, else tcg (a probe boot, cached per QEMU, kernel and host)."""
    forced = os.environ.get("OPSIM_VM_ACCEL")
    if forced in ("tcg", "kvm"):
        return forced
    key = "opsim/vm-accel"
    cache = getattr(config, "cache", None)  # None under -p no:cacheprovider
    cached = cache.get(key, None) if cache is not None else None
    versions = _versions()
    if isinstance(cached, dict) and cached.get("versions") == versions and cached.get("accel") in ("tcg", "kvm"):
        return cached["accel"]
    accel = vm_guest.probe_accel()
    if cache is not None:
        cache.set(key, {"versions": versions, "accel": accel})
    return accel


@pytest.fixture(scope="session")
def vm_accel(request, vm_tools):
    """kvm if a guest boots with KVM here, else tcg (a probe boot, cached per QEMU, kernel and host)."""
    return _accel(request.config)


class ModuleSteps:
    """What a test module adds to a shared guest: its steps, named ``MODULE:NAME``, each with its own
    ``$KEEP`` directory (``$KEEP/MODULE``), so modules sharing one boot never see each other's files.
    Anything else a step writes in the guest (an opsim output directory in /tmp, a mount point) must
    be named after its module too: the modules share the guest's /tmp."""

    def __init__(self, guest: vm_guest.Guest, prefix: str) -> None:
        self.guest = guest
        self.prefix = prefix

    def step(self, name: str, command: str) -> None:
        self.guest.step(f"{self.prefix}:{name}", f'KEEP="$KEEP/{self.prefix}"; mkdir -p "$KEEP"; {command}')

    def opsim(self, name: str, args: str) -> None:
        self.step(name, self.opsim_cmd(args))

    opsim_cmd = staticmethod(vm_guest.Guest.opsim_cmd)


@dataclasses.dataclass
class GuestView:
    """One module's share of a guest run: its steps' results and kept files, by their short names."""

    results: dict
    files: dict
    boot_seconds: float | None
    modules: list  # every module that shared the boot
    kernel_log: str = ""  # the guest kernel's log at power-off (shared by the modules of the boot)


def _vm_modules(session) -> list:
    """The collected test modules that describe a guest (``CONTROLLERS`` and ``guest_steps``), in order."""
    seen: dict[str, object] = {}
    for item in session.items:
        mod = getattr(item, "module", None)
        if mod is not None and hasattr(mod, "guest_steps") and mod.__name__ not in seen:
            seen[mod.__name__] = mod
    return list(seen.values())


def _qemu_key(module) -> str | None:
    """The QEMU a test module boots on: ``"backports"`` (QEMU >= 8.0, unpacked by ``make setup``) when
    the module asks for it (``QEMU = "backports"``) or when it is there; else the system's (None).

    Debian 12's QEMU 7.2 loses NVMe completions on a loaded machine: the guest's I/O waits for the
    kernel's 30 s timeout, an abort (a no-op in QEMU) and a controller reset, again and again (one 2 s
    fio round took 257 s with both host cores busy).  So every module boots on the newer QEMU when it
    can; the guest's kernel log shows whether a controller timed out (``test_vm_measure``)."""
    if getattr(module, "QEMU", None) == "backports" or _backports() is not None:
        return "backports"
    return None


@functools.cache
def _backports() -> vm_guest.Qemu | None:
    """The newer QEMU (:func:`vm_guest.backports_qemu`: it runs the binary once to read its version)."""
    return vm_guest.backports_qemu()


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


#: the shared boots started in the background when the session's collection is done (by QEMU key)
_BACKGROUND: dict = {}
_RUNNING: list = []  # guests booting in the background, killed at the session's end if still there
_STOPPING: list = []  # set when the session ends


def pytest_collection_finish(session):
    """Start the shared boots in a background thread as soon as the tests are collected, one QEMU at
    a time: the guests (one CPU under TCG) run while the rest of the suite runs on the other core,
    so their minutes mostly overlap with it.  The results are the same as in the foreground (the
    guests' commands never depend on timing); ``OPSIM_VM_BACKGROUND=0`` boots at the first test."""
    if os.environ.get("OPSIM_VM_BACKGROUND", "1") == "0" or session.config.option.collectonly:
        return
    if os.environ.get("PYTEST_XDIST_WORKER"):  # under xdist the guests boot at their first test, on the one
        return  # worker that runs the io group (tests/xdist_groups.py), while the other workers run the rest
    mods = _vm_modules(session)
    if not mods or vm_guest.missing_tools():
        return
    import concurrent.futures

    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="opsim-vm")
    accel = pool.submit(_accel, session.config)
    for key in dict.fromkeys(_qemu_key(m) for m in mods):
        _BACKGROUND[key] = pool.submit(lambda k=key: _boot_group(session, accel.result(), k))
    pool.shutdown(wait=False)


def pytest_unconfigure(config):
    _STOPPING.append(True)  # no new boot from here on
    for g in list(_RUNNING):  # an interrupted session: nothing left behind
        g.cleanup()


@pytest.fixture(scope="session")
def shared_boot(request, vm_accel):
    """``shared_boot(module)``: that module's :class:`GuestView` of ONE guest booted for every collected
    module that runs on the same QEMU (:func:`_qemu_key`: every module on the newer QEMU when it is
    there, so one boot; ``QEMU = "backports"`` in a module requires it):
    all their controllers and SATA disks, all their steps in collection order.  A boot costs 15-25 s
    under TCG here, so the modules share it; each module's devices are its own (distinct serials)."""
    runs: dict = {}

    def get(module) -> GuestView:
        key = _qemu_key(module)
        if key not in runs:
            bg = _BACKGROUND.get(key)
            runs[key] = bg.result() if bg is not None else _boot_group(request.session, vm_accel, key)
        outcome = runs[key]
        if isinstance(outcome, BaseException):
            raise outcome
        g, names = outcome
        p = _short(module.__name__) + ":"
        return GuestView(
            results={k[len(p) :]: v for k, v in g.results.items() if k.startswith(p)},
            files={k[len(p) :]: v for k, v in g.files.items() if k.startswith(p[:-1] + "/")},
            boot_seconds=g.boot_seconds,
            modules=names,
            kernel_log=g.kernel_log,
        )

    return get


def _boot_group(session, vm_accel, key):
    """Boot one guest for the modules of this QEMU key; (guest, module names), or the exception to
    raise in each module's tests."""
    qemu = None
    if key == "backports":
        qemu = _backports()
        if qemu is None:
            return pytest.skip.Exception(
                f"QEMU guest tests: no QEMU >= 8.0 in {vm_guest.BACKPORTS_DIR} (make setup fetches Debian's "
                "bookworm-backports qemu-system-x86 there); Debian 12's QEMU 7.2 has no FDP"
            )
    mods = [m for m in _vm_modules(session) if _qemu_key(m) == key]
    # the limit is progress (vm_guest.STALL_S without a change in the guest's work directory), whatever the
    # machine's load; the cap of an hour a boot only ends a guest that makes progress forever
    controllers, sata, timeout = [], [], 3600.0
    for m in mods:
        controllers += list(getattr(m, "CONTROLLERS", []))
        sata += list(getattr(m, "SATA", []))
    serials = [c.serial for c in controllers] + [d.serial for d in sata]
    if len(set(serials)) != len(serials):
        return AssertionError(f"two test modules use the same drive serial: {serials}")
    g = vm_guest.Guest(controllers, sata=sata, accel=vm_accel, timeout=timeout, qemu=qemu)
    names = [_short(m.__name__) for m in mods]
    for m in mods:
        m.guest_steps(ModuleSteps(g, _short(m.__name__)))
    if _STOPPING:
        return vm_guest.GuestError("the session ended before this guest was booted")
    _RUNNING.append(g)
    try:
        g.results = g.run()
    except vm_guest.GuestError as e:
        return e
    finally:
        _RUNNING.remove(g)
    capture = os.environ.get("OPSIM_VM_CAPTURE")
    if capture:  # keep what the steps left in $KEEP (new fixtures are taken from there)
        for rel, data in g.blobs.items():
            dest = os.path.join(capture, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data)
    BOOTS.append(("+".join(names) + (f" [{key}]" if key else ""), g.boot_seconds or 0.0))
    STEPS.extend((r.seconds, name) for name, r in g.results.items() if r.seconds is not None)
    # a normal run leaves nothing either: no QEMU, no work directory, no image
    left = vm_guest.processes_with(g.tag)
    if left or os.path.exists(g.workdir):
        return AssertionError(f"the guest left processes {left} or its work directory {g.workdir}")
    return g, names


@pytest.fixture(scope="module")
def guest(request, shared_boot):
    """This module's share of the shared guest (see :func:`shared_boot`)."""
    return shared_boot(request.module)


def pytest_terminal_summary(terminalreporter):
    if BOOTS:
        terminalreporter.write_line(
            "QEMU guests: " + ", ".join(f"{m} {s:.1f} s" for m, s in BOOTS) + " (boot, steps and power-off)"
        )
    if STEPS:
        slowest = sorted(STEPS, reverse=True)[:8]
        terminalreporter.write_line(
            f"their slowest steps (of {len(STEPS)}, {sum(s for s, _ in STEPS):.1f} s in all): "
            + ", ".join(f"{name} {s:.1f} s" for s, name in slowest)
        )
