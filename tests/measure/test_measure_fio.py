"""Real fio runs against a temporary file (needs the fio binary)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from opsim.cli import main
from opsim.measure.schema import check_timed
from opsim.sim import steady_state

# `make test` installs fio; only outside CI may these tests be skipped for want of it.
pytestmark = [
    pytest.mark.fio,
    pytest.mark.skipif(shutil.which("fio") is None and not os.environ.get("CI"), reason="fio not installed"),
]


def run(capsys, *argv):
    rc = main([*argv, "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    return json.loads(out.out)


def check_common(d, outdir):
    assert d["fio_version"].startswith("fio-")
    assert check_timed(d) == []  # the timed simulator's schema (docs/measure.md)
    # rounds present
    assert d["rounds"] and all(r["iops"] > 0 and r["runtime_s"] > 0 for r in d["rounds"])
    # the per-second series, on one time axis
    assert d["iops_series"] and all(
        {"t_s", "iops", "read_iops", "write_iops", "mbps"} <= set(s) for s in d["iops_series"]
    )
    ts = [s["t_s"] for s in d["iops_series"]]
    end = max(c["t_end_s"] for r in d["rounds"] for c in r.get("combinations", [r]))
    assert ts == sorted(ts) and ts[-1] <= end + 1
    # latency percentiles (fio's clat, merged over the measurement window from its histogram)
    lat = d["latency_us"]["all"]
    assert lat["count"] > 0
    assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p99.9"] <= lat["p99.99"] <= lat["max"]
    for r in d["rounds"]:
        x = r["latency_us"]
        assert x["count"] > 0 and x["p50"] <= x["p99"] <= x["max"]
    # the verdict is the SNIA rule (Rust core) applied to the round IOPS
    ss = steady_state([r["iops"] for r in d["rounds"]])
    assert d["steady_state"]["reached"] == ss["reached"]
    assert d["steady_state"]["range_ratio"] == pytest.approx(ss["range_ratio"])
    if ss["window"]:  # reported as round indexes
        assert d["steady_state"]["window"] == [d["rounds"][i]["index"] for i in ss["window"]]
    assert (d["steady_iops"] is not None) == ss["reached"]
    for r in d["rounds"]:
        assert (outdir / r["fio_json"]).exists()
        assert "bins" in json.loads((outdir / r["fio_json"]).read_text())["jobs"][0]["write"]["clat_ns"]
    assert json.loads((outdir / "result.json").read_text())["test"] == d["test"]


@pytest.mark.slow
def test_wsat_real_fio(tmp_path, capsys):
    out = tmp_path / "w"
    d = run(
        capsys,
        "measure",
        "wsat",
        "--size",
        "64MiB",
        "--round",
        "2",
        "--time-cap",
        "12",
        "--capacity-multiple",
        "1000",
        "--qd",
        "8",
        "-o",
        str(out),
    )
    assert d["test"] == "wsat" and d["target"]["kind"] == "file"
    assert len(d["rounds"]) >= 5 and d["stop_reason"] == "time cap reached"
    assert d["rounds"][-1]["written_total_bytes"] > 0
    check_common(d, out)


@pytest.mark.slow
def test_iops_real_fio(tmp_path, capsys):
    out = tmp_path / "i"
    d = run(
        capsys,
        "measure",
        "iops",
        "--size",
        "64MiB",
        "--round",
        "2",
        "--bs",
        "4k",
        "--rwmix",
        "0/100,100/0",
        "--max-rounds",
        "6",
        "--qd",
        "4",
        "-o",
        str(out),
    )
    assert d["test"] == "iops"
    # SNIA workload-independent preconditioning first: the span twice, 128 KiB sequential
    assert d["precondition"]["io_bytes"]["write"] == 2 * 64 * 2**20 and d["precondition"]["phase"] == "precondition"
    assert 1 <= len(d["rounds"]) <= 6
    assert all(len(r["combinations"]) == 2 for r in d["rounds"])
    assert d["steady_state"]["metric"] == "iops of 4k R/W 0/100"
    if d["steady_state"]["reached"]:
        assert d["stop_reason"].startswith("steady state")
    else:
        assert len(d["rounds"]) == 6
    check_common(d, out)


def test_iops_mixed_workload_splits_directions(tmp_path, capsys):
    out = tmp_path / "mix"
    d = run(
        capsys,
        "measure",
        "iops",
        "--size",
        "32MiB",
        "--round",
        "2",
        "--bs",
        "4k",
        "--rwmix",
        "65/35",
        "--max-rounds",
        "1",
        "--qd",
        "4",
        "-o",
        str(out),
    )
    r = d["rounds"][0]
    assert r["read_iops"] > 0 and r["write_iops"] > 0
    assert r["iops"] == pytest.approx(r["read_iops"] + r["write_iops"])
    assert set(r["directions"]) == {"read", "write"}
    # the round's merged latency counts both directions
    assert r["latency_us"]["count"] == (
        r["directions"]["read"]["latency_us"]["count"] + r["directions"]["write"]["latency_us"]["count"]
    )
    p = d["iops_series"][0]
    assert p["read_iops"] > 0 and p["write_iops"] > 0 and p["iops"] == pytest.approx(p["read_iops"] + p["write_iops"])
    assert d["latency_us"]["read"]["count"] > 0 and d["latency_us"]["write"]["count"] > 0


@pytest.mark.slow
def test_consistency_real_fio(tmp_path, capsys):
    out = tmp_path / "c"
    d = run(
        capsys,
        "measure",
        "consistency",
        "--size",
        "32MiB",
        "--round",
        "2",
        "--time-cap",
        "4",
        "--qd",
        "8",
        "-o",
        str(out),
    )
    assert d["fill"]["phase"] == "fill" and d["fill"]["io_bytes"]["write"] == 32 * 2**20
    assert d["stop_reason"] == "time cap reached" and len(d["rounds"]) >= 1
    check_common(d, out)


@pytest.mark.slow
def test_progress_display(tmp_path, capsys):
    """--progress on: one line per finished round on stderr (stderr is not a terminal here);
    stdout still holds only the JSON document."""
    rc = main(
        [
            "measure",
            "wsat",
            "--size",
            "32MiB",
            "--round",
            "1",
            "--time-cap",
            "3",
            "--capacity-multiple",
            "1000",
            "--qd",
            "4",
            "--progress",
            "on",
            "-o",
            str(tmp_path / "p"),
            "--json",
        ]
    )
    out = capsys.readouterr()
    assert rc == 0
    d = json.loads(out.out)
    lines = [x for x in out.err.splitlines() if "wsat: round" in x]
    assert len(lines) == len(d["rounds"]) >= 2
    assert lines[0].startswith("[") and "IOPS" in lines[0] and "GiB written" in lines[0]
    # off: nothing on stderr
    rc = main(
        [
            "measure",
            "wsat",
            "--size",
            "32MiB",
            "--round",
            "1",
            "--time-cap",
            "1",
            "--qd",
            "4",
            "--progress",
            "off",
            "-o",
            str(tmp_path / "q"),
            "--json",
        ]
    )
    assert rc == 0 and capsys.readouterr().err == ""


def test_bad_options(tmp_path, capsys):
    assert main(["measure", "wsat", "--size", "64XB", "-o", str(tmp_path / "x")]) == 2
    assert "size" in capsys.readouterr().err
    assert main(["measure", "iops", "--rwmix", "60/60", "-o", str(tmp_path / "x")]) == 2
    assert main(["measure", "wsat", "--file", "/dev/null", "-o", str(tmp_path / "x")]) == 2
    assert "character device" in capsys.readouterr().err


def test_device_needs_confirmation(tmp_path, capsys):
    f = tmp_path / "not-a-dev"
    f.write_bytes(b"x" * 4096)
    before = f.read_bytes()
    rc = main(["measure", "wsat", "--device", str(f), "-o", str(tmp_path / "o")])
    assert rc == 2 and "naming it again" in capsys.readouterr().err
    rc = main(["measure", "wsat", "--device", str(f), f"--destroy-data={f}", "-o", str(tmp_path / "o")])
    assert rc == 2 and "block device" in capsys.readouterr().err
    assert f.read_bytes() == before


@pytest.mark.slow
def test_ctrl_c_keeps_rounds_and_exits_130(tmp_path):
    """Ctrl-C (SIGINT to the foreground process group, as a terminal sends it) stops fio
    cleanly; the rounds done so far are printed and kept in result.json; exit code 130."""
    out = tmp_path / "int"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "opsim.cli",
            "measure",
            "wsat",
            "--size",
            "64MiB",
            "--round",
            "2",
            "--time-cap",
            "60",
            "--capacity-multiple",
            "1000",
            "--output-dir",
            str(out),
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 40
    # fio creates a round's JSON file when the round starts: wait until round 2 is running
    while not list(out.glob("round-002*.json")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    d = json.loads(stdout)
    assert d["interrupted"] is True
    assert len(d["rounds"]) >= 1
    kept = json.loads((out / "result.json").read_text())
    assert kept["interrupted"] is True and len(kept["rounds"]) == len(d["rounds"])
    assert check_timed(kept) == []  # a complete document, in the same schema
