"""Data placement in plots and the report (issue 15): per-tenant WAF bars (`tenants`), WAF
against OP by placement mode (`placement-waf`), and the report's data-placement section, from
small simulations of examples/fdp-blender.toml (1 GiB instead of 8 GiB, short runs)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import opsim
from opsim import plots, report
from opsim.errors import InputError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BLENDER = os.path.join(ROOT, "examples", "fdp-blender.toml")
MEASURED = os.path.join(ROOT, "tests", "fixtures", "measure", "wsat-file-64mib-result-v2.json")
OPSIM = [sys.executable, "-m", "opsim.cli"]
TENANTS = ["seq-4k", "seq-16k", "seq-64k", "seq-256k"]


def blender(mode: str, op: float = 0.07) -> str:
    """examples/fdp-blender.toml at 1 GiB with short runs, placement ``mode`` and OP ``op``."""
    with open(BLENDER) as f:
        text = f.read()
    for old, new in (
        ('user_capacity = "8GiB"', 'user_capacity = "1GiB"'),
        ("op = 0.07", f"op = {op}"),
        ('mode = "none"', f'mode = "{mode}"'),
        ("warmup_drive_writes = 4", "warmup_drive_writes = 1"),
        ("measure_drive_writes = 2", "measure_drive_writes = 0.5"),
        ("round_drive_writes = 0.5", "round_drive_writes = 0.25"),
    ):
        assert old in text, f"examples/fdp-blender.toml no longer has {old!r}"
        text = text.replace(old, new)
    return text


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Result files: the blender without and with FDP at 7% and 28% OP, and a plain drive."""
    d = tmp_path_factory.mktemp("placement")
    out = {}
    for mode in ("none", "fdp"):
        for op in (0.07, 0.28):
            cfg = d / f"{mode}-{round(op * 100)}.toml"
            cfg.write_text(blender(mode, op))
            path = d / f"{mode}-{round(op * 100)}.json"
            path.write_text(json.dumps(opsim.simulate(str(cfg)).data))
            out[(mode, op)] = str(path)
    plain = opsim.simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64},
            "run": {"warmup_drive_writes": 1, "measure_drive_writes": 0.5},
        }
    ).data
    out["plain"] = str(d / "plain.json")
    with open(out["plain"], "w") as f:
        json.dump(plain, f)
    return out


@pytest.fixture(scope="module")
def docs(files):
    loaded = {}
    for k, p in files.items():
        with open(p) as f:
            loaded[k] = json.load(f)
    return loaded


def bars(ax):
    """The bar containers of the tenants plot, by result."""
    return [c for c in ax.containers if (c.get_label() or "") and not c.get_label().startswith("_")]


def test_the_small_blender_still_shows_the_effect(docs):
    # the figures below are about something: without placement the tenants' WAF differ and the
    # drive's is well above 1; with one FDP handle per tenant every WAF is about 1
    none, fdp = docs[("none", 0.07)], docs[("fdp", 0.07)]
    assert none["placement"]["mode"] == "none" and fdp["placement"]["mode"] == "fdp"
    assert none["waf"] >= 1.2 and fdp["waf"] <= 1.05
    assert [n["name"] for n in none["namespaces"]] == TENANTS


def test_tenants_bars_one_group_per_namespace_one_bar_per_result(docs):
    none, fdp = docs[("none", 0.07)], docs[("fdp", 0.07)]
    fig = plots.plot("tenants", [none, fdp])
    (ax,) = fig.axes
    groups = bars(ax)
    assert len(groups) == 2 and all(len(g) == 4 for g in groups)
    for g, d in zip(groups, (none, fdp)):
        np.testing.assert_allclose([b.get_height() for b in g], [n["waf"] for n in d["namespaces"]])
    # the bars of each namespace sit side by side in its group
    centers = np.array([[b.get_x() + b.get_width() / 2 for b in g] for g in groups])
    assert np.all(centers[0] < centers[1]) and np.all(np.abs(centers - np.arange(4)) < 0.4)
    # labelled by placement mode; the x axis by namespace
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:2] == ["placement none", "placement fdp, 4 handles"]
    assert "drive WAF (all namespaces)" in legend
    assert [t.get_text().split("\n")[0] for t in ax.get_xticklabels()] == TENANTS
    assert "WAF" in ax.get_ylabel() and "namespace" in ax.get_xlabel()
    # the drive WAF of each result as a dashed line at its height
    drive = {c.get_gid(): c for c in ax.collections if (c.get_gid() or "").startswith("drive:")}
    assert set(drive) == {"drive:0", "drive:1"}
    for i, d in enumerate((none, fdp)):
        (seg,) = drive[f"drive:{i}"].get_segments()
        assert seg[0][1] == pytest.approx(d["waf"]) and seg[1][1] == pytest.approx(d["waf"])
    rec = plots.drawn(fig)[0]
    assert rec["kind"] == "tenants"
    assert [s["placement"] for s in rec["series"]] == ["none", "fdp"]
    assert [s["drive_waf"] for s in rec["series"]] == [none["waf"], fdp["waf"]]
    assert rec["series"][0]["x"] == TENANTS and rec["skipped"] == []


