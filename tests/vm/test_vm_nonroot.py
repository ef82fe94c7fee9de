"""opsim run as a user without write access to the device (uid 65534, nobody, in the guest): the
writing commands refuse with a clear error naming what is missing, exit 2, even with --force, and
the device is unchanged (checked as root afterwards); the read-only commands say what they could
not read."""

from __future__ import annotations

import json

from vm_guest import Controller, Namespace

CONTROLLERS = [Controller("user", [Namespace(256 << 20)])]
AS_NOBODY = "setpriv --reuid=65534 --regid=65534 --clear-groups "


def guest_steps(g):
    d = "${CTRL_user}n1"
    g.step("apply", AS_NOBODY + g.opsim_cmd(f"plan {d} --max-lba 80% --apply --destroy-data={d} --force"))
    g.step(
        "measure",
        AS_NOBODY
        + g.opsim_cmd(f"measure iops --device {d} --destroy-data={d} --force --round 2 --max-rounds 1 -o /tmp/mu"),
    )
    g.step("smart", AS_NOBODY + g.opsim_cmd("smart snapshot $CTRL_user -o /tmp/su.json --json"))
    g.step("unchanged", f"blkid -p {d}; echo $?; cmp -n $((64 << 20)) {d} /dev/zero && echo zeros")


def test_writing_commands_refuse_a_non_root_user_even_with_force(guest):
    for step in ("apply", "measure"):
        r = guest.results[step]
        assert r.rc == 2, str(r)
        assert "this user (uid 65534) may not read and write it" in r.err, r.err
        assert "needs root (sudo)" in r.err and "--force does not override this" in r.err, r.err
        assert "Traceback" not in r.err


def test_the_device_is_unchanged(guest):
    out = guest.results["unchanged"].out.split()
    assert out == ["2", "zeros"], str(guest.results["unchanged"])  # no signature; still all zeros


def test_smart_snapshot_says_what_it_could_not_read(guest):
    r = guest.results["smart"]
    assert "Traceback" not in r.err
    assert r.rc in (1, 2), str(r)
    assert "Permission denied" in r.err or "root" in r.err, r.err
    assert json.loads(r.out or "{}") == {} or "error" in json.loads(r.out)
