"""Several namespaces on one NVMe controller: `opsim plan` refuses the controller's path naming every
namespace, plans the one it is given (its own size, LBA size and NSID, which need not be the number
in its device name), and `--apply` partitions that namespace only; the guest's lsblk, blkid and
sysfs check what each namespace holds afterwards."""

from __future__ import annotations

import json
import re

from vm_guest import SETTLE, Controller, Namespace, ok

# NSIDs 1, 3 and 4: no NSID 2, so the kernel's /dev/nvmeXn2 is NSID 3 (it numbers in probe order)
NAMESPACES = [
    Namespace(256 << 20, nsid=1),
    Namespace(512 << 20, lba_size=4096, nsid=3),
    Namespace(128 << 20, nsid=4),
]
CONTROLLERS = [Controller("multi", NAMESPACES)]
TARGET = "--max-lba 50%"


def guest_steps(g):
    c = "${CTRL_multi}"
    n2 = "${CTRL_multi}n2"
    g.step(
        "sysfs",
        'for b in /sys/block/${CTRL_multi##*/}n*; do echo "${b##*/} $(cat $b/nsid) $(cat $b/size) '
        '$(cat $b/queue/logical_block_size)"; done',
    )
    g.opsim("controller", f"plan {c} {TARGET}")
    g.opsim("plan", f"plan {n2} {TARGET} --json")
    g.opsim("apply", f"plan {n2} {TARGET} --apply --destroy-data={n2} --json")
    g.step("lsblk", f"{SETTLE}lsblk -b -J -o NAME,SIZE,START,PARTLABEL,LOG-SEC {c}n1 {n2} {c}n3")
    g.step("blkid_others", f"blkid -p {c}n1; a=$?; blkid -p {c}n3; echo $a $?")


def _sysfs(guest):
    """{name: (nsid, 512-byte sectors, LBA size)} as the guest's kernel reports them."""
    rows = [ln.split() for ln in ok(guest, "sysfs").out.splitlines()]
    return {r[0]: (int(r[1]), int(r[2]), int(r[3])) for r in rows}


def test_the_kernel_names_namespaces_in_probe_order_not_by_nsid(guest):
    s = _sysfs(guest)
    assert len(s) == 3
    by_suffix = {re.sub(r"^nvme\d+", "", k): v for k, v in s.items()}
    assert by_suffix == {
        "n1": (1, (256 << 20) // 512, 512),
        "n2": (3, (512 << 20) // 512, 4096),
        "n3": (4, (128 << 20) // 512, 512),
    }


def test_the_controller_path_is_refused_naming_every_namespace(guest):
    r = guest.results["controller"]
    assert r.rc == 2, str(r)
    names = sorted(f"/dev/{k}" for k in _sysfs(guest))
    assert "is an NVMe controller with " + ", ".join(names) in r.err, r.err
    assert "name the namespace to plan" in r.err


def test_plan_reads_the_namespace_it_is_given(guest):
    d = json.loads(ok(guest, "plan").out)
    drv = d["drive"]
    assert re.fullmatch(r"/dev/nvme\d+n2", drv["path"])
    assert drv["nvme"]["nsid"] == 3
    assert drv["nvme"]["ns"]["nsze"] == (512 << 20) // 4096 and drv["sector_size"] == 4096
    assert d["capacity"]["native"]["sectors"] == (512 << 20) // 4096
    assert d["capacity"]["user"]["sectors"] == (512 << 20) // 4096 // 2
    nvme = next(m for m in d["mechanisms"] if m["name"] == "nvme")
    cmds = [c for s in nvme["steps"] for c in s["commands"]]
    # the namespace commands name NSID 3, the namespace planned, never NSID 1 (another namespace)
    assert any(c.startswith("nvme delete-ns ") and c.endswith(" --namespace-id=3") for c in cmds), cmds
    assert not any("--namespace-id=1" in c for c in cmds), cmds
    # the LBA format of the create-ns step is a 4096-byte one of this namespace's list
    assert drv["nvme"]["ns"]["lbafs"][nvme["values"]["flbas"]]["size"] == 4096


def test_apply_partitions_that_namespace_only(guest):
    plan = json.loads(ok(guest, "plan").out)
    a = json.loads(ok(guest, "apply").out)["applied"]
    assert a["capacity"]["user"]["sectors"] == plan["capacity"]["user"]["sectors"]
    lay = a["layout"]
    devs = {re.sub(r"^nvme\d+", "", d["name"]): d for d in json.loads(ok(guest, "lsblk").out)["blockdevices"]}
    n2 = devs["n2"]
    assert (n2["size"], n2["log-sec"]) == (512 << 20, 4096)
    (part,) = n2["children"]
    # lsblk's START is in 512-byte units whatever the LBA size; the layout is in 4096-byte LBAs
    assert (part["start"] * 512, part["size"], part["partlabel"]) == (lay["start"] * 4096, lay["bytes"], "opsim-data")
    assert (lay["end"] + 1) * 4096 <= plan["capacity"]["user"]["bytes"] < (lay["end"] + 2) * 4096 + (1 << 20)
    # the other namespaces hold nothing: no partition, no signature
    assert "children" not in devs["n1"] and "children" not in devs["n3"]
    assert guest.results["blkid_others"].out.split()[-2:] == ["2", "2"], str(guest.results["blkid_others"])
