"""`opsim smart snapshot` and `opsim smart waf` on QEMU's emulated NVMe controller, through the
kernel's NVMe driver: the SMART log is read, the host data units written move by what was
written between two snapshots, and NAND WAF is refused with its reason (the controller has no
NAND counter)."""

from __future__ import annotations

import json

from vm_guest import Controller, Namespace, ok

WRITTEN = 64 << 20  # bytes dd writes between the snapshots
DATA_UNIT = 1000 * 512  # NVMe SMART log data unit


CONTROLLERS = [Controller("smart", [Namespace(1 << 30)])]


def guest_steps(g):
    g.opsim("before", "smart snapshot $CTRL_smart -o $KEEP/before.json")
    g.step("write", f"dd if=/dev/urandom of=${{CTRL_smart}}n1 bs=1M count={WRITTEN >> 20} oflag=direct conv=fsync")
    g.opsim("after", "smart snapshot $CTRL_smart -o $KEEP/after.json")
    g.opsim("waf", "smart waf --json $KEEP/before.json $KEEP/after.json")


def test_snapshot_reads_the_controllers_smart_log(guest):
    ok(guest, "before")
    snap = json.loads(guest.files["before.json"])
    sc = snap["smartctl"]
    assert sc["device"]["protocol"] == "NVMe"
    assert sc["model_name"] == "QEMU NVMe Ctrl"
    assert sc["serial_number"] == "smart"  # the serial the harness gave the controller
    # smartctl and nvme-cli read the same log page: the same counters
    log = sc["nvme_smart_health_information_log"]
    assert int(snap["nvme"]["smart_log"]["data_units_written"]) == log["data_units_written"]
    assert int(snap["nvme"]["smart_log"]["host_write_commands"]) == log["host_writes"]
    # what this controller lacks is recorded, not fatal: no OCP C0 log; an Endurance Group log in
    # QEMU >= 8 (an NVM subsystem per controller), none in 7.2
    assert set(snap["nvme"]) in ({"smart_log"}, {"smart_log", "endurance_log"})
    has_endurance = "endurance_log" in snap["nvme"]
    assert has_endurance != any(w.startswith("endurance-log") for w in snap["warnings"]), snap["warnings"]
    assert any(w.startswith("ocp smart-add-log") for w in snap["warnings"]), snap["warnings"]


def test_interval_host_writes_moved_by_what_was_written(guest):
    ok(guest, "write")
    ok(guest, "after")
    before = json.loads(guest.files["before.json"])["smartctl"]["nvme_smart_health_information_log"]
    after = json.loads(guest.files["after.json"])["smartctl"]["nvme_smart_health_information_log"]
    r = json.loads(ok(guest, "waf").out)
    hw = r["host_writes"]
    assert (hw["before"], hw["after"]) == (before["data_units_written"], after["data_units_written"])
    assert hw["delta"] == hw["after"] - hw["before"]
    assert hw["bytes"] == hw["delta"] * DATA_UNIT
    # the counter (512-byte units / 1000, rounded up) moved by what dd wrote, within one data unit
    assert abs(hw["bytes"] - WRITTEN) < DATA_UNIT, hw
    # and the controller counted dd's write commands (1 MiB each, split at most by its MDTS)
    assert after["host_writes"] - before["host_writes"] >= WRITTEN >> 20


def test_nand_waf_is_refused_with_its_reason(guest):
    r = json.loads(ok(guest, "waf").out)
    assert r["waf"] is None and r["available"] is False
    if "endurance_log" in json.loads(guest.files["after.json"])["nvme"]:
        # QEMU >= 8: the Endurance Group log counts in 10^9 bytes, which 64 MiB does not move
        assert r["nand_writes"]["delta"] == 0 and r["host_writes"]["delta"] > 0
        assert "Endurance Group log data_units_written" in r["reason"], r["reason"]
        assert f"wrote {r['host_writes']['bytes']:,} bytes" in r["reason"], r["reason"]
        assert "too little for its resolution" in r["reason"], r["reason"]
    else:  # QEMU 7.2: no NAND counter at all
        assert r["nand_writes"] is None
        assert "no OCP C0 log" in r["reason"] and "host data units only" in r["reason"], r["reason"]
