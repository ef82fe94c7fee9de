"""A SATA disk on QEMU's AHCI controller (`-device ahci` + `ide-hd`), through the kernel's libata:
`opsim plan` reads hdparm -N/-I and smartctl, and warns that this disk has neither HPA nor AMAC
(nor ATA Security); the ATA mechanism's own SET MAX command (step 4, run as the plan prints it) is
aborted by the disk -- hdparm still exits 0 -- and the disk keeps its native capacity (hdparm -N,
sysfs); the partition mechanism's `--apply` leaves the planned layout (lsblk)."""

from __future__ import annotations

import json
import re

from vm_guest import SETTLE, SataDisk, ok

SIZE = 1 << 30
SECTORS = SIZE // 512
SATA = [SataDisk("sata", SIZE)]
TARGET = "--max-lba 80%"
# the plan's step 4 command, taken from its JSON: the ATA mechanism run exactly as printed
SETMAX = (
    "cmd=$(jq -r '.mechanisms[] | select(.name==\"ata\") | .steps[3].commands[0]' $KEEP/plan.json) && "
    'echo "$cmd" && $cmd'
)


def guest_steps(g):
    d = "$SATA_sata"
    g.step(
        "records",
        f"lsblk -J -b -O {d} > $KEEP/lsblk.json; hdparm -N {d} > $KEEP/hdparm-N.txt; "
        f"hdparm -I {d} > $KEEP/hdparm-I.txt; smartctl -x -j {d} > $KEEP/smartctl.json; echo $?",
    )
    g.opsim("plan", f"plan {d} {TARGET} --json-file $KEEP/plan.json")
    g.step("setmax", SETMAX)
    g.step("after_setmax", f"hdparm -N {d}; cat /sys/block/${{SATA_sata##*/}}/size")
    g.opsim("apply", f"plan {d} {TARGET} --apply --destroy-data={d} --json")
    g.step("lsblk", f"{SETTLE}lsblk -b -J -o NAME,SIZE,START,PARTLABEL {d}")


def _plan(guest):
    ok(guest, "plan")
    return json.loads(guest.files["plan.json"])


def test_plan_reads_the_disk_through_hdparm_and_smartctl(guest):
    d = _plan(guest)
    drv = d["drive"]
    assert re.fullmatch(r"/dev/sd[a-z]", drv["path"]) and drv["interface"] == "sata"
    assert (drv["model"], drv["serial"]) == ("QEMU HARDDISK", "sata")
    assert drv["ata"]["max"]["native_sectors"] == drv["ata"]["max"]["current_sectors"] == SECTORS
    assert drv["smartctl"]["protocol"] == "ATA"
    assert d["capacity"]["native"]["sectors"] == SECTORS
    assert d["capacity"]["user"]["sectors"] == SECTORS * 8 // 10
    assert [m["name"] for m in d["mechanisms"]] == ["ata", "partition"]


def test_plan_warns_this_disk_has_no_hpa_amac_or_security(guest):
    d = _plan(guest)
    ata = d["drive"]["ata"]
    assert not ata["hpa"]["supported"] and not ata["amac"]["supported"] and ata["security"] == {}
    w = next(m for m in d["mechanisms"] if m["name"] == "ata")["warnings"]
    assert any("neither AMAC nor the HPA feature set" in x and "check `hdparm -N` afterwards" in x for x in w), w
    assert any("no ATA Security feature set" in x for x in w), w


def test_set_max_is_aborted_and_the_disk_keeps_its_capacity(guest):
    r = guest.results["setmax"]
    n = SECTORS * 8 // 10
    assert r.out.splitlines()[0] == f"hdparm -N p{n} --yes-i-know-what-i-am-doing {_plan(guest)['drive']['path']}", str(
        r
    )
    # the disk aborts SET MAX ADDRESS (sense key 0Bh, ABORTED COMMAND), and hdparm exits 0 all the same
    assert r.rc == 0 and re.search(r"sb\[\]:\s+70 00 0b ", r.err), str(r)
    after = ok(guest, "after_setmax").out
    assert f"max sectors   = {SECTORS}/{SECTORS}" in after
    assert after.split()[-1] == str(SECTORS)  # sysfs: the kernel still sees every sector


def test_apply_leaves_the_planned_partition(guest):
    plan = _plan(guest)
    a = json.loads(ok(guest, "apply").out)["applied"]
    assert a["capacity"]["user"]["sectors"] == plan["capacity"]["user"]["sectors"]
    lay = a["layout"]
    disk = json.loads(ok(guest, "lsblk").out)["blockdevices"][0]
    assert disk["size"] == SIZE
    (part,) = disk["children"]
    assert (part["start"], part["size"], part["partlabel"]) == (lay["start"], lay["bytes"], "opsim-data")
    assert (lay["end"] + 1) * 512 <= plan["capacity"]["user"]["bytes"] < (lay["end"] + 1) * 512 + (1 << 20)
