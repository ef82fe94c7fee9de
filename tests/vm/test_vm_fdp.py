"""Flexible Data Placement on QEMU 10.0's emulated controller (Debian bookworm-backports'
qemu-system-x86, unpacked by `make setup`; Debian 12's QEMU 7.2 has no FDP): an FDP subsystem
(`-device nvme-subsys,fdp=on`) with 8 reclaim unit handles, a namespace with 4 of them, and the
OCP SMART log (`ocp=on`).  `opsim plan --placement fdp` reads the FDP configuration from the
device; `opsim smart fdp` of two FDP statistics logs gives the host bytes written between them and
WAF just above 1 (an emulated drive writes what the host writes, plus up to one MDTS-sized command); `opsim smart snapshot`/`waf` read the OCP C0
log's physical media units; and the namespace management QEMU claims is still refused."""

from __future__ import annotations

import json

from vm_guest import Controller, Namespace, Subsystem, ok

QEMU = "backports"
WRITTEN = 32 << 20
RUNS = 32 << 20  # reclaim unit size
NRUH = 8
CONTROLLERS = [
    Controller(
        "fdp",
        [Namespace(1 << 30, fdp_ruhs="0;1;2;3")],
        subsys=Subsystem("nqn.2019-08.org.qemu:opsim-fdp", fdp=True, fdp_nruh=NRUH, fdp_runs="32M"),
        ocp=True,
    )
]


def guest_steps(g):
    c, d = "$CTRL_fdp", "${CTRL_fdp}n1"
    g.step(
        "records",
        f"nvme id-ctrl {c} -o json > $KEEP/nvme-id-ctrl.json && nvme id-ns {d} -o json > $KEEP/nvme-id-ns.json && "
        f"nvme fdp configs {c} --endgrp-id=1 -o json > $KEEP/nvme-fdp-configs.json && "
        f"nvme fdp status {d} -o json > $KEEP/nvme-fdp-status.json && "
        f"nvme get-feature {c} --feature-id=0x1d --cdw11=1 -H",
    )
    g.opsim("plan", f"plan {c} --placement fdp --tenants 2 --max-lba 80% --json")
    g.step("stats_before", f"nvme fdp stats {c} --endgrp-id=1 -o json > $KEEP/fdp-before.json")
    g.opsim("snap_before", f"smart snapshot {c} -o $KEEP/snap-before.json")
    g.step("write", f"dd if=/dev/urandom of={d} bs=1M count={WRITTEN >> 20} oflag=direct conv=fsync status=none")
    g.step(
        "stats_after",
        f"nvme fdp stats {c} --endgrp-id=1 -o json > $KEEP/fdp-after.json; nvme get-log {c} "
        "--log-id=0x22 --log-len=64 --lsi=1 -b > $KEEP/fdp-after.bin",
    )
    g.opsim("snap_after", f"smart snapshot {c} -o $KEEP/snap-after.json")
    g.opsim("fdp", "smart fdp --json $KEEP/fdp-before.json $KEEP/fdp-after.json")
    g.opsim("waf", "smart waf --json $KEEP/snap-before.json $KEEP/snap-after.json")
    g.step("delete_ns", f"nvme delete-ns {c} --namespace-id=1")
    g.step("after_delete", f"nvme list-ns {c} -a; nvme id-ns {d} -o json | jq .nsze")


def test_the_controller_has_fdp_enabled(guest):
    assert "Flexible Direct Placement Enable (FDPE)       : Yes" in ok(guest, "records").out
    cfg = json.loads(guest.files["nvme-fdp-configs.json"])
    (c0,) = cfg["configs"]
    assert (c0["nruh"], c0["nrg"], c0["runs"]) == (NRUH, 1, RUNS)
    status = json.loads(guest.files["nvme-fdp-status.json"])
    assert [h["ruhid"] for h in status["ruhss"]] == [0, 1, 2, 3]


def test_plan_placement_fdp_reads_the_devices_configuration(guest):
    d = json.loads(ok(guest, "plan").out)
    assert d["placement"] == "fdp" and d["support"]["fdps"] is True
    cfg = d["fdp_config"]
    assert cfg["source"].startswith("nvme fdp configs /dev/nvme") and "--endgrp-id=1" in cfg["source"]
    assert (cfg["nruh"], cfg["runs"]) == (NRUH, RUNS)
    ns = d["namespaces"]
    assert len(ns) == 2
    # 80 % of the 1 GiB namespace (the controller's only capacity figure: TNVMCAP is 0), in two equal parts
    assert sum(r["nsze"] for r in ns) <= (1 << 30) // 512 * 8 // 10
    assert all(r["nsze"] == ns[0]["nsze"] for r in ns)
    handles = [tuple(r["phndls"]) for r in ns]
    assert len(set(handles)) == 2 and all(0 <= h < NRUH for hs in handles for h in hs)
    # every reclaim unit figure is from the device's 32 MiB
    assert all(r["reclaim_units"] == r["bytes"] / RUNS for r in ns)
    # what the controller taught: it claims namespace management with TNVMCAP 0, and refuses it
    assert any("TNVMCAP" in w and "may be refused" in w for w in d["warnings"]), d["warnings"]
    r = guest.results["delete_ns"]
    assert r.rc != 0 and "Invalid Command Opcode" in r.err, str(r)
    assert ok(guest, "after_delete").out.split()[-1] == str((1 << 30) // 512)  # the namespace is still there


def test_smart_fdp_gives_the_host_bytes_written_and_waf_one(guest):
    for s in ("stats_before", "write", "stats_after"):
        ok(guest, s)
    r = json.loads(ok(guest, "fdp").out)
    before = json.loads(guest.files["fdp-before.json"])
    after = json.loads(guest.files["fdp-after.json"])
    # nvme-cli prints the counters as decimal strings here ("hbmw":"33554432")
    assert isinstance(after["hbmw"], str)
    assert int(after["hbmw"]) - int(before["hbmw"]) == WRITTEN
    st = r["fdp_stats"]
    assert r["mode"] == "interval" and r["available"] is True
    assert st["host_bytes_with_metadata_written"] == WRITTEN
    # QEMU's media bytes: what the host wrote plus some of its own, which varies from run to run
    # (4 KiB and 512 KiB, one command of MDTS size, in the runs here)
    assert 0 <= st["media_bytes_with_metadata_written"] - WRITTEN <= 1 << 20, st
    assert r["waf"] == st["media_bytes_with_metadata_written"] / WRITTEN and 1.0 <= r["waf"] <= 1 + 1 / 32, r


def test_smart_waf_reads_nand_writes_from_the_ocp_log(guest):
    ok(guest, "snap_before")
    ok(guest, "snap_after")
    snap = json.loads(guest.files["snap-after.json"])
    assert {"smart_log", "ocp_c0"} <= set(snap["nvme"]), snap["nvme"].keys()
    r = json.loads(ok(guest, "waf").out)
    assert r["available"] is True, r
    assert abs(r["host_writes"]["bytes"] - WRITTEN) < 512_000, r["host_writes"]
    assert r["waf"] is not None and abs(r["waf"] - 1.0) < 0.02, r
