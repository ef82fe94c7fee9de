"""The zoned-WAF figures of docs/workloads.md are of the drives as opsim describes them now, and
the tables beside them say what the figures' data say (no simulation: the figures are made by
``make docs-figures``; this catches a preset's refit or a hand edit leaving them behind)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from opsim.validation.zoned import drive_of

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ("zoned-waf", "zoned-waf-7450")


def _table_after(doc: str, figure: str) -> list[list[str]]:
    """The cells of the first markdown table after the figure's image (its header and rule left out)."""
    rows: list[list[str]] = []
    for ln in doc[doc.index(f"(figures/{figure}.svg)") :].splitlines():
        if ln.startswith("|"):
            rows.append([c.strip() for c in ln.strip("|").split("|")])
        elif rows:
            break
    return rows[2:]


@pytest.mark.parametrize("figure", FIGURES)
def test_the_figure_is_of_the_drive_as_described_now(figure):
    data = json.loads((ROOT / "docs" / "figures" / f"{figure}.json").read_text())
    assert data["drive"] == drive_of(data["config"]), f"{figure}: regenerate it with `make docs-figures`"


@pytest.mark.parametrize("figure", FIGURES)
def test_the_table_is_the_figure_s_data(figure):
    data = json.loads((ROOT / "docs" / "figures" / f"{figure}.json").read_text())
    doc = (ROOT / "docs" / "workloads.md").read_text()
    actives = sorted({p["active_zones"] for p in data["points"]})
    sizes = sorted({p["zone_size"] for p in data["points"]})
    waf = {(p["zone_size"], p["active_zones"]): p["waf"] for p in data["points"]}
    rows = _table_after(doc, figure)
    assert len(rows) == len(sizes)
    for row, size in zip(rows, sizes):
        cells = [float(re.match(r"[0-9.]+", c).group()) for c in row[1 : 1 + len(actives)]]  # type: ignore[union-attr]
        assert cells == [round(waf[size, a], 3) for a in actives], (figure, row)
