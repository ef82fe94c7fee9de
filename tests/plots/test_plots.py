"""Plots are checked on what they draw: axes, scales, every series' data against the result
documents, phase markers, model curves; and `opsim plot` end to end."""

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from opsim import models, plots
from opsim import results as R
from opsim.sim import simulate

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "measure")
MEASURED_V1 = os.path.join(FIXTURES, "wsat-file-64mib-result-v1.json")
MEASURED_V2 = os.path.join(FIXTURES, "wsat-file-64mib-result-v2.json")
NAND = 512 * 2**20
OPS = (0.07, 0.28, 0.50)


def timed_config(op, **run):
    """A small timed drive (the 840 Pro preset's timings, 512 blocks of 1 MiB) from fresh out of box."""
    return {
        "preset": "samsung-840-pro-256gb",
        "drive": {
            "physical_capacity": NAND,
            "user_capacity": int(NAND / (1 + op)) // 4096 * 4096,
            "pages_per_block": 256,
        },
        "timing": {"series_interval_s": 0.1},
        "run": {
            "precondition": "none",
            "warmup_drive_writes": 5,
            "measure_drive_writes": 2,
            "round_drive_writes": 0.25,
            **run,
        },
    }


@pytest.fixture(scope="module")
def sims():
    return [simulate(timed_config(op)).data for op in OPS]


@pytest.fixture(scope="module")
def functional():
    return simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64},
            "run": {"warmup_drive_writes": 1, "measure_drive_writes": 1},
        }
    ).data


@pytest.fixture(scope="module")
def measured():
    with open(MEASURED_V1) as f1, open(MEASURED_V2) as f2:
        return [json.load(f1), json.load(f2)]


def lines(ax, prefix):
    return {ln.get_gid(): ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith(prefix)}


def test_phases_exclude_fresh_out_of_box_rounds(sims):
    for doc in sims:
        ph = R.phases(doc)
        rounds = doc["timed"]["rounds"]
        assert ph["steady_reached"]
        # the window starts at a round boundary, every round in it erased blocks, and it holds the rule
        start = next(i for i, r in enumerate(rounds) if r["t_start_s"] == ph["steady_start_s"])
        win = rounds[start : start + 5]
        assert all(r["erases"] > 0 for r in win)
        iops = [r["iops"] for r in win]
        assert (max(iops) - min(iops)) / np.mean(iops) <= 0.20
        assert ph["steady_iops"] == pytest.approx(np.mean(iops))
        if ph["fob_end_s"] is not None:
            assert ph["steady_start_s"] >= ph["fob_end_s"] - doc["timed"]["rounds"][0]["t_end_s"]
    # the core's rule leaves the flat fresh-out-of-box plateau out (at 28% OP it once called the
    # plateau steady, window from 0 s)
    for doc in sims[:2]:
        ph = R.phases(doc)
        assert ph["steady_start_s"] == doc["timed"]["phases"]["steady_start_s"] > ph["fob_end_s"]
        assert ph["steady_start_s"] > 0.0


def test_saturation_against_time(sims):
    labels = [f"{op:.0%}" for op in OPS]
    fig = plots.saturation(sims, labels)
    (ax,) = fig.axes
    assert ax.get_yscale() == "log" and ax.get_xscale() == "linear"
    assert "time" in ax.get_xlabel() and "IOPS" in ax.get_ylabel()
    series = lines(ax, "series:")
    assert len(series) == 3
    for i, doc in enumerate(sims):
        pts = doc["timed"]["iops_series"]
        ln = series[f"series:{i}"]
        assert ln.get_label() == labels[i]
        np.testing.assert_allclose(ln.get_xdata(), [p["t_s"] for p in pts])
        np.testing.assert_allclose(ln.get_ydata(), [p["iops"] or np.nan for p in pts])
        ph = R.phases(doc)
        markers = lines(ax, "phase:")
        for phase in ("fob_end", "steady_start"):
            want = ph[f"{phase}_s"]
            gid = f"phase:{phase}:{i}"
            if want is None:
                assert gid not in markers
            else:
                assert markers[gid].get_xdata()[0] == pytest.approx(want)
    # at 50% OP the IOPS never fall to half the first interval's: no FOB marker
    assert R.phases(sims[2])["fob_end_s"] is None
    rec = plots.drawn(fig)[0]
    assert rec["kind"] == "saturation" and rec["yscale"] == "log" and not rec["skipped"]
    assert {(m["label"], m["phase"]) for m in rec["markers"]} == {
        ("7%", "fob_end"),
        ("7%", "steady_start"),
        ("28%", "fob_end"),
        ("28%", "steady_start"),
        ("50%", "steady_start"),
    }
    assert "spans" not in rec  # several results: no shading


