"""The HTML report: one self-contained file, opened in headless Chromium (it renders, every
figure loads, no console message), a screenshot kept in tests/artifacts/; and `opsim report`."""

import base64
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from opsim import __version__, report
from opsim.sim import simulate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ARTIFACTS = os.path.join(ROOT, "tests", "artifacts")
MEASURED = os.path.join(ROOT, "tests", "fixtures", "measure", "wsat-file-64mib-result-v2.json")
NAND = 512 * 2**20
OPSIM = [sys.executable, "-m", "opsim.cli"]


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


# `make` installs Debian's chromium; only outside CI may the browser tests be skipped for want of it
needs_chromium = pytest.mark.skipif(
    chromium_binary() is None and not os.environ.get("CI"), reason="chromium not installed (make installs it)"
)


def timed(op, read_fraction=0.0):
    return {
        "preset": "samsung-840-pro-256gb",
        "drive": {
            "physical_capacity": NAND,
            "user_capacity": int(NAND / (1 + op)) // 4096 * 4096,
            "pages_per_block": 256,
        },
        "workload": {"read_fraction": read_fraction},
        "timing": {"series_interval_s": 0.1},
        "run": {
            "precondition": "none" if not read_fraction else "analytic",
            "warmup_drive_writes": 5 if not read_fraction else 0.1,
            "measure_drive_writes": 2 if not read_fraction else 0.5,
            "round_drive_writes": 0.25 if not read_fraction else 0.1,
        },
    }


@pytest.fixture(scope="module")
def result_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("results")
    paths = []
    for name, cfg in (
        ("op7", timed(0.07)),
        ("op28", timed(0.28)),
        ("op28-95-5", timed(0.28, 0.95)),
        (
            "functional",
            {
                "drive": {"user_capacity": "64MiB", "op": 0.5, "pages_per_block": 64},
                "run": {"warmup_drive_writes": 1, "measure_drive_writes": 1},
            },
        ),
    ):
        p = d / f"{name}.json"
        p.write_text(json.dumps(simulate(cfg).data))
        paths.append(str(p))
    return [*paths, MEASURED]


