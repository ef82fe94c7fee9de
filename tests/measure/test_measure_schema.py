"""A measured result and a timed simulation result have the same keys and types at the shared
paths (iops_series, latency_us all/read/write, rounds, steady_state, steady_iops, measured_iops,
phases), so one plotting code draws both.

The measured result comes from the runner fed with real fio output (the fixtures: fio 3.33
json+ and its per-second logs) and, in CI, from a real fio run; the simulated one from a tiny
timed `opsim.simulate` run."""

import json
import os
import shutil
from pathlib import Path

import pytest

import recorded_fio
from opsim import simulate
from opsim.cli import main
from opsim.errors import InputError
from opsim.measure import runner
from opsim.measure.fio import parse_fio_json
from opsim.measure.schema import TIMED_SCHEMA, check_timed, json_type, timed_view
from support import timing_table

FIX = Path(__file__).parent.parent / "fixtures" / "measure"
FIO_DOC = parse_fio_json((FIX / "randwrite4k_qd32_libaio_jsonplus.json").read_text())

TINY_TIMED = {
    "drive": {"user_capacity": "256MiB", "op": 0.28, "pages_per_block": 256},
    "run": {"seed": 2, "warmup_drive_writes": 1, "measure_drive_writes": 1, "round_drive_writes": 0.25},
    "timing": timing_table(background_gc=None, series_interval_s=0.01),
}


@pytest.fixture(scope="module")
def sim_doc():
    return json.loads(json.dumps(simulate(TINY_TIMED).data))  # as a program reads it


def fixture_measurement(tmp_path, monkeypatch, test="wsat", rounds=6):
    """Run the runner with fio replaced by the recorded fio output: each round 'writes' the
    fixture's JSON and per-second logs, as fio would."""

    recorded_fio.replay(monkeypatch)
    span = 256 * 2**20
    written = FIO_DOC["jobs"][0]["write"]["io_bytes"]
    plan = runner.Plan(
        test=test,
        target=str(tmp_path / "pts.dat"),
        target_kind="file",
        capacity_bytes=span,
        outdir=str(tmp_path / "out"),
        round_s=20,
        bs=("4k",),
        mixes=((0, 100),),
        capacity_multiple=(rounds - 0.5) * written / span,
        max_rounds=rounds,
    )
    return json.loads(json.dumps(runner.run(plan, runner.Progress("off"))))


def shapes_agree(sim, meas, spec=TIMED_SCHEMA, path=""):
    """Every path of the schema is in both documents with the same JSON type, or null on one
    side where the schema allows null (an integer and a float are both JSON numbers where the
    schema says number).  Lists: their first items are compared."""
    problems = []
    for key, want in spec.items():
        where = f"{path}.{key}" if path else key
        if key not in sim or key not in meas:
            problems.append(f"{where}: in the simulation: {key in sim}, in the measurement: {key in meas}")
            continue
        a, b = sim[key], meas[key]
        if isinstance(want, dict):
            problems += shapes_agree(a, b, want, where)
        elif isinstance(want, list):
            if not a or not b:
                problems.append(f"{where}: empty (simulation {len(a)} items, measurement {len(b)})")
            else:
                problems += shapes_agree(a[0], b[0], want[0], f"{where}[0]")
        else:
            ta, tb = json_type(a), json_type(b)
            same = (
                ta == tb
                or ({ta, tb} <= {"integer", "number"} and "integer" not in want)
                or ("null" in (ta, tb) and "null" in want)
            )
            if not same:
                problems.append(f"{where}: simulation {ta}, measurement {tb}")
    return problems


def test_simulation_timed_section_has_the_schema(sim_doc):
    assert check_timed(sim_doc["timed"]) == []
    assert timed_view(sim_doc) is sim_doc["timed"]


