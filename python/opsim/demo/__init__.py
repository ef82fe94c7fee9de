"""The demo study: the seeds' OP study on one of their drives (``opsim demo`` renders it).

The drive is the seeds' "256 GB-class" client SSD: 256 GiB of NAND sold as 256 GB (IDEMA
LBA1-03 count, 7.37% built-in OP), here the Samsung 840 Pro preset (AnandTech's drive in
seed 003).  It is configured at the capacities the seeds discuss (SanDisk X400 240 GB and
200 GB, Intel's 20% and 40% of the native LBAs held back, AnandTech's 12%, 25% and 50% spare
area) and run on the timed model under two workloads: 4 KiB random writes at QD32 after a
sequential fill (AnandTech's IO-consistency method; the write-saturation curve), and a 95:5
read:write mix of 4 KiB random IOs (Micron's read-heavy case) from the analytic steady state.
The simulation runs on a scale model with 1/SCALE of the NAND and every timing, die and block
size of the preset kept; WAF comes from the simulator with the greedy mean-field model beside
it, IOPS and latency from the timed model, endurance from WAF at fixed NAND and P/E rating.

A drive file (a TOML file in the presets' schema) can be studied instead: the same OP
levels, as shares of that drive's native capacity and NAND.

The rooms: :mod:`.levels` (the drive and its OP levels), :mod:`.study` (the drive studied,
the workloads and every run's config), :mod:`.runs` (running them), :mod:`.table` (the OP
table built from the results), :mod:`.context` (what the report says about the study).
"""

from __future__ import annotations

from .levels import NAND, PRESET, SECTOR, levels, levels_for, marketed_gb
from .runs import simulate_all
from .study import WORKLOADS, Study, configs, default_study, drive_study
from .table import level_rows

__all__ = [
    "NAND",
    "PRESET",
    "SECTOR",
    "WORKLOADS",
    "Study",
    "configs",
    "default_study",
    "drive_study",
    "level_rows",
    "levels",
    "levels_for",
    "marketed_gb",
    "simulate_all",
]
