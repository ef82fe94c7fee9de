"""`opsim smart waf` on real smartctl outputs, and the counter parsers."""

import copy
import json
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.errors import InputError
from opsim.smart import as_snapshot, interval_waf, lifetime_waf, load_document, parse_count, smartctl_status

FIX = Path(__file__).parent.parent / "fixtures" / "measure"
MICRON = FIX / "smartctl_exporter__sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"
INTEL = FIX / "smartctl_exporter__sat-Intel_S4510_S4610_S4500_S4600_Series_SSDs-INTEL_SSDSC2KB240G8-sdc.json"
SAMSUNG_NVME = FIX / "smartctl_exporter__nvme-null-Samsung_SSD_970_EVO_Plus_250GB-nvme0.json"
SAMSUNG_860 = FIX / "scrutiny__smart-ata-full.json"


def run_json(capsys, *argv):
    rc = main([*argv, "--json"])
    out = capsys.readouterr()
    return rc, (json.loads(out.out) if out.out.strip() else None), out.err


def test_micron_5300_lifetime_waf(capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(MICRON))
    assert rc == 0 and d["available"]
    assert d["waf"] == pytest.approx((429271075 + 33907658) / 429271075)
    assert d["waf"] == pytest.approx(1.07899, abs=1e-5)
    assert d["host_writes"]["bytes"] == 13081275632 * 512
    assert d["nand_writes"]["bytes"] is None  # NAND page size is not reported


def test_intel_s4510_lifetime_waf(capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(INTEL))
    assert rc == 0 and d["available"]
    assert d["waf"] == pytest.approx(12186490 / 2575247)
    assert d["host_writes"]["bytes"] == 2575247 * 32 * 2**20
    assert d["nand_writes"]["raw"] == 12186490


def test_samsung_970_evo_plus_not_available(capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(SAMSUNG_NVME))
    assert rc == 0
    assert d["available"] is False and d["waf"] is None
    assert "OCP C0" in d["reason"] and "Endurance Group" in d["reason"]
    assert d["host_writes"]["bytes"] == 1969459 * 512_000
    assert any("Physical media units written" in m for m in d["missing"])
    main(["smart", "waf", str(SAMSUNG_NVME)])
    assert "not available" in capsys.readouterr().out


def test_samsung_860_says_why_no_nand(capsys):
    rc, d, _ = run_json(capsys, "smart", "waf", str(SAMSUNG_860))
    assert rc == 0 and not d["available"]
    assert "Samsung" in d["reason"] and "177" in d["reason"]
    assert d["host_writes"]["raw"] == 64777770148


def test_unknown_drive_lists_missing_counters(tmp_path, capsys):
    doc = json.loads(SAMSUNG_860.read_text())
    doc["model_family"] = None
    doc["model_name"] = "ACME SSD 1TB"
    p = tmp_path / "acme.json"
    p.write_text(json.dumps(doc))
    rc, d, _ = run_json(capsys, "smart", "waf", str(p))
    assert rc == 0 and not d["available"]
    assert "ACME SSD 1TB" in d["reason"] and "does not guess" in d["reason"]
    # host writes still come from the ATA Device Statistics log
    assert d["host_writes"]["counter"].startswith("ATA Device Statistics")
    assert d["host_writes"]["bytes"] == 64777770148 * 512
    assert any("NAND" in m for m in d["missing"])


def _bump(doc, ids_delta):
    doc = copy.deepcopy(doc)
    for a in doc["ata_smart_attributes"]["table"]:
        if a["id"] in ids_delta:
            a["raw"]["value"] += ids_delta[a["id"]]
            a["raw"]["string"] = str(a["raw"]["value"])
    return doc


def test_interval_waf_micron(tmp_path, capsys):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    (tmp_path / "a.json").write_text(json.dumps(after))
    rc, d, _ = run_json(capsys, "smart", "waf", str(MICRON), str(tmp_path / "a.json"))
    assert rc == 0 and d["available"]
    assert d["waf"] == pytest.approx(3.5)
    assert d["host_writes"]["delta"] == 8_000_000 and d["host_writes"]["bytes"] == 8_000_000 * 512


