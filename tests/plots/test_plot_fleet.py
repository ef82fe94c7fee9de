"""The fleet-cost plot: cost per usable TB-year against the share held back, one line per
candidate of ``opsim advise --compare --json`` (tests/fixtures/compare-small.toml, screened)."""

import contextlib
import io
import json
from pathlib import Path

import pytest

from opsim import cli, plots

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "compare-small.toml"


def main(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    out = tmp_path_factory.mktemp("cmp") / "cmp.json"
    f = tmp_path_factory.mktemp("in") / "fleet.toml"
    # a third candidate the need cannot be met with: drawn, its answer skipped
    f.write_text(
        FIXTURE.read_text() + '[[candidate]]\nname = "worn"\npreset = "sandisk-x400-256gb"\npe = 5\nprice = 1\n'
    )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["advise", "--compare", str(f), "--no-simulate", "--json"]) == 0
    out.write_text(buf.getvalue())
    return out, json.loads(buf.getvalue())


def test_one_line_per_candidate_the_answer_and_the_choice(comparison):
    _, d = comparison
    fig = plots.plot("fleet-cost", [d])
    (rec,) = plots.drawn(fig)
    assert rec["kind"] == "fleet-cost" and rec["xlabel"] == "share of the native capacity held back"
    assert [s["label"] for s in rec["series"]] == [c["name"] for c in d["candidates"]]
    for s, c in zip(rec["series"], d["candidates"]):
        assert s["x"] == [p["held_back"] for p in c["curve"]]
        assert s["y"] == [p["cost_per_usable_tb_year"] for p in c["curve"]]
        assert s["meets"] == [p["meets"] for p in c["curve"]]
    marks = {m["label"]: m for m in rec["markers"]}
    choice = d["choice"]["name"]
    assert marks[choice]["phase"] == "choice"
    assert marks[choice]["y"] == d["candidates"][0]["cost_per_usable_tb_year"]
    assert "worn" not in marks
    assert {"label": "worn: answer", "reason": "cannot meet the need at any OP allowed"} in rec["skipped"]


def test_the_cli_draws_it_and_refuses_other_documents(comparison, tmp_path, capsys):
    path, _ = comparison
    png = tmp_path / "fleet.png"
    assert main(["plot", "fleet-cost", str(path), "-o", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    other = tmp_path / "other.json"
    other.write_text('{"schema": "opsim-trace-profile", "curve": []}')
    capsys.readouterr()
    assert main(["plot", "fleet-cost", str(other), "-o", str(tmp_path / "x.png")]) == 2
    assert "not a fleet comparison" in capsys.readouterr().err