def test_tenants_labels_option_and_default_labels(docs):
    none7, fdp7, none28 = docs[("none", 0.07)], docs[("fdp", 0.07)], docs[("none", 0.28)]
    fig = plots.tenants([none7, fdp7], labels=["blender", "FDP"])
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["blender (placement none)", "FDP"]
    assert [s["label"] for s in plots.drawn(fig)[0]["series"]] == ["blender", "FDP"]
    # two results with the same placement: the OP tells them apart
    fig = plots.tenants([none7, none28])
    assert [s["label"] for s in plots.drawn(fig)[0]["series"]] == [
        "placement none, OP 7.0%",
        "placement none, OP 28.0%",
    ]
    assert len(bars(fig.axes[0])) == 2


def test_tenants_without_namespaces_is_a_clear_input_error(docs):
    with pytest.raises(InputError) as e:
        plots.plot("tenants", [docs[("none", 0.07)], docs["plain"]], ["blender", "plain drive"])
    msg = str(e.value)
    assert "result 2 (plain drive)" in msg and "no namespaces" in msg and "[[namespace]]" in msg
    assert e.value.key == "results"
    with open(MEASURED) as f:
        measured = json.load(f)
    with pytest.raises(InputError, match=r"result 1 .*measured result has no per-namespace WAF"):
        plots.tenants([measured])


def test_placement_waf_one_line_per_mode(docs):
    runs = [docs[(m, op)] for op in (0.28, 0.07) for m in ("none", "fdp")]
    fig = plots.plot("placement-waf", runs)
    (ax,) = fig.axes
    lines = {ln.get_gid(): ln for ln in ax.get_lines() if (ln.get_gid() or "").startswith("series:")}
    assert set(lines) == {"series:0", "series:1"}
    assert [lines[g].get_label() for g in ("series:0", "series:1")] == ["placement none", "placement fdp"]
    for gid, mode in (("series:0", "none"), ("series:1", "fdp")):
        ln = lines[gid]
        assert ln.get_linestyle() == "-"  # joined in OP order
        ds = sorted((d for d in runs if d["placement"]["mode"] == mode), key=lambda d: d["op"]["effective"])
        np.testing.assert_allclose(ln.get_xdata(), [d["op"]["effective"] for d in ds])
        np.testing.assert_allclose(ln.get_ydata(), [d["waf"] for d in ds])
    rec = plots.drawn(fig)[0]
    assert rec["kind"] == "placement-waf" and rec["models"] == []
    assert [s["placement"] for s in rec["series"]] == ["none", "fdp"]
    assert "garbage collection" in ax.get_xlabel()
    # more OP lowers WAF without placement; FDP is below at every OP
    none, fdp = rec["series"]
    assert none["y"][0] > none["y"][1] and all(f < n for f, n in zip(fdp["y"], none["y"]))


def test_placement_waf_user_op_and_models(docs):
    runs = [docs[(m, op)] for m in ("none", "fdp") for op in (0.07, 0.28)]
    fig = plots.placement_waf(runs, op="user", models=("greedy",))
    rec = plots.drawn(fig)[0]
    assert rec["series"][0]["x"] == sorted(d["op"]["user"] for d in runs[:2])
    assert "as configured" in fig.axes[0].get_xlabel()
    assert rec["models"] == []  # the models are functions of the OP GC sees: not on this axis
    fig = plots.placement_waf(runs, models=("greedy",))
    assert [m["name"] for m in plots.drawn(fig)[0]["models"]] == ["greedy, mean field (Van Houdt 2013), b = 256"]
    with pytest.raises(InputError, match="op: 'native'"):
        plots.placement_waf(runs, op="native")
    # two FDP isolations among the results: a line each, named by it
    persistent = [{**d, "placement": {**d["placement"], "isolation": "persistently"}} for d in runs[2:]]
    rec = plots.drawn(plots.placement_waf(runs + persistent))[0]
    assert [s["label"] for s in rec["series"]] == [
        "placement none",
        "placement fdp, isolated initially",
        "placement fdp, isolated persistently",
    ]
    # waf-op keeps the modes apart too (as markers), and names the tenants, not the unused workload
    rec = plots.drawn(plots.waf_op(runs))[0]
    assert [s["label"] for s in rec["series"]] == [
        "greedy, 4 tenants: seq-4k, seq-16k, seq-64k, seq-256k",
        "greedy, 4 tenants: seq-4k, seq-16k, seq-64k, seq-256k, placement fdp",
    ]


