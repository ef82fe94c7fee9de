"""The drive presets as a library: look-up by name, a preset's capacities, and the one
scale-model builder every study uses.

The presets themselves (their values and every value's source) live in the Rust core
(``crates/opsim-core/presets/*.toml``); this module only asks the core for them, once per
process.  The ``opsim presets`` command, the advisor, the validation studies and the
calibration all come here.
"""

from __future__ import annotations

import copy
import json
from functools import lru_cache

from .errors import ConfigError
from .units import parse_size

#: the byte granularity a scale model's user capacity is rounded down to (one 4 KiB mapping unit)
UNIT = 4096


@lru_cache(maxsize=1)
def _all() -> tuple[dict, ...]:
    from .sim import _core

    return tuple(json.loads(_core().presets()))


def load() -> list[dict]:
    """Every preset, in the core's order: ``{"name", "meta": {"title", "sources", ...},
    "settings": {"drive": ..., "timing": ..., ...}}`` (a fresh copy: callers may change it)."""
    return copy.deepcopy(list(_all()))


def names() -> list[str]:
    return [p["name"] for p in _all()]


def get(name: str, key: str = "preset") -> dict:
    """One preset by name; an unknown name is a :class:`ConfigError` that lists the known ones."""
    for p in _all():
        if p["name"] == name:
            return copy.deepcopy(p)
    raise ConfigError(f"unknown preset {name!r}; known: {', '.join(sorted(names()))}", key=key)


def settings(name: str) -> dict:
    """The preset's config tables (``drive``, ``timing``, ...)."""
    return get(name)["settings"]


def physical_bytes(name: str) -> int:
    """The preset's NAND capacity in bytes."""
    return parse_size(settings(name)["drive"]["physical_capacity"], key="drive.physical_capacity")


def user_bytes(name: str) -> int:
    """The preset's user (native) capacity in bytes."""
    return parse_size(settings(name)["drive"]["user_capacity"], key="drive.user_capacity")


def scale_model(name: str, scale: int, user: int | None = None, drive: dict | None = None) -> dict:
    """A config for a model of preset ``name`` ``scale`` times smaller: the NAND divided by
    ``scale``, the user capacity (``user`` bytes of the full-size drive, default the preset's)
    divided by ``scale`` and rounded down to a mapping unit, so OP and the block geometry stay
    as on the full drive.  ``drive`` adds or overrides drive keys (already at model size)."""
    if scale < 1:
        raise ConfigError(f"scale must be at least 1, not {scale}", key="scale")
    full_user = user_bytes(name) if user is None else int(user)
    model = {"user_capacity": full_user // scale // UNIT * UNIT, "physical_capacity": physical_bytes(name) // scale}
    return {"preset": name, "drive": model | (drive or {})}
