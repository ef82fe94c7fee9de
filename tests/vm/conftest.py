"""Fixtures of the QEMU guest tests (tests/vm/): the accelerator, a guest factory, and the boot
times printed at the end of the run.

The tests skip only when the guest cannot be had: QEMU, the kernel image, virtme-ng or a tool the
guest runs is missing (``make setup`` installs them all).  ``OPSIM_VM_ACCEL=tcg|kvm`` forces the
accelerator; otherwise a probe boot decides, once per machine (kept in pytest's cache)."""

from __future__ import annotations

import os
import subprocess

import pytest
import vm_guest

#: (test module, seconds from starting vng to the guest's power-off)
BOOTS: list[tuple[str, float]] = []


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


@pytest.fixture(scope="session")
def vm_accel(request, vm_tools):
    """kvm if a guest boots with KVM here, else tcg (a probe boot, cached per QEMU, kernel and host)."""
    forced = os.environ.get("OPSIM_VM_ACCEL")
    if forced in ("tcg", "kvm"):
        return forced
    key = "opsim/vm-accel"
    cache = getattr(request.config, "cache", None)  # None under -p no:cacheprovider
    cached = cache.get(key, None) if cache is not None else None
    versions = _versions()
    if isinstance(cached, dict) and cached.get("versions") == versions and cached.get("accel") in ("tcg", "kvm"):
        return cached["accel"]
    accel = vm_guest.probe_accel()
    if cache is not None:
        cache.set(key, {"versions": versions, "accel": accel})
    return accel


@pytest.fixture(scope="module")
def boot(request, vm_accel):
    """``boot(guest_builder)``: a :class:`vm_guest.Guest` with the session's accelerator, run once;
    returns it (``.results``, ``.files``, ``.boot_seconds``)."""

    def run(controllers, steps, timeout=300.0):
        g = vm_guest.Guest(controllers, accel=vm_accel, timeout=timeout)
        steps(g)
        g.results = g.run()
        BOOTS.append((request.module.__name__, g.boot_seconds or 0.0))
        # a normal run leaves nothing either: no QEMU, no work directory, no image
        assert vm_guest.processes_with(g.tag) == [] and not os.path.exists(g.workdir)
        return g

    return run


def pytest_terminal_summary(terminalreporter):
    if BOOTS:
        terminalreporter.write_line(
            "QEMU guests: " + ", ".join(f"{m} {s:.1f} s" for m, s in BOOTS) + " (boot, steps and power-off)"
        )
