"""Issue 36, item 6: a drive whose P/E `opsim calibrate` derived from a 1 DWPD datasheet came
back at 0.997 DWPD at its full capacity, so `advise --min-dwpd 1` held back 0.5%.  The rating
convention: at its native capacity, under the rating's workload, the drive writes exactly the
rated host bytes; each judge (the screen, the simulator) takes the P/E at its own WAF of that
condition (opsim.planner.advise.rated), so the rating is met at native capacity to the last
digit whichever model's WAF is a few tenths of a percent higher."""

from __future__ import annotations

import json

import pytest
import tomli_w

from opsim import cli, presets

PRESET = "micron-7450-pro-960gb"


def advise(capsys, *argv) -> tuple[int, dict]:
    try:
        code = cli.main(["advise", *map(str, argv), "--json"])
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    assert out.strip(), err
    return code, json.loads(out)


def _native(rows: list[dict]) -> dict:
    return next(r for r in rows if r["held_back"] == 0)


@pytest.mark.slow
def test_a_preset_whose_judges_see_its_rating_met_keeps_its_pe(capsys):
    """The 7450 PRO's screen and simulator see a lower WAF at native than calibrate did: the
    stored P/E (a floor) already meets 1 DWPD there, and is kept."""
    code, d = advise(capsys, "--preset", PRESET, "--min-dwpd", "1")
    assert code == 0 and d["recommendation"]["held_back"] == 0
    for rows in (d["screen"], d["simulated"]):
        assert _native(rows)["dwpd"] >= 1.0
    assert d["drive"]["pe_cycles"] == presets.get(PRESET)["meta"]["calibration"]["pe_cycles"]
    assert not any(a.startswith("the simulator's rows take the P/E") for a in d["assumptions"])


@pytest.mark.slow
def test_a_drive_whose_stored_pe_undershoots_its_rating_still_meets_it(tmp_path, capsys):
    """The stored P/E 3% low (as if calibrate's own WAF of the rating workload had been 3% below
    the advisor's): the rating, not the stored figure, decides, so 1 DWPD holds at native."""
    p = presets.get(PRESET)
    meta = dict(p["meta"])
    cal = dict(meta["calibration"])
    cal["pe_cycles"] = round(cal["pe_cycles"] * 0.97, 1)
    cal.pop("profile", None)
    meta["calibration"] = cal
    f = tmp_path / "drive.toml"
    f.write_text(tomli_w.dumps({"preset": meta, **p["settings"]}))
    code, d = advise(capsys, "--drive", f, "--min-dwpd", "1")
    assert code == 0 and d["recommendation"]["held_back"] == 0, d["recommendation"]
    screen = _native(d["screen"])["dwpd"]  # raised to the rating, exactly
    assert screen >= 1.0 and screen == pytest.approx(1.0, rel=1e-9), screen
    assert _native(d["simulated"])["dwpd"] >= 1.0  # raised again if the simulator's WAF is higher
    assert "applied at the screen's WAF of the rating workload" in d["drive"]["sources"]["pe"]


@pytest.mark.slow
def test_a_pe_given_is_held_as_given(capsys):
    """--pe is not a rating: no judge derives it again."""
    code, d = advise(capsys, "--preset", PRESET, "--pe", "6851", "--min-dwpd", "1", "--no-simulate")
    assert code in (0, 1) and d["drive"]["pe_cycles"] == 6851
    assert not any(a.startswith("the simulator's rows take the P/E") for a in d["assumptions"])


def test_a_judge_raises_a_rated_pe_never_lowers_it():
    """rated.at_waf: the P/E at a judge's WAF of the rating workload at native, when higher."""
    from opsim.planner.advise import load_drive, rated

    d = load_drive(preset=PRESET, preset_option="preset")
    host = rated.rated_host(d)
    assert host == pytest.approx(1 * d.native.bytes * 5 * 365, rel=1e-12)  # 1 DWPD over 5 years
    waf_now = host and d.pe * d.physical_bytes / host  # the WAF the stored P/E stands for
    assert rated.at_waf(d, host, 0.99 * waf_now, "a judge") is d
    up = rated.at_waf(d, host, 1.01 * waf_now, "a judge")
    assert up.pe == pytest.approx(1.01 * d.pe, rel=1e-9) and up.pe >= host * 1.01 * waf_now / d.physical_bytes
    assert "applied at a judge's WAF" in up.sources["pe"]
    given = load_drive(preset=PRESET, preset_option="preset", pe="6851")
    assert rated.rated_host(given) is None
