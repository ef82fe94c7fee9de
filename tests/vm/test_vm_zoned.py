"""A zoned namespace (QEMU ZNS, host-managed) is recognised: `opsim plan` says so, `plan --apply`
and `opsim measure` refuse it before writing, and the data and zone states are as they were."""

from __future__ import annotations

import json

import pytest
from vm_guest import Controller, Namespace, ok

ZONE = 64 << 20


CONTROLLERS = [Controller("zns", [Namespace(256 << 20, zoned=True, zone_size="64M")])]


def guest_steps(g):
    z = "${CTRL_zns}n1"
    g.step("kind", "cat /sys/block/${CTRL_zns##*/}n1/queue/zoned")
    # 1 MiB written at zone 0's write pointer: the data that must survive
    g.step("fill", f"dd if=/dev/urandom of={z} bs=1M count=1 oflag=direct status=none && sha256sum < {z}")
    g.step("zones_before", f"nvme zns report-zones {z} -o json")
    g.opsim("plan", f"plan {z} --max-lba 80% --json")
    g.opsim("apply", f"plan {z} --max-lba 80% --apply --destroy-data={z} --force")
    g.opsim("measure", f"measure iops --device {z} --destroy-data={z} --force --round 1 --max-rounds 1 -o /tmp/zoned-m")
    g.step("zones_after", f"nvme zns report-zones {z} -o json")
    g.step("sum_after", f"sha256sum < {z}")


def test_the_guest_sees_a_host_managed_zoned_namespace(guest):
    assert ok(guest, "kind").out.strip() == "host-managed"
    zones = json.loads(ok(guest, "zones_before").out)
    assert zones["nr_zones"] == (256 << 20) // ZONE
    assert zones["zone_list"][0]["wp"] == (1 << 20) // 512  # the 1 MiB written


def test_plan_says_it_is_zoned(guest):
    d = json.loads(ok(guest, "plan").out)
    assert d["drive"]["zoned"] == "host-managed"
    assert any("host-managed zoned block device" in w for w in d["warnings"]), d["warnings"]


@pytest.mark.parametrize("step", ["apply", "measure"])
def test_writing_commands_refuse_it_even_with_force(guest, step):
    r = guest.results[step]
    assert r.rc == 2, str(r)
    assert "host-managed zoned block device" in r.err and "refused, nothing written" in r.err, r.err


def test_nothing_was_changed(guest):
    assert json.loads(ok(guest, "zones_after").out) == json.loads(ok(guest, "zones_before").out)
    assert ok(guest, "sum_after").out == ok(guest, "fill").out
