"""The drive presets as a library: look-up by name or drive file, a preset's capacities, and
the one scale-model builder every study uses.

The presets themselves (their values and every value's source) live in the Rust core
(``crates/opsim-core/presets/*.toml``); this module only asks the core for them, once per
process.  A **drive file** is a TOML file of the user's in the same schema; wherever a preset
name goes, a drive file's path may go instead (a value that contains ``/`` or ends in
``.toml``, the core's rule: :func:`is_path`), and the core reads it (Python never parses a
preset's TOML).  The ``opsim presets`` command, the advisor, the demo, the validation studies
and the calibration all come here.
"""

from __future__ import annotations

import copy
import json
import os
from functools import lru_cache
from pathlib import Path

from . import sim
from .errors import ConfigError, OpsimError
from .sim import describe
from .units import parse_size

#: the checked-in inputs the built-in presets are calibrated from (``opsim calibrate``:
#: :mod:`opsim.calibrate.presets`), one ``NAME.toml`` a preset
INPUTS = Path(__file__).resolve().parents[2] / "crates" / "opsim-core" / "presets" / "inputs"


@lru_cache(maxsize=1)
def _all() -> tuple[dict, ...]:
    return tuple(json.loads(sim._core().presets()))


def load() -> list[dict]:
    """Every preset, in the core's order: ``{"name", "meta": {"title", "sources", ...},
    "settings": {"drive": ..., "timing": ..., ...}}`` (a fresh copy: callers may change it)."""
    return copy.deepcopy(list(_all()))


def names() -> list[str]:
    return [p["name"] for p in _all()]


def is_path(name_or_path) -> bool:
    """True when a ``preset`` value names a drive file rather than a built-in preset: it
    contains a ``/`` or ends in ``.toml`` (the core's rule)."""
    s = os.fspath(name_or_path)
    return isinstance(s, str) and ("/" in s or s.endswith(".toml"))


def drive_file(path, base_dir=None, key: str = "preset") -> dict:
    """A drive file read by the core, in the shape of one entry of :func:`load` plus
    ``path`` (absolute).  A relative ``path`` is relative to ``base_dir`` (default: the
    current directory).  Errors name the file (and the line) under ``key``."""
    base = None if base_dir is None else os.fspath(base_dir)
    try:
        return json.loads(sim._core().drive_file(os.fspath(path), base))
    except OpsimError as e:
        if key == "preset" or e.key != "preset":
            raise
        raise type(e)(f"{key}: {e.detail}", key=key, detail=e.detail) from None


def get(name_or_path, key: str = "preset") -> dict:
    """One preset by name, or a drive file by path (:func:`is_path`; relative to the current
    directory): ``{"name", "meta", "settings"}``, and ``path`` (absolute) for a drive file.
    An unknown name is a :class:`ConfigError` that lists the known ones; a drive file the
    core refuses, one that names the file."""
    if is_path(name_or_path):
        return drive_file(name_or_path, key=key)
    for p in _all():
        if p["name"] == name_or_path:
            return copy.deepcopy(p)
    raise ConfigError(
        f"unknown preset {name_or_path!r}; known: {', '.join(sorted(names()))} "
        "(or a drive file: a path that contains / or ends in .toml)",
        key=key,
    )


def title(p: dict) -> str:
    """A preset's title (a drive file may have none: then its name)."""
    return str(p["meta"].get("title") or p["name"])


def settings(name_or_path) -> dict:
    """The preset's config tables (``drive``, ``timing``, ...)."""
    return get(name_or_path)["settings"]


def _drive_size(p: dict, k: str) -> int:
    v = p["settings"].get("drive", {}).get(k)
    if v is None:
        raise ConfigError(
            f"preset: {p.get('path', p['name'])} gives no drive.{k} (a drive file needs both user_capacity and "
            "physical_capacity here)",
            key="preset",
        )
    return parse_size(v, key=f"drive.{k}")


def physical_bytes(name_or_path) -> int:
    """The preset's NAND capacity in bytes."""
    return _drive_size(get(name_or_path), "physical_capacity")


def user_bytes(name_or_path) -> int:
    """The preset's user (native) capacity in bytes."""
    return _drive_size(get(name_or_path), "user_capacity")


def scale_model(name_or_path, scale: int, user: int | None = None, drive: dict | None = None) -> dict:
    """A config for a model of preset ``name_or_path`` (a name or a drive file) ``scale``
    times smaller: the NAND divided by ``scale``, the user capacity (``user`` bytes of the
    full-size drive, default the preset's) divided by ``scale`` and rounded down to a mapping
    unit, so OP and the block geometry stay as on the full drive; a drive whose GC unit is a
    superblock keeps its superblocks, each ``scale`` times smaller (the core's rule,
    ``describe(..., scale=)``; docs/config.md, "Scale models").  ``drive`` adds or
    overrides drive keys (already at model size).  A drive file is named by its absolute
    path, so the config resolves from anywhere."""
    if scale < 1:
        raise ConfigError(f"scale must be at least 1, not {scale}", key="scale")

    p = get(name_or_path)
    full_user = _drive_size(p, "user_capacity") if user is None else int(user)
    _drive_size(p, "physical_capacity")
    preset = p.get("path", p["name"])
    # the core's scale rule (Description::scaled): fewer FTL blocks, or as many superblocks
    # each `scale` times smaller
    s = describe({"preset": preset}, model_limits=False, scale=scale, scale_user=full_user)["scaled"]
    model = {"user_capacity": s["user_capacity"], "physical_capacity": s["physical_capacity"]}
    cfg = {"preset": preset, "drive": model | (drive or {})}
    if s["superblock_scale"] is not None:
        cfg["ftl"] = {"superblock_scale": s["superblock_scale"]}
    return cfg
