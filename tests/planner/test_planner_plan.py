"""opsim plan: parsers on recorded tool outputs, the procedures' exact values, --apply on images."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.devices.hdparm import parse_hdparm_I, parse_hdparm_N
from opsim.devices.lsblk import parse_lsblk
from opsim.devices.nvme import parse_nvme_id_ctrl, parse_nvme_id_ns
from opsim.devices.smartctl import parse_smartctl
from opsim.errors import DeviceError, InputError
from opsim.planner.plan import apply_partition, parse_sgdisk_p, partition_layout
from opsim.toolio import extract_json, to_int

FIX = Path(__file__).parent.parent / "fixtures" / "planner"
SGDISK = shutil.which("sgdisk") or ("/usr/sbin/sgdisk" if os.access("/usr/sbin/sgdisk", os.X_OK) else None)
needs_sgdisk = pytest.mark.skipif(SGDISK is None, reason="sgdisk (gdisk) not installed; run make sysdeps")


def _plan_json(capsys, *argv):
    assert main(["plan", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- parsers


def test_to_int_tolerates_nvme_cli_spellings():
    assert to_int(960197124096) == 960197124096
    assert to_int("960197124096") == 960197124096
    assert to_int("960,197,124,096") == 960197124096
    assert to_int("0x6fc81aa0") == 0x6FC81AA0
    assert to_int(None) is None and to_int("") is None


def test_extract_json_skips_leading_lines():
    assert extract_json('Warning: x\nsmartctl 7.3 blah\n{"a": 1}\ntrailing') == {"a": 1}
    with pytest.raises(InputError):
        extract_json("no json here")


def test_hdparm_N_formats():
    a = parse_hdparm_N((FIX / "sata-micron1100" / "hdparm-N.txt").read_text())
    assert a == {"current_sectors": 2000409264, "native_sectors": 2000409264, "amac": True, "limited": False}
    b = parse_hdparm_N((FIX / "sata-intel320-hpa" / "hdparm-N.txt").read_text())
    assert b == {"current_sectors": 250082380, "native_sectors": 312602976, "amac": False, "limited": True}


def test_hdparm_I_micron():
    i = parse_hdparm_I((FIX / "sata-micron1100" / "hdparm-I.txt").read_text())
    assert i["lba48_sectors"] == 2000409264
    assert (i["logical_sector_size"], i["physical_sector_size"]) == (512, 4096)
    assert i["security"]["frozen"] is True and i["security"]["enabled"] is False
    assert i["amac"]["supported"] and i["sanitize"]["supported"] and i["sanitize"]["block_erase"]
    assert not i["hpa"]["supported"] and i["trim"]


def test_hdparm_I_intel_old_format():
    i = parse_hdparm_I((FIX / "sata-intel320-hpa" / "hdparm-I.txt").read_text())
    assert i["logical_sector_size"] == 512
    assert i["security"]["frozen"] is False
    assert i["hpa"]["supported"] and i["dco"]["supported"] and not i["amac"]["supported"]


def test_nvme_parsers():
    c = parse_nvme_id_ctrl((FIX / "nvme-pm983" / "nvme-id-ctrl.json").read_text())
    assert c["tnvmcap"] == 960197124096 and c["ns_management"] and c["cntlid"] == 4
    n = parse_nvme_id_ns((FIX / "nvme-pm983" / "nvme-id-ns.json").read_text())
    assert n["nsze"] == 1875385008 and n["nuse"] == 0x6FC81AA0 and n["lba_size"] == 512
    assert [f["size"] for f in n["lbafs"]] == [512, 4096]


def test_lsblk_old_and_new():
    new = parse_lsblk((FIX / "sata-micron1100" / "lsblk.json").read_text())
    assert new[0]["size"] == 1024209543168 and new[0]["log_sec"] == 512 and new[0]["mountpoints"] == []
    old = parse_lsblk((FIX / "sata-intel320-hpa" / "lsblk.json").read_text())
    assert old[0]["size"] == 128042178560 and old[1]["parent"] == "sdc" and old[1]["mountpoints"] == ["/srv/data"]


def test_smartctl_with_banner():
    s = parse_smartctl((FIX / "sata-micron1100" / "smartctl.json").read_text())
    assert s["protocol"] == "ATA" and s["user_capacity_blocks"] == 2000409264


# ---------------------------------------------------------------- plans from recordings


def test_plan_micron_800gb(capsys):
    d = _plan_json(capsys, "/dev/sdb", "--records", str(FIX / "sata-micron1100"), "--user", "800GB")
    ata = d["mechanisms"][0]
    assert ata["name"] == "ata"
    assert ata["values"]["sectors"] == 1562824368 and ata["values"]["native_sectors"] == 2000409264
    cmds = [c for s in ata["steps"] for c in s["commands"]]
    assert "hdparm -N p1562824368 --yes-i-know-what-i-am-doing /dev/sdb" in cmds
    assert any("--security-erase" in c for c in cmds) and any("--sanitize-block-erase" in c for c in cmds)
    assert "AMAC" in ata["values"]["protocol"]
    assert any("FROZEN" in w for w in ata["warnings"])
    assert any("libata.ignore_hpa=1" in w for w in ata["warnings"])
    assert any("enabling native capacity" in w for w in ata["warnings"])
    assert any("once per power cycle" in n or "per power cycle" in n for n in ata["notes"])
    assert round(100 * d["capacity"]["op"]["native"], 2) == 21.87
    part = d["mechanisms"][1]
    assert part["name"] == "partition" and part["steps"][0]["commands"] == ["blkdiscard /dev/sdb"]
    assert part["values"]["end"] < 1562824368


def test_plan_intel_hpa_hdat2(capsys):
    d = _plan_json(capsys, "/dev/sdc", "--records", str(FIX / "sata-intel320-hpa"), "--max-lba", "80%")
    ata = d["mechanisms"][0]
    assert ata["values"]["sectors"] == 250082380  # the HDAT2 example, from the native count
    assert "legacy HPA" in ata["values"]["protocol"]
    assert any("mounted at /srv/data" in w for w in d["warnings"])
    assert any("already limited" in w for w in d["warnings"])
    assert not any("FROZEN" in w for w in ata["warnings"])


def test_plan_nvme(capsys):
    d = _plan_json(capsys, "/dev/nvme0n1", "--records", str(FIX / "nvme-pm983"), "--op", "28%", "--op-basis", "added")
    nv = d["mechanisms"][0]
    assert nv["name"] == "nvme"
    # 960 GB (tnvmcap is exactly IDEMA 960) / 1.28 = 750 GB -> IDEMA(750) LBAs of 512 B
    assert nv["values"]["nsze"] == nv["values"]["ncap"] == 97696368 + 1953504 * 700
    cmds = [c for s in nv["steps"] for c in s["commands"]]
    assert f"nvme create-ns /dev/nvme0 --nsze={nv['values']['nsze']} --ncap={nv['values']['nsze']} --flbas=0" in cmds
    assert "nvme delete-ns /dev/nvme0 --namespace-id=1" in cmds
    assert any("thin" in n for n in nv["notes"])


def test_plan_nvme_4k_and_granularity(capsys):
    d = _plan_json(
        capsys,
        "/dev/nvme0n1",
        "--records",
        str(FIX / "nvme-pm983"),
        "--sector-size",
        "4096",
        "--native",
        "960GB",
        "--user",
        "800GB",
        "--ns-granularity",
        "1GiB",
    )
    v = d["mechanisms"][0]["values"]
    assert v["flbas"] == 1 and v["lba_size"] == 4096
    assert v["nsze"] % (2**30 // 4096) == 0 and v["nsze"] <= 12212046 + 244188 * 750


def test_plan_described_sas(capsys):
    d = _plan_json(capsys, "--interface", "sas", "--native", "960GB", "--sector-size", "4096", "--user", "800GB")
    sas = d["mechanisms"][0]
    n = 12212046 + 244188 * 750
    assert sas["values"]["blocks"] == n
    assert f"sg_format --resize --count={n} /dev/sgX" in [c for s in sas["steps"] for c in s["commands"]]


def test_plan_needs_a_target(capsys):
    assert main(["plan", "--interface", "sata", "--native", "480GB"]) == 2
    assert main(["plan", "--interface", "sata"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_partition_layout_alignment():
    lay = partition_layout(2000409264, 1562824368, 512)
    assert lay["start"] == 2048 and (lay["end"] + 1) % 2048 == 0 and lay["end"] < 1562824368


# ---------------------------------------------------------------- --apply


def _sha(p):
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


@pytest.fixture
def image(tmp_path):
    p = tmp_path / "disk.img"
    with open(p, "wb") as f:
        f.truncate(256 * 2**20)
    return str(p)


@needs_sgdisk
def test_apply_on_image(image, capsys):
    assert (
        main(["plan", image, "--op", "25%", "--op-basis", "native", "--apply", f"--destroy-data={image}", "--json"])
        == 0
    )
    d = json.loads(capsys.readouterr().out)["applied"]
    native = 256 * 2**20 // 512
    user = native * 3 // 4
    got = parse_sgdisk_p(subprocess.run([SGDISK, "-p", image], capture_output=True, text=True).stdout)
    assert got["sectors"] == native and len(got["partitions"]) == 1
    p1 = got["partitions"][0]
    assert p1["start"] == 2048 and p1["end"] == (user // 2048) * 2048 - 1 == d["layout"]["end"]
    assert p1["name"] == "opsim-data" and p1["code"] == "8300"


@pytest.mark.slow
@needs_sgdisk
@pytest.mark.parametrize("extra", [[], ["--destroy-data=/some/other/path"], ["--destroy-data="]])
def test_apply_refused_without_confirmation_changes_nothing(image, extra, capsys):
    Path(image).write_bytes(os.urandom(4096) + b"\0" * (256 * 2**20 - 4096))
    before = _sha(image)
    assert main(["plan", image, "--user", "200MB", "--apply", *extra]) == 2
    assert _sha(image) == before
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.slow
@needs_sgdisk
def test_apply_refuses_image_with_partition_table(image, capsys):
    assert main(["plan", image, "--user", "200MB", "--apply", f"--destroy-data={image}"]) == 0
    before = _sha(image)
    assert main(["plan", image, "--user", "100MB", "--apply", f"--destroy-data={image}"]) == 2
    assert "signature" in capsys.readouterr().err
    assert _sha(image) == before
    # --force overrides the signature check (never a mount)
    assert main(["plan", image, "--user", "100MB", "--apply", f"--destroy-data={image}", "--force"]) == 0


def test_apply_refuses_non_file(tmp_path):
    with pytest.raises(DeviceError):
        apply_partition(str(tmp_path), str(tmp_path), user="1MB")
    with pytest.raises(DeviceError):
        apply_partition("/dev/null", "/dev/null", user="1MB")


def test_apply_refuses_mounted_block_device():
    # the root filesystem's device is mounted: always refused, nothing written
    src = subprocess.run(["findmnt", "-n", "-o", "SOURCE", "/"], capture_output=True, text=True).stdout.strip()
    if not src.startswith("/dev/") or not os.path.exists(src):
        pytest.skip("no block device behind / here")
    with pytest.raises(DeviceError):
        apply_partition(src, src, user="1MB", force=True)


def test_destroy_data_without_apply_is_an_error(capsys):
    assert main(["plan", "--interface", "sata", "--native", "480GB", "--user", "400GB", "--destroy-data=/dev/sdb"]) == 2


@pytest.mark.slow
@needs_sgdisk
def test_apply_4k_on_image_refused_before_any_write(image, capsys):
    Path(image).write_bytes(b"\x5a" * (256 * 2**20))
    before = _sha(image)
    assert main(["plan", image, "--user", "200MB", "--sector-size", "4096", "--apply", f"--destroy-data={image}"]) == 2
    assert _sha(image) == before
