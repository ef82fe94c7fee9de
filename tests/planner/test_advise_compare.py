"""``opsim advise --compare``: buy or over-provision, the fleet's arithmetic from first principles.

The PRO/MAX example of issue 39 (examples/compare-7450.toml): for each candidate the drive count
is ``ceil(usable / usable per drive)``, each drive writes the fleet's writes over that count, the
OP is what ``opsim advise`` needs at that rate, and one drive fewer cannot meet the need at any
OP; a price that makes the other drive cheaper per usable TB-year flips the choice.  The screen
(``confirm=False``) keeps these fast; one test runs the simulator's confirmation.
"""

import copy
import json
import math
import re
import time
from dataclasses import replace
from pathlib import Path

import pytest

from opsim import cli, results
from opsim import trace as T
from opsim.planner.advise import Targets, Workload, advise, compare_fleet, load_compare
from opsim.planner.advise.fleet import Fleet, at
from opsim.planner.advise.fleet_cost import fleet_cost

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "compare-7450.toml"
TB = 10**12
USABLE, WRITES, YEARS = 100 * TB, 150 * TB, 5

_CACHE: dict = {}


def example(confirm: bool = False) -> dict:
    if confirm not in _CACHE:
        _CACHE[confirm] = compare_fleet(load_compare(EXAMPLE), confirm=confirm)
    return _CACHE[confirm]


def by_name(d: dict) -> dict:
    return {e["name"]: e for e in d["candidates"]}


def advisor_at(drive, n: int, confirm: bool = False) -> dict:
    """``opsim advise`` for one drive of ``n``: the fleet's writes over ``n``, five years."""
    wl = Workload(write_rate=math.ceil(WRITES / n))
    return advise(drive, wl, Targets(min_lifetime_years=YEARS), confirm=confirm)


