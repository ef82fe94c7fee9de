"""`opsim measure iops --destroy-data=/dev/nvme0n1` on QEMU's emulated NVMe drive: fio runs a
short round on the real block device, the SMART snapshots around it see the host data units move
by what fio wrote, and without the confirmation nothing is written."""

from __future__ import annotations

import json
import re

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
    assert res["smart"]["waf"] is None
    # QEMU >= 8 has an Endurance Group log (10^9-byte units, which 12 MB does not move), 7.2 none
    assert "too little for its resolution" in res["smart"]["reason"] or "no OCP C0 log" in res["smart"]["reason"]


def test_no_emulated_nvme_command_timed_out(guest):
    """The guest's NVMe controllers answered every command: a lost completion costs the kernel's 30 s
    I/O timeout, an abort and a controller reset, and a measurement taken across it is not one of the
    drive (Debian 12's QEMU 7.2 did this on a loaded machine; see conftest._qemu_key)."""
    assert "nvme" in guest.kernel_log, guest.kernel_log[-2000:]  # the log is there and saw the controllers
    timeouts = [line for line in guest.kernel_log.splitlines() if re.search(r"nvme\S*: .*timeout", line)]
    assert not timeouts, "\n".join(timeouts[:20])