def test_interval_waf_intel_and_backwards(tmp_path, capsys):
    before = json.loads(INTEL.read_text())
    after = _bump(before, {241: 1000, 243: 2500})
    (tmp_path / "a.json").write_text(json.dumps(after))
    r = interval_waf(load_document(INTEL), load_document(tmp_path / "a.json"))
    assert r["waf"] == pytest.approx(2.5)
    # swapped snapshots: counters go backwards -> input error, exit 2, no traceback
    rc = main(["smart", "waf", str(tmp_path / "a.json"), str(INTEL)])
    err = capsys.readouterr().err
    assert rc == 2 and "backwards" in err and "Traceback" not in err


def test_interval_different_drives_refused(capsys):
    rc = main(["smart", "waf", str(MICRON), str(INTEL)])
    assert rc == 2 and "different drives" in capsys.readouterr().err


def test_nvme_with_ocp_c0_interval():
    base = json.loads(SAMSUNG_NVME.read_text())
    snap1 = as_snapshot(
        {
            "format": "opsim-smart-snapshot",
            "smartctl": base,
            "nvme": {
                "smart_log": {"data_units_written": "1,000,000"},
                "ocp_c0": {"Physical media units written": {"hi": 0, "lo": 600_000_000_000}},
            },
        }
    )
    snap2 = as_snapshot(
        {
            "format": "opsim-smart-snapshot",
            "smartctl": base,
            "nvme": {
                "smart_log": {"data_units_written": "1002000"},  # nvme-cli 2.x string
                "ocp_c0": {"Physical media units written": {"hi": 0, "lo": 600_000_000_000 + 3 * 1_024_000_000}},
            },
        }
    )
    assert lifetime_waf(snap1)["waf"] == pytest.approx(600_000_000_000 / (1_000_000 * 512_000))
    r = interval_waf(snap1, snap2)
    assert r["available"] and r["waf"] == pytest.approx(3.0)
    assert r["host_writes"]["bytes"] == 2000 * 512_000


def test_nvme_endurance_group_log():
    base = json.loads(SAMSUNG_NVME.read_text())
    snap = as_snapshot(
        {
            "format": "opsim-smart-snapshot",
            "smartctl": base,
            "nvme": {"endurance_log": {"data_units_written": 100, "media_units_written": 250}},
        }
    )
    r = lifetime_waf(snap)
    assert r["available"] and r["waf"] == pytest.approx(2.5)


def test_nvme_endurance_group_interval_reports_the_finer_host_counter():
    """The WAF comes from the Endurance Group log's own pair (both in 10^9 bytes); the host writes
    from the SMART log's 512,000-byte data units; an interval too short for the coarse pair says so
    with what the host wrote (QEMU 10's controller: 64 MiB moves neither Endurance Group counter)."""
    base = json.loads(SAMSUNG_NVME.read_text())

    def snap(duw: int, end_duw: int, end_muw: int) -> dict:
        logs = {"data_units_written": end_duw, "media_units_written": end_muw}
        nvme = {"smart_log": {"data_units_written": duw}, "endurance_log": logs}
        return as_snapshot({"format": "opsim-smart-snapshot", "smartctl": base, "nvme": nvme})

    s1, s2, s3 = snap(1_000_000, 100, 250), snap(1_000_131, 100, 250), snap(1_003_906, 102, 256)
    short = interval_waf(s1, s2)
    assert short["waf"] is None and not short["available"]
    assert short["host_writes"]["counter"] == "NVMe SMART log data_units_written"
    assert short["host_writes"]["bytes"] == 131 * 512_000
    assert "Endurance Group log data_units_written" in short["reason"]
    assert f"wrote {131 * 512_000:,} bytes" in short["reason"] and "too little for its resolution" in short["reason"]
    long = interval_waf(s1, s3)
    assert long["available"] and long["waf"] == pytest.approx(3.0)  # (256 - 250) / (102 - 100)
    assert long["host_writes"]["bytes"] == 3906 * 512_000
    assert interval_waf(s1, s1)["reason"] == "no host writes between the two snapshots (the denominator did not move)"


