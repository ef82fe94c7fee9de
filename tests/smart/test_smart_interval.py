"""`opsim smart waf BEFORE AFTER` refuses pairs that cannot be one drive's interval (issue 12,
item 17), shows smartctl's exit status bits, and names truncated or binary input as such."""

from __future__ import annotations

import copy
import json

import pytest
from test_smart_waf import INTEL, MICRON, SAMSUNG_860, _bump

from opsim.cli import main
from opsim.errors import InputError
from opsim.smart import interval_waf, load_document


def write(tmp_path, name, doc) -> str:
    p = tmp_path / name
    p.write_text(json.dumps(doc))
    return str(p)


def micron_pair(tmp_path, **after_changes):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    after["power_on_time"]["hours"] += 10
    for k, v in after_changes.items():
        after[k] = v
    return write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)


def test_good_pair_still_works(tmp_path, capsys):
    b, a = micron_pair(tmp_path)
    assert main(["smart", "waf", b, a, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["waf"] == pytest.approx(3.5) and d["warnings"] == []


def test_fewer_power_on_hours_in_the_later_snapshot_is_refused(tmp_path, capsys):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    after["power_on_time"]["hours"] -= 1  # counters forward, clock backwards
    b, a = write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)
    assert main(["smart", "waf", b, a]) == 2
    err = capsys.readouterr().err
    assert "power-on hours" in err and str(before["power_on_time"]["hours"]) in err and "Traceback" not in err


def test_power_cycles_going_backwards_is_refused(tmp_path, capsys):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    after["power_cycle_count"] = before["power_cycle_count"] - 1
    b, a = write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)
    assert main(["smart", "waf", b, a]) == 2
    assert "power cycle" in capsys.readouterr().err


def test_host_writes_backwards_on_a_drive_without_nand_counter_is_refused(tmp_path, capsys):
    before = json.loads(SAMSUNG_860.read_text())
    after = copy.deepcopy(before)
    for a in after["ata_smart_attributes"]["table"]:
        if a["id"] == 241:
            a["raw"]["value"] -= 1000
    b, a = write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)
    assert main(["smart", "waf", b, a]) == 2
    assert "backwards" in capsys.readouterr().err


def test_different_serials_are_refused(tmp_path, capsys):
    b, a = micron_pair(tmp_path, serial_number="OTHER-DRIVE")
    assert main(["smart", "waf", b, a]) == 2
    err = capsys.readouterr().err
    assert "different drives" in err and "serial" in err
    # --allow-no-serial does not let different serials through
    assert main(["smart", "waf", "--allow-no-serial", b, a]) == 2


@pytest.mark.parametrize("which", ["before", "after", "both"])
def test_missing_serial_is_refused_unless_allowed(tmp_path, capsys, which):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    for name, doc in (("before", before), ("after", after)):
        if which in (name, "both"):
            del doc["serial_number"]
    b, a = write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)
    assert main(["smart", "waf", b, a]) == 2
    err = capsys.readouterr().err
    assert "serial number" in err and "--allow-no-serial" in err
    assert main(["smart", "waf", "--allow-no-serial", b, a, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["waf"] == pytest.approx(3.5)
    assert any("serial" in w for w in d["warnings"])


def test_python_api_refuses_missing_serials_too():
    before = load_document(MICRON)
    after = copy.deepcopy(before)
    del after["smartctl"]["serial_number"]
    with pytest.raises(InputError, match="serial number"):
        interval_waf(before, after)
    assert interval_waf(before, after, allow_no_serial=True)["waf"] is None  # counters did not move


def test_exit_status_bits_are_shown_as_warnings(tmp_path, capsys):
    doc = json.loads(INTEL.read_text())
    doc["smartctl"]["exit_status"] = 4 | 64
    p = write(tmp_path, "i.json", doc)
    assert main(["smart", "waf", p, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["available"] and d["smartctl_status"]["bits"] == [2, 6]
    w = " ".join(d["warnings"])
    assert "exit status 68" in w and "bit 2" in w and "may be partial" in w and "bit 6" in w and "error log" in w
    assert main(["smart", "waf", p]) == 0
    out = capsys.readouterr().out
    assert "warning" in out and "bit 2" in out and "may be partial" in out


def test_exit_status_bits_of_both_snapshots_in_the_interval(tmp_path, capsys):
    before = json.loads(MICRON.read_text())
    after = _bump(before, {246: 8_000_000, 247: 1_000_000, 248: 2_500_000})
    after["smartctl"]["exit_status"] = 8  # DISK FAILING
    b, a = write(tmp_path, "b.json", before), write(tmp_path, "a.json", after)
    assert main(["smart", "waf", b, a]) == 0
    out = capsys.readouterr().out
    assert "AFTER" in out and "DISK FAILING" in out


def test_truncated_json_is_reported_as_truncated(tmp_path, capsys):
    text = MICRON.read_text()
    for cut in (len(text) // 2, len(text) - 3, 40):
        p = tmp_path / "t.json"
        p.write_text(text[:cut])
        assert main(["smart", "waf", str(p)]) == 2
        err = capsys.readouterr().err
        assert "truncated" in err and "not a smartctl" not in err and str(p) in err


@pytest.mark.parametrize(
    "data,words",
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)), "binary"),
        ('{"model_name": "caf\u00e9"}'.encode("latin-1"), "UTF-8"),
        (b"", "empty"),
    ],
)
def test_binary_and_non_utf8_input(tmp_path, capsys, data, words):
    p = tmp_path / "x.json"
    p.write_bytes(data)
    assert main(["smart", "waf", str(p)]) == 2
    err = capsys.readouterr().err
    assert words in err and str(p) in err and "internal error" not in err
    assert "\x00" not in err


def test_oversized_input_is_refused_before_reading_it_all(tmp_path, capsys):
    p = tmp_path / "big.json"
    with open(p, "wb") as f:
        f.truncate(200 * 2**20)  # sparse: 200 MiB of NULs
    assert main(["smart", "waf", str(p)]) == 2
    assert "too large" in capsys.readouterr().err
