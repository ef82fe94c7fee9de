"""Bring your own drive: a model of a user's drive from its datasheet or a measurement.

    from opsim.calibrate import read_inputs, calibrate
    spec, figures = read_inputs(datasheet="ds.toml", points="p.csv")
    cal = calibrate(spec, figures)
    cal.parameters          # every parameter: value, interval, source
    cal.predict([447 * 2**30, 521 * 2**30])   # steady WAF and 4 KiB random-write IOPS, with intervals
    cal.drive_toml()        # a drive file in the presets' schema (``preset = "./drive.toml"``)

The model is the core's: its config (``describe``), its functional simulator for the WAF
(:mod:`.curve`), its cost model for the IOPS bound and its timed simulator for what the drive
achieves (:mod:`.timed`).  :mod:`.fit` fits what the user did not give with
scipy.optimize.least_squares.  docs/calibrate.md describes the method and its validation.
"""

from __future__ import annotations

from .inputs import DriveSpec, Figure, read_datasheet, read_points, resolve_spans
from .measured import read_measured
from .result import Calibration, calibrate, read_inputs

__all__ = [
    "Calibration",
    "DriveSpec",
    "Figure",
    "calibrate",
    "read_datasheet",
    "read_inputs",
    "read_measured",
    "read_points",
    "resolve_spans",
]
