"""Every real `smartctl -j` output of ../shared/fixtures/smartctl-exporter/ through `opsim smart`:
a result or a clear input error, hard disks recognised as hard disks, and the drives named in
issue 12 (items 15 and 16) recognised as what they are."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.errors import InputError
from opsim.smart import lifetime_waf, load_document
from opsim.smart.rules import identity

EXPORTER = Path(__file__).parent.resolve().parents[1].parent / "shared" / "fixtures" / "smartctl-exporter"
FILES = sorted(EXPORTER.glob("*.json")) if EXPORTER.is_dir() else []
needs_fixtures = pytest.mark.skipif(
    not EXPORTER.is_dir(),
    reason=f"{EXPORTER} is absent (the shared fixtures are checked out beside the repository, as in CI)",
)

# ATA hard disks for which smartctl printed no rotation_rate: recognised by family and model
HDD_WITHOUT_ROTATION_RATE = {"ST3200820AS_15.json", "ST3200820AS_16.json"}


def raw(path: Path) -> dict:
    return json.loads(path.read_text())


def is_hdd_by_rotation(doc: dict) -> bool:
    rr = doc.get("rotation_rate")
    return isinstance(rr, int) and rr > 0


def run_json(capsys, *argv):
    rc = main([*argv, "--json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if rc == 0 else None), out.err


def fx(name: str) -> Path:
    matches = [p for p in FILES if p.name.startswith(name)]
    assert len(matches) == 1, (name, matches)
    return matches[0]


@needs_fixtures
def test_the_folder_holds_the_163_files():
    assert len(FILES) == 163


@needs_fixtures
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_real_output_gives_a_result_or_a_clear_error(path, capsys):
    """The library and `opsim smart waf FILE` (lifetime form) on every file."""
    try:
        r = lifetime_waf(load_document(path))
    except InputError as e:
        assert str(e) and path.name in str(e)
        r = None
    rc, d, err = run_json(capsys, "smart", "waf", str(path))
    assert rc in (0, 2), err
    assert "internal error" not in err and "Traceback" not in err
    if r is None:
        assert rc == 2 and err.strip()
        return
    assert rc == 0 and d["available"] == r["available"] and d["drive"]["media"] == r["drive"]["media"]
    if not d["available"]:
        assert d["reason"], "no WAF and no reason"
    doc = raw(path)
    hdd = is_hdd_by_rotation(doc) or path.name in HDD_WITHOUT_ROTATION_RATE
    if hdd:
        assert d["drive"]["media"] == "hdd", d["drive"]
        assert d["rule"] == "hard disk" and not d["available"] and d["waf"] is None
        assert "hard disk" in d["reason"] and "does not apply" in d["reason"]
    else:
        assert d["drive"]["media"] == "ssd", d["drive"]
        assert d["rule"] != "hard disk" and "hard disk" not in (d["reason"] or "")


@needs_fixtures
def test_73_hard_disks_are_recognised():
    hdds = [p.name for p in FILES if identity(load_document(p))["media"] == "hdd"]
    assert len(hdds) == 73
    assert {p.name for p in FILES if is_hdd_by_rotation(raw(p))} | HDD_WITHOUT_ROTATION_RATE == set(hdds)


@needs_fixtures
def test_hard_disk_text_output_says_waf_does_not_apply(capsys):
    assert main(["smart", "waf", str(fx("WDC_WD20EFRX-68EUZN0_17"))]) == 0
    out = capsys.readouterr().out
    assert "hard disk" in out and "does not apply" in out and "5400 rpm" in out and "SSD" not in out


# ------------------------------------------------------------------ item 15: hard disks taken for SSDs


@needs_fixtures
@pytest.mark.parametrize(
    "name",
    [
        "sat-Seagate_Constellation_ES.3-ST1000NM0033",
        "sat-Seagate_Exos_X16-ST16000NM001G",
        "sat-null-ST18000NM000J",
        "sat-null-ST8000NM017B",
        "sat-Seagate_Enterprise_Capacity_3.5_HDD-ST10000NM0016",
    ],
)
def test_seagate_enterprise_hdd_is_not_a_seagate_ssd(name, capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx(name)))
    assert rc == 0 and d["drive"]["media"] == "hdd" and d["drive"]["vendor"] == "Seagate"
    assert "SSD" not in d["rule"] and d["rule"] == "hard disk"


@needs_fixtures
def test_seagate_nm_model_without_rotation_rate_is_still_no_ssd():
    """Without rotation_rate, the model pattern alone must not make an ST...NM hard disk an SSD."""
    doc = raw(fx("sat-null-ST8000NM017B"))
    del doc["rotation_rate"]
    from opsim.smart import as_snapshot

    r = lifetime_waf(as_snapshot(doc, "st8000nm.json"))
    assert r["drive"]["media"] == "hdd" and r["rule"] == "hard disk"


@needs_fixtures
@pytest.mark.parametrize("name", ["WDC_WD20EFRX-68EUZN0_17", "WDC_WD20EFRX-68EUZN0_18"])
def test_wd_red_hdd_is_not_a_wd_red_ssd(name, capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx(name)))
    assert rc == 0 and d["drive"]["media"] == "hdd" and d["drive"]["vendor"] == "Western Digital"
    assert "SSD" not in d["rule"]
    # and not even without rotation_rate (the family "Western Digital Red" is the hard-disk line)
    doc = raw(fx(name))
    del doc["rotation_rate"]
    from opsim.smart import as_snapshot

    assert identity(as_snapshot(doc))["media"] == "hdd"


@needs_fixtures
def test_barracuda_without_rotation_rate_is_a_hard_disk(capsys):
    doc = raw(fx("ST3200820AS_15"))
    assert "rotation_rate" not in doc
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx("ST3200820AS_15")))
    assert rc == 0 and d["drive"]["media"] == "hdd" and "does not apply" in d["reason"]


# ------------------------------------------------------------------ item 16: vendors and classes


@needs_fixtures
@pytest.mark.parametrize(
    "name,vendor,transport",
    [
        ("HITACHI_H109060SESUN600G_10", "HITACHI", "SAS"),
        ("SEAGATE_ST373453LC_26", "SEAGATE", "Parallel SCSI"),
        ("HP_73.4G_MAS3735NC_25", "HP 73.4G", "Parallel SCSI"),
    ],
)
def test_scsi_drives_have_their_vendor(name, vendor, transport, capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx(name)))
    assert rc == 0
    assert d["drive"]["vendor"] == vendor and d["drive"]["protocol"] == "SCSI"
    assert d["drive"]["transport"].startswith(transport)
    assert "ATA" not in d["rule"] and "unknown vendor" not in d["rule"]
    assert d["drive"]["media"] == "hdd"
    main(["smart", "waf", str(fx(name))])
    out = capsys.readouterr().out
    assert vendor in out and "unknown vendor" not in out and "ATA, " not in out


def test_sas_ssd_host_writes_from_the_write_error_counter_log():
    """A SAS SSD (rotation_rate 0): the SCSI rule, host writes from gigabytes processed, no NAND counter."""
    from opsim.smart import as_snapshot

    doc = {
        "json_format_version": [1, 0],
        "smartctl": {"exit_status": 0},
        "device": {"name": "/dev/sdb", "type": "scsi", "protocol": "SCSI"},
        "scsi_vendor": "TOSHIBA",
        "scsi_product": "PX05SMB040",
        "scsi_model_name": "TOSHIBA PX05SMB040",
        "serial_number": "X",
        "rotation_rate": 0,
        "scsi_transport_protocol": {"name": "SAS (SPL-3)", "value": 6},
        "scsi_error_counter_log": {"write": {"gigabytes_processed": "1234.567"}},
    }
    r = lifetime_waf(as_snapshot(doc, "px05.json"))
    assert r["drive"]["vendor"] == "TOSHIBA" and r["drive"]["media"] == "ssd"
    assert r["rule"].startswith("SAS/SCSI") and not r["available"]
    assert r["host_writes"]["bytes"] == 1_234_567_000_000 and "NAND" in r["reason"]


@needs_fixtures
def test_dell_branded_intel_s3520_is_intel(capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx("sat-Dell_Certified_Intel_S3520")))
    assert rc == 0 and d["drive"]["vendor"] == "Intel" and d["drive"]["media"] == "ssd"
    assert d["rule"].startswith("Intel/Solidigm")
    assert d["host_writes"]["unit"] == "32 MiB" and d["host_writes"]["raw"] == 129493
    assert "Intel" in d["reason"] and "243" in d["reason"]  # this firmware reports no NAND writes


@needs_fixtures
@pytest.mark.parametrize("name", ["SAMSUNG_MZ7WD240HAFV-00003_21", "SAMSUNG_MZ7WD240HAFV-00003_22"])
def test_samsung_sm843t_is_a_datacenter_drive(name, capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx(name)))
    assert rc == 0 and d["drive"]["vendor"] == "Samsung"
    assert "data center" in d["rule"] and "client" not in d["rule"]
    assert "SM843T" in d["rule"]


@needs_fixtures
def test_nvme_smartctl_file_without_ocp_log_points_to_snapshot(capsys):
    """Item 16: a saved smartctl file of an NVMe drive never holds the OCP C0 log (smartctl does not
    read it): say the *file* lacks it and point to `opsim smart snapshot`, not "the drive has none"."""
    rc, d, _ = run_json(capsys, "smart", "waf", str(fx("nvme-null-Micron_7450_MTFDKCB3T8TFR")))
    assert rc == 0 and not d["available"]
    assert "the drive has no" not in d["reason"]
    assert "this file" in d["reason"] and "opsim smart snapshot" in d["reason"] and "OCP C0" in d["reason"]
    main(["smart", "waf", str(fx("nvme-null-Micron_7450_MTFDKCB3T8TFR"))])
    assert "opsim smart snapshot" in capsys.readouterr().out


def test_nvme_snapshot_that_tried_the_logs_says_the_drive_has_none():
    from opsim.smart import as_snapshot

    sc = {
        "json_format_version": [1, 0],
        "smartctl": {"exit_status": 0},
        "model_name": "ACME NVMe",
        "serial_number": "S1",
        "device": {"name": "/dev/nvme0", "type": "nvme", "protocol": "NVMe"},
        "nvme_smart_health_information_log": {"data_units_written": 1000},
    }
    tried = {
        "format": "opsim-smart-snapshot",
        "smartctl": sc,
        "nvme": {"smart_log": {"data_units_written": 1000}},
        "commands": [{"argv": ["nvme", "ocp", "smart-add-log", "/dev/nvme0", "-o", "json"], "exit_status": 22}],
        "warnings": ["ocp smart-add-log: not available (exit 22: Invalid Log Page)"],
    }
    r = lifetime_waf(as_snapshot(tried, "snap.json"))
    assert "the drive has no OCP C0 log" in r["reason"]
    no_cli = dict(tried, commands=[], warnings=["nvme-cli is not installed: no Endurance Group or OCP C0 log"])
    r = lifetime_waf(as_snapshot(no_cli, "snap.json"))
    assert "nvme-cli" in r["reason"] and "the drive has no" not in r["reason"]
