"""`opsim plan` on QEMU's emulated NVMe controller: the identify data read through the kernel's
driver, a plan whose namespace mechanism is flagged before anything is changed (the controller
claims namespace management, reports TNVMCAP 0 and refuses the commands), the partition method's
`--apply` checked with the guest's own lsblk and sgdisk, and the refusals (no confirmation,
mounted) leaving the device as it was."""

from __future__ import annotations

import json
import re

from vm_guest import SETTLE, Controller, Namespace, ok

NATIVE = 1 << 30  # the namespace's bytes
SECTOR = 512
TARGET = "--max-lba 80%"


CONTROLLERS = [Controller("plan", [Namespace(NATIVE)])]


def guest_steps(g):
    d = "${CTRL_plan}n1"
    g.step("id_before", f"nvme id-ns {d} -o json > $KEEP/id-before.json; nvme id-ctrl $CTRL_plan -o json")
    g.opsim("plan", f"plan $CTRL_plan {TARGET} --json")
    g.step("delete_ns", "nvme delete-ns $CTRL_plan --namespace-id=1")
    g.step("create_ns", "nvme create-ns $CTRL_plan --nsze=1000 --ncap=1000 --flbas=0")
    g.step("id_after", f"nvme id-ns {d} -o json > $KEEP/id-after.json; ls /sys/block")
    g.opsim("unconfirmed", f"plan {d} {TARGET} --apply")
    g.step("blank", f"blkid -p {d}")  # exit 2: no signature found
    g.opsim("apply", f"plan {d} {TARGET} --apply --destroy-data={d} --json")
    g.step("lsblk", f"{SETTLE}lsblk -b -J -o NAME,SIZE,START,PARTLABEL {d}")
    g.step("sgdisk", f"sgdisk -p {d}")
    g.step(
        "mounted",
        f"mkfs.ext4 -q {d}p1 && mkdir -p /tmp/mnt && mount {d}p1 /tmp/mnt && "
        f"{g.opsim_cmd(f'plan {d} --max-lba 50% --apply --destroy-data={d} --force')}; "
        "rc=$?; umount /tmp/mnt; exit $rc",
    )
    g.step("after_mounted", f"sgdisk -p {d}; blkid -p -s TYPE -o value {d}p1")


def test_plan_reads_the_real_identify_data(guest):
    idc = json.loads(ok(guest, "id_before").out)
    d = json.loads(ok(guest, "plan").out)
    drv = d["drive"]
    assert drv["path"].endswith("n1") and drv["interface"] == "nvme"
    assert drv["model"] == "QEMU NVMe Ctrl"
    ctrl = drv["nvme"]["ctrl"]
    # QEMU's OACS: 0x10A in 7.2, 0x12A (directives too) in 10.0; namespace management (bit 3) in both
    assert ctrl["oacs"] == idc["oacs"] in (0x10A, 0x12A) and ctrl["ns_management"] is True
    assert ctrl["tnvmcap"] == 0
    assert drv["nvme"]["ns"]["nsze"] == NATIVE // SECTOR and drv["nvme"]["ns"]["lba_size"] == SECTOR
    assert any("NVMe controller: its namespace" in n for n in d["probe_notes"])
    cap = d["capacity"]
    assert cap["native"]["sectors"] == NATIVE // SECTOR
    assert cap["user"]["sectors"] == NATIVE // SECTOR * 8 // 10  # 80 % of the LBAs, truncated


def test_plan_flags_namespace_management_before_anything_changes(guest):
    d = json.loads(ok(guest, "plan").out)
    nvme = next(m for m in d["mechanisms"] if m["name"] == "nvme")
    assert any("TNVMCAP" in w and "use the partition mechanism" in w for w in nvme["warnings"]), nvme["warnings"]
    assert any(m["name"] == "partition" for m in d["mechanisms"])
    # what the warning foretells: the controller refuses the commands, and the device is unchanged
    for step in ("delete_ns", "create_ns"):
        r = guest.results[step]
        assert r.rc != 0 and "Invalid Command Opcode" in r.err, str(r)
    assert json.loads(guest.files["id-after.json"]) == json.loads(guest.files["id-before.json"])
    assert re.search(r"^nvme\d+n1$", ok(guest, "id_after").out, re.M)


def test_apply_without_confirmation_writes_nothing(guest):
    r = guest.results["unconfirmed"]
    assert r.rc == 2 and "--destroy-data=" in r.err, str(r)
    assert guest.results["blank"].rc == 2, str(guest.results["blank"])  # blkid: no signature at all


def test_apply_leaves_the_planned_user_capacity(guest):
    plan = json.loads(ok(guest, "plan").out)
    a = json.loads(ok(guest, "apply").out)["applied"]
    assert a["kind"] == "block"
    assert a["capacity"]["user"]["sectors"] == plan["capacity"]["user"]["sectors"]
    lay = a["layout"]
    disk = json.loads(ok(guest, "lsblk").out)["blockdevices"][0]
    assert disk["size"] == NATIVE
    (part,) = disk["children"]
    assert (part["start"], part["size"], part["partlabel"]) == (lay["start"], lay["bytes"], "opsim-data")
    # the partition ends at the last 1 MiB boundary at or below the planned user capacity
    user_bytes = plan["capacity"]["user"]["bytes"]
    assert (lay["end"] + 1) * SECTOR <= user_bytes < (lay["end"] + 1) * SECTOR + (1 << 20)
    m = re.search(r"^\s+1\s+(\d+)\s+(\d+)\s", ok(guest, "sgdisk").out, re.M)
    assert m and (int(m.group(1)), int(m.group(2))) == (lay["start"], lay["end"])


def test_apply_refuses_a_mounted_device_even_with_force(guest):
    r = guest.results["mounted"]
    assert r.rc == 2 and "is mounted" in r.err and "--force does not override" in r.err, str(r)
    after = ok(guest, "after_mounted").out
    assert after.strip().endswith("ext4")  # the filesystem is still there
    before = ok(guest, "sgdisk").out
    assert [ln for ln in after.splitlines() if re.match(r"^\s+1\s", ln)] == [
        ln for ln in before.splitlines() if re.match(r"^\s+1\s", ln)
    ]