@pytest.mark.slow
def test_one_result_shades_its_phases(sims):
    doc = sims[0]
    fig = plots.saturation([doc], ["7%"])
    (ax,) = fig.axes
    ph = R.phases(doc)
    spans = {s["phase"]: (s["x0"], s["x1"]) for s in plots.drawn(fig)[0]["spans"]}
    end = doc["timed"]["iops_series"][-1]["t_s"]
    assert spans == {
        "FOB": (0.0, ph["fob_end_s"]),
        "transition": (ph["fob_end_s"], ph["steady_start_s"]),
        "steady": (ph["steady_start_s"], end),
    }
    texts = {t.get_gid(): t.get_text() for t in ax.texts}
    assert texts == {"spanlabel:FOB": "FOB", "spanlabel:transition": "transition", "spanlabel:steady": "steady"}
    # FOB IOPS above the steady IOPS: the cliff
    pts = doc["timed"]["iops_series"]
    fob = [p["iops"] for p in pts if p["t_s"] < ph["fob_end_s"]]
    steady = [p["iops"] for p in pts if p["t_s"] > ph["steady_start_s"]]
    assert np.median(fob) > 3 * np.median(steady)


def test_saturation_against_data_written(sims):
    fig = plots.saturation(sims, x="written")
    (ax,) = fig.axes
    assert "drive writes" in ax.get_xlabel() and ax.get_yscale() == "log"
    for i, doc in enumerate(sims):
        x = lines(ax, "series:")[f"series:{i}"].get_xdata()
        assert np.all(np.diff(x) >= 0)
        # the series counts what the rounds count: every host byte written from fresh out of box
        written = sum(r["host_write_bytes"] for r in doc["timed"]["rounds"]) / doc["drive"]["user_bytes"]
        assert x[-1] == pytest.approx(written, rel=0.01)
        ph = R.phases(doc)
        if ph["fob_end_s"] is not None:  # phase markers placed at the data written by then
            t = np.array([p["t_s"] for p in doc["timed"]["iops_series"]])
            gx = lines(ax, "phase:")[f"phase:fob_end:{i}"].get_xdata()[0]
            assert gx == pytest.approx(np.interp(ph["fob_end_s"], t, x))
    # fresh out of box lasts at least until the free NAND is written: 1 + OP (seen by GC) drive writes
    rec = plots.drawn(fig)[0]
    for doc in sims[:2]:
        fob_x = next(m["x"] for m in rec["markers"] if m["phase"] == "fob_end" and m["label"] == R.default_label(doc))
        assert 1 + doc["op"]["effective"] < fob_x < 3


def test_simulated_and_measured_on_the_same_axes(sims, measured):
    fig = plots.saturation([sims[0], *measured], ["sim", "measured v1", "measured v2"])
    (ax,) = fig.axes
    rec = plots.drawn(fig)[0]
    assert [s["source"] for s in rec["series"]] == ["sim", "measure", "measure"]
    for i, m in enumerate(measured, start=1):
        ln = lines(ax, "series:")[f"series:{i}"]
        np.testing.assert_allclose(ln.get_xdata(), [p["t_s"] for p in m["iops_series"]])
        np.testing.assert_allclose(ln.get_ydata(), [p["iops"] for p in m["iops_series"]])
    # v1 documents have no phases: the timed model's FOB rule and the steady window are applied to them
    v1 = R.phases(measured[0])
    first = measured[0]["iops_series"][0]["iops"]
    expect = next((p["t_s"] for p in measured[0]["iops_series"] if p["iops"] < first / 2), None)
    assert v1["fob_end_s"] == expect and v1["steady_reached"] == measured[0]["steady_state"]["reached"]
    # v2 carries its own
    assert R.phases(measured[1])["fob_end_s"] == measured[1]["phases"]["fob_end_s"]
    # latency of both kinds on one CDF
    fig = plots.latency([sims[0], *measured], ["sim", "m1", "m2"])
    rec = plots.drawn(fig)[0]
    assert rec["series"][1]["x"] == [measured[0]["latency_us"][k] for k in ("p50", "p90", "p99", "p99.9", "p99.99")]
    assert rec["series"][2]["x"] == [
        measured[1]["latency_us"]["all"][k] for k in ("p50", "p90", "p99", "p99.9", "p99.99")
    ]