@pytest.fixture(scope="module")
def built(result_files, tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "report.html"
    p = subprocess.run(
        [*OPSIM, "report", *result_files, "-o", str(out), "--title", "opsim test report", "--json"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    return out, json.loads(p.stdout)


@pytest.mark.slow
def test_report_is_one_self_contained_file(built, result_files):
    out, summary = built
    html = out.read_text()
    assert html.startswith("<!DOCTYPE html>")
    # nothing outside the file: no remote or relative resource
    assert not re.search(r'(src|href)="(?!data:|#)', html)
    assert '<link rel="stylesheet"' not in html and "@import" not in html
    imgs = re.findall(r'<img alt="[^"]*" src="data:image/png;base64,([A-Za-z0-9+/=]+)">', html)
    assert len(imgs) == len(summary["figures"]) == html.count("<img ")
    for b64 in imgs:
        assert base64.b64decode(b64)[:8] == b"\x89PNG\r\n\x1a\n"
    kinds = [f["kind"] for f in summary["figures"]]
    for kind in (
        "saturation-panels",
        "saturation-written",
        "latency",
        "waf-op",
        "steady-iops",
        "endurance",
        "wear",
        "victims",
    ):
        assert kind in kinds
    # the measured result (4k random write) is drawn with the simulated 4 KiB random writes
    sat = [f for f in summary["figures"] if f["kind"] == "saturation-written"]
    assert any("wsat-file-64mib-result-v2" in f["results"] and "op7" in f["results"] for f in sat)
    # drive, workload, OP table, verdicts, assumptions, version, configs
    for text in (
        "Drives and workloads",
        "OP table",
        "Steady-state verdicts",
        "Model assumptions",
        f"opsim {__version__}",
        "samsung-840-pro-256gb",
        "4 KiB random 95:5 R:W",
        "Van Houdt",
        "&quot;pages_per_block&quot;: 256",
    ):
        assert text in html, text
    rows = {r["label"]: r for r in summary["op_table"]}
    assert rows["op7"]["waf"] > rows["op28"]["waf"] and rows["op28"]["tbw_rel"] > 1
    assert rows["op7"]["steady_iops"] < rows["op28"]["steady_iops"]
    assert rows["wsat-file-64mib-result-v2"]["kind"] == "measure"
    # endurance compares configurations of one drive: the functional result (another drive) is its own reference
    assert rows["functional"]["tbw_rel"] == rows["functional"]["dwpd_rel"] == 1.0
    assert rows["op28"]["reference"] == "op7"
    assert oct(os.stat(out).st_mode & 0o777) == oct(0o666 & ~_umask())


def _umask():
    m = os.umask(0)
    os.umask(m)
    return m


def chromium(args, tmp_path, timeout=120):
    argv = [
        chromium_binary(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=10000",
        *args,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


def console_lines(stderr: str) -> list[str]:
    """The page's console messages as Chromium logs them (every level is logged as CONSOLE)."""
    return [ln for ln in stderr.splitlines() if ":CONSOLE" in ln or "Uncaught" in ln]


def figures_state(dom: str) -> tuple[int, int]:
    m = re.search(r'<body[^>]*data-figures="(\d+)"[^>]*data-figures-loaded="(\d+)"', dom)
    assert m, "the page's load script did not run"
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow
@needs_chromium
def test_report_in_headless_chromium(built, tmp_path):
    out, summary = built
    url = out.resolve().as_uri()
    p = chromium(["--dump-dom", url], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    total, loaded = figures_state(p.stdout)
    assert total == loaded == len(summary["figures"]) > 0
    assert "Steady-state verdicts" in p.stdout
    assert console_lines(p.stderr) == [], console_lines(p.stderr)
    # a screenshot of the whole report, kept as a test artifact
    os.makedirs(ARTIFACTS, exist_ok=True)
    shot = os.path.join(ARTIFACTS, "report.png")
    if os.path.exists(shot):
        os.unlink(shot)
    p = chromium([f"--screenshot={shot}", "--window-size=1280,6000", url], tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    with open(shot, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    assert (width, height) == (1280, 6000)
    assert console_lines(p.stderr) == []


@pytest.mark.slow
@needs_chromium
def test_the_browser_check_catches_a_broken_figure(built, tmp_path):
    """The same check fails on a report whose figure does not decode: it is not vacuous."""
    out, _ = built
    html = out.read_text()
    broken = tmp_path / "broken.html"
    broken.write_text(re.sub(r'src="data:image/png;base64,[^"]{40}', 'src="data:image/png;base64,AAAA', html, count=1))
    p = chromium(["--dump-dom", broken.resolve().as_uri()], tmp_path)
    total, loaded = figures_state(p.stdout)
    assert loaded == total - 1
    assert any("did not load" in ln for ln in console_lines(p.stderr))


@pytest.mark.slow
def test_report_api_and_bad_input(result_files, tmp_path):
    docs = []
    for p in result_files[:2]:
        with open(p) as f:
            docs.append(json.load(f))
    summary = report.write(tmp_path / "api.html", docs, ["a", "b"], title="api")
    assert summary["results"] == ["a", "b"] and (tmp_path / "api.html").exists()
    target = tmp_path / "keep.html"
    target.write_text("old")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "something-else"}))
    p = subprocess.run([*OPSIM, "report", result_files[0], str(bad), "-o", str(target)], capture_output=True, text=True)
    assert p.returncode == 2 and f"{bad}: not an opsim result" in p.stderr and "Traceback" not in p.stderr
    assert target.read_text() == "old", "a failed report leaves the old file alone"
    p = subprocess.run(
        [*OPSIM, "report", str(tmp_path / "missing.json"), "-o", str(target)], capture_output=True, text=True
    )
    assert p.returncode == 2 and "missing.json: no such file" in p.stderr
    p = subprocess.run(
        [*OPSIM, "report", result_files[0], "-o", str(tmp_path / "nodir" / "r.html")], capture_output=True, text=True
    )
    assert p.returncode == 2 and "does not exist" in p.stderr
    with pytest.raises(Exception, match="labels"):
        report.build(docs, ["same", "same"])
