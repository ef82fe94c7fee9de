"""`opsim measure iops --destroy-data=/dev/nvme0n1` on QEMU's emulated NVMe drive: fio runs a
short round on the real block device, the SMART snapshots around it see the host data units move
by what fio wrote, and without the confirmation nothing is written."""

from __future__ import annotations

import json

from vm_guest import Controller, Namespace

DATA_UNIT = 1000 * 512  # NVMe SMART log data unit
MEASURE = (
    "measure iops --device $D --destroy-data=$D --smart --span 32MiB --round 2 --max-rounds 1 "
    "--bs 4k --rwmix 0/100 --precondition 0 --qd 4 --progress off -o /tmp/m"
)


CONTROLLERS = [Controller("measure", [Namespace(256 << 20)])]


def guest_steps(g):
    g.step(
        "unconfirmed",
        f"D=${{CTRL_measure}}n1; {g.opsim_cmd('measure iops --device $D --round 2 --max-rounds 1 -o /tmp/m0')}",
    )
    g.step("untouched", "cmp -n $((64 << 20)) ${CTRL_measure}n1 /dev/zero")
    g.step("measure", f"D=${{CTRL_measure}}n1; {g.opsim_cmd(MEASURE)} && cp /tmp/m/result.json $KEEP/")


def test_without_confirmation_nothing_is_written(guest):
    r = guest.results["unconfirmed"]
    assert r.rc == 2, str(r)
    assert "--destroy-data=/dev/nvme" in r.err, r.err
    assert guest.results["untouched"].rc == 0, str(guest.results["untouched"])  # still all zeros


def test_iops_round_on_the_real_device(guest):
    r = guest.results["measure"]
    assert r.rc == 0, str(r)
    res = json.loads(guest.files["result.json"])
    assert len(res["rounds"]) == 1
    rnd = res["rounds"][0]
    assert rnd["io_bytes"]["write"] > 0 and rnd["io_bytes"]["read"] == 0
    assert rnd["iops"] > 0
    assert res["target"]["kind"] == "block" and res["target"]["span_bytes"] == 32 << 20
    assert res["target"]["path"].startswith("/dev/nvme") and res["target"]["path"].endswith("n1")


def test_smart_interval_sees_what_fio_wrote(guest):
    res = json.loads(guest.files["result.json"])
    written = sum(r["io_bytes"]["write"] for r in res["rounds"])
    hw = res["smart"]["host_writes"]
    assert hw["bytes"] == hw["delta"] * DATA_UNIT
    assert abs(hw["bytes"] - written) < DATA_UNIT, (hw, written)
    assert res["smart"]["waf"] is None and "no OCP C0 log" in res["smart"]["reason"]
