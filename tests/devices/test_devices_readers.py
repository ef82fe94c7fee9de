"""Device-tool output is read in one place (issue 24): ``opsim plan`` and ``opsim smart`` read
``smartctl -j`` through the same tolerant reader, so they accept and refuse the same documents
with the same message; the SMART fuzzer is a test tool, not part of the installed package; and
no runtime module reaches into the planner for a device parser."""

from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.devices.jsondoc import loads_document
from opsim.devices.smartctl import parse_smartctl
from opsim.errors import InputError
from opsim.smart import as_snapshot

FIX = Path(__file__).parent.parent / "fixtures" / "planner"
PKG = Path(__file__).parent.resolve().parent.parent / "python" / "opsim"
SMARTCTL = (FIX / "sata-micron1100" / "smartctl.json").read_text()
#: the document cut after a complete line, as a copy that stopped early leaves it
CUT = SMARTCTL[: SMARTCTL.index('"device"')]


def _message(fn, *args) -> str:
    with pytest.raises(InputError) as e:
        fn(*args)
    return str(e.value)


@pytest.mark.parametrize(
    "text,why",
    [
        (CUT, "truncated"),
        ('{"smartctl": {"exit_status": 0}, "rotation_rate": NaN}', "NaN is not valid JSON"),
        ('{"smartctl": {"exit_status": 0}}\0', "binary data"),
        ("", "empty file"),
    ],
)
def test_plan_refuses_what_smart_refuses_with_the_same_message(text, why):
    """Before, the planner read smartctl with a laxer reader: NaN passed, a cut document was
    "no JSON document found"."""
    plan_msg = _message(parse_smartctl, text)
    assert why in plan_msg
    assert plan_msg == _message(loads_document, text, "smartctl")


def test_plan_and_smart_read_the_same_document_past_banner_lines():
    text = "smartctl 7.3 2022-02-28 r5338\n[a list first] \n[1, 2]\n" + SMARTCTL
    doc = loads_document(text, "smartctl")
    assert as_snapshot(doc, "x")["smartctl"]["serial_number"] == parse_smartctl(text)["serial"]
    # a JSON value that is not an object before the document is skipped, not refused
    assert parse_smartctl("[1, 2]\n" + SMARTCTL) == parse_smartctl(SMARTCTL)


@pytest.mark.parametrize(
    "text,why",
    [(CUT, "truncated"), ('{"smartctl": {"exit_status": 0}, "rotation_rate": NaN}', "NaN is not valid JSON")],
)
def test_plan_records_name_a_bad_smartctl_file(capsys, tmp_path, text, why):
    """Before: a cut file was "no JSON document found", and NaN an internal error (exit 1)."""
    (tmp_path / "smartctl.json").write_text(text)
    code = main(["plan", "/dev/sdz", "--records", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(tmp_path / "smartctl.json") in err and why in err and "internal error" not in err


def test_the_fuzzer_is_not_in_the_installed_package():
    assert importlib.util.find_spec("opsim.smart.fuzz") is None
    assert not (PKG / "smart" / "fuzz.py").exists()


def test_device_parsers_are_imported_from_devices_only():
    """measure/purge.py imported planner.probe sideways; the tools' readers live in devices/."""
    assert not (PKG / "planner" / "probe.py").exists() and not (PKG / "devices.py").exists()
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert "planner.probe" not in node.module, path
    purge = ast.parse((PKG / "measure" / "purge.py").read_text())
    froms = {n.module for n in ast.walk(purge) if isinstance(n, ast.ImportFrom)}
    assert "devices.hdparm" in froms and not any(m and m.startswith("planner") for m in froms)
    assert json.loads(json.dumps(parse_smartctl(SMARTCTL)))["model"]
