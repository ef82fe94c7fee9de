"""Sweeps (docs/sweeps.md): grid files, point identity and seeds, Dask and serial runs giving
the same table, resuming without recomputing, interruption, failed points, bad grid files."""

import importlib
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pyarrow.parquet as pq
import pytest

import opsim
from opsim import cli
from opsim.sweep import WALL_CLOCK_COLUMNS, derive_seed, load_grid, run_sweep

OPSIM = [sys.executable, "-m", "opsim.cli"]
SWEEP = importlib.import_module("opsim.sweep.run")  # the module that runs points (opsim.sweep is the function)

# 2 capacities x 3 OP levels x 2 GC policies x 2 replicates = 24 points of a few ms each
GRID_24 = """\
# the acceptance sweep: small drives, analytic preconditioning
[drive]
pages_per_block = 64

[run]
precondition = "analytic"
warmup_drive_writes = 0.5
measure_drive_writes = 1

[sweep]
name = "acceptance"
seed = 2024
replicates = 2

[sweep.grid]
"drive.user_capacity" = ["64MiB", "128MiB"]
"drive.op" = [0.07, 0.28, 0.5]
"ftl.gc" = ["greedy", "fifo"]
"""


def write(tmp_path, text, name="grid.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def deterministic(df):
    """The table without the wall-clock columns (the only ones that may differ between runs)."""
    return df.drop(columns=list(WALL_CLOCK_COLUMNS)).reset_index(drop=True)


def main(capsys, *args):
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- acceptance


def test_24_points_on_local_cluster_interrupted_resumed_same_table_as_serial(tmp_path):
    grid = write(tmp_path, GRID_24)
    out = tmp_path / "cluster.parquet"
    assert len(load_grid(grid).points) == 24

    # run 1 on a LocalCluster, stopped after 9 points (the --limit hook)
    first = run_sweep(grid, out, workers=2, limit=9)
    s = first.summary
    assert (s["runner"], s["workers"], s["computed"], s["skipped"], s["failed"]) == ("local-cluster", 2, 9, 0, 0)
    saved = pd.read_parquet(out)
    assert len(saved) == 9 and (saved["status"] == "ok").all()

    # run 2 on a LocalCluster resumes: only the 15 missing points are computed ...
    second = run_sweep(grid, out, workers=2)
    s = second.summary
    assert (s["computed"], s["skipped"], s["ok"], s["pending"]) == (15, 9, 24, 0)
    resumed = pd.read_parquet(out)
    assert len(resumed) == 24 and resumed["point_id"].is_unique
    # ... and the 9 finished ones were not recomputed: their rows, wall-clock times included,
    # are exactly those of run 1
    again = resumed.set_index("point_id").loc[saved["point_id"]].reset_index()
    pd.testing.assert_frame_equal(again, saved)

    # run 3: nothing left to do, the file is not touched
    mtime = os.stat(out).st_mtime_ns
    third = run_sweep(grid, out, workers=2)
    assert (third.summary["computed"], third.summary["skipped"]) == (0, 24)
    assert third.summary["runner"] is None, "no cluster is started for nothing"
    assert os.stat(out).st_mtime_ns == mtime

    # the serial API path gives the same table (bar wall-clock seconds), from a fresh start
    serial = opsim.sweep(grid, tmp_path / "serial.parquet", workers=0)
    assert serial.attrs["sweep"]["computed"] == 24 and serial.attrs["sweep"]["runner"] == "serial"
    pd.testing.assert_frame_equal(deterministic(resumed), deterministic(serial))
    pd.testing.assert_frame_equal(deterministic(second.frame), deterministic(serial))
    pd.testing.assert_frame_equal(deterministic(pd.read_parquet(tmp_path / "serial.parquet")), deterministic(serial))

    # and the table is what it should be: one row per point, config flattened, metrics
    assert list(serial.columns[:3]) == ["point_id", "config_id", "replicate"]
    for col in (
        "drive.user_capacity",
        "drive.op",
        "ftl.gc",
        "run.seed",
        "run.precondition",
        "waf",
        "op.user",
        "op.physical",
        "op.effective",
        "steady_state.reached",
        "measure_window.host_write_bytes",
        "measure_counters.gc_copy_pages",
        "wall_seconds",
    ):
        assert col in serial.columns, col
    assert serial.groupby("config_id").size().eq(2).all()
    assert serial["run.seed"].is_unique
    greedy = serial[serial["ftl.gc"] == "greedy"].groupby("drive.op")["waf"].mean()
    assert greedy.is_monotonic_decreasing and greedy.loc[0.07] > 3 > greedy.loc[0.5] > 1


def test_on_an_existing_cluster_by_scheduler_address(tmp_path):
    import logging

    from distributed import LocalCluster

    grid = write(tmp_path, GRID_24.replace('"ftl.gc" = ["greedy", "fifo"]', ""))  # 12 points
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    ) as cluster:
        code = cli.main(
            [
                "sweep",
                str(grid),
                "-o",
                str(tmp_path / "r.parquet"),
                "--scheduler",
                cluster.scheduler_address,
                "--json-file",
                str(tmp_path / "r.json"),
            ]
        )
    assert code == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["run"]["runner"] == "scheduler" and doc["run"]["computed"] == 12
    serial = opsim.sweep(grid, workers=0)
    pd.testing.assert_frame_equal(deterministic(pd.read_parquet(tmp_path / "r.parquet")), deterministic(serial))


