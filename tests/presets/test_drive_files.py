"""Drive files: a TOML file in the presets' schema works wherever a preset name does.

A ``preset`` value that contains ``/`` or ends in ``.toml`` is a drive file, read by the core
(relative to the config file's directory, else the current one): a copy of a built-in preset
gives bit-identical results; every way a file can be wrong is exit 2 with key ``preset``
naming the file (and the line); ``opsim presets FILE``, ``opsim advise --drive FILE``,
``opsim demo --drive FILE``, the sweep's grid files and ``opsim.presets`` take one.
"""

import json
import os
import shutil

import pytest

import opsim
from opsim import cli
from opsim import presets as P
from opsim.errors import ConfigError, SchemaError
from opsim.sim import describe

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PRESET_DIR = os.path.join(ROOT, "crates", "opsim-core", "presets")
SHORT = {"warmup_drive_writes": 0.25, "measure_drive_writes": 0.5, "round_drive_writes": 0.25}


def main(capsys, *argv):
    """(exit code, stdout, stderr) of ``opsim ARGV`` in this process."""
    try:
        code = cli.main(list(argv))
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err


def preset_text(name):
    with open(os.path.join(PRESET_DIR, f"{name}.toml")) as f:
        return f.read()


def copy_preset(name, dest, extra=""):
    """The built-in preset ``name`` copied to ``dest`` (a drive file), with ``extra`` appended."""
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.copyfile(os.path.join(PRESET_DIR, f"{name}.toml"), dest)
    if extra:
        with open(dest, "a") as f:
            f.write(extra)
    assert P.get(str(dest))["settings"] == P.get(name)["settings"], (
        f"{name}: the built extension's preset differs from the file on disk; rebuild (make build)"
    )
    return str(dest)


def deterministic(doc):
    """A result without what may differ between two runs of the same drive: the timings, and
    the ``preset`` value (a name or a path: the same drive either way)."""
    d = json.loads(json.dumps(doc))
    d.pop("perf", None)
    d["config"].pop("preset", None)
    return d


# ------------------------------------------------------------------------ simulate, same results


@pytest.mark.parametrize("name,scale", [("micron-1100-1tb", 1024), ("micron-1100-1tb-dwa", 1024)])
def test_a_copy_of_a_preset_simulates_bit_identically(tmp_path, name, scale):
    path = copy_preset(name, tmp_path / "drives" / "copy.toml")
    by_name = P.scale_model(name, scale)
    by_file = P.scale_model(path, scale)
    assert by_file["preset"] == os.path.abspath(path) and by_file["drive"] == by_name["drive"]
    a = opsim.simulate(by_name | {"run": SHORT})
    b = opsim.simulate(by_file | {"run": SHORT})
    assert a.data["timed"] is not None, "the preset's timing came along"
    assert deterministic(a.data) == deterministic(b.data)
    assert b.data["config"]["preset"] == os.path.abspath(path)


def test_a_relative_path_is_relative_to_the_config_files_directory(tmp_path, monkeypatch):
    copy_preset("intel-320-160gb", tmp_path / "drives" / "intel.toml")
    body = '\n[drive]\nuser_capacity = "300MiB"\nphysical_capacity = "400MiB"\n[run]\n' + "".join(
        f"{k} = {v}\n" for k, v in SHORT.items()
    )
    cfg = tmp_path / "configs" / "c.toml"
    cfg.parent.mkdir()
    cfg.write_text('preset = "../drives/intel.toml"' + body)
    named = tmp_path / "named.toml"
    named.write_text('preset = "intel-320-160gb"' + body)
    elsewhere = tmp_path / "a" / "b"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)  # nothing to find from the current directory
    a, b = opsim.simulate(str(cfg)), opsim.simulate(str(named))
    assert deterministic(a.data) == deterministic(b.data)
    assert a.data["config"]["preset"] == "../drives/intel.toml", "the value as written"
    d = describe(str(cfg))
    assert d["drive"] == describe(str(named))["drive"]
    s = opsim.Simulator(str(cfg))
    assert s.describe()["drive"] == opsim.Simulator(str(named)).describe()["drive"]
    # the CLI reads the same file the same way
    code = cli.main(["simulate", str(cfg), "--json-file", str(tmp_path / "r.json")])
    assert code == 0
    assert deterministic(json.loads((tmp_path / "r.json").read_text())) == deterministic(a.data)
    # a dict (or TOML text) has no file: its relative path is relative to the current directory
    with pytest.raises(SchemaError, match="does not exist"):
        describe({"preset": "../drives/intel.toml", "drive": {}})
    monkeypatch.chdir(tmp_path / "configs")
    assert describe({"preset": "../drives/intel.toml"})["config"]["drive"]["pages_per_block"] == 256 * 4


