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


def test_a_guest_is_stopped_by_a_stall_not_by_a_slow_step(tmp_path):
    """The limit is progress: a guest whose step prints for longer than the stall limit goes on; one
    that then falls silent is stopped a stall limit later (no QEMU needed: a shell stands in for vng)."""
    g = Guest([], timeout=600, stall=1.5, workroot=str(tmp_path))
    os.makedirs(g.outdir)
    script = f"for i in $(seq 12); do echo $i >> {g.outdir}/000.out; sleep 0.5; done; sleep 600"
    g._proc = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    t0 = time.monotonic()
    try:
        with pytest.raises(GuestTimeout, match=r"made no progress for [12] s"):
            g._wait(t0, os.path.join(g.workdir, "console.log"))
    finally:
        g.cleanup()
    assert 6.0 <= time.monotonic() - t0 < 15.0  # 6 s of output kept it going; the silence ended it
    assert not os.path.exists(g.workdir)