def test_a_sweep_over_placement_mode_feeds_the_plot(tmp_path):
    grid = tmp_path / "grid.toml"
    grid.write_text(
        blender("none")
        + '\n[sweep]\ndocuments = true\n[sweep.grid]\n"drive.op" = [0.07, 0.2]\n"ftl.placement.mode" = ["none", "fdp"]\n'
    )
    df = opsim.sweep(str(grid), str(tmp_path / "grid.parquet"), workers=0)
    assert list(df["ftl.placement.mode"]) == ["none", "fdp", "none", "fdp"]
    results = [json.loads(s) for s in df["result_json"]]
    rec = plots.drawn(plots.plot("placement-waf", results))[0]
    assert [(s["label"], len(s["x"])) for s in rec["series"]] == [("placement none", 2), ("placement fdp", 2)]


@pytest.mark.slow
def test_report_has_the_placement_section(docs):
    keys = [("none", 0.07), ("fdp", 0.07), ("none", 0.28), ("fdp", 0.28)]
    labels = ["none 7%", "fdp 7%", "none 28%", "fdp 28%"]
    text, summary = report.build([docs[k] for k in keys], labels)
    assert "<h2>Data placement and tenants</h2>" in text
    section = text[text.index("Data placement and tenants") : text.index("Steady-state verdicts")]
    for name in TENANTS:
        assert f"<td>{name}</td>" in section
    # the per-namespace table: a row per namespace and one with their sum, whose WAF is the drive's
    rows = summary["namespaces"]
    assert len(rows) == 4 * 5
    for k, lab in zip(keys, labels):
        d = docs[k]
        mine = [r for r in rows if r["label"] == lab]
        assert [r["namespace"] for r in mine] == [*TENANTS, None]
        for r, n in zip(mine, d["namespaces"]):
            assert r["waf"] == n["waf"] and r["host_write_bytes"] == n["host_write_bytes"]
            assert r["capacity_share"] == pytest.approx(0.25) and r["placement"] == k[0]
        total = mine[-1]
        assert total["total"] and total["waf"] == pytest.approx(d["waf"], rel=1e-9)
        assert total["handles"] == ([0, 1, 2, 3] if k[0] == "fdp" else [])
    assert {r["label"] for r in summary["handles"]} == {"fdp 7%", "fdp 28%"}
    assert "media bytes with metadata written" in section  # the FDP statistics log's terms
    # the figures: tenant bars of all four and WAF against OP by placement, in the section, numbered first
    figs = summary["figures"]
    assert [f["kind"] for f in figs[:2]] == ["tenants", "placement-waf"]
    assert figs[0]["results"] == labels and figs[1]["results"] == labels
    assert section.count("<img ") == 2 and 'id="fig-1"' in section and 'id="fig-2"' in section
    assert len(re.findall(r'<figure id="fig-(\d+)"', text)) == len(figs)
    # the workload is the tenants', not the config's unused top-level one
    assert "4 tenants: seq-4k" in text and all(r["workload"].startswith("4 tenants") for r in summary["op_table"])


@pytest.mark.slow
def test_report_sections_follow_the_results(docs):
    # no namespaces, one placement mode: no section, no placement figure
    text, summary = report.build([docs["plain"]], ["plain"])
    assert "Data placement" not in text and summary["namespaces"] == [] and summary["handles"] == []
    assert not {"tenants", "placement-waf"} & {f["kind"] for f in summary["figures"]}
    # namespaces of one mode: the table and tenant bars, no WAF-against-OP-by-placement figure
    text, summary = report.build([docs[("none", 0.07)], docs[("none", 0.28)]], ["7%", "28%"])
    assert "Data placement and tenants" in text
    kinds = [f["kind"] for f in summary["figures"]]
    assert kinds.count("tenants") == 1 and "placement-waf" not in kinds
    # a result without namespaces beside ones with them: the bars only of those with them
    text, summary = report.build([docs[("fdp", 0.07)], docs["plain"]], ["fdp", "plain"])
    tenants = [f for f in summary["figures"] if f["kind"] == "tenants"]
    assert [f["results"] for f in tenants] == [["fdp"]]
    assert [f["results"] for f in summary["figures"] if f["kind"] == "placement-waf"] == [["fdp", "plain"]]


def run(*args):
    return subprocess.run([*OPSIM, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_plot_and_report_commands(files, tmp_path):
    none, fdp = files[("none", 0.07)], files[("fdp", 0.07)]
    out = tmp_path / "tenants.png"
    p = run("plot", "tenants", none, fdp, "-o", str(out), "--labels", "blender,FDP", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["kind"] == "tenants" and [s["label"] for s in doc["axes"][0]["series"]] == ["blender", "FDP"]
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    p = run("plot", "tenants", files["plain"], "-o", str(tmp_path / "x.png"))
    assert p.returncode == 2 and "no namespaces" in p.stderr and not (tmp_path / "x.png").exists()
    html = tmp_path / "r.html"
    p = run("report", none, fdp, files[("none", 0.28)], files[("fdp", 0.28)], "-o", str(html), "--json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    assert [f["kind"] for f in summary["figures"][:2]] == ["tenants", "placement-waf"]
    assert "Data placement and tenants" in html.read_text()
