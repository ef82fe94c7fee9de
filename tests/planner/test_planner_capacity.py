"""Capacity/OP arithmetic: every seed number, exact, plus hypothesis round-trips."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opsim.cli import main
from opsim.errors import CapacityError, InputError
from opsim.planner.capacity import (
    BASES,
    convert_op,
    idema_gb,
    idema_lba_count,
    max_lba_hex,
    op_all,
    parse_fraction,
    plan_capacity,
    round_pct,
    trunc_pct,
    user_from_op,
)

# Micron 1100 OP note (seed 000), Table 1, verbatim
MICRON_TABLE_1 = """\
120	234,441,648	234,441,647	DF94BAF	120,034,123,776
128	250,069,680	250,069,679	EE7C2AF	128,035,676,160
240	468,862,128	468,862,127	1BF244AF	240,057,409,536
256	500,118,192	500,118,191	1DCF32AF	256,060,514,304
480	937,703,088	937,703,087	37E436AF	480,103,981,056
512	1,000,215,216	1,000,215,215	3B9E12AF	512,110,190,592
960	1,875,385,008	1,875,385,007	6FC81AAF	960,197,124,096
1500	2,930,277,168	2,930,277,167	AEA87B2F	1,500,301,910,016
2000	3,907,029,168	3,907,029,167	E8E088AF	2,000,398,934,016
2048	4,000,797,360	4,000,797,359	EE7752AF	2,048,408,248,320"""
ROWS = [[c.replace(",", "") for c in line.split("\t")] for line in MICRON_TABLE_1.splitlines()]


@pytest.mark.parametrize("gb,count,maxlba,hexa,nbytes", ROWS)
def test_micron_table_1_rows(gb, count, maxlba, hexa, nbytes):
    n = idema_lba_count(int(gb), 512)
    assert n == int(count)
    assert n - 1 == int(maxlba)
    assert max_lba_hex(n - 1) == hexa
    assert n * 512 == int(nbytes)
    inv = idema_gb(n, 512)
    assert inv.gb == int(gb) and inv.exact
    d = plan_capacity(f"{gb}GB")
    assert d["native"]["sectors"] == int(count)
    assert d["native"]["max_lba_hex"] == hexa
    assert d["native"]["bytes"] == int(nbytes)


def test_micron_table_1_cli(capsys):
    assert main(["capacity", "--table", ",".join(r[0] for r in ROWS), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["idema"]
    assert [(str(r["gb"]), str(r["lba_count"]), str(r["max_lba"]), r["max_lba_hex"], str(r["bytes"])) for r in got] == [
        tuple(r) for r in ROWS
    ]


def test_idema_4k_formula():
    assert idema_lba_count(50, 4096) == 12_212_046
    assert idema_lba_count(480, 4096) == 12_212_046 + 244_188 * 430
    # the 4K count is exactly the 512 count / 8 (same bytes)
    for gb in (50, 480, 960, 3840, 15360):
        assert idema_lba_count(gb, 4096) * 8 == idema_lba_count(gb, 512)


@settings(max_examples=300)
@given(st.integers(min_value=50, max_value=200_000), st.sampled_from([512, 4096]))
def test_idema_inverse_exact(gb, ss):
    n = idema_lba_count(gb, ss)
    assert idema_gb(n, ss).gb == gb and idema_gb(n, ss).exact
    assert idema_gb(n + 1, ss).gb == gb and not idema_gb(n + 1, ss).exact
    assert idema_gb(n - 1, ss).gb == gb - 1 or gb == 50


@settings(max_examples=200)
@given(st.integers(min_value=3000, max_value=200_000))
def test_idema_inverse_above_3tb_where_rounding_fails(gb):
    n = idema_lba_count(gb, 512)
    assert idema_gb(n, 512).gb == gb
    # the naive inverse is off by at least one GB here: the reason opsim does not use it
    assert round(n * 512 / 1e9) != gb


def test_naive_inverse_breaks_between_2_and_3_tb():
    first_bad = next(g for g in range(50, 10_000) if round(idema_lba_count(g) * 512 / 1e9) != g)
    assert 2000 < first_bad <= 3000


def test_micron_op_examples():
    # 1024 GB drive set to 1000 GB: "2.3%"; to 800 GB: "21.87%" (native basis)
    d1000 = plan_capacity("1024GB", user="1000GB")
    d800 = plan_capacity("1024GB", user="800GB")
    assert d1000["held_back"]["sectors"] == idema_lba_count(1024) - idema_lba_count(1000)
    assert round_pct(Fraction(d1000["op_exact"]["native"]), 1) == "2.3%"
    assert round_pct(Fraction(d800["op_exact"]["native"]), 2) == "21.87%"  # LBA-exact 21.8748%
    assert d800["op_nominal"]["native"] == 0.21875  # marketed GB 224/1024
    assert trunc_pct(Fraction(224, 1024)) == "21.87%"  # the seed truncates
    assert d1000["op_nominal"]["native"] == 24 / 1024
    assert trunc_pct(Fraction(24, 1024), 1) == "2.3%"


@pytest.mark.parametrize("native,u7,u28", [(128, 120, 100), (256, 240, 200), (512, 480, 400), (1024, 960, 800)])
def test_sandisk_x400_capacity_table(native, u7, u28):
    # 28%: exact, (native - user)/user
    d = plan_capacity(f"{native}GB", op="28%", op_basis="added")
    assert d["user"]["sectors"] == idema_lba_count(u28)
    assert d["op_nominal"]["added"] == 0.28
    # 7%: the table's capacities are the market points; the exact ratio is 1/15 = 6.67% -> "7%"
    d = plan_capacity(f"{native}GB", user=f"{u7}GB")
    assert Fraction(native - u7, u7) == Fraction(1, 15)
    assert round_pct(Fraction(native - u7, u7), 0) == "7%"
    assert d["op_nominal"]["added"] == pytest.approx(1 / 15, abs=0)
    # ... and from "7%" the nearest 8 GB step lands on the table's capacity
    d = plan_capacity(f"{native}GB", op="7%", op_basis="added", round_user="8GB")
    assert d["user"]["sectors"] == idema_lba_count(u7)
    # without rounding, 7% is honest arithmetic: 128 / 1.07 = 119.63 GB
    d = plan_capacity(f"{native}GB", op="7%", op_basis="added")
    assert abs(d["user"]["bytes"] - native * 1e9 / 1.07) < 512


def test_sandisk_256_example_ratios():
    assert op_all(240, None, 256)["added"] == Fraction(16, 240)
    assert op_all(200, None, 256)["added"] == Fraction(56, 200) == Fraction(28, 100)


def test_intel_hdat2_example():
    # 312,602,976 x (1 - 0.2) = 250,082,380.8; the seed (and opsim) truncate to 250,082,380
    for kw in ({"max_lba": "80%"}, {"op": "20%", "op_basis": "native"}):
        d = plan_capacity("312602976s", **kw)
        assert d["user"]["sectors"] == 250_082_380
        assert d["native"]["sectors"] == 312_602_976


def test_intel_hdat2_cli(capsys):
    assert main(["capacity", "--native", "312602976s", "--max-lba", "80%", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["user"]["sectors"] == 250082380 and d["user"]["max_lba"] == 250082379


def test_physical_assumption_is_labelled():
    d = plan_capacity("480GB", user="400GB")
    assert d["physical"]["source"] == "assumed" and d["physical"]["bytes"] == 480 * 2**30
    assert "assumed" in d["physical"]["note"]
    d = plan_capacity("480GB", user="400GB", physical="512GiB")
    assert d["physical"]["source"] == "given" and d["physical"]["bytes"] == 512 * 2**30


def test_level1_op_is_7_37_percent():
    assert round_pct(op_all(Fraction(10**9), Fraction(2**30), None)["user"], 2) == "7.37%"


def test_user_basis_from_physical():
    d = plan_capacity("480GB", op="28%", op_basis="user", physical="512GiB")
    assert d["user"]["sectors"] == (512 * 2**30 * 100 // 128) // 512
    assert d["op"]["user"] >= 0.28


@pytest.mark.parametrize(
    "kwargs,key",
    [
        ({"user": "2000GB"}, "user"),
        ({"op": "28%"}, "op_basis"),
        ({"op": "28", "op_basis": "user"}, "op"),
        ({"op": "100%", "op_basis": "native"}, "op"),
        ({"user": "400GB", "op": "7%", "op_basis": "user"}, "op"),
        ({"max_lba": "0%"}, "max_lba"),
        ({"physical": "100GB"}, "physical"),
    ],
)
def test_bad_input_names_the_field(kwargs, key):
    with pytest.raises(InputError) as e:
        plan_capacity("480GB", **kwargs)
    assert e.value.key == key


def test_cli_bad_input_exit_2(capsys):
    assert main(["capacity", "--native", "480GB", "--op", "28%"]) == 2
    err = capsys.readouterr().err
    assert "op_basis" in err and "Traceback" not in err
    assert main(["capacity", "--native", "banana"]) == 2


def test_parse_fraction():
    assert parse_fraction("28%", "op") == Fraction(7, 25)
    assert parse_fraction("0.28", "op") == Fraction(7, 25)
    with pytest.raises(InputError):
        parse_fraction("-1%", "op")


fractions = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(9, 10), max_denominator=10**6)


@pytest.mark.slow
@settings(max_examples=300)
@given(
    fractions,
    st.sampled_from(BASES),
    st.sampled_from(BASES),
    st.integers(min_value=10**9, max_value=10**13),
    st.fractions(min_value=0, max_value=Fraction(1, 2)),
)
def test_op_conversions_round_trip(op, a, b, native, extra):
    physical = Fraction(native) * (1 + extra)
    try:
        x = convert_op(op, a, b, native=native, physical=physical)
    except CapacityError:
        return  # e.g. an OP that leaves no capacity in another basis
    back = convert_op(x, b, a, native=native, physical=physical)
    assert back == op  # exact
    u = user_from_op(op, a, native=native, physical=physical)
    assert op_all(u, physical, native)[a] == op


@settings(max_examples=200)
@given(
    st.integers(min_value=50, max_value=30_000), st.integers(min_value=1, max_value=99), st.sampled_from([512, 4096])
)
def test_native_share_truncates_never_exceeds(gb, pct, ss):
    d = plan_capacity(f"{gb}GB", op=f"{pct}%", op_basis="native", sector_size=ss)
    assert d["user"]["sectors"] <= d["native"]["sectors"]
    # truncation can only add OP, never remove it (marketed-GB terms)
    assert Fraction(d["op_nominal"]["native"]).limit_denominator(10**6) >= Fraction(pct, 100) - Fraction(1, 10**9)
