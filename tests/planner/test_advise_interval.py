"""A drive file's profile carried forward (issue 26, item 3): ``opsim advise --drive FILE``
gives WAF, IOPS and DWPD intervals at every level, in the table and in ``--json``, for any
workload; a drive without a profile says where intervals would come from; ``opsim simulate``
with such a drive file says how to get the interval, and ``--interval`` gives it.

The drive files here are the built-in D7-P5520 preset written out as a drive file with a
profile made by hand (the NAND and the program time moved together, as the profile of a
datasheet-only fit moves them: docs/calibrate.md, "The uncertainty model"), so the tests do
not depend on how ``opsim calibrate`` computes the profile, only on the stored format.
"""

import json
import re

import pytest
import tomli_w

from opsim import cli, presets

PRESET = "solidigm-d7-p5520-1920gb"
#: the hand-made profile: each point's NAND and program time as factors of the preset's, and
#: its cost above the least; the last point is outside the 95% interval (3.841)
FACTORS = (0.90, 0.95, 1.05, 1.10, 1.20)
DELTAS = (3.6, 1.0, 1.0, 3.6, 9.0)
INSIDE = 4


def main(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


def drive_file(path, profile: dict | None) -> str:
    """The preset as a drive file (its meta, [preset.calibration] with the P/E rating derived
    from the datasheet), with ``profile`` as its [preset.calibration.profile]."""
    p = presets.get(PRESET)
    meta = dict(p["meta"])
    cal = dict(meta.get("calibration", {}))
    cal.pop("profile", None)
    if profile is not None:
        cal["profile"] = profile
    meta["calibration"] = cal
    path.write_text(tomli_w.dumps({"preset": meta, **p["settings"]}))
    return str(path)


def hand_profile() -> dict:
    phys = presets.physical_bytes(PRESET)
    t_prog = presets.settings(PRESET)["timing"]["t_prog_us"]
    return {
        "method": "profile likelihood over the NAND capacity (made by hand for the test)",
        "keys": ["drive.physical_capacity", "timing.t_prog_us"],
        "points": [[float(int(phys * f)), round(t_prog * f, 2)] for f in FACTORS],
        "delta_cost": list(DELTAS),
        "threshold": 3.841,
        "discrepancy": 0.2,
    }


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("carry")
    return {
        "profile": drive_file(d / "with.toml", hand_profile()),
        "none": drive_file(d / "without.toml", None),
        "dir": d,
    }


_CACHE: dict = {}


def advise(capsys, *argv):
    """(exit code, JSON document) of ``opsim advise ARGV --json``, once per argument list."""
    if argv not in _CACHE:
        code = main(["advise", *argv, "--json"])
        out, _ = capsys.readouterr()
        _CACHE[argv] = (code, json.loads(out) if out.strip() else None)
    return _CACHE[argv]


def text(capsys, *argv) -> tuple[int, str, str]:
    code = main(["advise", *argv])
    out, err = capsys.readouterr()
    return code, out, err


NAMES = ("waf", "iops", "dwpd")
KEY = {"waf": "waf", "iops": "iops", "dwpd": "dwpd"}


def assert_carried(row: dict, where: str) -> None:
    for n in NAMES:
        lo, v, hi = row[f"{n}_low"], row[KEY[n]], row[f"{n}_high"]
        assert lo is not None and hi is not None, (where, n)
        assert lo <= v <= hi, (where, n, lo, v, hi)
    # the profile moves the NAND by -10%..+10%: GC's copies (WAF - 1) move with it
    assert row["waf_high"] - 1 > 1.02 * (row["waf_low"] - 1), where


WORKLOADS = {
    "jesd219 (the --min-dwpd default)": ("--min-dwpd", "1"),
    "uniform": ("--skew", "uniform", "--min-iops", "60000"),
    "zipf": ("--skew", "zipf:0.8", "--min-iops", "60000"),
    "hot-cold": ("--skew", "hot-cold:20/80", "--min-iops", "60000", "--pe", "3000"),
    "profile jesd219": ("--profile", "jesd219", "--min-iops", "50000"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_every_level_carries_the_interval_in_json(capsys, files, name):
    """recommendation.figures, every screen entry and every simulated entry carry waf_low,
    waf_high, iops_low, iops_high, dwpd_low, dwpd_high with low <= value <= high, for uniform,
    skewed and JESD219 workloads."""
    code, d = advise(capsys, "--drive", files["profile"], *WORKLOADS[name])
    assert code == 0 and d["feasible"]
    assert_carried(d["recommendation"]["figures"], "recommendation")
    for r in d["screen"]:
        assert_carried(r, f"screen {r['held_back']:.3f}")
    # at the native capacity (little OP) the IOPS moves with the NAND too
    assert d["screen"][0]["iops_high"] > 1.05 * d["screen"][0]["iops_low"]
    assert d["simulated"]
    for r in d["simulated"]:
        assert_carried(r, f"simulated {r['held_back']:.3f}")
    assert d["interval"]["from"].endswith(files["profile"])
    assert len(d["interval"]["points"]) == INSIDE + 1  # the drive as stored, and the points inside


@pytest.mark.slow
def test_the_simulator_runs_the_screens_extreme_points(capsys, files):
    """Each simulated level runs again at the two points giving the screen's lowest and highest
    WAF there (the most and the least NAND), and its interval is the least and most of the runs."""
    _, d = advise(capsys, "--drive", files["profile"], *WORKLOADS["uniform"])
    pts = d["interval"]["points"]
    most = max(range(len(pts)), key=lambda k: pts[k]["physical_bytes"])
    least = min(range(len(pts)), key=lambda k: pts[k]["physical_bytes"])
    for r in d["simulated"]:
        lo_pt, hi_pt = d["screen"][r["index"]]["interval_points"]
        assert (lo_pt, hi_pt) == (most, least)
        runs = {x["point"]: x for x in r["interval_runs"]}
        assert set(runs) == {lo_pt, hi_pt}
        assert r["waf_high"] == max(r["waf"], *(x["waf"] for x in runs.values()))
        assert r["waf_low"] == min(r["waf"], *(x["waf"] for x in runs.values()))
        assert runs[hi_pt]["waf"] > r["waf"] > runs[lo_pt]["waf"]
        assert r["iops_low"] == min(r["iops"], *(x["iops"] for x in runs.values()))


@pytest.mark.slow
def test_the_best_fit_is_the_drive_file_without_its_profile(capsys, files):
    """The profile adds intervals; the figures themselves (and the recommendation) are the drive
    file's own, bit-identical to the same file without a profile."""
    _, a = advise(capsys, "--drive", files["profile"], *WORKLOADS["uniform"])
    _, b = advise(capsys, "--drive", files["none"], *WORKLOADS["uniform"])
    assert a["recommendation"]["held_back"] == b["recommendation"]["held_back"]
    for k in ("waf", "iops", "dwpd", "tbw_tb"):
        assert [r[k] for r in a["screen"]] == [r[k] for r in b["screen"]]
        assert [r[k] for r in a["simulated"]] == [r[k] for r in b["simulated"]]


@pytest.mark.slow
def test_the_table_shows_each_interval(capsys, files):
    code, out, _ = text(capsys, "--drive", files["profile"], *WORKLOADS["uniform"])
    assert code == 0
    rec = next(line for line in out.splitlines() if line.strip().startswith("simulator:"))
    iv = r"\d[\d,.]* \(\d[\d,.]*-\d[\d,.]*\)"
    assert re.search(rf"WAF {iv}", rec), rec
    assert re.search(rf"{iv} IOPS", rec), rec
    assert re.search(rf"{iv} DWPD", rec), rec
    assert "Intervals (in parentheses, 95%)" in out
    screen = out.split("Analytic screen")[1].split("Simulator confirmation")[0]
    first = screen.splitlines()[3]  # title, header, rule, the native level
    assert len(re.findall(iv, first)) == 3, first  # WAF, IOPS, DWPD


@pytest.mark.slow
@pytest.mark.parametrize(
    "argv",
    [
        ("--native", "480GB", "--pe", "3000", "--min-iops", "2.5x"),
        ("--preset", "micron-1100-1tb", "--min-iops", "2.5x"),
    ],
)
def test_no_profile_no_interval_and_says_where_one_comes_from(capsys, argv):
    code, d = advise(capsys, *argv)
    assert code == 0
    for row in [d["recommendation"]["figures"], *d["screen"], *d["simulated"]]:
        for n in NAMES:
            assert row[f"{n}_low"] is None and row[f"{n}_high"] is None
    assert d["interval"]["from"] is None and "opsim calibrate" in d["interval"]["how"]
    code, out, _ = text(capsys, *argv)
    assert "Intervals: none" in out and "opsim calibrate" in out
    assert not re.search(r"\d \(\d[\d,.]*-\d[\d,.]*\)", out)


@pytest.mark.slow
def test_the_rating_is_kept_at_every_point(capsys, files):
    """A P/E rating derived from the datasheet's endurance is derived again at each point, so
    under the rating workload at the native capacity every point gives the same DWPD (the
    datasheet's claim), while WAF spans the interval; a P/E given with --pe is held, and then
    the DWPD spreads."""
    _, d = advise(capsys, "--drive", files["profile"], "--profile", "jesd219", "--min-iops", "1000", "--no-simulate")
    r = d["screen"][0]
    assert r["held_back"] == 0
    assert r["dwpd_high"] == pytest.approx(r["dwpd_low"], rel=1e-5)  # the WAF curve is read within 1e-5
    assert r["waf_high"] > 1.1 * r["waf_low"]
    assert "derived again" in d["interval"]["pe_cycles"]
    _, g = advise(
        capsys,
        "--drive",
        files["profile"],
        "--profile",
        "jesd219",
        "--min-iops",
        "1000",
        "--no-simulate",
        "--pe",
        "3000",
    )
    r = g["screen"][0]
    assert r["dwpd_high"] > 1.1 * r["dwpd_low"]
    assert all(p["pe_cycles"] == 3000 for p in g["interval"]["points"])


@pytest.mark.slow
def test_conservative_judges_the_low_end(capsys, files):
    """--conservative judges each target on its interval's low end: more OP than on the best
    fit, and the level it picks meets the target at the low end."""
    argv = ("--drive", files["profile"], "--skew", "uniform", "--min-iops", "150000")
    _, best = advise(capsys, *argv)
    _, cons = advise(capsys, *argv, "--conservative")
    assert cons["recommendation"]["held_back"] > best["recommendation"]["held_back"]
    f = cons["recommendation"]["figures"]
    assert f["iops_low"] >= 150000
    assert cons["recommendation"]["checks"]["iops"][1] == f["iops_low"]
    assert cons["interval"]["decided_on"].startswith("the conservative end")
    below = cons["recommendation"]["below"]
    assert below["checks"]["iops"][1] < 150000


@pytest.mark.slow
@pytest.mark.parametrize("skew", ["uniform", "zipf", "jesd219"])
def test_the_points_screen_is_the_screens_own(files, skew):
    """At a point, the screen's WAF read off the best fit's curve (interpolated in log OP) is
    the screen's own model at the point's OP within 1e-5, and IOPS and DWPD follow it."""
    from fractions import Fraction

    from opsim.planner import advise as A
    from opsim.planner.advise.interval import carried
    from opsim.planner.advise.screen import screen_level

    drive = A.load_drive(preset=files["profile"], preset_option="drive")
    wl = A.Workload()
    if skew == "zipf":
        wl.skew, wl.zipf_exponent = "zipf", 0.8
    if skew == "jesd219":
        wl.skew, wl.block_size = "jesd219", None
    tg = A.Targets()
    levels = A.grid(drive, Fraction(1, 200), Fraction(3, 4))
    rows = [screen_level(drive, wl, tg, lv) for lv in levels]
    band = carried(drive)
    band.screen(wl, tg, levels, rows)
    for k, p in enumerate(band.points[1:], start=1):
        for lv in levels[::15]:
            exact = screen_level(p.drive, wl, tg, lv)
            row = rows[lv.index]
            assert row["waf_low"] <= exact["waf"] * (1 + 1e-5) and exact["waf"] <= row["waf_high"] * (1 + 1e-5)
            assert row["iops_low"] <= exact["iops"] * (1 + 1e-5) and exact["iops"] <= row["iops_high"] * (1 + 1e-5)
            if row["interval_points"][1] == k:
                assert row["waf_high"] == pytest.approx(exact["waf"], rel=1e-5)


@pytest.mark.slow
def test_a_point_the_model_has_no_figure_at_is_left_out(capsys, files):
    """A point far out (four times the NAND) takes the OP beyond where greedy's mean field has a
    solution at the large held-back levels: it is left out there, not an error."""
    prof = hand_profile()
    prof["points"].insert(0, [float(presets.physical_bytes(PRESET) * 4), prof["points"][-1][1]])
    prof["delta_cost"].insert(0, 3.0)
    path = drive_file(files["dir"] / "far.toml", prof)
    code, d = advise(capsys, "--drive", path, "--skew", "uniform", "--min-iops", "150000", "--no-simulate")
    assert code == 0
    phys = [p["physical_bytes"] for p in d["interval"]["points"]]
    least = phys.index(min(phys))
    second = phys.index(sorted(phys)[-2])
    for r in d["screen"]:
        assert r["waf_low"] <= r["waf"] <= r["waf_high"]
        assert r["interval_points"][1] == least  # the least NAND: the most WAF
    # where the far point (index 1) has a figure it gives the least WAF; at 75% held back it has
    # none, and the next most NAND does
    assert d["screen"][0]["interval_points"][0] == 1
    assert d["screen"][-1]["interval_points"][0] == second


def test_conservative_without_a_profile_is_refused(capsys):
    code, _, err = text(capsys, "--preset", "micron-1100-1tb", "--min-iops", "2.5x", "--conservative")
    assert code == 2 and "--conservative" in err


def test_a_bad_profile_names_the_option_and_table(capsys, files):
    prof = hand_profile()
    prof["points"][1] = prof["points"][1][:1]
    path = drive_file(files["dir"] / "bad.toml", prof)
    code, _, err = text(capsys, "--drive", path, "--min-iops", "60000", "--no-simulate")
    assert code == 2
    assert "--drive" in err and "[preset.calibration.profile]" in err and "point 2" in err


# ---------------------------------------------------------------------------- opsim simulate


def _config(files, name: str, drive: str) -> str:
    """A small scale model of the drive file: its superblocks 1,536 times smaller."""
    scaled = presets.scale_model(drive, 1536)
    cfg = {
        "preset": drive,
        "drive": scaled["drive"],
        "ftl": scaled["ftl"],
        "workload": {"type": "uniform"},
        "run": {"precondition": "analytic", "warmup_drive_writes": 0.25, "measure_drive_writes": 0.5},
    }
    path = files["dir"] / name
    path.write_text(tomli_w.dumps(cfg))
    return str(path)


def test_simulate_says_how_to_get_the_interval(capsys, files):
    cfg = _config(files, "sim.toml", files["profile"])
    assert main(["simulate", cfg]) == 0
    out, _ = capsys.readouterr()
    assert "--interval" in out and "opsim advise --drive" in out


def test_simulate_interval_runs_the_two_ends(capsys, files):
    cfg = _config(files, "sim.toml", files["profile"])
    assert main(["simulate", cfg, "--interval", "--json"]) == 0
    d = json.loads(capsys.readouterr()[0])
    iv = d["interval"]
    assert len(iv["runs"]) == 2
    assert iv["waf_low"] <= d["waf"] <= iv["waf_high"]
    assert iv["iops_low"] <= d["timed"]["measured_iops"] <= iv["iops_high"]
    assert iv["waf_high"] > 1.05 * iv["waf_low"]
    # the scale model's NAND is moved by the ends' share of the drive file's
    phys = [r["physical_bytes"] for r in iv["runs"]]
    assert min(phys) < d["drive"]["physical_bytes"] < max(phys)


def test_simulate_without_a_profile_is_unchanged(capsys, files):
    cfg = _config(files, "plain.toml", files["none"])
    assert main(["simulate", cfg, "--json"]) == 0
    assert "interval" not in json.loads(capsys.readouterr()[0])
    assert main(["simulate", cfg, "--interval"]) == 2
    assert "--interval" in capsys.readouterr()[1]