def main(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


@pytest.mark.slow
@pytest.mark.parametrize("name", ["micron-7450-pro-960gb", "micron-7450-max-800gb"])
def test_the_fleet_from_first_principles(name):
    d = example()
    e = by_name(d)[name]
    assert e["feasible"]
    n, u = e["drives"], e["usable_bytes_per_drive"]
    assert n == math.ceil(USABLE / u)
    assert e["per_drive"]["writes_per_day_bytes"] == math.ceil(WRITES / n)
    drive = next(c.drive for c in load_compare(EXAMPLE).candidates if c.name == name)
    at_n = advisor_at(drive, n)
    assert at_n["recommendation"]["held_back"] == e["held_back"]
    assert at_n["recommendation"]["user_bytes"] == u
    # one drive fewer: the OP the advisor then needs leaves too little usable for the need
    fewer = advisor_at(drive, n - 1)
    assert not fewer["feasible"] or (n - 1) * fewer["recommendation"]["user_bytes"] < USABLE
    assert e["cost"] == n * e["price"]
    assert e["cost_per_usable_tb_year"] == pytest.approx(n * e["price"] / (USABLE / TB * YEARS), rel=1e-12)


def test_the_pro_held_back_is_cheaper_at_these_prices_and_endurance_binds():
    d = example()
    pro, mx = by_name(d)["micron-7450-pro-960gb"], by_name(d)["micron-7450-max-800gb"]
    assert d["choice"]["name"] == pro["name"]
    assert pro["binding"] == ["endurance"] and pro["held_back"] > 0
    assert mx["binding"] == ["capacity"] and mx["held_back"] == 0  # 3 DWPD: native is enough
    for e in (pro, mx):
        lo, hi = e["cost_per_usable_tb_year_low"], e["cost_per_usable_tb_year_high"]
        assert lo <= e["cost_per_usable_tb_year"] <= hi
        assert e["held_back"] <= e["held_back_max"]


@pytest.mark.slow
def test_a_price_that_makes_the_max_cheaper_flips_the_choice():
    d = example()
    pro, mx = by_name(d)["micron-7450-pro-960gb"], by_name(d)["micron-7450-max-800gb"]
    # the MAX's price at which its fleet costs less than the PRO's, from the two drive counts
    price = math.floor(pro["cost"] / mx["drives"]) - 1
    cf = load_compare(EXAMPLE)
    cf.candidates[1] = replace(cf.candidates[1], price=price)
    flipped = compare_fleet(cf, confirm=False)
    f = by_name(flipped)
    assert flipped["choice"]["name"] == mx["name"]
    assert f[mx["name"]]["cost_per_usable_tb_year"] < f[pro["name"]]["cost_per_usable_tb_year"]
    assert f[mx["name"]]["drives"] == mx["drives"]  # the price moves the choice, not the fleet


def test_the_search_finds_the_smallest_drive_count_by_brute_force():
    """Every count from the fewest that hold the need to the most OP allows, judged on the screen:
    feasibility is monotone and the search's answer is the first feasible count."""
    cf = load_compare(EXAMPLE)
    fleet = Fleet(cf.candidates[0], cf.need, confirm=False)
    fleet.solve()
    ok = [
        n
        for n in range(fleet.n_lo, fleet.n_cap + 1)
        if fleet.cap_level(n) is not None and fleet.level_meets(fleet.screen[fleet.cap_level(n)], n)
    ]
    assert ok == list(range(ok[0], fleet.n_cap + 1))
    assert fleet.screen_smallest("best") == ok[0]
    assert fleet.screen_smallest("low") >= ok[0] >= fleet.screen_smallest("high")


@pytest.mark.slow
def test_the_simulator_confirms_the_fleet():
    d = example(confirm=True)
    assert d["search"]["confirmed"]
    pro = by_name(d)["micron-7450-pro-960gb"]
    assert pro["source"] == "simulator"
    n = pro["drives"]
    assert n == math.ceil(USABLE / pro["usable_bytes_per_drive"])
    drive = load_compare(EXAMPLE).candidates[0].drive
    at_n = advisor_at(drive, n, confirm=True)
    assert at_n["recommendation"]["held_back"] == pro["held_back"]
    assert any(p["judged_by"] == "simulator" and p["drives"] == n for p in pro["search"]["judged"])


@pytest.mark.slow
def test_a_candidate_no_op_can_make_last_is_listed_with_the_reason(tmp_path, capsys):
    f = tmp_path / "fleet.toml"
    f.write_text(
        EXAMPLE.read_text() + '\n[[candidate]]\nname = "worn"\npreset = "micron-7450-pro-960gb"\nprice = 10\npe = 20\n'
    )
    code = main(["advise", "--compare", str(f), "--no-simulate", "--json"])
    out, _ = capsys.readouterr()
    d = results.check_compare(json.loads(out))
    assert code == 0
    worn = by_name(d)["worn"]
    assert not worn["feasible"] and worn["drives"] is None and worn["cost"] is None
    assert [r["target"] for r in worn["reasons"]] == ["lifetime"]
    assert worn["why"].startswith("cannot meet the need at any OP allowed: lifetime: no OP can last 5 years")
    assert d["choice"]["name"] != "worn" and "worn cannot meet the need" in d["choice"]["why"]
    assert worn["curve"] and not any(p["meets"] for p in worn["curve"])


def test_no_candidate_meeting_the_need_exits_1(tmp_path, capsys):
    f = tmp_path / "fleet.toml"
    f.write_text(
        '[need]\nusable = "10TB"\nhost_writes_per_day = "500TB"\nyears = 5\n'
        '[[candidate]]\npreset = "micron-7450-pro-960gb"\nprice = 1\npe = 50\n'
    )
    assert main(["advise", "--compare", str(f), "--no-simulate"]) == 1
    out, _ = capsys.readouterr()
    assert "Choice: none: no candidate can meet the need" in out
    assert "cannot meet the need" in out


def test_bays_and_power_are_costed_per_drive_over_the_years():
    cf = load_compare(EXAMPLE)
    c = replace(cf.candidates[0], slots=40.0, watts_active=8.0, power_cost_per_kwh=0.25)
    cost = fleet_cost(c, cf.need, 110)
    kwh = 110 * 8.0 * 24 * 365 * 5 / 1000
    assert cost["energy_kwh"] == pytest.approx(kwh)
    assert cost["total"] == pytest.approx(110 * 100 + 110 * 40 + kwh * 0.25)
    assert cost["per_usable_tb_year"] == pytest.approx(cost["total"] / (100 * 5))
    assert fleet_cost(cf.candidates[0], cf.need, 110)["bays"] is None


# ---------------------------------------------------------------------------- bad input


NEED = '[need]\nusable = "100TB"\nhost_writes_per_day = "150TB"\nyears = 5\n'
CAND = '[[candidate]]\npreset = "micron-7450-pro-960gb"\nprice = 100\n'


@pytest.mark.parametrize(
    "text, where",
    [
        (NEED + CAND.replace("price = 100", "price = -3"), r":7: candidate\[0\]\.price: -3 must be positive"),
        (NEED + CAND + CAND.replace("100", '"x"'), r":10: candidate\[1\]\.price: 'x' is not a number"),
        (NEED + CAND + CAND, r":9: candidate\[1\]\.preset: a second candidate named 'micron-7450-pro-960gb'"),
        (NEED.replace('"150TB"', '"lots"'), r":3: need\.host_writes_per_day: "),
        (NEED + 'skew = "zipf:y"\n' + CAND, r":5: need\.skew: 'zipf:y' is not a skew"),
        (NEED + "colour = 1\n" + CAND, r":5: need\.colour: unknown key"),
        (NEED + CAND + "watts_active = 9\n", r":8: candidate\[0\]\.watts_active: .*give power_cost_per_kwh"),
        (NEED + 'max_latency = "p99=5ms"\n' + CAND, r":5: need\.max_latency: .*give min_iops_per_tb"),
        (NEED + CAND.replace("micron-7450-pro-960gb", "nope"), r":6: candidate\[0\]\.preset: unknown preset 'nope'"),
        (
            NEED + CAND.replace('preset = "micron-7450-pro-960gb"', 'drive = "missing.toml"'),
            r":6: candidate\[0\]\.drive: ",
        ),
        (NEED + CAND.replace("micron-7450-pro-960gb", "samsung-840-pro-256gb"), r":6: candidate\[0\]\.preset: .*P/E"),
        (NEED, r": candidate: missing: give at least one \[\[candidate\]\]"),
        (NEED.replace("years = 5\n", "") + CAND, r":1: need: missing key years"),
        (NEED + "[[candidate]]\nprice = 1\n", r":5: candidate\[0\]: give the drive"),
    ],
)
def test_bad_input_names_the_line_and_key_before_any_work(tmp_path, capsys, text, where):
    f = tmp_path / "fleet.toml"
    f.write_text(text)
    t = time.monotonic()
    assert main(["advise", "--compare", str(f)]) == 2
    err = capsys.readouterr().err
    assert re.search(re.escape(str(f)) + where, err), err
    assert time.monotonic() - t < 10  # refused before any screen or simulation
    assert "Traceback" not in err


@pytest.mark.parametrize("opt", [["--preset", "micron-7450-pro-960gb"], ["--min-dwpd", "1"], ["--skew", "zipf:0.8"]])
def test_options_the_compare_file_gives_are_refused(opt, capsys):
    assert main(["advise", "--compare", str(EXAMPLE), *opt]) == 2
    assert f"{opt[0]}: the compare file gives" in capsys.readouterr().err


def test_latency_without_the_simulator_is_refused_naming_the_line(tmp_path, capsys):
    f = tmp_path / "fleet.toml"
    f.write_text(NEED + 'min_iops_per_tb = 50\nmax_latency = "p99=5ms"\n' + CAND)
    assert main(["advise", "--compare", str(f), "--no-simulate"]) == 2
    assert f"{f}:6: need.max_latency: latency has no analytic model" in capsys.readouterr().err


def test_the_need_s_iops_are_spread_over_the_drives():
    cf = load_compare(EXAMPLE)
    need = copy.copy(cf.need)
    need.min_iops_per_tb = 100.0
    fleet = Fleet(cf.candidates[0], need, confirm=False)
    wl, tg = at(need, 110)
    assert tg.min_iops == pytest.approx(100.0 * 100 / 110)
    assert wl.write_rate == math.ceil(WRITES / 110) and tg.min_lifetime_years == YEARS
    assert fleet.cap_level(fleet.n_lo - 1) is None


# ---------------------------------------------------------------------------- a trace as the workload

SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "compare-small.toml"


def _with_trace(tmp_path, span: int, count: int, trace_value: str | None = None) -> Path:
    T.synth(str(tmp_path / "z.iolog"), skew="zipf:0.9", span=span, count=count, seed=1)
    text = SMALL.read_text()
    text = text[: text.index("[[candidate]]", text.index("[[candidate]]") + 1)]  # the first candidate alone
    need_end = text.index("[[candidate]]")
    f = tmp_path / "fleet.toml"
    f.write_text(text[:need_end] + f"trace = {trace_value or json.dumps('z.iolog')}\n" + text[need_end:])
    return f


@pytest.mark.slow
def test_a_trace_s_fitted_workload_is_what_the_screen_plans_for(tmp_path):
    f = _with_trace(tmp_path, 2 << 30, 50_000)
    cf = load_compare(f)
    assert cf.need.trace is not None and cf.need.trace.path == str(tmp_path / "z.iolog")
    d = compare_fleet(cf, confirm=False)
    assert d["need"]["trace"]["path"] == str(tmp_path / "z.iolog")
    skew = cf.need.trace.fit["skew"]
    assert skew.startswith("zipf:")
    # the same need with the fitted skew written out: the same fleets
    g = tmp_path / "skew.toml"
    g.write_text(f.read_text().replace('trace = "z.iolog"', f'skew = "{skew}"'))
    same = compare_fleet(load_compare(g), confirm=False)
    for a, b in zip(d["candidates"], same["candidates"]):
        assert (a["drives"], a["held_back"], a["cost"]) == (b["drives"], b["held_back"], b["cost"])


def test_a_trace_too_short_to_replay_is_refused_before_any_work(tmp_path, capsys):
    f = _with_trace(tmp_path, 64 << 30, 20_000)
    t = time.monotonic()
    assert main(["advise", "--compare", str(f)]) == 2
    err = capsys.readouterr().err
    assert f"{f}:8: candidate[0].preset: the need's trace on this drive: " in err and "too few writes" in err
    assert time.monotonic() - t < 20


def test_a_drive_smaller_than_the_trace_s_span_is_named(tmp_path, capsys):
    f = _with_trace(tmp_path, 300 << 30, 2_000, trace_value='{ path = "z.iolog", format = "fio-iolog" }')
    assert main(["advise", "--compare", str(f), "--no-simulate"]) == 2
    err = capsys.readouterr().err
    assert f"{f}:8: candidate[0].preset: too small for the trace: " in err and "past the drive's native" in err


def test_a_trace_with_another_workload_key_is_refused(tmp_path, capsys):
    f = _with_trace(tmp_path, 2 << 30, 2_000)
    f.write_text(f.read_text().replace("trace =", 'skew = "zipf:0.8"\ntrace ='))
    assert main(["advise", "--compare", str(f), "--no-simulate"]) == 2
    assert ": need.skew: the trace gives the workload" in capsys.readouterr().err


def test_counts_settled_from_a_larger_count_s_run_agree_with_the_advisor():
    """A count judged from a larger count's run (its level's figures at this count's rate, or
    its need above this count's c(n)) gets the verdict the advisor's own run gives."""
    cf = load_compare(SMALL)
    truth = Fleet(cf.candidates[0], cf.need, confirm=False)
    truth.solve()
    fleet = Fleet(cf.candidates[0], cf.need, confirm=False)
    fleet.solve()
    fleet.docs = {fleet.n_cap: fleet.advise_at(fleet.n_cap, False)}  # only the largest count run
    fleet.probes = []
    for n in range(fleet.n_cap - 1, fleet.n_lo - 1, -1):
        assert fleet.judged(n) == truth.advise_at(n, False)["feasible"], n
    kinds = {p["judged_by"].split(" ")[0] for p in fleet.probes}
    assert {"the", "a"} <= kinds  # both shortcuts taken


def test_a_latency_bound_is_judged_by_the_simulator_at_each_drive_s_load(tmp_path):
    """The first screen leaves latency out (it has no analytic model); the simulator measures
    it at the IOPS each drive serves, open loop."""
    text = SMALL.read_text()
    text = text[: text.index("[[candidate]]", text.index("[[candidate]]") + 1)]
    text = text.replace(
        "years = 5\n", 'years = 5\nmin_iops_per_tb = 20000\nmax_latency = "p99=50ms"\nread_write = "70:30"\n'
    )
    f = tmp_path / "fleet.toml"
    f.write_text(text)
    d = compare_fleet(load_compare(f), confirm=True)
    (e,) = d["candidates"]
    assert e["feasible"] and e["source"] == "simulator"
    n = e["drives"]
    assert e["per_drive"]["iops"] == pytest.approx(20000 * 10 / n)
    assert e["figures"]["latency_us"]["all"]["p99"] <= 50_000
    assert not any(p["judged_by"].startswith("the level") for p in e["search"]["judged"])  # load moves with n
