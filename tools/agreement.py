"""What the screen-against-simulator tables (tools/skew_agreement.py, tools/mix_agreement.py) share:
their arguments, the table's head, and the grid level nearest each held-back share."""

from __future__ import annotations

from fractions import Fraction

from opsim._output import markdown_table
from opsim.planner import advise as A


def arguments(argv: list[str], presets: str, workloads: str, held_back: str) -> tuple[list, list, list]:
    """(presets, workloads, held-back fractions) from ``[PRESETS [WORKLOADS [HELD_BACK]]]``, each
    comma-separated, the defaults where left out."""
    given = [*argv, None, None, None]
    p, w, h = (given[i] or default for i, default in enumerate((presets, workloads, held_back)))
    return p.split(","), w.split(","), [Fraction(x) for x in h.split(",")]


def head(columns: list[str], aligns: str) -> None:
    """The markdown table's head: ``columns``, each aligned as its letter of ``aligns`` says (l, r);
    the rows follow one by one as they are simulated."""
    print(markdown_table(columns, aligns, []))


def nearest_levels(drive, held: list[Fraction]) -> list:
    """The advisor's grid level (0.5% steps up to 75% held back) nearest each share of ``held``."""
    levels = A.grid(drive, Fraction(1, 200), Fraction(3, 4))
    return [min(levels, key=lambda lv: abs(lv.held_back - h)) for h in held]