def test_measured_from_fio_output_has_the_schema(tmp_path, monkeypatch):
    d = fixture_measurement(tmp_path, monkeypatch)
    assert d["schema"] == "opsim-measure" and d["schema_version"] == 2
    assert check_timed(d) == []
    assert timed_view(d) is d
    assert len(d["rounds"]) == 6
    # fio's own percentiles come out exactly (merged from its json+ histogram bins)
    clat = FIO_DOC["jobs"][0]["write"]["clat_ns"]
    r = d["rounds"][0]["latency_us"]
    assert r["p50"] == clat["percentile"]["50.000000"] / 1000
    assert r["p99.99"] == clat["percentile"]["99.990000"] / 1000
    assert r["count"] == clat["N"] and r["max"] == clat["max"] / 1000
    # identical rounds: steady at rounds 1-5 (round indexes, as the timed model reports them)
    ss = d["steady_state"]
    assert ss["reached"] and ss["window"] == [1, 5] and ss["round"] == 5
    assert d["steady_iops"] == pytest.approx(FIO_DOC["jobs"][0]["write"]["iops"])
    assert d["phases"]["steady_start_s"] == d["rounds"][0]["t_start_s"] == 0.0
    # five merged rounds: five times the samples, the same percentiles
    assert d["latency_us"]["all"]["count"] == 5 * clat["N"]
    assert d["latency_us"]["write"]["p99"] == r["p99"] and d["latency_us"]["read"]["count"] == 0
    assert d["measured_iops"] == pytest.approx(d["steady_iops"])
    # per-second series on one time axis: round k's seconds after round k-1's
    ts = [p["t_s"] for p in d["iops_series"]]
    assert ts == sorted(ts) and len(ts) == 6 * 19 and d["rounds"][1]["t_start_s"] == d["rounds"][0]["t_end_s"]
    assert d["iops_series"][5]["mbps"] == pytest.approx(d["iops_series"][5]["iops"] * 4096 / 1e6)


def test_simulated_and_measured_have_the_same_keys_and_types(sim_doc, tmp_path, monkeypatch):
    meas = fixture_measurement(tmp_path, monkeypatch)
    sim = timed_view(sim_doc)
    assert shapes_agree(sim, meas) == []
    # the shared paths hold exactly the simulation's keys (measurements add their own beside them)
    for path in ("iops_series", "rounds"):
        assert set(sim[path][0]) <= set(meas[path][0])
    for d in ("all", "read", "write"):
        assert set(sim["latency_us"][d]) == set(meas["latency_us"][d])
    assert set(sim["latency_us"]) == set(meas["latency_us"]) == {"all", "read", "write"}
    assert set(sim["rounds"][0]["latency_us"]) == set(meas["rounds"][0]["latency_us"])
    assert set(sim["steady_state"]) <= set(meas["steady_state"])
    assert set(sim["phases"]) == set(meas["phases"])
    # and the same code reads both
    for doc in (sim_doc, meas):
        t = timed_view(doc)
        assert t["latency_us"]["all"]["p99"] > 0 and t["measured_iops"] > 0
        assert all(p["t_s"] > 0 for p in t["iops_series"])


def test_check_timed_names_what_is_wrong(sim_doc):
    t = json.loads(json.dumps(sim_doc["timed"]))
    del t["phases"]
    t["rounds"][1]["latency_us"]["p99"] = "slow"
    t["latency_us"]["read"]["count"] = 1.5
    assert check_timed(t) == [
        "latency_us.read.count: expected integer, got number (1.5)",
        "rounds[1].latency_us.p99: expected number, got string ('slow')",
        "phases: missing",
    ]
    with pytest.raises(InputError):
        timed_view({"hello": 1})


@pytest.mark.slow
@pytest.mark.fio
@pytest.mark.skipif(shutil.which("fio") is None and not os.environ.get("CI"), reason="fio not installed")
def test_real_fio_measurement_matches_the_simulation(sim_doc, tmp_path, capsys):
    """The CI run: a real fio WSAT on a temporary file; its result has the simulator's schema."""
    rc = main(
        [
            "measure",
            "wsat",
            "--size",
            "32MiB",
            "--round",
            "2",
            "--time-cap",
            "5",
            "--capacity-multiple",
            "1000",
            "--qd",
            "8",
            "-o",
            str(tmp_path / "w"),
            "--json",
        ]
    )
    out = capsys.readouterr()
    assert rc == 0, out.err
    meas = json.loads(out.out)
    assert check_timed(meas) == []
    assert shapes_agree(timed_view(sim_doc), meas) == []
