"""The steps of ``opsim measure`` around the fio run on a device: the purge, the output directory
cleared of an earlier run, and the SMART snapshots before and after (with the WAF over the run
and over its steady window)."""

from __future__ import annotations

import json
import os
import sys

from .. import smart
from .._output import atomic_write_text
from ..smart.parse import as_snapshot
from .outdir import clear
from .purge import purge
from .smart_window import steady


def before_the_run(
    device: str | None, purge_method, destroy_data, force: bool, with_smart: bool, outdir: str, previous: list[str]
) -> tuple[dict, dict | None]:
    """Purge (--purge), the output directory cleared of an earlier run, the SMART snapshot
    before (--smart); returns the purge record and that snapshot."""
    pre = {}
    smart_before = None
    if device and purge_method:
        pre["purge"] = purge(
            device,
            purge_method,
            confirm=destroy_data,
            force=force,
            notify=lambda msg: sys.stderr.write(msg + "\n"),
        )
    os.makedirs(outdir, exist_ok=True)
    clear(outdir, previous)
    if with_smart:
        assert device is not None  # --smart is for device targets (checked)
        smart_before = smart.take_snapshot(device)
        atomic_write_text(os.path.join(outdir, "smart-before.json"), json.dumps(smart_before, indent=2))
    return pre, smart_before


def smart_after(device: str, outdir: str, smart_before: dict | None, stop, result: dict) -> None:
    """The SMART snapshot after the run and the WAF over the interval into ``result``; a run a
    signal stopped takes no snapshot and says so."""
    if stop.signum is not None:
        result["interrupted"], result["interrupted_by"] = True, stop.name
        result["smart"] = {
            "waf": None,
            "available": False,
            "host_writes": None,
            "nand_writes": None,
            "rule": None,
            "reason": f"no SMART snapshot after the run: {stop.name} stopped it",
        }
        return

    after = smart.take_snapshot(device)
    assert smart_before is not None  # taken before the run whenever --smart is given
    atomic_write_text(os.path.join(outdir, "smart-after.json"), json.dumps(after, indent=2))
    # both snapshots are of the device this run wrote: the same drive even without a serial
    w = smart.interval_waf(
        as_snapshot(smart_before, "smart-before.json"),
        as_snapshot(after, "smart-after.json"),
        allow_no_serial=True,
    )
    result["smart"] = {
        "waf": w["waf"],
        "available": w["available"],
        "reason": w["reason"],
        "host_writes": w["host_writes"],
        "nand_writes": w["nand_writes"],
        "rule": w["rule"],
    }


def smart_steady(result: dict, checkpoints) -> None:
    """The steady window's WAF from the snapshots around the rounds (measure/smart_window.py)."""
    s = steady(result, checkpoints)
    s["snapshot_errors"] = checkpoints.errors
    result["smart"]["steady"] = s
