"""What a fleet costs: the drives, their bays and their power over the years, and that cost per
usable TB-year.

* drives: ``n x price``, bought once;
* bays (``slots``, the cost of one drive bay: its share of a server or an enclosure): ``n x slots``;
* power: ``n x watts_active`` drawn all the time (the active figure of a datasheet, an upper
  bound: a drive idles part of the day) for ``years`` of 365 days, ``n x W x 24 x 365 x years /
  1000`` kWh at ``power_cost_per_kwh``;
* per usable TB-year: the total over the need's usable TB (decimal, 10^12 bytes) times
  ``years``: what each TB the service needs costs a year.  The need's TB, not the fleet's
  (``n`` drives hold at least the need, a little more where ``n`` rounds up): a fleet that rounds
  up further costs more for the same need, and ranks so.

Same currency throughout (the file's); nothing discounted (no interest, no residual value).
"""

from __future__ import annotations

from ..endurance import DAYS_PER_YEAR, TB
from .compare_file import Candidate, Need

HOURS_PER_YEAR = 24 * DAYS_PER_YEAR


def fleet_cost(cand: Candidate, need: Need, n: int) -> dict:
    """The cost of ``n`` drives of ``cand`` over the need's years: each part (None where not
    given), the total and the total per usable TB-year."""
    drives = n * cand.price
    bays = None if cand.slots is None else n * cand.slots
    kwh = None if cand.watts_active is None else n * cand.watts_active * HOURS_PER_YEAR * need.years / 1000
    power = None if kwh is None or cand.power_cost_per_kwh is None else kwh * cand.power_cost_per_kwh
    total = drives + (bays or 0.0) + (power or 0.0)
    return {
        "drives": drives,
        "bays": bays,
        "power": power,
        "energy_kwh": kwh,
        "total": total,
        "per_usable_tb_year": per_usable_tb_year(total, need),
    }


def per_usable_tb_year(total: float, need: Need) -> float:
    """``total`` over the need's usable TB times its years."""
    return total / (need.usable / TB * need.years)
