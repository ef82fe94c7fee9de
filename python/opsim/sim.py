"""Python API of the functional simulator.

    >>> import opsim
    >>> r = opsim.simulate({"drive": {"user_capacity": "256MiB", "op": 0.28}})
    >>> r.waf, r.op["user"], r.steady_state["reached"]
    >>> r.rounds_frame()          # pandas DataFrame, one row per round

``simulate`` accepts a dict (the TOML schema as nested dicts) or a path to a TOML file.
Errors are :mod:`opsim.errors` exceptions naming the offending key.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from .errors import ConfigError, InternalError


def _core():
    try:
        from . import _core as core  # the compiled Rust extension
    except ImportError as e:  # pragma: no cover - only without a build
        raise InternalError(
            "the opsim Rust core is not built; run `make build` (or `maturin develop --release`)"
        ) from e
    return core


def _config_text(config: Any) -> tuple[str, str]:
    """(text, format) for the core from a dict, a TOML path or TOML text."""
    if isinstance(config, Mapping):
        try:
            return json.dumps(config), "json"
        except (TypeError, ValueError) as e:
            raise ConfigError(f"config is not serialisable: {e}", key="config") from e
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if os.path.exists(path):
            try:
                with open(path, "rb") as f:
                    raw = f.read()
            except OSError as e:
                raise ConfigError(f"cannot read config file {path}: {e.strerror}", key="config") from None
            try:
                return raw.decode("utf-8"), "toml"
            except UnicodeDecodeError as e:
                line = raw[:e.start].count(b"\n") + 1
                raise ConfigError(f"config file {path} is not UTF-8 text (TOML must be): byte 0x{raw[e.start]:02x} "
                                  f"on line {line}", key="config") from None
        if "\n" in path or "[" in path:
            return path, "toml"
        raise ConfigError(f"config file {path} does not exist", key="config")
    raise ConfigError(f"config must be a dict or a path to a TOML file, not {type(config).__name__}",
                      key="config")


@dataclass
class SimResult:
    """The result of one simulation.  ``data`` is the full JSON document."""

    data: dict = field(repr=False)

    def __getattr__(self, name):
        try:
            return self.__dict__["data"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def waf(self) -> float:
        return self.data["waf"]

    def to_dict(self) -> dict:
        return self.data

    def rounds_frame(self):
        """The per-round metrics as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.data["rounds"]).set_index("index")

    def plot(self, kind: str = "saturation", ax=None, **options):
        """Draw this result with matplotlib and return the Figure (``ax``: draw into it).
        ``kind`` is one of :data:`opsim.plots.KINDS`; see docs/reports.md."""
        from . import plots

        return plots.plot(kind, [self.data], ax=ax, **options)

    def __repr__(self) -> str:
        d = self.data
        ss = d["steady_state"]
        return (f"SimResult(waf={d['waf']:.4f}, gc={d['gc']!r}, op_user={d['op']['user']:.4f}, "
                f"rounds={len(d['rounds'])}, steady={ss['reached']})")


def simulate(config) -> SimResult:
    """Run a simulation described by ``config`` (dict or TOML path) and return its result."""
    text, fmt = _config_text(config)
    base = None
    if isinstance(config, (str, os.PathLike)) and os.path.exists(os.fspath(config)):
        base = os.path.dirname(os.path.abspath(os.fspath(config)))  # relative trace paths
    return SimResult(json.loads(_core().simulate(text, fmt, base)))


def describe(config, *, model_limits: bool = True, users=None) -> dict:
    """Validate ``config`` and return the drive as the core resolves it, without building its
    model (instant whatever the capacity): ``config`` (preset applied, defaults filled),
    ``drive`` (geometry), ``op`` (every basis, ``added``, ``seen_by_gc``), ``slc_cache``,
    ``timing`` (resolved: ns, counts), ``cost_model`` (for :func:`costs`) and ``fits_model``.

    ``model_limits`` (default): refuse, as the simulator would, a drive it cannot model
    (memory limit, 32-bit mapping tables, no room for garbage collection); False describes any
    drive.  ``users``: also ``levels``, the ``op`` figures at each of these user capacities
    (bytes, whole sectors)."""
    text, fmt = _config_text(config)
    us = None if users is None else [int(u) for u in users]
    return json.loads(_core().describe(text, fmt, model_limits, us))


def costs(model: Mapping, mix: Mapping, waf_gc: float) -> dict:
    """The timed model's time per IO on each resource, and the bottleneck IOPS bound, for a
    workload ``mix`` (``write_fraction``, ``units_per_io``, ``bytes_per_io``) at
    garbage-collection WAF ``waf_gc``; ``model`` is a description's ``cost_model``
    (``timing`` resolved, ``write_cache``, ``slc_folds``, ``ftl_block_units``).

    Returns ``{"resources": [{"resource", "ns_per_io", "iops"}, ...], "bottleneck", "iops"}``."""
    return json.loads(_core().costs(json.dumps(dict(model)), json.dumps(dict(mix)), float(waf_gc)))


def steady_state(values, eligible=None, window=5, max_range=0.20, max_excursion=0.10) -> dict:
    """The SNIA PTS steady-state rule over a series (one value per round).

    Returns ``{"reached", "round", "window", "mean", "range_ratio", "excursion_ratio", "rule"}``.
    """
    vals = [float(v) for v in values]
    el = None if eligible is None else [bool(e) for e in eligible]
    return json.loads(_core().steady_state(vals, el, window, max_range, max_excursion))


class Simulator:
    """A simulated drive that takes individual host commands (sector addresses).

    >>> s = Simulator({"drive": {"user_capacity": "64MiB", "op": 0.1}})
    >>> s.write(0, 8); s.trim(0, 8); s.security_erase(); s.set_max_address(100_000)
    """

    def __init__(self, config):
        text, fmt = _config_text(config)
        self._s = _core().Simulator(text, fmt)

    def write(self, lba: int, sectors: int, stream: int = 0) -> None:
        self._s.write(lba, sectors, stream)

    def read(self, lba: int, sectors: int) -> None:
        self._s.read(lba, sectors)

    def trim(self, lba: int, sectors: int) -> None:
        self._s.trim(lba, sectors)

    def read_token(self, lba: int):
        return self._s.read_token(lba)

    def security_erase(self) -> None:
        self._s.security_erase()

    def set_max_address(self, sectors: int, volatile: bool = False) -> None:
        self._s.set_max_address(sectors, volatile)

    def power_cycle(self) -> None:
        self._s.power_cycle()

    def check(self) -> None:
        self._s.check()

    @property
    def counters(self) -> dict:
        return json.loads(self._s.counters())

    @property
    def max_address(self) -> int:
        return self._s.max_address

    @property
    def free_blocks(self) -> int:
        return self._s.free_blocks

    @property
    def mapped_pages(self) -> int:
        return self._s.mapped_pages

    def describe(self) -> dict:
        return json.loads(self._s.describe())

    def precondition(self) -> None:
        """Apply the configured preconditioning (fill or analytic) without running rounds."""
        self._s.precondition()

    def run_for(self, host_bytes: int) -> None:
        """Drive the configured workload for ``host_bytes`` more host bytes."""
        self._s.run_for(int(host_bytes))

    def run(self) -> SimResult:
        return SimResult(json.loads(self._s.run()))
