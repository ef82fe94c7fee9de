"""The harness leaves nothing behind: no QEMU process and no image after a boot that times out,
and after Ctrl-C (SIGINT), SIGTERM or SIGKILL to the process that booted the guest."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import vm_guest
from vm_guest import Controller, Guest, GuestTimeout, Namespace


def _wait_for(pred, timeout):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return pred()


def test_a_boot_timeout_kills_qemu_and_removes_the_images(vm_accel, tmp_path):
    g = Guest([Controller("t", [Namespace(64 << 20)])], accel=vm_accel, timeout=4, workroot=str(tmp_path))
    g.step("sleep", "sleep 600")
    with pytest.raises(GuestTimeout, match="did not finish within 4 s"):
        g.run()
    assert vm_guest.processes_with(g.tag) == []
    assert not os.path.exists(g.workdir)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"])
def test_a_signal_kills_qemu_and_removes_the_images(vm_tools, tmp_path, sig):
    p = subprocess.Popen(
        [sys.executable, vm_guest.__file__, "--hold", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        tag = p.stdout.readline().strip()
        assert tag, p.stderr.read()
        # QEMU is up (its command line names the images in the run's directory), the guest booting
        assert _wait_for(lambda: any(b"qemu" in _cmdline(pid) for pid in vm_guest.processes_with(tag)), 60), (
            "QEMU never started"
        )
        assert any(n.endswith(".img") for n in os.listdir(os.path.join(tmp_path, f"{vm_guest.MARKER}-{tag}")))
        time.sleep(3)
        p.send_signal(sig)
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    err = p.stderr.read()
    if sig == signal.SIGINT:
        assert p.returncode in (1, -signal.SIGINT) and "KeyboardInterrupt" in err, err
    elif sig == signal.SIGTERM:
        assert p.returncode == 128 + signal.SIGTERM, err
    else:  # no clean-up code ran: qemu_owned.sh notices within its 1 s poll
        assert p.returncode == -signal.SIGKILL
    assert _wait_for(lambda: vm_guest.processes_with(tag) == [] and os.listdir(tmp_path) == [], 15), (
        vm_guest.processes_with(tag),
        os.listdir(tmp_path),
    )


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return b""
