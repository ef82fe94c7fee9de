"""fio parsers on real fio output (fixtures) and on the documented 4/5/6-column log formats;
steady-state application on hand-made series."""

from pathlib import Path

import pytest

from opsim.errors import InputError
from opsim.measure import parse_fio_json, parse_log, per_second, summarize
from opsim.measure.fio import LATENCY_KEYS, Latency, per_second_dirs
from opsim.measure.runner import _steady

FIX = Path(__file__).parent.parent / "fixtures" / "measure"


def test_fio_json_plus_summary():
    doc = parse_fio_json((FIX / "randwrite4k_qd32_libaio_jsonplus.json").read_text())
    s = summarize(doc)
    assert doc["fio version"] == "fio-3.33"
    assert s["iops"] > 0 and s["io_bytes"]["write"] > 0 and s["io_bytes"]["read"] == 0
    lat = s["latency_us"]
    assert tuple(lat) == LATENCY_KEYS == ("count", "mean", "min", "p50", "p90", "p99", "p99.9", "p99.99", "max")
    assert lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <= lat["max"]
    assert s["fio_steadystate"]["attained"] is False
    # from the json+ histogram: fio's own percentiles, exactly
    clat = doc["jobs"][0]["write"]["clat_ns"]
    for p in ("50", "90", "99", "99.9", "99.99"):
        assert lat["p" + p] == clat["percentile"][f"{float(p):f}"] / 1000
    assert lat["count"] == clat["N"] and lat["mean"] == pytest.approx(clat["mean"] / 1000)


def test_latency_merge_is_exact_with_bins_and_an_upper_bound_without():
    clat = parse_fio_json((FIX / "randwrite4k_qd32_libaio_jsonplus.json").read_text())["jobs"][0]["write"]["clat_ns"]
    one = Latency.from_clat(clat)
    two = Latency.from_clat(clat).merge(Latency.from_clat(clat))
    assert two.summary_us() == {**one.summary_us(), "count": 2 * clat["N"]}
    # split the histogram at its median: each half has its own percentiles, the merge has fio's
    bins = sorted((int(k), v) for k, v in clat["bins"].items())
    half = len(bins) // 2
    lo = {**clat, "bins": {str(k): v for k, v in bins[:half]}, "N": sum(v for _, v in bins[:half])}
    hi = {**clat, "bins": {str(k): v for k, v in bins[half:]}, "N": sum(v for _, v in bins[half:])}
    merged = Latency.from_clat(lo).merge(Latency.from_clat(hi)).summary_us()
    assert merged["p50"] == one.summary_us()["p50"] and merged["p99.9"] == one.summary_us()["p99.9"]
    # plain json (no bins, the other fixture): the larger of each percentile
    plain = parse_fio_json((FIX / "ss_attained_rate2000_iouring.json").read_text())["jobs"][0]["write"]["clat_ns"]
    assert "bins" not in plain
    mixed = Latency.from_clat(clat).merge(Latency.from_clat(plain)).summary_us()
    assert mixed["p99.9"] == max(clat["percentile"]["99.900000"], plain["percentile"]["99.900000"]) / 1000
    assert mixed["count"] == clat["N"] + plain["N"] and mixed["max"] == max(clat["max"], plain["max"]) / 1000
    # no samples: count 0 and zeros, as the timed model reports an unused direction
    assert Latency().summary_us() == {k: 0 for k in LATENCY_KEYS}


def test_a_bucket_beyond_the_exact_extremes_is_held_within_them():
    """The slowest bucket's value above fio's exact max (seen on a loaded machine), the fastest
    below its min: the percentiles stay within [min, max], in order, as the schema has them."""
    clat = {"N": 10_000, "mean": 50_000.0, "min": 20_000, "max": 108_112_570,
            "bins": {"19968": 5_000, "50176": 4_998, "108527616": 2}}  # fmt: skip
    lat = Latency.from_clat(clat).summary_us()
    assert lat["p50"] == 20.0  # the bucket's 19.968 us, below the fastest sample
    assert lat["p99.99"] == lat["max"] == 108_112.57  # the bucket's 108,527.616 us, above the slowest
    assert lat["min"] <= lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <= lat["p99.99"] <= lat["max"]
    plain = {**clat, "bins": None, "percentile": {"50.000000": 19_968, "99.990000": 108_527_616}}
    lat = Latency.from_clat(plain).summary_us()
    assert (lat["p50"], lat["p99.99"]) == (20.0, 108_112.57)


def test_mixed_log_per_direction(tmp_path):
    # a randrw iops log: one read (ddir 0) and one write (ddir 1) line per second
    p = tmp_path / "mix_iops.1.log"
    p.write_text("1000, 300, 0, 0, 0\n1000, 100, 1, 0, 0\n2000, 320, 0, 0, 0\n2000, 110, 1, 0, 0\n2001, 10, 1, 0, 0\n")
    assert per_second_dirs([p]) == {1: {0: 300, 1: 100}, 2: {0: 320, 1: 60}}
    assert per_second([p]) == {1: 400, 2: 380} and per_second([p], ddirs={0}) == {1: 300, 2: 320}