def count_simulations(monkeypatch):
    """Count the points this process simulates (the serial path calls run_point here)."""
    calls = []
    real = SWEEP.run_point

    def counting(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(SWEEP, "run_point", counting)
    return calls


@pytest.mark.slow
def test_interrupted_by_a_signal_keeps_finished_points_and_resumes(tmp_path, monkeypatch):
    # 24 points of a few tenths of a second each, run serially by the CLI and stopped by SIGINT
    grid = write(
        tmp_path,
        """\
[drive]
user_capacity = "1GiB"
pages_per_block = 64
[run]
warmup_drive_writes = 6
measure_drive_writes = 6
[sweep]
replicates = 4
[sweep.grid]
"drive.op" = [0.07, 0.12, 0.2, 0.28, 0.4, 0.5]
""",
    )
    out = tmp_path / "r.parquet"
    p = subprocess.Popen(
        [*OPSIM, "sweep", str(grid), "-o", str(out), "--workers", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not out.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 130, (stdout, stderr)
    assert "interrupted" in stdout and "Traceback" not in stderr
    done = pd.read_parquet(out)  # a complete, readable file
    assert 0 < len(done) < 24 and (done["status"] == "ok").all()
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")], "no temporary file left"

    calls = count_simulations(monkeypatch)
    resumed = run_sweep(grid, out, workers=0)
    assert len(calls) == 24 - len(done)
    assert resumed.summary["computed"] == 24 - len(done)
    assert resumed.summary["skipped"] == len(done)
    table = pd.read_parquet(out)
    assert len(table) == 24
    kept = table.set_index("point_id").loc[done["point_id"]].reset_index()
    pd.testing.assert_frame_equal(kept, done)  # not recomputed


# --------------------------------------------------------------------------- identity and seeds


def test_seeds_come_from_the_point_not_its_position(tmp_path):
    g = load_grid(write(tmp_path, GRID_24))
    reordered = load_grid(
        write(
            tmp_path,
            GRID_24.replace('["greedy", "fifo"]', '["fifo", "greedy"]').replace(
                "[0.07, 0.28, 0.5]", "[0.5, 0.07, 0.28]"
            ),
            "r.toml",
        )
    )
    by_id = {p.point_id: p for p in g.points}
    assert set(by_id) == {p.point_id for p in reordered.points}
    assert [p.point_id for p in g.points] != [p.point_id for p in reordered.points]
    for p in reordered.points:
        assert by_id[p.point_id].seed == p.seed and by_id[p.point_id].config == p.config
    # the seed is the documented derivation, and the replicates differ
    import hashlib

    p = g.points[0]
    flat = {k: v for k, v in p.config.items() if k != "run.seed"}
    h = hashlib.sha256(json.dumps(flat, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert p.seed == derive_seed(2024, h, p.replicate) and p.config_id == h[:16]
    assert len({q.seed for q in g.points}) == 24
    # another grid seed: other seeds, other point ids
    other = load_grid(write(tmp_path, GRID_24.replace("seed = 2024", "seed = 2025"), "o.toml"))
    assert not {q.point_id for q in other.points} & set(by_id)

    # and the same point gives the same row whatever else is in the grid
    small = write(
        tmp_path, GRID_24.replace('["64MiB", "128MiB"]', '["128MiB"]').replace("[0.07, 0.28, 0.5]", "[0.28]"), "s.toml"
    )
    a = opsim.sweep(small, workers=0)
    b = opsim.sweep(write(tmp_path, GRID_24.replace('["64MiB", "128MiB"]', '["128MiB"]'), "b.toml"), workers=0)
    pd.testing.assert_frame_equal(deterministic(a), deterministic(b[b["point_id"].isin(a["point_id"])]))


def test_a_row_is_reproduced_by_opsim_simulate_with_its_config(tmp_path):
    grid = write(tmp_path, GRID_24.replace('name = "acceptance"', 'name = "acceptance"\ndocuments = true'))
    df = opsim.sweep(grid, workers=0, limit=3)
    assert len(df) == 3
    row = df.iloc[2]
    g = load_grid(grid)
    config = {}
    for col in g.config_columns:
        section, _, key = col.partition(".")
        config.setdefault(section, {})[key] = row[col].item() if hasattr(row[col], "item") else row[col]
    r = opsim.simulate(config)
    assert r.waf == row["waf"] and r.op["user"] == row["op.user"]
    doc = json.loads(row["result_json"])
    assert doc["waf"] == r.waf and doc["rounds"] == r.data["rounds"] and "perf" not in doc


# --------------------------------------------------------------------------- failures


def test_a_failing_point_is_recorded_and_the_others_finish(tmp_path, capsys, monkeypatch):
    # 0.1% OP leaves no block for GC on this drive: that point fails at run time
    grid = write(
        tmp_path,
        GRID_24.replace('"drive.op" = [0.07, 0.28, 0.5]', '"drive.op" = [0.001, 0.28]')
        .replace('["64MiB", "128MiB"]', '["64MiB"]')
        .replace("replicates = 2", "replicates = 1"),
    )
    out = tmp_path / "r.parquet"
    code, stdout, err = main(capsys, "sweep", str(grid), "-o", str(out), "--workers", "0")
    assert code == 1, (stdout, err)
    assert "failed points:" in stdout and "CapacityError" in stdout
    df = pd.read_parquet(out)
    assert len(df) == 4
    bad = df[df["drive.op"] == 0.001]
    assert (bad["status"] == "error").all() and (bad["error_type"] == "CapacityError").all()
    assert (bad["error_key"] == "drive.op").all() and bad["error_message"].str.contains("no room").all()
    assert bad["waf"].isna().all()
    good = df[df["drive.op"] == 0.28]
    assert (good["status"] == "ok").all() and (good["waf"] > 1).all() and good["error_type"].isna().all()
    # a re-run retries the failed points only
    calls = count_simulations(monkeypatch)
    again = run_sweep(grid, out, workers=0)
    assert (again.summary["computed"], again.summary["skipped"], again.summary["failed"]) == (2, 2, 2)
    assert len(calls) == 2 and all('"op":0.001' in c for c in calls)


def test_a_worker_that_dies_is_recorded_as_a_failed_point():
    from opsim.sweep.point import _error_fields

    class KilledWorker(Exception):
        pass

    row = _error_fields(KilledWorker("worker died 3 times"))
    assert row == {
        "status": "error",
        "error_type": "KilledWorker",
        "error_key": None,
        "error_message": "worker died 3 times",
    }


# --------------------------------------------------------------------------- bad grid files

BASE = '[drive]\nuser_capacity = "64MiB"\npages_per_block = 64\n'


@pytest.mark.parametrize(
    "text,key",
    [
        (BASE + '[sweep.grid]\n"drive.bogus" = [1, 2]\n', "sweep.grid.drive.bogus"),
        (BASE + '[sweep]\nbogus = 1\n[sweep.grid]\n"drive.op" = [0.1]\n', "sweep.bogus"),
        (BASE + "[sweep.grid]\n", "sweep.grid"),
        (BASE + "[sweep]\n", "sweep.grid"),
        (BASE + '[sweep.grid]\n"drive.op" = []\n', "sweep.grid.drive.op"),
        (BASE + '[sweep.grid]\n"drive.op" = 0.07\n', "sweep.grid.drive.op"),
        (BASE + '[sweep.grid]\n"drive.op" = [0.1, "lots"]\n', "sweep.grid.drive.op[1]"),
        (BASE + '[sweep.grid]\n"drive.op" = [0.1]\n"ftl.gc" = ["greedy", 3]\n', "sweep.grid.ftl.gc[1]"),
        (BASE + '[sweep.grid]\n"ftl.gc" = ["greedy", "gredy"]\n', "sweep.grid.ftl.gc[1]"),
        (BASE + '[sweep.grid]\npreset = ["micron-1100-1tb", "nope"]\n', "sweep.grid.preset[1]"),
        (BASE + '[sweep.grid]\n"drive.op" = [0.1, 0.1]\n', "sweep.grid.drive.op[1]"),
        (BASE + '[sweep.grid]\nworkload = [{type = "uniform"}, {tipe = "zipf"}]\n', "sweep.grid.workload[1].tipe"),
        (BASE + '[sweep.grid]\n"drive.op" = [0.1]\n"drive" = [{op = 0.2}]\n', "sweep.grid.drive"),
        (BASE + '[sweep]\nreplicates = "two"\n[sweep.grid]\n"drive.op" = [0.1]\n', "sweep.replicates"),
        (BASE + '[sweep]\nseed = -1\n[sweep.grid]\n"drive.op" = [0.1]\n', "sweep.seed"),
        (BASE + '[sweep.grid]\n"run.seed" = [1, 2]\n', "sweep.grid.run.seed"),
        (BASE + '[sweep]\npoints = [{"drive.op" = 0.1}, {"drive.op" = "x%"}]\n', "sweep.points[1].drive.op"),
        (BASE + "[sweep]\npoints = []\n", "sweep.points"),
        (
            BASE + '[sweep]\npoints = [{"drive.op" = 0.1}]\n[sweep.grid]\n"drive.op" = [0.2]\n',
            "sweep.points[0].drive.op",
        ),
        (
            BASE.replace("pages_per_block", "pages_per_blok") + '[sweep.grid]\n"drive.op" = [0.1]\n',
            "drive.pages_per_blok",
        ),
        (BASE, "sweep"),
        (BASE + "[sweep\n", "grid"),
    ],
)
def test_bad_grid_files_exit_2_naming_the_key(tmp_path, capsys, text, key):
    grid = write(tmp_path, text)
    code, out, err = main(capsys, "sweep", str(grid), "--workers", "0")
    assert code == 2, (out, err)
    assert err.startswith(f"opsim: error: {key}:"), err
    assert "Traceback" not in err
    assert not (tmp_path / "grid.parquet").exists()


def test_bad_grid_end_to_end_and_bad_options(tmp_path):
    grid = write(tmp_path, BASE + '[sweep.grid]\n"drive.bogus" = [1]\n')
    p = subprocess.run([*OPSIM, "sweep", str(grid)], capture_output=True, text=True)
    assert p.returncode == 2 and p.stderr.startswith("opsim: error: sweep.grid.drive.bogus: unknown field")
    assert "Traceback" not in p.stderr
    ok = write(tmp_path, GRID_24, "ok.toml")
    p = subprocess.run(
        [*OPSIM, "sweep", str(ok), "--workers", "2", "--scheduler", "tcp://x:1"], capture_output=True, text=True
    )
    assert p.returncode == 2
    p = subprocess.run([*OPSIM, "sweep", str(ok), "--scheduler", "nonsense"], capture_output=True, text=True)
    assert p.returncode == 2 and "opsim: error: scheduler:" in p.stderr
    p = subprocess.run([*OPSIM, "sweep", str(tmp_path / "missing.toml")], capture_output=True, text=True)
    assert p.returncode == 2 and "does not exist" in p.stderr


# --------------------------------------------------------------------------- the results file


def test_results_file_guards_and_stale_rows(tmp_path, capsys):
    grid = write(tmp_path, GRID_24)
    out = tmp_path / "grid.parquet"  # the default: next to the grid file
    code, stdout, _ = main(capsys, "sweep", str(grid), "--workers", "0", "--limit", "4")
    assert code == 0 and out.exists() and "20 not run yet" in stdout
    meta = json.loads(pq.ParquetFile(out).schema_arrow.metadata[b"opsim.sweep"])
    assert meta["grid"]["points"] == 24 and "waf" in meta["columns"]["metrics"]

    # a different grid on the same file is refused; --fresh replaces it
    other = write(tmp_path, GRID_24.replace("seed = 2024", "seed = 1"), "other.toml")
    code, _, err = main(capsys, "sweep", str(other), "-o", str(out), "--workers", "0", "--limit", "1")
    assert code == 2 and err.startswith("opsim: error: output:") and "another grid" in err
    code, _, _ = main(capsys, "sweep", str(other), "-o", str(out), "--workers", "0", "--limit", "1", "--fresh")
    assert code == 0, _
    assert len(pd.read_parquet(out)) == 1

    # a grid that drops some points: their rows go, the rest are kept
    code, _, _ = main(capsys, "sweep", str(other), "-o", str(out), "--workers", "0", "--limit", "5")
    smaller = write(
        tmp_path, GRID_24.replace("seed = 2024", "seed = 1").replace('["64MiB", "128MiB"]', '["64MiB"]'), "smaller.toml"
    )
    res = run_sweep(smaller, out, workers=0, limit=0)
    kept = res.summary["skipped"]
    assert res.summary["stale_dropped"] == 6 - kept and len(pd.read_parquet(out)) == kept

    # not a sweep result: refused, not overwritten
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet")
    code, _, err = main(capsys, "sweep", str(grid), "-o", str(junk), "--workers", "0")
    assert code == 2 and "not a readable Parquet file" in err and junk.read_bytes() == b"not parquet"

    # two sweeps never write one file at once
    from opsim.sweep.store import _Store

    store = _Store(str(out), load_grid(smaller), fresh=False)
    try:
        with pytest.raises(opsim.InputError, match="another opsim sweep is writing"):
            run_sweep(smaller, out, workers=0)
    finally:
        store.close()


def test_json_document_and_table(tmp_path, capsys):
    grid = write(tmp_path, GRID_24.replace("replicates = 2", "replicates = 1"))
    code, stdout, _ = main(capsys, "sweep", str(grid), "--workers", "0", "--json")
    assert code == 0
    doc = json.loads(stdout)
    assert doc["sweep"]["points"] == 12 and doc["sweep"]["varying"] == ["drive.op", "drive.user_capacity", "ftl.gc"]
    assert doc["run"]["computed"] == 12 and len(doc["rows"]) == 12
    assert set(doc["columns"]["config"]) >= {"drive.op", "ftl.gc", "run.seed"}
    assert all(r["status"] == "ok" and r["waf"] > 1 for r in doc["rows"])
    code, stdout, _ = main(capsys, "sweep", str(grid), "--workers", "0")
    assert code == 0 and "nothing to do" in stdout and "12 of 12 points done" in stdout
    code, stdout, err = main(capsys, "sweep", str(grid), "--workers", "0", "--fresh", "--progress")
    assert code == 0 and "opsim sweep: 100%" in err and "12/12" in err and "12/12" not in stdout
    header = next(line for line in stdout.splitlines() if line.startswith("drive.op"))
    assert header.split()[:5] == ["drive.op", "drive.user_capacity", "ftl.gc", "status", "WAF"]


def test_timed_points_and_explicit_points(tmp_path):
    # drives by preset (timed model), scaled down; explicit points crossed with the grid
    grid = write(
        tmp_path,
        """\
[drive]
user_capacity = "192MiB"
physical_capacity = "256MiB"
[run]
precondition = "analytic"
warmup_drive_writes = 0.5
measure_drive_writes = 1
[sweep]
points = [{preset = "micron-1100-1tb"}, {preset = "intel-320-160gb", "timing.queue_depth" = 8}]
[sweep.grid]
"workload.read_fraction" = [0.0, 0.5]
""",
    )
    g = load_grid(grid)
    assert g.timed and len(g.points) == 4
    df = opsim.sweep(grid, workers=0)
    assert (df["status"] == "ok").all()
    assert (df["timed.steady_iops"].fillna(df["timed.measured_iops"]) > 1000).all()
    assert (df["timed.latency_us.all.p99"] >= df["timed.latency_us.all.p50"]).all()
    assert df.loc[df["workload.read_fraction"] == 0.0, "timed.latency_us.read.p99"].isna().all()
    assert df.loc[df["workload.read_fraction"] == 0.5, "timed.latency_us.read.p99"].notna().all()
    assert df["timing.queue_depth"].tolist()[:2] == [None, None] or df["timing.queue_depth"].isna().sum() == 2
    assert list(df["preset"]) == ["micron-1100-1tb"] * 2 + ["intel-320-160gb"] * 2