# ------------------------------------------------------------------------------ refusals


def bad_files(tmp_path):
    """(file name, the text that must follow "drive file PATH" in the message)."""
    d = tmp_path / "bad"
    d.mkdir()
    ok = preset_text("micron-1100-1tb")
    n = ok.count("\n")
    (d / "big.toml").write_text(ok + "# padding\n" * 110_000)
    (d / "latin1.toml").write_bytes(ok.encode() + b"# caf\xe9\n")
    (d / "syntax.toml").write_text(ok + "[timing\n")
    (d / "nopreset.toml").write_text('[drive]\nuser_capacity = "1GiB"\nop = 0.1\n')
    (d / "workload.toml").write_text(ok + '[workload]\ntype = "zipf"\n')
    lines = ok.splitlines()
    ppb = next(i for i, line in enumerate(lines) if line.startswith("pages_per_block")) + 1
    (d / "badvalue.toml").write_text(ok.replace("pages_per_block = 1024", 'pages_per_block = "many"'))
    (d / "adir.toml").mkdir()
    return d, [
        ("missing.toml", " does not exist"),
        ("adir.toml", " is not a regular file"),
        ("big.toml", " bytes; a drive file is at most 1048576 bytes (1 MiB)"),
        ("latin1.toml", f" is not UTF-8 text (TOML must be): byte 0xe9 on line {n + 1}"),
        ("syntax.toml", f"(line {n + 1}, column "),
        ("nopreset.toml", " has no [preset] table"),
        ("workload.toml", ": workload is not a drive file's"),
        ("badvalue.toml", f': drive.pages_per_block: invalid type: string "many", expected u32 (line {ppb}, column'),
    ]


def test_every_bad_drive_file_exits_2_with_key_preset_naming_the_file(tmp_path, capsys):
    d, cases = bad_files(tmp_path)
    for name, want in cases:
        cfg = tmp_path / f"uses-{name}"
        cfg.write_text(f'preset = "bad/{name}"\n[run]\nwarmup_drive_writes = 0\n')
        out = tmp_path / "out.json"
        code, _, err = main(capsys, "simulate", str(cfg), "--json-file", str(out))
        assert code == 2, (name, err)
        head = f"opsim: error: preset: drive file {d / name}"
        assert err.startswith(head), (name, err)
        assert want in err, (name, err, want)
        assert "Traceback" not in err and not out.exists()
        # the library: a SchemaError with key "preset"
        with pytest.raises(SchemaError) as e:
            describe(str(cfg))
        assert e.value.key == "preset" and str(d / name) in str(e.value)
        if name == "syntax.toml":
            assert " is not valid TOML: " in err


def test_a_preset_that_is_neither_a_name_nor_a_file(tmp_path, capsys):
    cfg = tmp_path / "c.toml"
    cfg.write_text('preset = "no-such-drive"\n')
    code, _, err = main(capsys, "simulate", str(cfg))
    assert code == 2 and err.startswith("opsim: error: preset: unknown preset") and "drive file" in err
    with pytest.raises(ConfigError, match="unknown preset"):
        P.get("no-such-drive")


# ------------------------------------------------------------------------ the Python library


def test_the_library_takes_a_path_wherever_it_takes_a_name(tmp_path, monkeypatch):
    name = "sandisk-x400-256gb"
    path = copy_preset(name, tmp_path / "x400.toml", "\n[preset.calibration]\npe_cycles = 3000\n")
    assert P.is_path(path) and P.is_path("x400.toml") and P.is_path("d/x") and not P.is_path(name)
    p, q = P.get(path), P.get(name)
    assert (p["name"], p["settings"], p["path"]) == (name, q["settings"], path)
    assert p["meta"]["calibration"] == {"pe_cycles": 3000}
    assert {k: v for k, v in p["meta"].items() if k != "calibration"} == q["meta"]
    assert P.settings(path) == P.settings(name)
    assert (P.user_bytes(path), P.physical_bytes(path)) == (P.user_bytes(name), P.physical_bytes(name))
    monkeypatch.chdir(tmp_path)  # relative to the current directory
    assert P.get("x400.toml")["path"] == path and P.get("./x400.toml")["settings"] == q["settings"]
    model = P.scale_model("./x400.toml", 512, user=200 * 10**9)
    assert model == P.scale_model(name, 512, user=200 * 10**9) | {"preset": path}
    # the emitted config resolves from anywhere
    monkeypatch.chdir(ROOT)
    assert describe(model)["drive"] == describe(P.scale_model(name, 512, user=200 * 10**9))["drive"]
    with pytest.raises(SchemaError, match=r"nope\.toml does not exist") as e:
        P.get("nope.toml")
    assert e.value.key == "preset"
    nameless = tmp_path / "nameless.toml"
    nameless.write_text('[preset]\n[drive]\nuser_capacity = "1GiB"\nop = 0.1\n')
    assert P.get(str(nameless))["name"] == "nameless" and P.title(P.get(str(nameless))) == "nameless"
    with pytest.raises(ConfigError, match=r"gives no drive\.physical_capacity"):
        P.physical_bytes(str(nameless))


