"""Endurance: the seed's DWPD formula against the SanDisk X400 tables, round trips, projection."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsim.cli import main
from opsim.errors import InputError
from opsim.planner import endurance as E


@pytest.mark.parametrize("cap", [128, 256, 512, 1024])
@pytest.mark.parametrize("i", [0, 1, 2])
def test_x400_dwpd_table_from_tbw_table(cap, i):
    ugb = E.X400_CONFIGURED_GB[cap][i]
    v = E.dwpd_from_tbw(E.X400_TBW[cap][i], ugb, 3 * 365)
    assert str(E.round2(v)) == E.X400_DWPD_3Y[cap][i]


def test_x400_needs_configured_not_native_capacity():
    # with the 0%-OP capacity instead of the configured one, the 7%/28% columns do not match
    v = E.dwpd_from_tbw(83, 128, 1095)
    assert str(E.round2(v)) != "0.78"


def test_x400_1000_instead_of_1024_does_not_match():
    v = Fraction(72 * 1000, 128 * 1095)
    assert str(E.round2(v)) != "0.53"


def test_x400_cli(capsys):
    assert main(["endurance", "--x400", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["x400"]
    assert d["all_match"] and len(d["cells"]) == 12


def test_seed_example_72tbw(capsys):
    assert main(["endurance", "--tbw", "72", "--capacity", "128GB", "--years", "3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["dwpd"] == pytest.approx(72 * 1024 / 128 / 1095)
    assert round(d["dwpd"], 2) == 0.53


@settings(max_examples=200)
@given(
    st.fractions(min_value=Fraction(1, 100), max_value=100_000),
    st.integers(min_value=1, max_value=100_000),
    st.integers(min_value=1, max_value=20 * 365),
)
def test_tbw_dwpd_round_trip(tbw, gb, days):
    assert E.tbw_from_dwpd(E.dwpd_from_tbw(tbw, gb, days), gb, days) == tbw


def test_decimal_formula_is_the_data_center_ratings():
    """Intel's DC P3600 (docs/planner.md): 3 DWPD over 5 years on 2 TB is "10.95 PBW" with 1000
    GB a TB, not with the X400's 1024; and calibrate's host bytes of a rating round-trip."""
    assert E.tbw_from_dwpd(3, 2000, 5 * 365, "decimal") == 10_950
    assert E.tbw_from_dwpd(3, 2000, 5 * 365) != 10_950
    assert E.rated_host_bytes(3, 2e12, 5) == pytest.approx(10.95e15)
    assert E.dwpd_of(E.rated_host_bytes(1, 960e9, 5), 960e9, 5) == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(InputError):
        E.dwpd_from_tbw(1, 1, 1, "binary")


def test_endurance_formula_option(capsys):
    argv = ["endurance", "--tbw", "10950", "--capacity", "2TB", "--years", "5", "--json"]
    assert main([*argv, "--formula", "decimal"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["dwpd"] == pytest.approx(3.0) and d["formula"] == "decimal" and d["gb_per_tb"] == 1000
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["dwpd"] == pytest.approx(3.0 * 1.024) and d["formula"] == "x400"
    with pytest.raises(SystemExit) as e:
        main([*argv, "--formula", "binary"])
    assert e.value.code == 2


def test_lifetime():
    # 72 TB at 50 GB/day = 1440 days
    assert E.lifetime_days(72, 50 * 10**9) == 1440


def test_projection_formula():
    p = E.projection(3000, 256 * 2**30, 2)
    assert p["host_bytes_writable"] == 3000 * 256 * 2**30 // 2
    with pytest.raises(InputError):
        E.projection(3000, 256 * 2**30, 0.5)


def test_projection_with_models(capsys):
    pytest.importorskip("opsim.models")
    from opsim import models

    assert main(["endurance", "--pe", "3000", "--native", "256GB", "--user", "200GB", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["projection"]
    assert d["waf"] == pytest.approx(models.waf("greedy", d["op_user"], 256))
    assert d["host_tb_writable"] == pytest.approx(3000 * 256 * 2**30 / d["waf"] / 1e12)
    # more OP, less WAF, more TB
    assert main(["endurance", "--pe", "3000", "--native", "256GB", "--user", "240GB", "--json"]) == 0
    d2 = json.loads(capsys.readouterr().out)["projection"]
    assert d2["waf"] > d["waf"] and d2["host_tb_writable"] < d["host_tb_writable"]


def test_bad_input(capsys):
    assert main(["endurance", "--tbw", "72"]) == 2
    assert main(["endurance", "--tbw", "-3", "--capacity", "128GB"]) == 2
    assert main(["endurance", "--pe", "3000"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
