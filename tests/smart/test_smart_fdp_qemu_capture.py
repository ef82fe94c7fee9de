"""`opsim smart fdp` on FDP statistics captured from QEMU 10.0's emulated FDP controller
(tests/fixtures/nvme-fdp/qemu-10.0, by tests/vm/test_vm_fdp.py): nvme-cli 2.3 prints the
counters there as decimal strings, which are read as exact integers; 32 MiB written between the
two captures."""

from __future__ import annotations

import json
from pathlib import Path

from opsim.cli import main

FIX = Path(__file__).parent.parent / "fixtures" / "nvme-fdp" / "qemu-10.0"


def test_captured_qemu_fdp_stats_as_strings_give_the_interval(capsys):
    assert isinstance(json.loads((FIX / "fdp-after.json").read_text())["hbmw"], str)
    capsys.readouterr()
    rc = main(["smart", "fdp", "--json", str(FIX / "fdp-before.json"), str(FIX / "fdp-after.json")])
    assert rc in (0, None)
    d = json.loads(capsys.readouterr().out)
    st = d["fdp_stats"]
    assert st["host_bytes_with_metadata_written"] == 32 << 20
    assert st["media_bytes_with_metadata_written"] == (32 << 20) + (512 << 10)
    assert st["media_bytes_erased"] == 0
    assert d["waf"] == ((32 << 20) + (512 << 10)) / (32 << 20)


def test_the_first_capture_has_no_host_writes_yet(capsys):
    capsys.readouterr()
    rc = main(["smart", "fdp", "--json", str(FIX / "fdp-before.json")])
    assert rc in (0, None)
    d = json.loads(capsys.readouterr().out)
    assert d["waf"] is None and "HBMW is 0" in d["reason"]