@pytest.mark.parametrize(
    "raw,want",
    [
        (1969459, 1969459),
        ("1969459", 1969459),
        ("1,969,459", 1969459),
        ("1,969,459 (1.01 TB)", 1969459),
        ("1 969 459", 1969459),
        ("0x1e0d33", 0x1E0D33),
        ({"hi": 1, "lo": 5}, (1 << 64) + 5),
        ({"value": 7, "string": "7"}, 7),
        (12.0, 12),
        ("  42 [21.5 kB]", 42),
    ],
)
def test_parse_count_variants(raw, want):
    assert parse_count(raw) == want


@pytest.mark.parametrize("raw", ["abc", -1, 1.5, None, True, "1.01 TB", {"x": 1}])
def test_parse_count_rejects(raw):
    with pytest.raises(InputError):
        parse_count(raw)


def test_smartctl_exit_status_bitmask(tmp_path, capsys):
    s = smartctl_status(4 | 64)
    assert not s["fatal"] and s["partial"] and s["bits"] == [2, 6]
    assert smartctl_status(2)["fatal"]
    # a JSON with a non-fatal bit set (error log has entries) is still used
    doc = json.loads(INTEL.read_text())
    doc["smartctl"]["exit_status"] = 64
    p = tmp_path / "i.json"
    p.write_text("some warning line from a wrapper\n" + json.dumps(doc))  # non-JSON prefix too
    rc, d, _ = run_json(capsys, "smart", "waf", str(p))
    assert rc == 0 and d["waf"] == pytest.approx(12186490 / 2575247)
    # fatal bits with no device data: clear input error
    p.write_text(json.dumps({"json_format_version": [1, 0], "smartctl": {"exit_status": 2}}))
    rc = main(["smart", "waf", str(p)])
    err = capsys.readouterr().err
    assert rc == 2 and "device open failed" in err


def test_bad_inputs(tmp_path, capsys):
    p = tmp_path / "x.json"
    p.write_text('{"hello": 1}')
    assert main(["smart", "waf", str(p)]) == 2
    assert "not a smartctl" in capsys.readouterr().err
    assert main(["smart", "waf", str(tmp_path / "missing.json")]) == 2
    assert main(["smart", "waf", str(MICRON), str(MICRON), str(MICRON)]) == 2


def test_same_attribute_id_differs_by_family():
    """241 is 512-byte sectors on Samsung, 32 MiB on Intel: the family decides, not the ID."""
    intel = lifetime_waf(load_document(INTEL))
    sams = lifetime_waf(load_document(SAMSUNG_860))
    assert intel["host_writes"]["unit"] == "32 MiB"
    assert sams["host_writes"]["unit"] == "512-byte logical sector"


def test_snapshot_missing_device(capsys):
    rc = main(["smart", "snapshot", "/dev/does-not-exist"])
    assert rc == 2 and "no such device" in capsys.readouterr().err


# --------------------------------------------------------------------------- snapshots (fake tools)

INTEL_ADD_LOG = {  # nvme-cli `nvme intel smart-log-add DEV --json` layout (plugins/intel/intel-nvme.c)
    "Intel Smart log": "nvme0",
    "Device stats": {
        "program_fail_count": {"normalized": 100, "raw": 0},
        "nand_bytes_written": {"normalized": 100, "raw": 1_234_567},
        "host_bytes_written": {"normalized": 100, "raw": 1_000_000},
    },
}


