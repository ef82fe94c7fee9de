"""opsim measure --smart: the steady window's WAF from SMART snapshots around each round's
tracked run, with the uncertainty the run shows (python/opsim/measure/smart_window.py), and
calibrate fitting it with that uncertainty.

fio is replaced by its recorded output (tests/fixtures/measure) and smartctl by a real Micron
5300's ``smartctl -j`` document whose counters move by what each round is made to write."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

import recorded_fio
from opsim.calibrate import read_measured
from opsim.measure import runner
from opsim.measure.smart_window import MIN_SIGMA, Checkpoints, steady

FIX = Path(__file__).parent.parent / "fixtures" / "measure"
MICRON = FIX / "smartctl_exporter__sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK240TDS-sda.json"
# Micron's rule (smart/rules.py): WAF = (host program pages 247 + FTL program pages 248) / 247
HOST_PAGES = 2_000_000  # per round


def _fake_fio(monkeypatch, calls: list):
    recorded_fio.replay(monkeypatch, lambda argv: calls.append("fio"))


class FakeDrive:
    """A drive whose SMART counters move only while fio runs: each run adds HOST_PAGES host
    pages and (waf - 1) times that of GC pages, the WAF of the run taken from ``wafs``."""

    def __init__(self, wafs: list[float], calls: list):
        self.doc = json.loads(MICRON.read_text())
        self.wafs, self.calls, self.runs = list(wafs), calls, 0

    def _bump(self, attr: int, n: int) -> None:
        for a in self.doc["ata_smart_attributes"]["table"]:
            if a["id"] == attr:
                a["raw"]["value"] += n
                a["raw"]["string"] = str(a["raw"]["value"])

    def take(self, device: str) -> dict:
        # every fio run since the last snapshot moves the counters
        while self.runs < self.calls.count("fio"):
            waf = self.wafs[self.runs % len(self.wafs)]
            self._bump(246, HOST_PAGES * 8)  # host LBAs of 512 B
            self._bump(247, HOST_PAGES)
            self._bump(248, round(HOST_PAGES * (waf - 1)))
            self.runs += 1
        self.calls.append("smart")
        return {"format": "opsim-smart-snapshot", "smartctl": json.loads(json.dumps(self.doc))}


def _run(tmp_path, monkeypatch, wafs, test="iops", capacity_multiple=2.0):
    calls: list = []
    _fake_fio(monkeypatch, calls)
    drive = FakeDrive(wafs, calls)
    out = tmp_path / "out"
    out.mkdir()
    cps = Checkpoints("/dev/sdX", str(out), drive.take)
    plan = runner.Plan(
        test=test,
        target="/dev/sdX",
        target_kind="block",
        capacity_bytes=256 * 2**20,
        outdir=str(out),
        round_s=20,
        bs=("4k",),
        capacity_multiple=capacity_multiple,
        checkpoint=cps,
    )
    result = runner.run(plan, runner.Progress("off"))
    return result, cps, calls, out


WAFS = [3.0, 3.1, 2.9, 3.05, 2.95, 3.02, 2.98]


def test_the_steady_window_waf_is_the_window_rounds_own(tmp_path, monkeypatch):
    result, cps, calls, out = _run(tmp_path, monkeypatch, WAFS)
    lo, hi = result["measurement_window"]["rounds"]
    assert result["steady_state"]["reached"] and hi - lo + 1 == 5
    s = steady(result, cps)
    assert s["available"] and s["rounds"] == [lo, hi]
    window = [WAFS[(i - 1) % len(WAFS)] for i in range(lo, hi + 1)]
    # each round's WAF is what the drive wrote during that round's fio run
    assert s["per_round"] == pytest.approx(window, rel=1e-6)
    assert [r["waf"] for r in result["rounds"]] == pytest.approx(WAFS[: len(result["rounds"])], rel=1e-6)
    assert s["waf"] == pytest.approx(sum(window) / len(window), rel=1e-6)
    spread = statistics.stdev(window) / s["waf"] / math.sqrt(len(window))
    assert s["spread"] == pytest.approx(spread, rel=1e-6)
    # whole pages: the counters' resolution is negligible here, so the spread sets sigma
    assert s["resolution"] < 1e-5 and s["sigma"] == pytest.approx(max(MIN_SIGMA, spread), rel=1e-3)
    # the iops test: a snapshot before and after each round's tracked run, kept as files
    assert calls[:5] == ["smart", "fio", "smart", "smart", "fio"]
    assert (out / "smart-before-002.json").exists() and (out / "smart-after-002.json").exists()


def test_a_steady_drive_gets_the_floor(tmp_path, monkeypatch):
    result, cps, _, _ = _run(tmp_path, monkeypatch, [3.0])
    s = steady(result, cps)
    assert s["waf"] == pytest.approx(3.0, rel=1e-6) and s["spread"] == pytest.approx(0, abs=1e-9)
    assert s["sigma"] == MIN_SIGMA


def test_wsat_rounds_share_their_snapshots(tmp_path, monkeypatch):
    # each recorded fio round writes 10.4 GB: four rounds over 256 MiB
    result, cps, calls, _ = _run(tmp_path, monkeypatch, WAFS, test="wsat", capacity_multiple=150)
    n = len(result["rounds"])
    assert n == 4
    # one snapshot before the first round, one after each: consecutive rounds share theirs
    assert calls.count("smart") == n + 1
    s = steady(result, cps)
    assert s["available"] and len(s["per_round"]) == n


def test_a_drive_without_nand_counters_says_so(tmp_path, monkeypatch):
    result, cps, _, _ = _run(tmp_path, monkeypatch, WAFS)
    for snap in cps.snaps.values():  # only the host counter left
        table = snap["smartctl"]["ata_smart_attributes"]["table"]
        table[:] = [a for a in table if a["id"] not in (247, 248)]
    s = steady(result, cps)
    assert not s["available"] and s["waf"] is None and s["reason"]


def test_a_failed_snapshot_does_not_stop_the_run(tmp_path, monkeypatch):
    from opsim.errors import CommandError

    calls: list = []
    _fake_fio(monkeypatch, calls)

    def broken(dev):
        raise CommandError("smartctl went away")

    out = tmp_path / "o"
    out.mkdir()
    cps = Checkpoints("/dev/sdX", str(out), broken)
    plan = runner.Plan(
        test="iops", target="/dev/sdX", target_kind="block", capacity_bytes=2**28, outdir=str(out), checkpoint=cps
    )
    result = runner.run(plan, runner.Progress("off"))
    assert result["rounds"] and "smartctl went away" in cps.errors[0]
    s = steady(result, cps)
    assert not s["available"] and "no SMART snapshot" in s["reason"]


def _measure_doc(smart: dict) -> dict:
    return {
        "schema": "opsim-measure",
        "test": "iops",
        "target": {"span_bytes": 240 * 10**9, "kind": "block"},
        "parameters": {"bs": ["4k"], "rwmix": ["0/100"], "iodepth": 32, "numjobs": 1},
        "steady_state": {"reached": True},
        "steady_iops": 20000.0,
        "smart": smart,
    }


def test_calibrate_fits_the_steady_waf_with_the_runs_sigma(tmp_path):
    p = tmp_path / "result.json"
    p.write_text(
        json.dumps(
            _measure_doc(
                {
                    "waf": 1.8,  # the whole run, preconditioning included
                    "available": True,
                    "steady": {"available": True, "waf": 3.02, "sigma": 0.013, "rounds": [4, 8], "reason": None},
                }
            )
        )
    )
    figs, _ = read_measured(str(p))
    waf = next(f for f in figs if f.kind == "waf")
    assert (waf.value, waf.sigma) == (3.02, 0.013) and "rounds 4-8" in waf.source


def test_calibrate_does_not_fit_a_whole_run_waf(tmp_path):
    """A result of an earlier opsim has one SMART interval over the whole run: not a steady WAF."""
    p = tmp_path / "result.json"
    p.write_text(json.dumps(_measure_doc({"waf": 1.8, "available": True})))
    figs, info = read_measured(str(p))
    assert [f.kind for f in figs] == ["steady_iops"]
    assert any("not a steady state" in n for n in info["notes"])
