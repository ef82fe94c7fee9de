"""Issue 23 items 6-9: child processes die with opsim, SIGTERM is Ctrl-C with exit 143, and
`opsim measure` refuses options that do not apply to its test and output directories that
hold results already.

* SIGKILL of opsim's process group during `opsim measure` (real fio on a small file): no fio
  is left one second later (fio is in its own session; it dies by PR_SET_PDEATHSIG, its jobs
  are threads), and the round cut short is not left under a finished round's name.
* SIGTERM: simulate (its --json-file keeps the partial result, ``"interrupted": true``),
  advise, sweep and trace info exit 143.
* `measure wsat --max-rounds 4` exits 2 (it ran 6 rounds); `-o DIR` holding results: exit 2,
  result.json untouched; `--replace` measures again.

Processes are only ever signalled when this file started them: fio is found by walking /proc
for processes whose command line names the test's own temporary file.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from support import LONG_RUN

ROOT = Path(__file__).parent.resolve().parent.parent
CLI = textwrap.dedent("""
    import sys
    import opsim.cli
    print("ready", file=sys.stderr, flush=True)
    sys.exit(opsim.cli.main(sys.argv[1:]))
""")

needs_fio = pytest.mark.skipif(shutil.which("fio") is None, reason="fio is not installed (make sysdeps)")


def _default_sighup() -> None:
    # a suite run under nohup passes SIGHUP ignored to its children, and opsim leaves an ignored
    # SIGHUP alone (stopsignals): the child starts with the default, as from a terminal
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def start(args: list[str], **kw) -> subprocess.Popen:
    """opsim's CLI in a subprocess, once Python and opsim are imported."""
    kw.setdefault("preexec_fn", _default_sighup)
    p = subprocess.Popen(
        [sys.executable, "-c", CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw
    )
    line = p.stderr.readline()
    assert line.strip() == "ready", line + p.stderr.read()
    return p


def finish(p: subprocess.Popen, sig: int, after_s: float) -> tuple[str, str]:
    """Let ``p`` work for ``after_s``, send ``sig``; (stdout, stderr) once it has exited."""
    time.sleep(after_s)
    assert p.poll() is None, "the command ended before the signal: make it longer"
    p.send_signal(sig)
    try:
        return p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        pytest.fail(f"still running 30 s after signal {sig}")


def procs_naming(text: str) -> list[int]:
    """Live (not zombie) processes whose command line contains ``text``."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().decode("utf-8", "replace")
            with open(f"/proc/{d}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmd and state != "Z":
            found.append(int(d))
    return found


# --------------------------------------------------------------------------- item 6: fio dies with opsim


@pytest.mark.slow
@needs_fio
def test_sigkill_of_opsims_group_during_measure_leaves_no_fio(tmp_path):
    target = tmp_path / "sigkill-target.dat"
    out = tmp_path / "out"
    argv = ["measure", "wsat", "--file", str(target), "--size", "16MiB", "--round", "2", "--qd", "4"]
    argv += ["--capacity-multiple", "100000", "--time-cap", "600", "--progress", "off", "-o", str(out)]
    fio_arg = f"--filename={target}"  # what fio's command line has, and opsim's has not
    p = start(argv, start_new_session=True)  # its own group: the test kills that group only
    try:
        deadline = time.monotonic() + 60
        # round 1 finished and fio busy with round 2
        while not ((out / "round-001.json").exists() and procs_naming(fio_arg)):
            assert p.poll() is None, p.stderr.read()
            assert time.monotonic() < deadline, "fio did not start its second round"
            time.sleep(0.1)
        time.sleep(0.5)
        fio = procs_naming(fio_arg)
        assert fio, "fio is running"
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        time.sleep(1.0)
        left = procs_naming(fio_arg)
        assert left == [], f"fio processes {left} outlived opsim's SIGKILL (were {fio})"
    finally:
        for pid in procs_naming(fio_arg):  # only fio runs writing this test's own file
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        p.stdout.close()
        p.stderr.close()
    # the cut-short round never looks finished: every round-*.json is a whole fio document
    rounds = sorted(n.name for n in out.iterdir() if n.name.startswith("round-") and n.name.endswith(".json"))
    finished = [n for n in rounds if ".partial" not in n]
    assert "round-001.json" in finished
    assert "round-002.partial.json" in rounds, "the round cut short is there, marked partial"
    for n in finished:
        doc = json.loads((out / n).read_text())
        assert doc.get("jobs"), n
    assert not (out / "result.json").exists()


# --------------------------------------------------------------------------- item 7: SIGTERM is 143


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)], ids=["SIGTERM", "SIGHUP"])
def test_a_signal_to_simulate_exits_128_plus_it_and_json_file_keeps_the_rounds(tmp_path, sig, code):
    cfg = tmp_path / "long.toml"
    cfg.write_text(LONG_RUN)
    doc = tmp_path / "partial.json"
    p = start(["simulate", str(cfg), "--json-file", str(doc)])
    _, err = finish(p, sig, 1.5)
    assert p.returncode == code, err
    d = json.loads(doc.read_text())
    assert d["interrupted"] is True and d["rounds"], "the rounds done are kept"


def test_sigterm_advise_exits_143():
    argv = ["advise", "--preset", "micron-7450-pro-960gb", "--pe", "3000", "--min-iops", "50000"]
    p = start([*argv, "--model-blocks", "200000"])
    # the whole advice takes about 1.6 s on an idle machine: stop it well inside that
    _, err = finish(p, signal.SIGTERM, 0.5)
    assert p.returncode == 143, err
    assert "interrupted" in err and "Traceback" not in err


def test_sigterm_sweep_exits_143_keeping_finished_points(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        textwrap.dedent("""\
        [drive]
        pages_per_block = 64
        [run]
        precondition = "analytic"
        warmup_drive_writes = 0.5
        measure_drive_writes = 20
        [sweep]
        name = "long"
        seed = 1
        replicates = 50
        [sweep.grid]
        "drive.user_capacity" = ["256MiB"]
        "drive.op" = [0.07, 0.28]
        """)
    )
    out = tmp_path / "long.parquet"
    p = start(["sweep", str(grid), "--workers", "0", "-o", str(out)])
    _, err = finish(p, signal.SIGTERM, 2.0)
    assert p.returncode == 143, err
    assert out.exists(), "finished points are kept"


@pytest.mark.slow
def test_sigterm_trace_info_exits_143(tmp_path):
    import gzip

    trace = tmp_path / "big.csv.gz"
    member = gzip.compress(b"128166372003061629,hm,0,Write,8192,4096,100\n" * 1_000_000, 9)
    trace.write_bytes(member * 400)
    p = start(["trace", "info", str(trace)])
    _, err = finish(p, signal.SIGTERM, 1.5)
    assert p.returncode == 143, err
    assert "interrupted" in err


# --------------------------------------------------------------------------- items 8/9: measure's options


def test_measure_options_of_another_test_are_refused(tmp_path, capsys):
    from opsim.cli import main

    cases = [
        (["wsat", "--max-rounds", "4"], "--max-rounds"),
        (["consistency", "--max-rounds", "4"], "--max-rounds"),
        (["wsat", "--rwmix", "50/50"], "--rwmix"),
        (["iops", "--capacity-multiple", "2"], "--capacity-multiple"),
        (["consistency", "--capacity-multiple", "2"], "--capacity-multiple"),
        (["wsat", "--bs", "4k,8k"], "--bs"),
        (["iops", "--max-rounds", "0"], "--max-rounds"),  # and in range where it applies
        (["iops", "--max-rounds", "26"], "--max-rounds"),
    ]
    for argv, opt in cases:
        out = tmp_path / "o"
        t0 = time.monotonic()
        rc = main(["measure", *argv, "--size", "4MiB", "--round", "1", "--time-cap", "3", "-o", str(out)])
        err = capsys.readouterr().err
        assert rc == 2, (argv, err)
        assert opt in err and (argv[0] in err or "range" in err), err
        assert time.monotonic() - t0 < 2 and not out.exists(), "refused before any work"


@pytest.mark.slow
@needs_fio
def test_measure_refuses_a_directory_with_results_unless_replace(tmp_path, capsys):
    from opsim.cli import main

    out = tmp_path / "o"
    argv = ["measure", "wsat", "--size", "4MiB", "--round", "1", "--qd", "4", "--progress", "off", "-o", str(out)]
    assert main([*argv, "--time-cap", "1", "--json"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    first = (out / "result.json").read_bytes()
    rc = main([*argv, "--time-cap", "1"])
    err = capsys.readouterr().err
    assert rc == 2 and "--output-dir" in err and "--replace" in err, err
    assert (out / "result.json").read_bytes() == first, "result.json untouched"
    (out / "round-007.json").write_text("{}")  # a stale round of the earlier run goes too
    assert main([*argv, "--time-cap", "1", "--replace", "--json"]) == 0, capsys.readouterr().err
    second = json.loads((out / "result.json").read_text())
    assert second["started_at"] and (out / "result.json").read_bytes() != first
    assert not (out / "round-007.json").exists()
    assert [r["fio_json"] for r in second["rounds"]] == ["round-001.json"]


# --------------------------------------------------------------------------- every child dies with opsim

PARENT = textwrap.dedent("""
    import sys
    from opsim import childproc
    child = childproc.popen([sys.executable, "-c", "import time; time.sleep(300)", sys.argv[1]])
    print(child.pid, flush=True)
    sys.stdin.read()
""")


def test_a_child_of_childproc_dies_with_its_parent(tmp_path):
    """A parent killed with SIGKILL (no handler runs) takes its child along."""
    mark = str(tmp_path)  # the child's extra argument: finds this test's child only
    p = subprocess.Popen([sys.executable, "-c", PARENT, mark], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        child = int(p.stdout.readline())
        assert child in procs_naming(mark)
        p.kill()
        p.wait()
        time.sleep(0.5)
        assert procs_naming(mark) == [], "the child outlived its parent"
    finally:
        for pid in procs_naming(mark):
            os.kill(pid, signal.SIGKILL)
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdin.close()
        p.stdout.close()


def test_every_child_process_is_started_through_childproc():
    """No module but opsim.childproc calls subprocess.run/Popen/call/check_output or os.system,
    os.popen, os.spawn*, os.fork: a tool started otherwise would outlive a killed opsim."""
    import re

    start_call = re.compile(
        r"\bsubprocess\.(run|Popen|call|check_call|check_output)\(|\bos\.(system|popen|spawn\w*|fork|exec\w*)\("
    )
    pkg = ROOT / "python" / "opsim"
    offenders = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in sorted(pkg.rglob("*.py"))
        if p.name != "childproc.py"
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if start_call.search(line)
    ]
    assert offenders == []


def test_measure_size_with_a_device_is_refused_not_ignored(tmp_path):
    """--size sizes a file target; beside --device it would be ignored, so it is refused (exit 2)."""
    argv = ["measure", "iops", "--device", "/dev/nonexistent-opsim", "--size", "2GiB", "-o", str(tmp_path / "out")]
    r = subprocess.run([sys.executable, "-m", "opsim.cli", *argv], capture_output=True, text=True)
    assert r.returncode == 2 and "--size applies to file targets only" in r.stderr, r.stderr
    assert not (tmp_path / "out").exists()