def test_nvme_snapshot_takes_vendor_log_and_reports_failures(tmp_path, monkeypatch):
    """An Intel NVMe drive (PCI vendor 0x8086): smartctl -x -j, the SMART log, the Endurance
    Group and OCP C0 logs (absent on this drive: recorded as not available) and Intel's
    additional SMART log, which gives the lifetime WAF."""
    import subprocess

    from opsim.smart import snapshot

    dev = tmp_path / "nvme0n1"
    dev.write_bytes(b"")
    sc = json.loads(SAMSUNG_NVME.read_text())
    sc.update(model_name="INTEL SSDPE2KX010T8", nvme_pci_vendor={"id": 0x8086, "subsystem_id": 0x8086})
    calls = []

    def fake_run(argv, timeout=120):
        calls.append(argv)
        if argv[0] == "smartctl":
            return subprocess.CompletedProcess(argv, 4, json.dumps(sc), "")  # bit 2: partial, not fatal
        if argv[1] == "smart-log":
            return subprocess.CompletedProcess(argv, 0, json.dumps({"data_units_written": "65,536,000"}), "")
        if argv[1] == "intel":
            return subprocess.CompletedProcess(argv, 0, "nvme: a notice\n" + json.dumps(INTEL_ADD_LOG), "")
        return subprocess.CompletedProcess(argv, 22, "", "Invalid Log Page")

    monkeypatch.setattr(snapshot, "_run", fake_run)
    snap = snapshot.take_snapshot(str(dev), smartctl="smartctl", nvme="nvme")
    ctrl = snapshot._nvme_controller(str(dev))
    assert [c[1:3] for c in calls[1:]] == [
        ["smart-log", ctrl],
        ["endurance-log", ctrl],
        ["ocp", "smart-add-log"],
        ["intel", "smart-log-add"],
    ]
    assert calls[-1] == ["nvme", "intel", "smart-log-add", ctrl, "--json"]
    assert snap["nvme"]["vendor_log"]["vendor"] == "Intel" and "endurance_log" not in snap["nvme"]
    assert any("endurance-log" in w and "not available" in w for w in snap["warnings"])
    assert any("exit status 4" in w for w in snap["warnings"])
    r = lifetime_waf(as_snapshot(json.loads(json.dumps(snap)), "snap.json"))
    assert r["available"] and r["waf"] == pytest.approx(1.234567)
    assert r["nand_writes"]["bytes"] == 1_234_567 * 32 * 2**20 and "intel" in r["nand_writes"]["counter"]


def test_nvme_snapshot_other_vendor_takes_no_vendor_log(tmp_path, monkeypatch):
    import subprocess

    from opsim.smart import snapshot

    dev = tmp_path / "nvme0n1"
    dev.write_bytes(b"")
    calls = []
    monkeypatch.setattr(
        snapshot,
        "_run",
        lambda argv, timeout=120: (
            calls.append(argv),
            subprocess.CompletedProcess(argv, 0, SAMSUNG_NVME.read_text() if argv[0] == "smartctl" else "{}", ""),
        )[1],
    )
    snap = snapshot.take_snapshot(str(dev), smartctl="smartctl", nvme="nvme")
    assert len(calls) == 4 and "vendor_log" not in snap["nvme"]  # Samsung (0x144d): no plugin log
    assert not lifetime_waf(as_snapshot(snap))["available"]


SHARED_SMARTCTL = Path(__file__).parent.resolve().parents[2] / "shared" / "fixtures" / "smartctl"


@pytest.mark.skipif(not SHARED_SMARTCTL.is_dir(), reason="../shared/fixtures/smartctl not present")
def test_shared_fixtures_lifetime_waf(capsys):
    """The acceptance figures, on ../shared/fixtures/smartctl/ itself."""
    want = {MICRON.name: (429271075 + 33907658) / 429271075, INTEL.name: 12186490 / 2575247, SAMSUNG_NVME.name: None}
    for name, waf in want.items():
        path = SHARED_SMARTCTL / name
        assert path.read_bytes() == (FIX / name).read_bytes()  # the copies are unchanged
        rc, d, _ = run_json(capsys, "smart", "waf", str(path))
        assert rc == 0
        if waf is None:
            assert d["available"] is False
            main(["smart", "waf", str(path)])
            assert "not available" in capsys.readouterr().out
        else:
            assert d["available"] and d["waf"] == pytest.approx(waf)
