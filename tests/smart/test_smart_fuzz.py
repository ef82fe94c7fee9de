"""The smartctl / nvme-cli JSON fuzzer (tests/smart_fuzz.py): a short pass, its determinism, and the
inputs it found that used to crash `opsim smart waf` (each now a clear error or a result)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_smart_waf import INTEL, MICRON, SAMSUNG_NVME

import smart_fuzz as fuzz
from opsim.cli import main
from opsim.errors import InputError
from opsim.smart import as_snapshot, lifetime_waf

SHARED = Path(__file__).parent.resolve().parents[1].parent / "shared" / "fixtures"
CORPUS = [Path(__file__).parent.parent / "fixtures" / "measure", SHARED / "smartctl", SHARED / "smartctl-exporter"]


@pytest.fixture(scope="module")
def corpus():
    return fuzz.load_corpus(CORPUS)


def test_short_fuzz_pass(corpus):
    st = fuzz.run(3000, seed=1, corpus=corpus)
    assert st["failed"] == 0, st["failures"]
    # both kinds of input ran, and both outcomes occur (the mutations reach the readers)
    assert st["ok"] > 500 and st["input_errors"] > 300 and st["bytes_inputs"] > 200


def test_fuzz_is_deterministic(corpus):
    a = fuzz.one_input(corpus, 7, 1234, 0.15)
    b = fuzz.one_input(corpus, 7, 1234, 0.15)
    assert json.dumps(a, default=repr) == json.dumps(b, default=repr)
    s1, s2 = fuzz.run(300, seed=7, corpus=corpus), fuzz.run(300, seed=7, corpus=corpus)
    assert (s1["ok"], s1["input_errors"], s1["bytes_inputs"]) == (s2["ok"], s2["input_errors"], s2["bytes_inputs"])


def test_fuzz_command_line(capsys):
    assert fuzz.main(["--count", "200", "--seed", "3", "--corpus", str(CORPUS[0])]) == 0
    out = capsys.readouterr().out
    assert "200 inputs (seed 3" in out and "0 failures" in out


def test_fuzz_reports_a_failure(corpus, monkeypatch):
    """The harness is not blind: an exception other than InputError is counted and described."""

    def boom(obj, base, allow):
        raise KeyError("x")

    monkeypatch.setattr(fuzz, "exercise", boom)
    st = fuzz.run(5, seed=1, corpus=corpus, byte_share=0.0)
    assert st["failed"] == 5 and "KeyError" in st["failures"][0]["error"]


# ---------------------------------------------------------------------- inputs the fuzzer found


def write(tmp_path, text: str | bytes) -> str:
    p = tmp_path / "f.json"
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(p)


def test_lone_surrogate_in_a_model_name_is_printed(tmp_path, capsys):
    """JSON may escape a lone surrogate ("\\ud800"); printing it crashed the text report."""
    doc = json.loads(INTEL.read_text())
    doc["model_name"] = "INTEL \ud800\x1b[31m"
    p = write(tmp_path, json.dumps(doc))  # ensure_ascii: the file holds \\ud800 escapes
    assert main(["smart", "waf", p]) == 0
    out = capsys.readouterr().out
    out.encode("utf-8")
    assert "INTEL ??[31m" in out and "\x1b" not in out


@pytest.mark.parametrize(
    "value,words",
    [
        ("NaN", "NaN is not valid JSON"),
        ("Infinity", "Infinity is not valid JSON"),
        ("1e999", "not a counter"),
        ("-5", "negative"),
        ("1" + "0" * 400, "larger than any drive counter"),
        ("1" * 5000, "unreadable JSON"),
        ('"12.5"', "not a counter"),
        ('{"hi": 1}', "cannot read a counter"),
    ],
)
def test_odd_numbers_in_an_nvme_counter(tmp_path, capsys, value, words):
    text = SAMSUNG_NVME.read_text()
    doc = json.loads(text)
    old = doc["nvme_smart_health_information_log"]["data_units_written"]
    text = text.replace(f'"data_units_written": {old}', f'"data_units_written": {value}')
    assert text != SAMSUNG_NVME.read_text()
    p = write(tmp_path, text)
    assert main(["smart", "waf", p]) == 2
    err = capsys.readouterr().err
    assert words in err and "internal error" not in err


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 2**200, -1, 1.5, [1], "x"])
def test_odd_counters_through_the_python_api(value):
    doc = json.loads(SAMSUNG_NVME.read_text())
    doc["nvme_smart_health_information_log"]["data_units_written"] = value
    with pytest.raises(InputError, match="data_units_written"):
        lifetime_waf(as_snapshot(doc, "x.json"))


@pytest.mark.parametrize(
    "key,value,where",
    [
        ("ata_smart_attributes", "table", "ata_smart_attributes"),
        ("device", 3, "device"),
        ("model_name", {"a": 1}, "model_name"),
        ("rotation_rate", -7200, "rotation_rate"),
        ("logical_block_size", 0.5, "logical_block_size"),
        ("smartctl", [], "smartctl"),
        ("power_on_time", "1h", "power_on_time"),
    ],
)
def test_a_key_of_the_wrong_type_is_named(tmp_path, capsys, key, value, where):
    doc = json.loads(MICRON.read_text())
    doc[key] = value
    p = write(tmp_path, json.dumps(doc))
    rc = main(["smart", "waf", p, p]) if key == "power_on_time" else main(["smart", "waf", p])
    err = capsys.readouterr().err
    assert rc == 2 and where in err and p in err and "internal error" not in err


def test_deep_nesting_and_many_brackets(tmp_path, capsys):
    p = write(tmp_path, '{"smartctl": ' + "[" * 200_000)
    assert main(["smart", "waf", p]) == 2
    err = capsys.readouterr().err
    assert "nested too deeply" in err or "truncated" in err
    p = write(tmp_path, '{"smartctl": ' + "[" * 200_000 + "]" * 200_000 + "}")
    assert main(["smart", "waf", p]) == 2
    assert "nested too deeply" in capsys.readouterr().err


@pytest.mark.parametrize("gb", ["1e999999", "NaN", "-1.000", "12.3456", "1e40"])
def test_scsi_gigabytes_processed_oddities(gb):
    doc = {
        "json_format_version": [1, 0],
        "smartctl": {"exit_status": 0},
        "serial_number": "S",
        "device": {"name": "/dev/sdb", "type": "scsi", "protocol": "SCSI"},
        "scsi_vendor": "X",
        "scsi_model_name": "X Y",
        "rotation_rate": 0,
        "scsi_error_counter_log": {"write": {"gigabytes_processed": gb}},
    }
    with pytest.raises(InputError, match="gigabytes_processed"):
        lifetime_waf(as_snapshot(doc, "s.json"))
