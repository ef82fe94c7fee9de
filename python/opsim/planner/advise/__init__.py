"""The OP advisor: the smallest over-provisioning that meets a workload's targets.

Given a drive (a preset, or native/physical capacity, P/E rating and interface), a workload
(read/write mix, transfer size, random/sequential mix, skew or the JEDEC JESD219 profile,
host writes per day) and targets (steady-state IOPS, TBW, DWPD, lifetime, usable capacity,
a latency percentile), :func:`advise`

1. **screens** every candidate OP level on a fine grid (by default every 0.5% of the native
   capacity held back) with the analytic models: WAF from :mod:`opsim.models` at the OP
   garbage collection sees, steady IOPS from a bottleneck bound on the drive's resources
   (the same cost rules as the timed model), endurance from the P/E budget;
2. **confirms** with the simulator: the timed model on a scale model of the drive (every
   timing and die count kept, the same OP seen by GC, fewer blocks), starting at the level
   the screen picked and searching down or up until the smallest level that meets every
   target in simulation is bracketed by one that does not;
3. says which target **binds** (fails one grid step below the recommendation), and when no
   OP can meet the targets, **why** (the target is above what the drive gives even with no
   garbage collection at all, or it needs more OP than the capacity target allows).

Every figure carries the model that produced it; nothing is tabulated.  The CLI is
``opsim advise`` (:mod:`opsim.commands.advise`); docs/planner.md, section "Advisor".
Rooms: :mod:`.options` (errors naming the option), :mod:`.drive`, :mod:`.targets`,
:mod:`.checks` (the request checked before any work), :mod:`.screen` (the analytic screen),
:mod:`.skew` (the screen's WAF under skew, anchored on the core), :mod:`.confirm` (the
simulator's confirmation), :mod:`.interval` (a calibrated drive's intervals), :mod:`.advisor`
(the search, the binding target), :mod:`.diagnosis` (why no OP meets the targets), :mod:`.notes`,
:mod:`.tenants` (namespaces sharing a drive), :mod:`.trace` (a block trace as the workload), and
buy or over-provision for a fleet: :mod:`.compare_file` (the need and the candidates),
:mod:`.fleet` (the drive count and the OP each needs), :mod:`.fleet_cost` and :mod:`.compare`
(the ranking and the choice).
The workload itself (notation, classes, core table, fio jobs) is :mod:`opsim.workload`'s.
"""

from __future__ import annotations

from ...workload import JESD219_SIZES, Workload, parse_read_write, parse_skew
from ...workload.classes import zipf_classes
from .advisor import DIAGNOSIS_HELD_BACK, advise, plan_command
from .compare import compare as compare_fleet
from .compare_file import load_compare
from .confirm import DEFAULT_MODEL_BLOCKS, MIN_MODEL_BLOCKS, ScaleModel, plan_model, sim_config, sim_level
from .diagnosis import why_not
from .drive import Drive, load_drive
from .options import _bad
from .screen import Level, grid, iops_bound, screen_level, waf_gc_model
from .targets import (
    JESD219_RATING,
    Targets,
    parse_fraction_option,
    parse_latency,
    parse_target_number,
)
from .tenants import advise_tenants, load_tenants

__all__ = [
    "DEFAULT_MODEL_BLOCKS",
    "DIAGNOSIS_HELD_BACK",
    "JESD219_RATING",
    "JESD219_SIZES",
    "MIN_MODEL_BLOCKS",
    "Drive",
    "Level",
    "ScaleModel",
    "Targets",
    "Workload",
    "_bad",
    "advise",
    "advise_tenants",
    "compare_fleet",
    "grid",
    "iops_bound",
    "load_compare",
    "load_drive",
    "load_tenants",
    "parse_fraction_option",
    "parse_latency",
    "parse_read_write",
    "parse_skew",
    "parse_target_number",
    "plan_command",
    "plan_model",
    "screen_level",
    "sim_config",
    "sim_level",
    "waf_gc_model",
    "why_not",
    "zipf_classes",
]