def test_fio_json_with_non_json_prefix():
    text = (FIX / "ss_attained_rate2000_iouring.json").read_text()
    doc = parse_fio_json("fio: io_uring engine: kernel too old? falling back\nnote: both iodepth >= 1\n" + text)
    s = summarize(doc)
    assert s["iops"] == pytest.approx(2000, rel=0.05)
    assert s["fio_steadystate"]["attained"] is True


def test_fio_json_garbage():
    with pytest.raises(InputError):
        parse_fio_json("fio: failed to open file\nno json here\n")


def test_real_5_column_log():
    rows = parse_log(FIX / "randwrite4k_qd32_libaio_iops.1.log")
    assert len(rows) == 19 and rows[0] == (1001, 50245.0, 1, 0)
    series = per_second([FIX / "randwrite4k_qd32_libaio_iops.1.log"])
    assert list(series)[:3] == [1, 2, 3] and series[6] == 128228  # 6001 ms -> second 6


def test_clat_log_duplicate_final_sample_averaged():
    s = per_second([FIX / "randwrite4k_qd32_libaio_clat.1.log"], reduce_jobs="mean")
    assert s[20] == pytest.approx((159700 + 100777) / 2)


@pytest.mark.parametrize("ncols", [4, 5, 6, 8])
def test_log_column_variants(tmp_path, ncols):
    # fio < 3.21: time, value, ddir, bs; 3.21: + prio; 3.37: + more (offset / issue time...)
    lines = []
    for t, v in ((1000, 100), (2000, 110), (4001, 90)):  # second 3 is missing
        cols = [t, v, 1, 4096, 0, 12345, 7, 8][:ncols]
        lines.append(", ".join(str(c) for c in cols))
    p = tmp_path / f"x_iops.{ncols}.log"
    p.write_text("\n".join(lines) + "\n")
    assert parse_log(p)[2] == (4001, 90.0, 1, 4096)
    assert per_second([p]) == {1: 100, 2: 110, 4: 90}  # keyed by timestamp: the gap stays a gap


def test_logs_of_two_jobs_are_summed(tmp_path):
    a, b = tmp_path / "r_iops.1.log", tmp_path / "r_iops.2.log"
    a.write_text("1000, 100, 1, 4096\n2000, 100, 1, 4096\n")
    b.write_text("1002, 50, 1, 4096\n3000, 70, 1, 4096\n")
    assert per_second([a, b]) == {1: 150, 2: 100, 3: 70}


def test_bad_log_line(tmp_path):
    p = tmp_path / "bad.log"
    p.write_text("1000, 5\n")
    with pytest.raises(InputError, match="4 columns"):
        parse_log(p)


def _rounds(vals):
    return [{"index": i + 1} for i in range(len(vals))]


def test_steady_series():
    vals = [50000, 30000, 20500, 20000, 19800, 20100, 20050, 19900]
    ss, iops = _steady(vals, _rounds(vals))
    assert ss["reached"] and iops == pytest.approx(ss["mean"])
    assert ss["window_rounds"][1] - ss["window_rounds"][0] == 4


def test_drifting_series():
    vals = [30000 - 1500 * i for i in range(10)]  # steady downward trend: excursion too large
    ss, iops = _steady(vals, _rounds(vals))
    assert not ss["reached"] and iops is None


def test_noisy_series():
    vals = [20000, 26000, 15000, 25000, 14000, 26000, 15000, 24000]  # range > 20% of mean
    ss, _iops = _steady(vals, _rounds(vals))
    assert not ss["reached"] and ss["range_ratio"] > 0.2


def test_too_few_rounds():
    ss, _iops = _steady([1, 1, 1], _rounds([1, 1, 1]))
    assert not ss["reached"]


def test_write_cache_note(tmp_path, monkeypatch):
    """--write-cache is a note: what the user set, beside the kernel's view of the disk (for a
    partition, its disk), with a warning when they disagree.  Nothing is changed."""
    from opsim.devices.guard import Target
    from opsim.measure import target as M

    q = tmp_path / "sdz" / "queue"
    q.mkdir(parents=True)
    (q / "write_cache").write_text("write back\n")
    monkeypatch.setattr(M, "SYS_BLOCK", str(tmp_path))
    part = Target(path="/dev/sdz1", kind="block", dev_name="sdz1", partition_of="sdz")
    note, warnings = M.write_cache("on", part)
    assert note == {"stated": "on", "detected": "write back", "source": str(q / "write_cache")} and warnings == []
    note, warnings = M.write_cache("off", part)
    assert "kernel reports 'write back'" in warnings[0]
    note, _ = M.write_cache(None, None)
    assert note["detected"] is None and "file target" in note["note"]
    assert (q / "write_cache").read_text() == "write back\n"