# ------------------------------------------------------------------------------------ the CLI


def test_presets_shows_a_drive_file_like_a_named_preset(tmp_path, capsys):
    name = "samsung-840-pro-256gb"
    path = copy_preset(name, tmp_path / "840.toml", "\n[preset.calibration]\npe_cycles = 3000\n")
    code, out, _ = main(capsys, "presets", path, "--json")
    assert code == 0
    doc = json.loads(out)
    code, named, _ = main(capsys, "presets", name, "--json")
    named = json.loads(named)
    assert doc["path"] == path and doc["name"] == name and doc["settings"] == named["settings"]
    assert doc["meta"]["sources"] == named["meta"]["sources"] and doc["meta"]["calibration"]["pe_cycles"] == 3000
    code, out, _ = main(capsys, "presets", path)
    code2, out_named, _ = main(capsys, "presets", name)
    assert code == code2 == 0 and f"(drive file {path})" in out
    assert out.replace(f"\n(drive file {path})", "") == out_named, "the same table"
    code, _, err = main(capsys, "presets", str(tmp_path / "missing.toml"))
    assert code == 2 and err.startswith(f"opsim: error: preset: drive file {tmp_path / 'missing.toml'} does not exist")


ADVISE = ("--read-write", "0:100", "--min-tbw", "2x", "--min-iops", "2x")


def test_advise_on_a_drive_file_and_its_calibrated_pe_rating(tmp_path, capsys):
    name = "micron-1100-1tb"
    plain = copy_preset(name, tmp_path / "plain.toml")
    cal = copy_preset(
        name, tmp_path / "cal.toml", '\n[preset.calibration]\npe_cycles = 3000\npe_cycles_source = "datasheet TBW"\n'
    )

    def advise(*argv):
        code, out, err = main(capsys, "advise", *argv, *ADVISE, "--no-simulate", "--json")
        return code, (json.loads(out) if out.strip() else None), err

    code, by_name, _ = advise("--preset", name, "--pe", "3000")
    assert code == 0
    code, by_cal, _ = advise("--drive", cal)
    assert code == 0
    assert by_cal["drive"]["pe_cycles"] == 3000
    assert by_cal["drive"]["sources"]["pe"] == f"[preset.calibration] pe_cycles of {cal}: datasheet TBW"
    assert by_cal["drive"]["preset"] == cal and by_cal["drive"]["name"] == name
    assert by_cal["screen"] == by_name["screen"] and by_cal["recommendation"] == by_name["recommendation"]
    assert any("[preset.calibration] pe_cycles" in a for a in by_cal["assumptions"])
    # --pe wins over the calibration; --preset takes a path too
    code, by_pe, _ = advise("--preset", cal, "--pe", "1000")
    assert code == 0 and by_pe["drive"]["pe_cycles"] == 1000 and by_pe["drive"]["sources"]["pe"] == "given with --pe"
    # no calibration, no --pe: an endurance target cannot be judged
    code, _, err = advise("--drive", plain)
    assert code == 2 and "--pe" in err
    # --drive and --preset exclude each other; a bad file names --drive
    code, _, err = advise("--drive", cal, "--preset", name)
    assert code == 2 and "not allowed with" in err
    code, _, err = advise("--drive", str(tmp_path / "none.toml"))
    assert code == 2 and err.startswith(f"opsim: error: --drive: drive file {tmp_path / 'none.toml'} does not exist")
    bad = copy_preset(name, tmp_path / "badcal.toml", '\n[preset.calibration]\npe_cycles = "lots"\n')
    code, _, err = advise("--drive", bad)
    assert code == 2 and "pe_cycles" in err and "'lots'" in err


