"""``opsim report --compare``: the "Buy or over-provision" section from a fleet comparison,
with or without simulation results."""

import contextlib
import io
import json
from pathlib import Path

import pytest

from opsim import cli, report

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "compare-small.toml"


def main(argv) -> int:
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


@pytest.fixture(scope="module")
def comparison(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cmp") / "cmp.json"
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["advise", "--compare", str(FIXTURE), "--no-simulate", "--json"]) == 0
    out.write_text(buf.getvalue())
    return out


def test_a_report_of_a_comparison_alone(comparison, tmp_path, capsys):
    html = tmp_path / "r.html"
    assert main(["report", "--compare", str(comparison), "-o", str(html)]) == 0
    out = capsys.readouterr().out
    d = json.loads(comparison.read_text())
    assert f"choice {d['choice']['name']}" in out
    text = html.read_text()
    assert "<h2>Buy or over-provision</h2>" in text
    for c in d["candidates"]:
        assert c["name"] in text
    assert text.count("<figure") == 1 and "Cost per usable TB-year: compare-small.toml" in text
    assert f"Choice: {d['choice']['why']}"[:60] in text.replace("&#x27;", "'")


def test_the_api_puts_the_section_beside_results_and_says_what_it_drew(comparison, tmp_path):
    d = json.loads(comparison.read_text())
    summary = report.write(tmp_path / "r.html", [], context={"comparisons": [d]})
    assert summary["comparisons"] == [{"file": d["file"], "choice": d["choice"]}]
    assert [f["kind"] for f in summary["figures"]] == ["fleet-cost"]


def test_nothing_to_report_is_refused(tmp_path, capsys):
    assert main(["report", "-o", str(tmp_path / "r.html")]) == 2
    assert "--compare" in capsys.readouterr().err
    with pytest.raises(Exception, match="no results for the report"):
        report.build([])
