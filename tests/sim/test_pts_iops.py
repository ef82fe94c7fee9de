"""The SNIA PTS IOPS test in simulation (``workload.type = "snia-pts"``, ``[workload.pts] test =
"iops"``): block sizes x read/write mixes per round after the PTS preconditioning, steady
state tracked on 4 KiB 100% writes, the result in the real-drive harness's schema
(opsim.measure.schema) plus the PTS IOPS table.

A 512 MiB drive with 0.5 s combinations: the whole test (about 6 rounds of 56 combinations,
some 30 million simulated commands) takes a few seconds.
"""

import json

import pytest

from opsim import simulate
from opsim.errors import ConfigError
from opsim.measure.runner import PTS_BLOCK_SIZES, PTS_MIXES, fob_end
from opsim.measure.schema import check_timed, timed_view


def cfg(pts=None, timing=None, **drive):
    return {
        "drive": {"user_capacity": "512MiB", "op": 0.12, "pages_per_block": 64} | drive,
        "workload": {"type": "snia-pts", "pts": {"test": "iops"} | (pts or {})},
        "timing": {"round_s": 0.5, "series_interval_s": 0.1, "write_buffer": "256KiB"} | (timing or {}),
        "run": {"seed": 4},
    }


@pytest.fixture(scope="module")
def run():
    return simulate(cfg())


def test_harness_schema_and_round_semantics(run):
    t = timed_view(run)
    assert check_timed(t) == []
    combos = [(bs, f"{r}/{w}") for r, w in PTS_MIXES for bs in PTS_BLOCK_SIZES]
    assert len(combos) == 56
    prev_end = None
    for rnd in t["rounds"]:
        got = [(c["bs"], c["rwmix"]) for c in rnd["combinations"]]
        assert got == combos, "the harness's order: every block size within each mix"
        assert [c["label"] for c in rnd["combinations"]][:2] == ["512 R/W 0/100", "4k R/W 0/100"]
        # the round's own figures are the tracked combination's (4 KiB, 100% writes)
        assert (rnd["bs"], rnd["rwmix"], rnd["label"]) == ("4k", "0/100", "4k R/W 0/100")
        assert rnd["iops"] == rnd["combinations"][1]["iops"]
        assert all(c["index"] == rnd["index"] for c in rnd["combinations"])
        for c in rnd["combinations"]:
            # round_s of I/O, then the commands in flight complete (fio waits for them): up
            # to 32 MiB of 1 MiB writes at the end of a write-heavy large-block combination
            assert 0.5 <= c["t_end_s"] - c["t_start_s"] < (1.5 if c["bs"] == "1m" else 0.6)
            if prev_end is not None:
                assert c["t_start_s"] == pytest.approx(prev_end)
            prev_end = c["t_end_s"]
            r, w = (int(x) for x in c["rwmix"].split("/"))
            if w == 0:
                assert c["write_iops"] == 0 and c["host_write_bytes"] == 0 and c["waf"] is None
            if r == 0:
                assert c["read_iops"] == 0
            if 0 < r < 100:
                # commands issued in the combination: binomial with P(read) = R%
                n = (c["read_iops"] + c["write_iops"]) * (c["t_end_s"] - c["t_start_s"])
                p = r / 100
                share = c["read_iops"] / (c["read_iops"] + c["write_iops"])
                assert share == pytest.approx(p, abs=5 * (p * (1 - p) / n) ** 0.5), c["label"]
    # the series: points tagged with their combination, aligned to its start
    s = t["iops_series"]
    assert {(p["bs"], p["rwmix"]) for p in s} == set(combos)
    first = t["rounds"][0]["combinations"][0]
    assert s[0]["t_s"] == pytest.approx(first["t_start_s"] + 0.1)
    assert t["phases"]["fob_end_s"] == fob_end([p for p in s if (p["bs"], p["rwmix"]) == ("4k", "0/100")])


