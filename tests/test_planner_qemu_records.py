"""`opsim plan --records` on the outputs captured from QEMU 7.2's emulated NVMe controller
(tests/fixtures/planner/qemu-nvme-7.2, captured by the guest of tests/vm/): the controller claims
namespace management with TNVMCAP 0, which the plan flags before anything is run; a drive that
reports its capacity (the PM983 fixture) gets no such warning."""

from __future__ import annotations

import json
from pathlib import Path

from opsim.cli import main

FIX = Path(__file__).parent / "fixtures" / "planner"


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
