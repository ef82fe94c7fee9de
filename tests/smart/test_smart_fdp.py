"""`opsim smart fdp`: NVMe FDP statistics (log page 22h) saved by nvme-cli as JSON, text, the raw
log page or a get-log hex dump, WAF = MBMW / HBMW since FDP was enabled or over an interval, and
every bad input refused with exit 2 and the field, line or byte offset named (issue 15)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

import smart_fuzz as fuzz
from opsim.cli import main
from opsim.errors import DeviceError, InputError
from opsim.smart import fdp
from opsim.smart.fdp import (
    HBMW,
    KEYS,
    MBE,
    MBMW,
    interval_fdp_waf,
    lifetime_fdp_waf,
    load_fdp_stats,
    parse_fdp_stats,
)

FIX = Path(__file__).parent.parent / "fixtures" / "nvme-fdp"
BEFORE = {HBMW: 52_613_349_376_000, MBMW: 54_241_879_605_248, MBE: 54_261_543_075_840}
AFTER = {HBMW: 55_911_884_259_328, MBMW: 58_668_513_411_072, MBE: 58_684_285_648_896}
FILES = {
    "before": ["stats-before.json", "stats-before.txt", "stats-before.bin"],
    "after": ["stats-after.json", "stats-after.txt", "stats-after.bin", "get-log-after.txt"],
}
FORMAT = {".json": "nvme-cli-json", ".txt": "nvme-cli-text", ".bin": "log-page"}


def page(h: int, m: int, e: int, reserved: bytes = bytes(16)) -> bytes:
    return h.to_bytes(16, "little") + m.to_bytes(16, "little") + e.to_bytes(16, "little") + reserved


def text(h, m, e) -> str:
    return (
        f"Host Bytes with Metadata Written (HBMW): {h}\n"
        f"Media Bytes with Metadata Written (MBMW): {m}\n"
        f"Media Bytes Erased (MBE): {e}\n"
    )


def put(tmp_path: Path, name: str, data: bytes | str) -> str:
    p = tmp_path / name
    p.write_bytes(data if isinstance(data, bytes) else data.encode())
    return str(p)


def run_json(capsys, *argv) -> dict:
    assert main(["smart", "fdp", "--json", *map(str, argv)]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def run_err(capsys, *argv) -> str:
    code = main(["smart", "fdp", *map(str, argv)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "internal error" not in err and "Traceback" not in err
    return err


# ------------------------------------------------------------------------ the three formats


@pytest.mark.parametrize("when,expected", [("before", BEFORE), ("after", AFTER)])
def test_every_format_of_one_snapshot_parses_to_the_same_numbers(when, expected):
    seen = []
    for name in FILES[when]:
        s = load_fdp_stats(FIX / name)
        assert s["fdp_stats"] == expected, name
        assert s["warnings"] == []
        seen.append(s["input_format"])
        if name.startswith("get-log"):
            assert s["input_format"] == "get-log-hex"
        else:
            assert s["input_format"] == FORMAT[Path(name).suffix]
    assert len(set(seen)) == len(seen)  # each file took a different reader


def test_the_binary_fixture_is_the_64_byte_log_page():
    data = (FIX / "stats-after.bin").read_bytes()
    assert len(data) == fdp.LOG_BYTES == 64
    assert data == page(AFTER[HBMW], AFTER[MBMW], AFTER[MBE])


@pytest.mark.parametrize("name", FILES["before"] + FILES["after"])
def test_lifetime_waf_is_mbmw_over_hbmw(capsys, name):
    d = run_json(capsys, FIX / name)
    c = BEFORE if "before" in name else AFTER
    assert d["mode"] == "lifetime" and d["available"] is True
    assert d["fdp_stats"] == c  # the key names a simulated result uses
    assert set(d["fdp_stats"]) == {
        "host_bytes_with_metadata_written",
        "media_bytes_with_metadata_written",
        "media_bytes_erased",
    }
    assert d["waf"] == c[MBMW] / c[HBMW]
    assert d["waf"] == pytest.approx(1.0310 if "before" in name else 1.0493, abs=5e-5)


def test_lifetime_table(capsys):
    assert main(["smart", "fdp", str(FIX / "stats-after.txt")]) == 0
    out = capsys.readouterr().out
    assert "Host Bytes with Metadata Written (HBMW)" in out and "55,911,884,259,328" in out
    assert "Media Bytes Erased (MBE)" in out and "1.0493" in out and "since FDP was enabled" in out


# ------------------------------------------------------------------------ the interval


def test_interval_waf_is_the_difference(capsys):
    d = run_json(capsys, FIX / "stats-before.json", FIX / "stats-after.json")
    dh, dm, de = (AFTER[k] - BEFORE[k] for k in KEYS)
    assert d["mode"] == "interval"
    assert (
        d["fdp_stats"]
        == {HBMW: dh, MBMW: dm, MBE: de}
        == {
            HBMW: 3_298_534_883_328,
            MBMW: 4_426_633_805_824,
            MBE: 4_422_742_573_056,
        }
    )
    assert d["waf"] == dm / dh == pytest.approx(1.342, abs=1e-6)
    assert d["before"]["fdp_stats"] == BEFORE and d["after"]["fdp_stats"] == AFTER
    assert d["before"]["waf"] == pytest.approx(1.0310, abs=5e-5)
    assert d["warnings"] == [] and "note" not in d


@pytest.mark.parametrize("b", FILES["before"])
@pytest.mark.parametrize("a", FILES["after"])
def test_interval_is_the_same_whatever_the_formats(capsys, b, a):
    d = run_json(capsys, FIX / b, FIX / a)
    assert d["waf"] == pytest.approx(1.342, abs=1e-6)
    assert d["fdp_stats"][HBMW] == 3_298_534_883_328


def test_interval_table(capsys):
    assert main(["smart", "fdp", str(FIX / "stats-before.bin"), str(FIX / "stats-after.txt")]) == 0
    out = capsys.readouterr().out
    assert "interval (AFTER - BEFORE)" in out and "3,298,534,883,328" in out and "1.3420" in out
    assert "stats-before.bin" in out and "log page" in out


def test_swapped_files_are_refused(capsys):
    err = run_err(capsys, FIX / "stats-after.json", FIX / "stats-before.json")
    assert "went backwards" in err and "HBMW" in err and "swapped" in err
    assert "55,911,884,259,328 -> 52,613,349,376,000" in err


def test_one_counter_backwards_is_named(tmp_path, capsys):
    b = put(tmp_path, "b.bin", page(1000, 2000, 9000))
    a = put(tmp_path, "a.bin", page(5000, 8000, 8999))  # MBE went down (FDP reset in between?)
    err = run_err(capsys, b, a)
    assert "Media Bytes Erased (MBE) went backwards" in err and "9,000 -> 8,999" in err
    with pytest.raises(InputError) as e:
        interval_fdp_waf(load_fdp_stats(b), load_fdp_stats(a))
    assert e.value.key == MBE


def test_no_host_writes_in_the_interval_is_refused(tmp_path, capsys):
    err = run_err(capsys, FIX / "stats-after.json", FIX / "stats-after.bin")
    assert "no host writes" in err and "the same file" in err
    b = put(tmp_path, "b.json", json.dumps({"hbmw": 100, "mbmw": 100, "mbe": 0}))
    a = put(tmp_path, "a.json", json.dumps({"hbmw": 100, "mbmw": 4096, "mbe": 0}))  # GC only
    assert "no host writes" in run_err(capsys, b, a)


def test_waf_below_one_is_a_warning(tmp_path, capsys):
    b = put(tmp_path, "b.txt", text(1000, 1000, 0))
    a = put(tmp_path, "a.txt", text(11000, 9000, 0))
    d = run_json(capsys, b, a)
    assert d["waf"] == pytest.approx(0.8)
    assert any("fewer than host bytes" in w and "over the interval" in w for w in d["warnings"])
    assert "short interval" in d["note"]
    d = run_json(capsys, a)
    assert d["waf"] == pytest.approx(9 / 11) and any("below 1" in w for w in d["warnings"])


def test_zero_host_bytes_in_one_snapshot_is_no_waf_with_a_reason(tmp_path, capsys):
    p = put(tmp_path, "fresh.bin", bytes(64))  # just after FDP was enabled
    d = run_json(capsys, p)
    assert d["waf"] is None and d["available"] is False and "HBMW is 0" in d["reason"]
    assert main(["smart", "fdp", p]) == 0
    assert "HBMW is 0" in capsys.readouterr().out


def test_more_than_two_files_is_refused(capsys):
    f = FIX / "stats-after.json"
    assert "one FILE" in run_err(capsys, f, f, f)


# ------------------------------------------------------------------------ the binary page


@pytest.mark.parametrize(
    "cut,where",
    [
        (1, "Host Bytes with Metadata Written (HBMW, bytes 0-15)"),
        (15, "Host Bytes with Metadata Written (HBMW, bytes 0-15)"),
        (16, "Media Bytes with Metadata Written (MBMW, bytes 16-31)"),
        (40, "Media Bytes Erased (MBE, bytes 32-47)"),
        (48, "the reserved bytes (48-63)"),
        (63, "the reserved bytes (48-63)"),
    ],
)
def test_truncated_binary_is_named_by_offset(tmp_path, capsys, cut, where):
    p = put(tmp_path, "cut.bin", (FIX / "stats-after.bin").read_bytes()[:cut])
    err = run_err(capsys, p)
    assert f"{cut} bytes of 64" in err and f"offset {cut}" in err and where in err and p in err


def test_empty_file_is_refused(tmp_path, capsys):
    assert "empty file" in run_err(capsys, put(tmp_path, "empty", b""))
    assert "empty file" in run_err(capsys, put(tmp_path, "blank", b" \n\n"))


def test_a_larger_log_len_is_accepted_when_the_rest_is_zero(tmp_path, capsys):
    p = put(tmp_path, "512.bin", (FIX / "stats-after.bin").read_bytes() + bytes(448))
    d = run_json(capsys, p)
    assert d["fdp_stats"] == AFTER and any("448 zero bytes" in w for w in d["warnings"])


def test_bytes_past_the_page_are_refused_by_offset(tmp_path, capsys):
    data = (FIX / "stats-after.bin").read_bytes() + bytes(10) + b"\x07" + bytes(5)
    err = run_err(capsys, put(tmp_path, "long.bin", data))
    assert "offset 74" in err and "0x07" in err and "80 bytes" in err


def test_nonzero_reserved_bytes_are_a_warning(tmp_path, capsys):
    p = put(tmp_path, "r.bin", page(4096, 8192, 0, reserved=bytes(5) + b"\x01" + bytes(10)))
    d = run_json(capsys, p)
    assert d["waf"] == 2.0 and any("offset 53" in w and "reserved" in w for w in d["warnings"])


def test_128_bit_counters_are_exact(tmp_path, capsys):
    h, m, e = 2**100 + 12345, 2**101 + 6789, 2**128 - 1
    for name, data in (
        ("big.bin", page(h, m, e)),
        ("big.json", json.dumps({"hbmw": h, "mbmw": m, "mbe": e})),
        ("big-str.json", json.dumps({"hbmw": str(h), "mbmw": str(m), "mbe": str(e)})),
        ("big.txt", text(f"{h:,}", f"{m:,}", f"{e:,}")),
    ):
        d = run_json(capsys, put(tmp_path, name, data))
        assert d["fdp_stats"] == {HBMW: h, MBMW: m, MBE: e}, name
        assert d["waf"] == pytest.approx(2.0)
    assert main(["smart", "fdp", str(tmp_path / "big.bin")]) == 0
    assert f"{e:,}" in capsys.readouterr().out


def test_a_text_file_with_a_stray_binary_byte_says_so(tmp_path, capsys):
    data = (FIX / "stats-after.txt").read_bytes()
    err = run_err(capsys, put(tmp_path, "x.txt", data[:20] + b"\0" + data[20:]))
    assert "binary byte 0x00 at offset 20" in err
    err = run_err(capsys, put(tmp_path, "y.txt", data[:30] + b"\xff" + data[30:]))
    assert "binary byte 0xff at offset 30" in err


# ------------------------------------------------------------------------ text and JSON


@pytest.mark.parametrize(
    "h,m,e",
    [
        ("12288", "16384", "0"),  # C locale
        ("12,288", "16,384", "0"),  # en_US
        ("12.288", "16.384", "0"),  # de_DE
        ("12 288", "16 384", "0"),
        ("12\u202f288", "16\u202f384", "0"),  # fr_FR: narrow no-break space
    ],
)
def test_locale_separators(tmp_path, capsys, h, m, e):
    d = run_json(capsys, put(tmp_path, "s.txt", text(h, m, e)))
    assert d["fdp_stats"] == {HBMW: 12288, MBMW: 16384, MBE: 0}


def test_newer_nvme_cli_key_value_table(tmp_path, capsys):
    kv = (
        "  Host Bytes with Metadata Written (HBMW)  : 12,288\n"
        "  Media Bytes with Metadata Written (MBMW) : 16,384\n"
        "  Media Bytes Erased (MBE)                 : 1,048,576\n"
    )
    d = run_json(capsys, put(tmp_path, "kv.txt", "$ sudo nvme fdp stats /dev/nvme0 -e 1\n" + kv))
    assert d["fdp_stats"] == {HBMW: 12288, MBMW: 16384, MBE: 1_048_576}


@pytest.mark.parametrize(
    "line2,words",
    [
        ("Media Bytes with Metadata Written (MBMW): 12,34", "s.txt:2: Media Bytes with Metadata Written (MBMW)"),
        ("Media Bytes with Metadata Written (MBMW): -5", "not a byte count"),
        ("Media Bytes with Metadata Written (MBMW): 1.5e9", "not a byte count"),
        ("Media Bytes with Metadata Written (MBMW): ", "not a byte count"),
        ("Media Bytes with Metadata Written (MBMW): " + "9" * 40, "larger than a 128-bit"),
        ("Host Bytes with Metadata Written (HBMW): 1", "again (first at line 1)"),
        ("", "no Media Bytes with Metadata Written (MBMW) line"),
    ],
)
def test_bad_text_names_the_line(tmp_path, capsys, line2, words):
    lines = text(12288, 16384, 0).splitlines()
    lines[1] = line2
    err = run_err(capsys, put(tmp_path, "s.txt", "\n".join(lines) + "\n"))
    assert words in err


@pytest.mark.parametrize(
    "doc,words",
    [
        ({"hbmw": 1, "mbmw": 2}, "mbe: missing"),
        ({"hbmw": -1, "mbmw": 2, "mbe": 0}, "negative"),
        ({"hbmw": 1.5, "mbmw": 2, "mbe": 0}, "not a byte count"),
        ({"hbmw": 1e300, "mbmw": 2, "mbe": 0}, "above 2^53"),
        ({"hbmw": 2**128, "mbmw": 2, "mbe": 0}, "larger than a 128-bit"),
        ({"hbmw": True, "mbmw": 2, "mbe": 0}, "not a byte count"),
        ({"hbmw": [1], "mbmw": 2, "mbe": 0}, "a JSON list is not a byte count"),
        ({"hbmw": "0x10", "mbmw": 2, "mbe": 0}, "hbmw (Host Bytes with Metadata Written)"),
        ({"error": "FDP Disabled(0x229)"}, "nvme-cli reported an error"),
        ({"fdp_stats": [1, 2, 3]}, "fdp_stats: expected a JSON object"),
        ({"fdp_stats": {"host_bytes_with_metadata_written": 1}}, "fdp_stats.media_bytes_with_metadata_written"),
        ({"smartctl": {"exit_status": 0}}, "opsim smart waf reads it"),
    ],
)
def test_bad_json_names_the_key(tmp_path, capsys, doc, words):
    err = run_err(capsys, put(tmp_path, "s.json", json.dumps(doc)))
    assert words in err and "s.json" in err


def test_malformed_json_names_line_and_column(tmp_path, capsys):
    assert "truncated" in run_err(capsys, put(tmp_path, "t.json", '{\n  "hbmw":12288,\n  "mbmw":1'))
    assert "NaN is not valid JSON" in run_err(capsys, put(tmp_path, "n.json", '{"hbmw": NaN, "mbmw": 1, "mbe": 0}'))
    assert "line 2, column" in run_err(capsys, put(tmp_path, "c.json", '{\n  "hbmw" 1}'))


def test_a_warning_line_before_the_json_is_skipped(tmp_path, capsys):
    p = put(tmp_path, "w.json", "warning: deprecated option\n" + (FIX / "stats-after.json").read_text())
    assert run_json(capsys, p)["fdp_stats"] == AFTER


def test_an_nvme_cli_error_saved_as_text_is_named(tmp_path, capsys):
    err = run_err(capsys, put(tmp_path, "e.txt", "NVMe status: FDP Disabled: FDP is disabled(0x229)\n"))
    assert "nvme-cli reported an error" in err and "FDP Disabled" in err


def test_not_fdp_statistics(tmp_path, capsys):
    assert "not FDP statistics" in run_err(capsys, put(tmp_path, "x.txt", "hello\nworld\n"))
    assert "not FDP statistics" in run_err(capsys, FIX / "README.md")


# ------------------------------------------------------------------------ get-log hex dump


def test_get_log_hex_dump_of_another_log_is_refused(tmp_path, capsys):
    dump = (FIX / "get-log-after.txt").read_text().replace("log-id:34", "log-id:2")
    err = run_err(capsys, put(tmp_path, "g.txt", dump))
    assert "g.txt:1: log-id 2 is not the FDP statistics log" in err


def test_get_log_hex_dump_with_a_line_missing(tmp_path, capsys):
    lines = (FIX / "get-log-after.txt").read_text().splitlines()
    del lines[3]  # header, ruler, 0000, 0010, ...: the 0010 line
    err = run_err(capsys, put(tmp_path, "g.txt", "\n".join(lines) + "\n"))
    assert "expected 0x0010" in err and "g.txt:4" in err
    cut = "\n".join((FIX / "get-log-after.txt").read_text().splitlines()[:4]) + "\n"
    err = run_err(capsys, put(tmp_path, "h.txt", cut))
    assert "32 bytes of 64" in err and "offset 32" in err


# ------------------------------------------------------------------------ opsim's own JSON


def test_an_opsim_result_with_fdp_stats_is_read(tmp_path, capsys):
    """A simulated result reports the same terms; so does `opsim smart fdp --json` itself."""
    sim = {"waf": 1.4, "fdp_stats": {HBMW: 1_000_000, MBMW: 1_400_000, MBE: 2_097_152}}
    d = run_json(capsys, put(tmp_path, "sim.json", json.dumps(sim)))
    assert d["input_format"] == "opsim-json" and d["waf"] == pytest.approx(1.4)
    out = tmp_path / "lifetime.json"
    assert main(["smart", "fdp", str(FIX / "stats-before.txt"), "--json-file", str(out)]) == 0
    capsys.readouterr()
    d = run_json(capsys, out, FIX / "stats-after.bin")
    assert d["waf"] == pytest.approx(1.342, abs=1e-6)
    iv = tmp_path / "interval.json"
    assert (
        main(["smart", "fdp", str(FIX / "stats-before.txt"), str(FIX / "stats-after.bin"), "--json-file", str(iv)]) == 0
    )
    capsys.readouterr()
    assert "an interval result" in run_err(capsys, iv)


# ------------------------------------------------------------------------ files


def _digest(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def test_input_files_are_never_modified(tmp_path, capsys):
    names = [*FILES["before"], *FILES["after"]]
    copies = []
    for n in names:
        c = tmp_path / n
        c.write_bytes((FIX / n).read_bytes())
        copies.append(c)
    before = {c: (_digest(c), c.stat().st_mtime_ns) for c in copies}
    out = tmp_path / "out" / "r.json"
    out.parent.mkdir()
    assert main(["smart", "fdp", "--json-file", str(out), str(copies[0]), str(copies[3])]) == 0
    for c in copies:
        main(["smart", "fdp", "--json", str(c)])
        main(["smart", "fdp", str(copies[4]), str(c)])  # some of these are refused
    capsys.readouterr()
    # --json-file naming an input is refused before anything is written
    err = run_err(capsys, copies[0], copies[3], "--json-file", copies[3])
    assert "--json-file" in err and "would be overwritten" in err
    assert {c: (_digest(c), c.stat().st_mtime_ns) for c in copies} == before
    assert sorted(os.listdir(tmp_path)) == sorted([*names, "out"])
    assert {_digest(FIX / n) for n in names} == {d for d, _ in before.values()}


def test_a_huge_file_is_refused_unread(tmp_path, capsys, monkeypatch):
    p = tmp_path / "huge.bin"
    with open(p, "wb") as f:
        f.truncate(fdp.MAX_BYTES + 1)  # sparse: nothing to read, only its size
    reads = []
    real_open = open

    def spy_open(path, mode="r", *a, **kw):
        f = real_open(path, mode, *a, **kw)
        if str(path) == str(p):
            real_read = f.read
            f.read = lambda *ra: reads.append(ra) or real_read(*ra)  # type: ignore[method-assign]
        return f

    monkeypatch.setattr("builtins.open", spy_open)
    err = run_err(capsys, p)
    assert "too large" in err and "16 MiB" in err and reads == []
    with pytest.raises(InputError, match="too large"):
        parse_fdp_stats(b"\0" * (fdp.MAX_BYTES + 1), "x")


def test_missing_files_directories_and_devices(tmp_path, capsys):
    assert "cannot read" in run_err(capsys, tmp_path / "nope.json")
    assert "cannot read" in run_err(capsys, tmp_path)
    with pytest.raises(DeviceError, match="a device, not a saved file"):
        load_fdp_stats("/dev/null")


def test_help_and_python_api(capsys):
    with pytest.raises(SystemExit) as e:
        main(["smart", "fdp", "--help"])
    assert e.value.code == 0 and "log page 22h" in " ".join(capsys.readouterr().out.split())
    s = load_fdp_stats(FIX / "stats-after.json")
    r = lifetime_fdp_waf(s)
    assert r["waf"] == AFTER[MBMW] / AFTER[HBMW] and fdp.fdp_waf([s])["waf"] == r["waf"]


# ------------------------------------------------------------------------ fuzzing


@pytest.fixture(scope="module")
def fdp_corpus():
    return fuzz.load_fdp_corpus([FIX])


def test_fdp_corpus_has_the_fixtures_and_the_seeds(fdp_corpus):
    names = [n for n, _ in fdp_corpus]
    assert "stats-after.bin" in names and "README.md" not in names
    assert len(names) == 7 + len(fuzz.FDP_SEEDS)
    for name, data in fuzz.FDP_SEEDS:  # every built-in seed is valid as it stands
        assert parse_fdp_stats(data, name)["fdp_stats"], name


def test_short_fdp_fuzz_pass(fdp_corpus):
    st = fuzz.run_fdp(4000, seed=1, corpus=fdp_corpus)
    assert st["failed"] == 0, st["failures"]
    assert st["parser"] == "fdp" and st["ok"] > 800 and st["input_errors"] > 1500


def test_fdp_fuzz_is_deterministic(fdp_corpus):
    assert fuzz.one_fdp_input(fdp_corpus, 7, 99) == fuzz.one_fdp_input(fdp_corpus, 7, 99)
    s1 = fuzz.run_fdp(300, seed=7, corpus=fdp_corpus)
    s2 = fuzz.run_fdp(300, seed=7, corpus=fdp_corpus)
    assert (s1["ok"], s1["input_errors"]) == (s2["ok"], s2["input_errors"])


def test_fdp_fuzz_reports_a_failure(fdp_corpus, monkeypatch, tmp_path):
    def boom(data, base, before):
        raise KeyError("x")

    monkeypatch.setattr(fuzz, "exercise_fdp", boom)
    st = fuzz.run_fdp(5, seed=1, corpus=fdp_corpus, save_dir=str(tmp_path))
    assert st["failed"] == 5 and "KeyError" in st["failures"][0]["error"]
    assert len(list(tmp_path.glob("fuzz-fdp-1-*.bin"))) == 5


def test_fuzz_command_line_runs_the_fdp_parser(capsys):
    assert fuzz.main(["--count", "200", "--seed", "3", "--parser", "fdp", "--fdp-corpus", str(FIX)]) == 0
    out = capsys.readouterr().out
    assert "FDP statistics: 200 inputs (seed 3" in out and "0 failures" in out