@pytest.mark.slow
def test_advise_confirms_on_a_drive_file_with_the_simulator(tmp_path, capsys):
    """The confirmation's scale-model configs name the drive file (by its absolute path)."""
    name = "intel-320-160gb"
    path = copy_preset(name, tmp_path / "intel.toml")
    argv = ("--min-iops", "2x", "--model-blocks", "1024", "--json")
    code, out, _ = main(capsys, "advise", "--preset", name, *argv)
    code2, out2, _ = main(capsys, "advise", "--drive", path, *argv)
    a, b = json.loads(out), json.loads(out2)
    assert code == code2 == 0 and b["simulated"], "confirmed by the simulator"
    for r in a["simulated"] + b["simulated"]:
        r.pop("wall_seconds", None)
    assert a["simulated"] == b["simulated"] and a["recommendation"] == b["recommendation"]


def tiny_drive(tmp_path):
    """The Samsung 840 Pro's timing on a 256 MiB drive in 256 KiB blocks (seconds to study)."""
    text = preset_text("samsung-840-pro-256gb")
    text = (
        text.replace('user_capacity = "256GB"', 'user_capacity = "256MB"')
        .replace('physical_capacity = "256GiB"', 'physical_capacity = "256MiB"')
        .replace("pages_per_block = 32768", "pages_per_block = 64")
    )
    path = tmp_path / "tiny.toml"
    path.write_text(text)
    return str(path)


@pytest.mark.slow
def test_demo_on_a_drive_file(tmp_path, capsys):
    path = tiny_drive(tmp_path)
    report, out = tmp_path / "r.html", tmp_path / "r.json"
    code, text, err = main(capsys, "demo", "--drive", path, "-o", str(report), "--json-file", str(out))
    assert code == 0, err
    assert f"drive file {path}" in text and "native 0.256 GB" in text
    doc = json.loads(out.read_text())
    assert doc["preset"] == path and doc["nand_bytes"] == 256 * 2**20 and doc["scale"] == 1
    levels = doc["levels"]
    assert len(levels) == 8 and levels[0]["user_bytes"] == 256 * 10**6
    wafs = [lv["waf"] for lv in levels]
    assert wafs == sorted(wafs, reverse=True)
    assert report.exists()


def test_demo_refuses_a_bad_drive_file_before_any_work(tmp_path, capsys, monkeypatch):
    from opsim.commands import demo

    def no_work(*a, **k):
        raise AssertionError("simulated before checking the drive file")

    monkeypatch.setattr(demo, "simulate_all", no_work)
    d, cases = bad_files(tmp_path)
    for name, want in cases[:3]:
        code, _, err = main(capsys, "demo", "--drive", str(d / name), "-o", str(tmp_path / "r.html"))
        assert code == 2 and err.startswith(f"opsim: error: --drive: drive file {d / name}") and want in err, err
    nameless = tmp_path / "nameless.toml"
    nameless.write_text('[preset]\n[drive]\nuser_capacity = "1GiB"\nop = 0.1\n')
    code, _, err = main(capsys, "demo", "--drive", str(nameless))
    assert code == 2 and "gives no drive.physical_capacity" in err


# ------------------------------------------------------------------------------------ sweeps


def test_a_grid_files_drive_file_is_relative_to_the_grid_file(tmp_path, monkeypatch):
    from opsim.sweep import load_grid

    copy_preset("intel-320-160gb", tmp_path / "drives" / "intel.toml")
    grid = """
[drive]
user_capacity = "300MiB"
physical_capacity = "400MiB"

[run]
warmup_drive_writes = 0.25
measure_drive_writes = 0.25

[sweep]
seed = 3

[sweep.grid]
preset = [PRESETS]
"ftl.gc" = ["greedy", "fifo"]
"""
    g = tmp_path / "grids" / "g.toml"
    g.parent.mkdir()
    g.write_text(grid.replace("PRESETS", '"../drives/intel.toml", "intel-320-160gb"'))
    monkeypatch.chdir(tmp_path / "drives")  # not the grid's directory: "../drives" resolves either way
    df = opsim.sweep(str(g), workers=0)
    assert (df["status"] == "ok").all() and len(df) == 4 and df["waf"].notna().all()
    # each drive-file point is the named preset's run with the same seed
    for p in load_grid(str(g)).points:
        if p.config["preset"] != "../drives/intel.toml":
            continue
        row = df[df["point_id"] == p.point_id].iloc[0]
        same = opsim.simulate(p.nested() | {"preset": "intel-320-160gb"})
        assert (row["waf"], row["ftl.gc"]) == (same.waf, p.config["ftl.gc"])
    # a drive file that is not there is caught when the grid is read, naming where it is written
    g.write_text(grid.replace("PRESETS", '"intel-320-160gb", "../drives/none.toml"'))
    with pytest.raises(ConfigError, match=r"sweep\.grid\.preset\[1\]: drive file .*none\.toml does not exist"):
        load_grid(str(g))
