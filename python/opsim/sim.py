"""Python API of the functional simulator.

    >>> import opsim
    >>> r = opsim.simulate({"drive": {"user_capacity": "256MiB", "op": 0.28}})
    >>> r.waf, r.op["user"], r.steady_state["reached"]
    >>> r.rounds_frame()          # pandas DataFrame, one row per round

``simulate`` accepts a dict (the TOML schema as nested dicts) or a path to a TOML file.
Errors are :mod:`opsim.errors` exceptions naming the offending key.

Ctrl-C stops the Rust core within a fraction of a second: ``simulate`` raises
KeyboardInterrupt, or with ``on_interrupt="return"`` returns the rounds done so far in a
result whose ``interrupted`` is true.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from . import _args, userfile
from .errors import ConfigError, InputError, InternalError

__all__ = ["ON_INTERRUPT", "SimResult", "Simulator", "costs", "describe", "simulate", "steady_state"]

#: what a whole run does on Ctrl-C: raise KeyboardInterrupt, or return what was done
ON_INTERRUPT = ("raise", "return")


def _core():
    try:
        from . import _core as core  # noqa: PLC0415  (the compiled core: `import opsim` works without it)
    except ImportError as e:  # pragma: no cover - only without a build
        raise InternalError(
            "the opsim Rust core is not built; run `make build` (or `maturin develop --release`)"
        ) from e
    return core


def _config_text(config: Any) -> tuple[str, str]:
    """(text, format) for the core from a dict, a TOML path or TOML text."""
    if isinstance(config, Mapping):
        userfile.check_nesting(config)  # json.dumps recurses: a dict 5,000 deep was a RecursionError
        try:
            return json.dumps(config), "json"
        except (TypeError, ValueError) as e:
            raise ConfigError(f"config is not serialisable: {e}", key="config") from e
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if os.path.exists(path):
            # a regular file of at most MAX_CONFIG bytes: a FIFO or /dev/zero is refused unread
            return userfile.read_config(path), "toml"
        if "\n" in path or "[" in path:
            return path, "toml"
        raise ConfigError(f"config file {path} does not exist", key="config")
    raise ConfigError(f"config must be a dict or a path to a TOML file, not {type(config).__name__}", key="config")


def _base_dir(config: Any) -> str | None:
    """The directory relative paths in ``config`` (traces, a drive file named by ``preset``)
    are relative to: the config file's, for a path to one; None (the current directory) for
    a dict or TOML text."""
    if isinstance(config, (str, os.PathLike)) and os.path.exists(os.fspath(config)):
        return os.path.dirname(os.path.abspath(os.fspath(config)))
    return None


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
    def waf(self) -> float | None:
        """WAF over the measurement window; None when the window wrote nothing (a read-only
        load, or a run interrupted before its measurement window)."""
        return self.data["waf"]

    @property
    def interrupted(self) -> bool:
        """True when Ctrl-C stopped the run: the result holds the rounds done until then."""
        return bool(self.data.get("interrupted", False))

    def to_dict(self) -> dict:
        return self.data

    def rounds_frame(self):
        """The per-round metrics as a pandas DataFrame."""
        import pandas as pd  # noqa: PLC0415  (start-up: pandas for this frame only)

        return pd.DataFrame(self.data["rounds"]).set_index("index")

    def plot(self, kind: str = "saturation", ax=None, **options):
        """Draw this result with matplotlib and return the Figure (``ax``: draw into it).
        ``kind`` is one of :data:`opsim.plots.KINDS`; see docs/reports.md."""
        from . import plots  # noqa: PLC0415  (start-up: drawing takes matplotlib, numpy and scipy)

        return plots.plot(_args.text("kind", kind), [self.data], ax=ax, **options)

    def __repr__(self) -> str:
        d = self.data
        ss = d["steady_state"]
        waf = "None" if d["waf"] is None else f"{d['waf']:.4f}"
        return (
            f"SimResult(waf={waf}, gc={d['gc']!r}, op_user={d['op']['user']:.4f}, "
            f"rounds={len(d['rounds'])}, steady={ss['reached']}"
            f"{', interrupted=True' if d.get('interrupted') else ''})"
        )


def _keep_interrupted(on_interrupt: str) -> bool:
    if on_interrupt not in ON_INTERRUPT:
        raise InputError(
            f"on_interrupt: must be one of {', '.join(ON_INTERRUPT)} (got {on_interrupt!r})", key="on_interrupt"
        )
    return on_interrupt == "return"


def simulate(
    config, *, threads: int | None = None, on_interrupt: str = "raise", stop: threading.Event | None = None
) -> SimResult:
    """Run a simulation described by ``config`` (dict or TOML path) and return its result.

    ``threads``: the threads of the functional model of a drive of independent GC pools, in
    place of the config's ``run.threads`` (docs/parallel.md); the result does not depend on
    them (``perf.parallel`` says how many ran, and why).  On Ctrl-C the core stops within a
    fraction of a second; ``on_interrupt="raise"`` raises KeyboardInterrupt, ``"return"``
    returns the rounds done (``result.interrupted`` true).  ``stop``: an event whose setting
    stops the run as Ctrl-C does (a run on a thread other than the main one sees no signal)."""
    keep = _keep_interrupted(on_interrupt)
    n = None if threads is None else check_threads("threads", threads)
    text, fmt = _config_text(config)
    return SimResult(json.loads(_core().simulate(text, fmt, _base_dir(config), keep, n, stop)))


def simulate_many(configs, jobs: int | None = None, on_done=None) -> list[SimResult]:
    """:func:`simulate` of each of ``configs`` (each on one thread, ``threads=1``), ``jobs`` at
    once (None: a thread per CPU this process may use); the results in the configs' order.  The
    core releases the GIL, so the runs take the cores side by side; each run is independent and
    seeded, so the results are the same whatever ``jobs`` is.  ``on_done(i)`` after config ``i``
    finishes.  Ctrl-C (or any error): the runs not started are dropped, the running ones
    stopped within a fraction of a second (a run on a thread other than the main one sees no
    signal: an event stops it), and the exception raised."""
    configs = list(configs)
    n = min(len(configs), jobs or len(os.sched_getaffinity(0)))
    if n <= 1:
        out = []
        for i, c in enumerate(configs):
            out.append(simulate(c, threads=1))
            if on_done:
                on_done(i)
        return out
    results: dict[int, SimResult] = {}
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="opsim-simulate") as ex:
        futs = {ex.submit(simulate, c, threads=1, stop=stop): i for i, c in enumerate(configs)}
        try:
            for f in as_completed(futs):
                results[futs[f]] = f.result()
                if on_done:
                    on_done(futs[f])
        except BaseException:
            stop.set()
            for f in futs:
                f.cancel()
            raise
    return [results[i] for i in range(len(configs))]


def check_threads(name: str, threads) -> int:
    """``threads`` as a thread count the core takes (1 to its most), the error naming ``name``."""
    return _args.uint(name, threads, lo=1, hi=_core().MAX_THREADS)


def describe(config, *, model_limits: bool = True, users=None, scale_blocks=None, scale=None, scale_user=None) -> dict:
    """Validate ``config`` and return the drive as the core resolves it, without building its
    model (instant whatever the capacity): ``config`` (preset applied, defaults filled),
    ``drive`` (geometry), ``op`` (every basis, ``added``, ``seen_by_gc``), ``slc_cache``,
    ``timing`` (resolved: ns, counts), ``cost_model`` (for :func:`costs`),
    ``analytic_precondition`` (whether ``run.precondition = "analytic"`` can start this
    config's workload on this drive) and ``fits_model``.

    ``model_limits`` (default): refuse, as the simulator would, a drive it cannot model
    (memory limit, 32-bit mapping tables, no room for garbage collection); False describes any
    drive.  ``users``: also ``levels``, the ``op`` figures at each of these user capacities
    (bytes, whole sectors).  ``scale_blocks``: also ``scale_model`` (and one in each level): a
    drive of that many blocks of the same NAND giving garbage collection the same OP
    (``blocks``, ``pages_per_block``, ``superblock_scale``, ``physical_bytes``, ``user_pages``,
    ``user_bytes``, ``gc_pool_blocks``: the reserve and SLC cache as the core keeps them at
    that size; a superblock drive's superblocks kept, at most that many, each divided so the
    model holds at most ``scale_blocks`` x 256 pages).  ``scale``: also ``scaled``, the
    core's scale model that many times smaller (of a full-size drive of ``scale_user`` user bytes,
    default its own): ``physical_capacity``, ``user_capacity``, ``superblock_scale`` (FTL blocks:
    fewer blocks; superblocks: as many, each ``scale`` times smaller).  A drive file ``preset``
    names is relative to the config file's directory (for a path), else to the current
    directory."""
    text, fmt = _config_text(config)
    limits = _args.flag("model_limits", model_limits)
    us = None if users is None else _users(users)
    blocks = None if scale_blocks is None else _args.uint("scale_blocks", scale_blocks, 32, lo=1)
    k = None if scale is None else _args.uint("scale", scale, 64, lo=1)
    su = None if scale_user is None else _args.uint("scale_user", scale_user, 64, lo=1)
    return json.loads(_core().describe(text, fmt, limits, us, _base_dir(config), blocks, k, su))


def _users(users) -> list[int]:
    if isinstance(users, (str, bytes, Mapping)) or not hasattr(users, "__iter__"):
        raise InputError(f"users: must be a list of byte counts, not {type(users).__name__}", key="users")
    whole = [int(u) if isinstance(u, float) and u.is_integer() else u for u in users]  # (bytes computed in floats)
    return [_args.uint(f"users[{i}]", u) for i, u in enumerate(whole)]


def costs(model: Mapping, mix: Mapping, waf_gc: float) -> dict:
    """The timed model's time per IO on each resource, and the bottleneck IOPS bound, for a
    workload ``mix`` (``write_fraction``, ``units_per_io``, ``bytes_per_io``) at
    garbage-collection WAF ``waf_gc``; ``model`` is a description's ``cost_model``
    (``timing`` resolved, ``write_cache``, ``slc_folds``, ``ftl_block_units``).

    Returns ``{"resources": [{"resource", "ns_per_io", "iops"}, ...], "bottleneck", "iops"}``."""
    m, x = _args.json_text("cost_model", model), _args.json_text("mix", mix)
    return json.loads(_core().costs(m, x, _args.number("waf_gc", waf_gc)))


def steady_state(values, eligible=None, window=5, max_range=0.20, max_excursion=0.10) -> dict:
    """The SNIA PTS steady-state rule over a series (one value per round).

    Returns ``{"reached", "round", "window", "mean", "range_ratio", "excursion_ratio", "rule"}``.
    """
    vals = _args.numbers("values", values)
    el = None if eligible is None else _args.flags("eligible", eligible)
    win = _args.uint("window", window, lo=2)
    rng, exc = _args.number("max_range", max_range), _args.number("max_excursion", max_excursion)
    return json.loads(_core().steady_state(vals, el, win, rng, exc))


_uint = _args.uint


class Simulator:
    """A simulated drive that takes individual host commands (sector addresses).

    >>> s = Simulator({"drive": {"user_capacity": "64MiB", "op": 0.1}})
    >>> s.write(0, 8); s.trim(0, 8); s.security_erase(); s.set_max_address(100_000)

    Arguments out of range (negative, too large) raise :class:`opsim.errors.InputError`
    naming the argument.  After an internal error (a panic in the core) the drive's state is
    unknown: every later call raises :class:`opsim.errors.InternalError`.

    Threads may share a Simulator: its calls are serialised (one lock per drive, like the one
    command queue of a drive), so a call waits for the one in progress.
    """

    def __init__(self, config):
        text, fmt = _config_text(config)
        self._s = _core().Simulator(text, fmt, _base_dir(config))
        self._lock = threading.Lock()

    def _call(self, name: str, *args):
        """The core drive's ``name`` called with ``args``, one thread at a time (the core drive
        is borrowed mutably by each call: a second thread would get PyO3's "Already borrowed")."""
        with self._lock:
            return getattr(self._s, name)(*args)

    def _get(self, name: str):
        """The core drive's property ``name``, read under the same lock."""
        with self._lock:
            return getattr(self._s, name)

    def write(self, lba: int, sectors: int, stream: int = 0) -> None:
        self._call("write", _uint("lba", lba), _uint("sectors", sectors), _uint("stream", stream, 32))

    def read(self, lba: int, sectors: int) -> None:
        self._call("read", _uint("lba", lba), _uint("sectors", sectors))

    def trim(self, lba: int, sectors: int) -> None:
        self._call("trim", _uint("lba", lba), _uint("sectors", sectors))

    def read_token(self, lba: int):
        return self._call("read_token", _uint("lba", lba))

    def security_erase(self) -> None:
        self._call("security_erase")

    def set_max_address(self, sectors: int, volatile: bool = False) -> None:
        self._call("set_max_address", _uint("sectors", sectors), _args.flag("volatile", volatile))

    def power_cycle(self) -> None:
        self._call("power_cycle")

    def check(self) -> None:
        self._call("check")

    @property
    def counters(self) -> dict:
        return json.loads(self._call("counters"))

    @property
    def parallelism(self) -> dict:
        """The threads the drive's runs use and why (``perf.parallel``, docs/parallel.md)."""
        return json.loads(self._call("parallelism"))

    @property
    def max_address(self) -> int:
        return self._get("max_address")

    @property
    def free_blocks(self) -> int:
        return self._get("free_blocks")

    @property
    def mapped_pages(self) -> int:
        return self._get("mapped_pages")

    def describe(self) -> dict:
        return json.loads(self._call("describe"))

    def precondition(self) -> None:
        """Apply the configured preconditioning (fill or analytic) without running rounds.
        Ctrl-C raises KeyboardInterrupt (the drive stays usable, partly preconditioned)."""
        self._call("precondition")

    def run_for(self, host_bytes: int) -> None:
        """Drive the configured workload for ``host_bytes`` more host bytes.  Ctrl-C raises
        KeyboardInterrupt; the drive stays usable (stopped between two commands)."""
        if isinstance(host_bytes, float) and math.isfinite(host_bytes):
            host_bytes = int(host_bytes)  # (a byte count computed in floating point)
        self._call("run_for", _uint("host_bytes", host_bytes))

    def run(self, *, on_interrupt: str = "raise") -> SimResult:
        """Run the configured job on this drive (Ctrl-C: as :func:`simulate`)."""
        return SimResult(json.loads(self._call("run", _keep_interrupted(on_interrupt))))
