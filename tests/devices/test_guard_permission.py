"""A target this user may not write (a non-root user and a block device, typically) is refused with
what is missing, before anything else is tried, and --force does not override it.  Root may write
anything, so os.access is faked here; tests/vm/test_vm_nonroot.py checks it for real in a guest."""

from __future__ import annotations

import os

import pytest

from opsim.devices import guard
from opsim.errors import DeviceError


def test_a_target_this_user_may_not_write_is_refused_even_with_force(tmp_path, monkeypatch):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 65536)
    monkeypatch.setattr(guard.os, "access", lambda *a, **k: False)
    with pytest.raises(DeviceError, match=r"may not read and write it: writing it needs write permission") as e:
        guard.guard_destructive(str(f), confirm=str(f), force=True)
    assert f"uid {os.geteuid()}" in str(e.value) and "--force does not override this" in str(e.value)
    assert f.read_bytes() == b"\0" * 65536


def test_a_writable_target_passes(tmp_path):
    f = tmp_path / "t.img"
    f.write_bytes(b"\0" * 65536)
    assert guard.guard_destructive(str(f), confirm=str(f)).kind == "file"