def test_waf_against_op_with_models(sims, measured):
    fig = plots.waf_op([*sims, measured[0]], ["7%", "28%", "50%", "measured"])
    (ax,) = fig.axes
    assert "OP" in ax.get_xlabel() and "WAF" in ax.get_ylabel()
    pts = lines(ax, "series:")["series:0"]
    np.testing.assert_allclose(pts.get_xdata(), [d["op"]["effective"] for d in sims])
    np.testing.assert_allclose(pts.get_ydata(), [d["waf"] for d in sims])
    mod = lines(ax, "model:")
    assert set(mod) == {"model:greedy:256", "model:fifo:None", "model:random:None"}
    x = mod["model:greedy:256"].get_xdata()
    assert x.min() < min(d["op"]["effective"] for d in sims) and x.max() > max(d["op"]["effective"] for d in sims)
    np.testing.assert_allclose(mod["model:greedy:256"].get_ydata(), [models.waf_greedy(o, 256) for o in x])
    np.testing.assert_allclose(mod["model:fifo:None"].get_ydata(), [models.waf_fifo(o) for o in x])
    np.testing.assert_allclose(mod["model:random:None"].get_ydata(), (1 + x) / x)
    # simulated greedy near the greedy curve (a short run from fresh out of box: within 10%), below random
    for d in sims:
        g = models.waf_greedy(d["op"]["effective"], 256)
        assert abs(d["waf"] - g) / g < 0.10 and d["waf"] < models.waf_random(d["op"]["effective"])
    rec = plots.drawn(fig)[0]
    assert [s["label"] for s in rec["skipped"]] == ["measured"]


def test_steady_iops_and_endurance_bars(sims):
    labels = ["7%", "28%", "50%"]
    fig = plots.steady_iops(sims, labels)
    (ax,) = fig.axes
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([R.phases(d)["steady_iops"] for d in sims])
    assert heights == sorted(heights), "more OP, more steady-state IOPS"
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == labels
    assert [t.get_text().split("\n")[1] for t in ax.get_xticklabels()] == [
        f"OP {d['op']['user'] * 100:.1f}%" for d in sims
    ]
    fig = plots.endurance(sims, labels)
    tbw_ax, dwpd_ax = fig.axes
    ref = sims[0]
    assert [p.get_height() for p in tbw_ax.patches] == pytest.approx([ref["waf"] / d["waf"] for d in sims])
    assert [p.get_height() for p in dwpd_ax.patches] == pytest.approx(
        [ref["waf"] * ref["drive"]["user_bytes"] / (d["waf"] * d["drive"]["user_bytes"]) for d in sims]
    )
    assert tbw_ax.patches[0].get_height() == 1.0 and "relative to 7%" in tbw_ax.get_ylabel()


def test_not_steady_bar_is_hatched():
    doc = simulate(timed_config(0.07, warmup_drive_writes=1, measure_drive_writes=0.25)).data
    assert not R.phases(doc)["steady_reached"]
    fig = plots.steady_iops([doc], ["short"])
    (bar,) = fig.axes[0].patches
    assert bar.get_hatch() == "//" and bar.get_height() == pytest.approx(doc["timed"]["measured_iops"])
    assert plots.drawn(fig)[0]["series"][0]["steady"] == [False]


def test_latency_cdf(sims):
    fig = plots.latency(sims, ["7%", "28%", "50%"])
    (ax,) = fig.axes
    assert ax.get_xscale() == "log" and ax.get_yscale() == "logit"
    for i, d in enumerate(sims):
        lat = d["timed"]["latency_us"]["all"]
        ln = lines(ax, "series:")[f"series:{i}"]
        np.testing.assert_allclose(ln.get_xdata(), [lat[k] for k in ("p50", "p90", "p99", "p99.9", "p99.99")])
        np.testing.assert_allclose(ln.get_ydata(), [0.5, 0.9, 0.99, 0.999, 0.9999])
        mx = lines(ax, "max:")[f"max:{i}"]
        assert mx.get_xdata()[0] == lat["max"] and mx.get_ydata()[0] == pytest.approx(1 - 0.5 / lat["count"])
    # more OP, shorter tail
    p999 = [d["timed"]["latency_us"]["all"]["p99.9"] for d in sims]
    assert p999[0] > p999[2]
    fig = plots.latency(sims[:1], direction="read")
    assert plots.drawn(fig)[0]["skipped"][0]["reason"].startswith("no read latency")


