"""`opsim plan --records` on the outputs captured from QEMU 7.2's emulated NVMe controller
(tests/fixtures/planner/qemu-nvme-7.2, captured by the guest of tests/vm/): the controller claims
namespace management with TNVMCAP 0, which the plan flags before anything is run; a drive that
reports its capacity (the PM983 fixture) gets no such warning."""

from __future__ import annotations

import json
from pathlib import Path

from opsim.cli import main

FIX = Path(__file__).parent.parent / "fixtures" / "planner"


def _plan(capsys, records):
    capsys.readouterr()
    rc = main(["plan", "/dev/nvme0n1", "--records", str(FIX / records), "--max-lba", "80%", "--json"])
    assert rc in (0, None)
    return json.loads(capsys.readouterr().out)


def _nvme_warnings(d):
    return next(m for m in d["mechanisms"] if m["name"] == "nvme")["warnings"]


def test_captured_qemu_controller_claims_ns_management_with_tnvmcap_zero(capsys):
    d = _plan(capsys, "qemu-nvme-7.2")
    ctrl = d["drive"]["nvme"]["ctrl"]
    assert (ctrl["oacs"], ctrl["ns_management"], ctrl["tnvmcap"]) == (0x10A, True, 0)
    assert d["capacity"]["native"]["sectors"] == 524288  # the 256 MiB namespace, from NSZE
    assert any("TNVMCAP" in w and "use the partition mechanism" in w for w in _nvme_warnings(d))
    assert [m["name"] for m in d["mechanisms"]] == ["nvme", "partition"]


def test_a_controller_reporting_its_capacity_gets_no_tnvmcap_warning(capsys):
    assert not any("TNVMCAP" in w for w in _nvme_warnings(_plan(capsys, "nvme-pm983")))


def test_captured_qemu_ahci_disk_gets_the_no_hpa_amac_and_security_warnings(capsys):
    """QEMU 7.2's AHCI disk (tests/fixtures/planner/qemu-ahci-7.2): no HPA, AMAC or Security in IDENTIFY."""
    capsys.readouterr()
    rc = main(["plan", "/dev/sda", "--records", str(FIX / "qemu-ahci-7.2"), "--max-lba", "80%", "--json"])
    assert rc in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert d["drive"]["interface"] == "sata" and d["drive"]["model"] == "QEMU HARDDISK"
    assert d["capacity"]["native"]["sectors"] == 2097152
    w = next(m for m in d["mechanisms"] if m["name"] == "ata")["warnings"]
    assert any("neither AMAC nor the HPA feature set" in x for x in w), w
    assert any("no ATA Security feature set" in x for x in w), w


def test_a_sata_drive_with_hpa_and_security_gets_neither_warning(capsys):
    capsys.readouterr()
    rc = main(["plan", "/dev/sda", "--records", str(FIX / "sata-intel320-hpa"), "--max-lba", "80%", "--json"])
    assert rc in (0, None)
    w = next(m for m in json.loads(capsys.readouterr().out)["mechanisms"] if m["name"] == "ata")["warnings"]
    assert not any("neither AMAC" in x or "no ATA Security" in x for x in w), w


def test_captured_qemu_fdp_controller_plan_reads_its_configuration(capsys):
    """QEMU 10.0's FDP subsystem (tests/fixtures/planner/qemu-nvme-10.0-fdp): the configuration from the
    recorded `nvme fdp configs`, and the TNVMCAP warning on the namespace steps."""
    capsys.readouterr()
    argv = ["plan", "/dev/nvme0", "--records", str(FIX / "qemu-nvme-10.0-fdp"), "--placement", "fdp"]
    rc = main([*argv, "--tenants", "2", "--max-lba", "80%", "--json"])
    assert rc in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert d["support"]["fdps"] is True
    cfg = d["fdp_config"]
    assert (cfg["nruh"], cfg["nrg"], cfg["runs"]) == (8, 1, 32 << 20)
    assert cfg["source"].endswith("nvme-fdp-configs.json")
    assert len(d["namespaces"]) == 2
    assert any("TNVMCAP" in w and "may be refused" in w for w in d["warnings"]), d["warnings"]