def test_steady_state_on_4k_writes_and_the_measurement_window(run):
    t = run.timed
    ss = t["steady_state"]
    assert ss["reached"] and len(t["rounds"]) <= 25
    a, b = ss["window"]
    assert b - a == 4 and b == t["rounds"][-1]["index"], "the run stops at the steady-state round"
    window = [r for r in t["rounds"] if a <= r["index"] <= b]
    assert t["steady_iops"] == pytest.approx(sum(r["iops"] for r in window) / 5)
    secs = sum(r["t_end_s"] - r["t_start_s"] for r in window)
    assert t["measured_iops"] == pytest.approx(sum(r["iops"] * (r["t_end_s"] - r["t_start_s"]) for r in window) / secs)
    assert t["phases"]["steady_start_s"] == window[0]["t_start_s"]
    assert t["latency_us"]["all"]["count"] == sum(r["latency_us"]["count"] for r in window)
    assert t["latency_us"]["read"]["count"] == 0, "the tracked combination writes only"
    # the functional side: one round per PTS round after the preconditioning, WAF over the window
    assert run.measure_window["first_round"] == a and run.measure_window["last_round"] == b
    assert [r["phase"] for r in run.rounds[a:]] == ["steady-state"] * 5


def test_the_pts_iops_table(run):
    tab = run.timed["pts_iops"]
    assert tab["block_sizes"] == list(PTS_BLOCK_SIZES)
    assert tab["block_size_bytes"] == [512, 4096, 8192, 16384, 32768, 65536, 131072, 1 << 20]
    assert tab["mixes"] == [f"{r}/{w}" for r, w in PTS_MIXES]
    assert tab["steady"] and tab["window"] == run.timed["steady_state"]["window"]
    iops = tab["iops"]
    col = {m: i for i, m in enumerate(tab["mixes"])}
    row = {b: i for i, b in enumerate(tab["block_sizes"])}
    # the tracked cell is the steady-state IOPS
    assert iops[row["4k"]][col["0/100"]] == pytest.approx(run.timed["steady_iops"], rel=1e-9)
    for b in tab["block_sizes"]:
        r = iops[row[b]]
        assert r[col["100/0"]] > 3 * r[col["0/100"]], f"{b}: reads are much faster than writes in steady state"
        # more reads, more IOPS (from 35/65 on, where GC load falls with the write share)
        assert r[col["35/65"]] <= r[col["65/35"]] <= r[col["95/5"]] <= r[col["100/0"]]
    for m in ("0/100", "50/50", "100/0"):
        by_size = [iops[row[b]][col[m]] for b in tab["block_sizes"][1:]]
        assert by_size == sorted(by_size, reverse=True), f"{m}: fewer IOPS for larger blocks"
    # large sequential-size reads are limited by the SATA link (600 MB/s)
    assert tab["mbps"][row["1m"]][col["100/0"]] == pytest.approx(600, rel=0.05)


def test_deterministic_and_fast():
    import time

    small = cfg({"block_sizes": ["4KiB", "64KiB"], "mixes": ["0/100", "70/30"]}, {"round_s": 0.2})
    t = time.perf_counter()
    a = simulate(small)
    assert time.perf_counter() - t < 30
    b = simulate(small)
    da, db = dict(a.data), dict(b.data)
    da.pop("perf"), db.pop("perf")
    assert json.dumps(da, sort_keys=True) == json.dumps(db, sort_keys=True)
    assert len(a.timed["rounds"][0]["combinations"]) == 4


def test_tracked_combination_without_4k_writes_is_the_first():
    r = simulate(cfg({"block_sizes": ["8KiB", "16KiB"], "mixes": ["50/50", "100/0"]}, {"round_s": 0.2}))
    assert r.timed["pts_iops"]["tracked"] == "8k R/W 50/50"
    assert all(x["label"] == "8k R/W 50/50" for x in r.timed["rounds"])


@pytest.mark.parametrize(
    "change,key",
    [
        ({"workload": {"type": "uniform", "pts": {"test": "iops"}}}, "workload.pts"),
        ({"workload": {"type": "snia-pts", "pts": {"mixes": ["0/100"]}}}, "workload.pts.mixes"),
        ({"workload": {"type": "snia-pts", "pts": {"test": "iops", "mixes": ["60/30"]}}}, "workload.pts.mixes"),
        (
            {"workload": {"type": "snia-pts", "pts": {"test": "iops", "block_sizes": ["4KiB", "4KiB"]}}},
            "workload.pts.block_sizes",
        ),
        (
            {"workload": {"type": "snia-pts", "pts": {"test": "iops", "block_sizes": ["1GiB"]}}},
            "workload.pts.block_sizes",
        ),
        ({"timing": None}, "workload.pts.test"),
        ({"timing": {"arrival_iops": 1000}}, "timing.arrival_iops"),
    ],
)
def test_errors_name_the_key(change, key):
    c = cfg()
    for k, v in change.items():
        if v is None:
            c.pop(k)
        else:
            c[k] = v
    with pytest.raises(ConfigError) as e:
        simulate(c)
    assert e.value.key == key, str(e.value)