def test_wear_and_victims(sims):
    fig = plots.wear(sims, ["7%", "28%", "50%"])
    (ax,) = fig.axes
    for i, d in enumerate(sims):
        ln = lines(ax, "series:")[f"series:{i}"]
        h = d["wear"]["histogram"]
        assert list(ln.get_xdata()) == [c for c, _ in h]
        assert sum(ln.get_ydata()) == pytest.approx(1.0)
        assert np.dot(ln.get_xdata(), ln.get_ydata()) == pytest.approx(d["wear"]["mean"])
    fig = plots.victims(sims, ["7%", "28%", "50%"])
    (ax,) = fig.axes
    rec = plots.drawn(fig)[0]
    for i, d in enumerate(sims):
        ln = lines(ax, "series:")[f"series:{i}"]
        share = np.asarray(ln.get_ydata())
        assert share.sum() == pytest.approx(1.0)
        centers = np.asarray(ln.get_xdata())
        # the binned distribution keeps the mean valid fraction (to within one bin)
        width = 1.0 / min(200, 257)
        assert np.dot(centers, share) == pytest.approx(d["victims"]["mean_valid_fraction"], abs=width)
        model = 1 - 1 / models.waf_greedy(d["op"]["effective"], 256)
        assert lines(ax, "model:")[f"model:{i}"].get_xdata()[0] == pytest.approx(model)
        assert rec["series"][i]["model_mean_valid_fraction"] == pytest.approx(model)
    means = [d["victims"]["mean_valid_fraction"] for d in sims]
    assert means == sorted(means, reverse=True), "more OP, emptier victims"


def test_panels_one_per_result(sims):
    fig = plots.plot("saturation-panels", sims, ["7%", "28%", "50%"])
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 3
    for ax, _d in zip(visible, sims):
        rec = ax.opsim_drawn
        assert ax.get_title() == rec["series"][0]["label"] and ax.get_yscale() == "log"
        assert {s["phase"] for s in rec["spans"]} >= {"steady"}
    assert len({ax.get_ylim() for ax in visible}) == 1, "the same y axis on every panel"


def test_functional_results_and_simresult_plot(functional, sims):
    fig = plots.saturation([functional], ["functional"])
    rec = plots.drawn(fig)[0]
    assert rec["series"] == [] and "functional simulation" in rec["skipped"][0]["reason"]
    # functional results still have WAF, wear and victims
    for kind in ("waf-op", "wear", "victims"):
        rec = plots.drawn(plots.plot(kind, [functional], ["functional"]))[0]
        assert len(rec["series"]) == 1 and not rec["skipped"]
    r = simulate(timed_config(0.28))
    fig = r.plot("waf-op")
    assert len(plots.drawn(fig)[0]["series"]) == 1
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    own = Figure()
    FigureCanvasAgg(own)
    ax = own.add_subplot()
    assert r.plot("latency", ax=ax) is own and ax.opsim_drawn["kind"] == "latency"
    with pytest.raises(Exception, match="kind"):
        r.plot("nope")


OPSIM = [sys.executable, "-m", "opsim.cli"]


def run(*args):
    return subprocess.run(OPSIM + list(args), capture_output=True, text=True)


@pytest.mark.slow
def test_plot_command(tmp_path, sims, functional, measured):
    paths = []
    for i, d in enumerate([*sims[:2], functional]):
        p = tmp_path / f"r{i}.json"
        p.write_text(json.dumps(d))
        paths.append(str(p))
    out = tmp_path / "wsat.png"
    p = run("plot", "saturation", *paths[:2], MEASURED_V2, "-o", str(out), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["output"] == str(out) and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (axes,) = doc["axes"]
    assert [s["label"] for s in axes["series"]] == ["r0", "r1", "wsat-file-64mib-result-v2"]
    assert axes["series"][0]["y"] == [pt["iops"] for pt in sims[0]["timed"]["iops_series"]]
    assert axes["yscale"] == "log"
    # the table for people
    p = run("plot", "waf-op", *paths, "-o", str(tmp_path / "waf.svg"), "--labels", "a,b,c")
    assert p.returncode == 0, p.stderr
    assert "greedy, mean field" in p.stdout and "written to" in p.stdout
    assert (tmp_path / "waf.svg").read_text().lstrip().startswith("<?xml")


@pytest.mark.slow
def test_plot_command_bad_input(tmp_path, functional):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    p = run("plot", "wear", str(bad), "-o", str(tmp_path / "x.png"))
    assert p.returncode == 2 and str(bad) in p.stderr and "not JSON" in p.stderr
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"hello": 1}))
    p = run("plot", "wear", str(other), "-o", str(tmp_path / "x.png"))
    assert p.returncode == 2 and f"{other}: not an opsim result" in p.stderr
    f = tmp_path / "f.json"
    f.write_text(json.dumps(functional))
    p = run("plot", "saturation", str(f), "-o", str(tmp_path / "x.png"))
    assert p.returncode == 2 and "nothing to draw" in p.stderr
    assert not (tmp_path / "x.png").exists()
    p = run("plot", "wear", str(f), "-o", str(tmp_path / "x.gif"))
    assert p.returncode == 2 and ".png, .svg or .pdf" in p.stderr
    p = run("plot", "wear", str(f), "-o", str(tmp_path / "x.png"), "--labels", "a,b")
    assert p.returncode == 2 and "--labels" in p.stderr
    assert "Traceback" not in p.stderr
    assert math.isfinite(functional["waf"])
