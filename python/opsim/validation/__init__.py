"""Validation suites: simulated figures beside the published models and seed numbers.

``opsim validate`` runs a suite and prints the table; ``--markdown FILE`` writes it as the
table docs/validation.md includes.  Every figure is computed when the command runs.

Rooms: :mod:`.oracles` (the functional simulator against the analytic models),
:mod:`.seeds` (the timed model on the seed drives), :mod:`.sk_hynix` (seed 004's urgent-state
case studies), :mod:`.steady` (one steady-state run of a preset's scale model),
:mod:`.x400_reserve` (the X400 NAND readings, each refitted by ``opsim calibrate``),
:mod:`.held_out` (``opsim calibrate``'s predictions of figures it was not fitted to),
:mod:`.real_drives` (published whole-drive figures at several OP levels, each predicted by
``opsim calibrate`` from the datasheet or other points: ``opsim validate --suite real-drives``) and
:mod:`.zoned` (the zoned workload's WAF against zone size and active zones: the figure of
docs/workloads.md, ``make docs-figures``).
The presets' fitted values come from ``opsim calibrate`` (:mod:`opsim.calibrate.presets`).
"""

from __future__ import annotations

from .oracles import MIN_BLOCKS, markdown, oracle_cases, run_oracles
from .seeds import (
    MICRON_WSAT,
    X400_IOPS,
    io_consistency,
    micron_dwa,
    micron_dwa_markdown,
    run_seeds,
    seeds_markdown,
    write_saturation,
    x400_rows,
    x400_tbw_trend,
    x400_users,
)
from .sk_hynix import SKH_PRESET, skh_markdown, skh_suite, skh_tables
from .steady import steady_run

__all__ = [
    "MICRON_WSAT",
    "MIN_BLOCKS",
    "SKH_PRESET",
    "X400_IOPS",
    "io_consistency",
    "markdown",
    "micron_dwa",
    "micron_dwa_markdown",
    "oracle_cases",
    "run_oracles",
    "run_seeds",
    "seeds_markdown",
    "skh_markdown",
    "skh_suite",
    "skh_tables",
    "steady_run",
    "write_saturation",
    "x400_rows",
    "x400_tbw_trend",
    "x400_users",
]
