"""``opsim simulate --interval``: a config whose drive file keeps a profile, run again at the
profile's ends.

A drive file written by ``opsim calibrate`` keeps the points of the profile its 95% intervals
came from (``[preset.calibration.profile]``, docs/calibrate.md "What a drive file keeps"); the
config's run is the best fit.  The ends of the profile (its least and most NAND capacity) give
the most and least WAF (at a fixed user capacity, WAF falls as the NAND grows), so ``--interval``
runs the config twice more, with each end's values for the profile's keys, and the interval of
WAF and IOPS is the least and most of the three runs.  A key the config sets itself keeps the
config's value, except the NAND capacity of a scale model (a config that sets
``drive.physical_capacity``), which is scaled by the end's NAND over the drive file's.  Without
``--interval`` the output says the drive file keeps a profile and how to get the interval.
"""

from __future__ import annotations

import copy
import os
import tomllib
from typing import Any

from ._output import kv_table
from .errors import OpsimError
from .presets import get, is_path, physical_bytes
from .sim import simulate
from .units import parse_size


def preset_in(config: str) -> str | None:
    """The drive a config starts from (``preset``): a built-in preset's name, or a drive file's
    absolute path (relative to the config file); None without one, or when the config cannot
    be read here (the simulation reports that)."""
    if not os.path.isfile(config):
        return None  # a pipe can be read only once: the simulation reads it
    try:
        with open(config, "rb") as f:
            preset = tomllib.load(f).get("preset")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(preset, str):
        return None
    return os.path.join(os.path.dirname(os.path.abspath(config)), preset) if is_path(preset) else preset


def profile_of(preset: str | None) -> dict | None:
    """The ``[preset.calibration.profile]`` of a preset or drive file (None: none)."""
    if preset is None or (is_path(preset) and not os.path.isfile(preset)):
        return None
    try:
        meta = get(preset)["meta"]
    except OpsimError:
        return None  # the simulation reports it
    prof = meta.get("calibration", {}).get("profile")
    if not isinstance(prof, dict) or not isinstance(prof.get("keys"), list) or not prof.get("points"):
        return None
    return prof


def ends(prof: dict) -> list[dict[str, Any]]:
    """The profile's ends: the points of least and most NAND capacity ({key: value}); of a
    profile over structural alternatives (``structure``: a datasheet's priors, docs/calibrate.md
    "What a datasheet never states"), the points it names (``ends``: least and most WAF, and of a
    profile over the GC copy cost or the native program time the slowest point of each), each with
    its structure's keys."""
    ks = prof["keys"]
    pts = [dict(zip(ks, p)) for p in prof["points"] if isinstance(p, list) and len(p) == len(ks)]
    key = "drive.physical_capacity"
    if not pts:
        return []
    structures, named = prof.get("structure"), prof.get("ends")
    if isinstance(structures, list) and len(structures) == len(pts) and isinstance(named, list):
        idx = [i for i in dict.fromkeys(named) if isinstance(i, int) and 0 <= i < len(pts)]
        return [pts[i] | (structures[i] if isinstance(structures[i], dict) else {}) for i in idx]
    if key not in ks:
        return [pts[0], pts[-1]] if len(pts) > 1 else pts
    lo, hi = min(pts, key=lambda p: p[key]), max(pts, key=lambda p: p[key])
    return [lo, hi] if lo is not hi else [lo]


def how(config: str, preset: str, prof: dict) -> dict:
    """What the output says without ``--interval``."""
    return {
        "from": f"[preset.calibration.profile] of {preset}",
        "points": len(prof["points"]),
        "how": f"this run is the drive file's best fit; `opsim simulate {config} --interval` runs it again at the "
        "profile's ends (three runs in all; one more for each of the GC copy cost and the native array's rate "
        "that the profile ranges over, a datasheet of bursts) for the 95% "
        "interval of WAF and IOPS; "
        f"`opsim advise {'--drive' if is_path(preset) else '--preset'} {preset}` carries the interval into every "
        "OP level",
    }


def _config_at(config: str, preset: str, stored_physical: int, values: dict[str, Any]) -> tuple[dict, list]:
    """The config (a dict, every path it names absolute) with ``values`` set; the keys held at
    the config's own value."""
    with open(config, "rb") as f:
        cfg = tomllib.load(f)
    base = os.path.dirname(os.path.abspath(config))
    cfg = copy.deepcopy(cfg)
    cfg["preset"] = preset
    for w in [cfg.get("workload", {})] + [p.get("workload", {}) for p in cfg.get("phase", []) if isinstance(p, dict)]:
        t = w.get("trace") if isinstance(w, dict) else None
        if isinstance(t, dict) and isinstance(t.get("path"), str):
            t["path"] = os.path.join(base, t["path"])
    held = []
    for key, v in values.items():
        table, _, name = key.partition(".")
        tab = cfg.setdefault(table, {})
        if key == "drive.physical_capacity":
            v = int(v) // 4096 * 4096
            if "physical_capacity" in tab:  # a scale model: the same share of the end's NAND
                model = parse_size(tab["physical_capacity"], key="drive.physical_capacity")
                v = int(model * v / stored_physical) // 4096 * 4096
            tab["physical_capacity"] = v
        elif name in tab:
            held.append(key)
        else:
            tab[name] = v
    return cfg, held


def run_ends(config: str, preset: str, prof: dict, best: dict) -> dict:
    """Run ``config`` at the profile's two ends: each run's WAF and IOPS, and the interval of
    the three runs (the config's own, ``best``, included)."""
    stored = physical_bytes(preset)
    runs = []
    for values in ends(prof):
        cfg, held = _config_at(config, preset, stored, values)
        r = simulate(cfg).data
        runs.append(
            {
                "values": values,
                "held_at_config": held,
                "physical_bytes": r["drive"]["physical_bytes"],
                "waf": r["waf"],
                "iops": (r.get("timed") or {}).get("measured_iops"),
                "wall_seconds": r["perf"]["wall_seconds"],
            }
        )
    out: dict = {"from": f"[preset.calibration.profile] of {preset}", "runs": runs}
    own = {"waf": best["waf"], "iops": (best.get("timed") or {}).get("measured_iops")}
    for k in ("waf", "iops"):
        vals = [x[k] for x in (own, *runs)]
        vals = [v for v in vals if v is not None]
        out[f"{k}_low"], out[f"{k}_high"] = (min(vals), max(vals)) if vals else (None, None)
    return out


def text(iv: dict) -> str:
    """The interval's lines under the run's summary."""
    if "how" in iv:
        return f"95% interval: {iv['from']} keeps {iv['points']} points; {iv['how']}"
    rows = [
        (
            "WAF 95% interval",
            "-" if iv["waf_low"] is None else f"{iv['waf_low']:.4f} - {iv['waf_high']:.4f}",
        ),
    ]
    if iv["iops_low"] is not None:
        rows.append(("IOPS 95% interval", f"{iv['iops_low']:,.0f} - {iv['iops_high']:,.0f}"))
    for r in iv["runs"]:
        iops = "" if r["iops"] is None else f", {r['iops']:,.0f} IOPS"
        held = f" ({', '.join(r['held_at_config'])} held at the config's)" if r["held_at_config"] else ""
        waf = "-" if r["waf"] is None else f"{r['waf']:.4f}"
        rows.append((f"at NAND {r['physical_bytes']:,} bytes", f"WAF {waf}{iops}{held}"))
    return kv_table(rows, title=f"interval: the run again at the two ends of the {iv['from']}")
