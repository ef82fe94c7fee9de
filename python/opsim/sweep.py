"""Parameter sweeps: many simulations from one grid file, in parallel on Dask.

    >>> import opsim
    >>> df = opsim.sweep("study.toml", "study.parquet")     # pandas DataFrame, one row per point
    >>> df.groupby(["drive.op", "ftl.gc"])["waf"].mean()

A grid file is a simulation config (docs/config.md) with a ``[sweep]`` table that says what
to vary: ``sweep.grid`` (a cartesian product over any config keys) and/or ``sweep.points``
(an explicit list), ``sweep.replicates`` runs of each with their own seed, and
``sweep.seed``.  The schema is in docs/sweeps.md.

Every point has an identity: the SHA-256 of its canonical flattened config (dotted keys,
sorted, canonical JSON).  Its seed is derived from the grid seed, that hash and the
replicate number, never from the order points are submitted or finish in, so a sweep gives
the same table serially, on a LocalCluster or on any cluster.  Results go to a Parquet file
that is only ever replaced whole (written to a temporary file, then renamed), so an
interruption leaves the previous complete file; a re-run skips the points it already holds
(matched by point id) and retries failed ones.

This module imports only the standard library at import time; the Rust core, pandas,
pyarrow, Dask and tqdm are imported when a sweep runs.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from ._version import __version__
from ._output import atomic_write
from .errors import CommandError, ConfigError, InputError, InternalError, OpsimError

#: keys of the ``[sweep]`` table
SWEEP_KEYS = ("name", "base", "seed", "replicates", "grid", "points", "documents")
#: refuse grids larger than this (a typo in a product can ask for billions of points)
MAX_POINTS = 1_000_000
#: columns that depend on the machine and the moment; everything else is deterministic
WALL_CLOCK_COLUMNS = ("wall_seconds",)
#: the Parquet key-value metadata key holding the sweep's description
META_KEY = b"opsim.sweep"
SCHEMA_VERSION = 1

_SECTION_ORDER = {"preset": 0, "drive": 1, "ftl": 2, "workload": 3, "run": 4, "timing": 5}

# (column, type, path in the `opsim simulate --json` document).  Types: f float64,
# i int64, b bool.  Column names are the paths, dotted.
_BASE_METRICS = [
    ("waf", "f", ("waf",)),
    ("op.user", "f", ("op", "user")),
    ("op.physical", "f", ("op", "physical")),
    ("op.native", "f", ("op", "native")),
    ("op.effective", "f", ("op", "effective")),
    ("drive.user_bytes", "i", ("drive", "user_bytes")),
    ("drive.physical_bytes", "i", ("drive", "physical_bytes")),
    ("drive.blocks", "i", ("drive", "blocks")),
    ("steady_state.reached", "b", ("steady_state", "reached")),
    ("steady_state.round", "i", ("steady_state", "round")),
    ("steady_state.mean", "f", ("steady_state", "mean")),
    ("steady_state.range_ratio", "f", ("steady_state", "range_ratio")),
    ("steady_state.excursion_ratio", "f", ("steady_state", "excursion_ratio")),
    ("measure_window.first_round", "i", ("measure_window", "first_round")),
    ("measure_window.last_round", "i", ("measure_window", "last_round")),
    ("measure_window.host_write_bytes", "i", ("measure_window", "host_write_bytes")),
    ("measure_window.nand_write_bytes", "i", ("measure_window", "nand_write_bytes")),
    ("measure_counters.host_write_pages", "i", ("measure_counters", "host_write_pages")),
    ("measure_counters.nand_write_pages", "i", ("measure_counters", "nand_write_pages")),
    ("measure_counters.gc_copy_pages", "i", ("measure_counters", "gc_copy_pages")),
    ("measure_counters.erases", "i", ("measure_counters", "erases")),
    ("measure_counters.rmw_pages", "i", ("measure_counters", "rmw_pages")),
    ("measure_counters.host_read_cmds", "i", ("measure_counters", "host_read_cmds")),
    ("wear.min", "i", ("wear", "min")),
    ("wear.mean", "f", ("wear", "mean")),
    ("wear.max", "i", ("wear", "max")),
    ("victims.mean_valid_fraction", "f", ("victims", "mean_valid_fraction")),
    ("free_blocks_min", "i", ("free_blocks_min",)),
]
_TIMED_METRICS = [
    ("timed.simulated_seconds", "f", ("timed", "simulated_seconds")),
    ("timed.measured_iops", "f", ("timed", "measured_iops")),
    ("timed.steady_iops", "f", ("timed", "steady_iops")),
    ("timed.steady_state.reached", "b", ("timed", "steady_state", "reached")),
    ("timed.steady_state.round", "i", ("timed", "steady_state", "round")),
    ("timed.phases.fob_end_s", "f", ("timed", "phases", "fob_end_s")),
    ("timed.phases.steady_start_s", "f", ("timed", "phases", "steady_start_s")),
] + [
    (f"timed.latency_us.{cls}.{q}", "f", ("timed", "latency_us", cls, q))
    for cls, qs in (("all", ("mean", "p50", "p90", "p99", "p99.9", "p99.99", "max")),
                    ("read", ("mean", "p50", "p99", "p99.9", "max")),
                    ("write", ("mean", "p50", "p99", "p99.9", "max")))
    for q in qs
]
_ERROR_COLUMNS = ["status", "error_type", "error_key", "error_message"]
_TAIL_COLUMNS = ["opsim_version", "wall_seconds"]
_ID_COLUMNS = ["point_id", "config_id", "replicate"]


# --------------------------------------------------------------------------- the grid


@dataclass(frozen=True)
class Point:
    """One simulation of a sweep."""

    index: int          #: position in grid order (points x grid product x replicates)
    point_id: str       #: hash of the flattened config including the derived seed
    config_id: str      #: hash of the flattened config without the seed (same for every replicate)
    replicate: int
    seed: int           #: ``run.seed`` of this point
    config: dict        #: flattened config: dotted key -> value, including ``run.seed``
    source: str         #: where in the grid file the point comes from (for messages)

    def nested(self) -> dict:
        return _unflatten(self.config)

    def config_json(self) -> str:
        return _canonical(self.nested())


@dataclass
class Grid:
    """A validated, expanded grid file."""

    points: list[Point]
    seed: int
    replicates: int
    name: str | None = None
    path: str | None = None
    config_columns: list[str] = field(default_factory=list)
    varying: list[str] = field(default_factory=list)
    timed: bool = False
    configs: int = 0
    documents: bool = False     #: keep each point's whole result document (column result_json)
    base_dir: str | None = None  #: relative paths in configs (traces) are relative to this

    @property
    def metrics(self) -> list[tuple[str, str, tuple]]:
        return _BASE_METRICS + (_TIMED_METRICS if self.timed else [])

    def describe(self) -> dict:
        return {"name": self.name, "file": self.path, "seed": self.seed, "replicates": self.replicates,
                "configs": self.configs, "points": len(self.points), "varying": self.varying,
                "timed": self.timed, "documents": self.documents}


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def derive_seed(grid_seed: int, config_hash: str, replicate: int) -> int:
    """The seed of a point: 53 bits of SHA-256 over the grid seed, the hash of the point's
    flattened config (without ``run.seed``) and its replicate number (exact in a float64)."""
    h = hashlib.sha256(f"opsim.sweep.seed/v1\0{grid_seed}\0{config_hash}\0{replicate}".encode()).digest()
    return int.from_bytes(h[:8], "big") >> 11


def _is_value(v) -> bool:
    """A TOML value that is also JSON (not a date or time); lists and tables may nest."""
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, (str, int, bool)):
        return True
    if isinstance(v, list):
        return all(_is_value(x) for x in v)
    if isinstance(v, Mapping):
        return all(isinstance(k, str) and _is_value(x) for k, x in v.items())
    return False


def _flatten(tbl: Mapping, prefix: str = "") -> dict:
    out = {}
    for k, v in tbl.items():
        key = f"{prefix}{k}"
        if isinstance(v, Mapping):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def _unflatten(flat: Mapping) -> dict:
    out: dict = {}
    for key, v in flat.items():
        parts = key.split(".")
        d = out
        for p in parts[:-1]:
            d = d.setdefault(p, {})
        d[parts[-1]] = v
    return out


def _type_name(v) -> str:
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list",
            dict: "table"}.get(type(v), type(v).__name__)


def _check_value(loc: str, v) -> None:
    """A config value is a string, number, boolean or a list of them or of tables; numbers are
    finite; no dates or times."""
    if not _is_value(v):
        raise ConfigError(f"{loc}: {v!r} is not a config value (strings, finite numbers, booleans, "
                          "lists and tables only)", key=loc)


def _toml(key: str):
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python < 3.11
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            raise InputError("reading grid files needs Python 3.11+ (tomllib) or the tomli package",
                             key=key) from None
    return tomllib


def _read_toml(path: str, key: str) -> dict:
    tomllib = _toml(key)
    if not os.path.exists(path):
        raise InputError(f"{key}: file {path} does not exist", key=key)
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{key}: {path} is not valid TOML: {e}", key=key) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{key}: cannot read {path}: {e}", key=key) from None


def _load_document(grid) -> tuple[dict, str | None]:
    if isinstance(grid, Mapping):
        return copy.deepcopy(dict(grid)), None
    if isinstance(grid, (str, os.PathLike)):
        path = os.fspath(grid)
        if "\n" in path and not os.path.exists(path):  # TOML text
            tomllib = _toml("grid")
            try:
                return tomllib.loads(path), None
            except tomllib.TOMLDecodeError as e:
                raise InputError(f"grid: not valid TOML: {e}", key="grid") from None
        return _read_toml(path, "grid"), os.path.abspath(path)
    raise InputError(f"grid must be a path to a TOML file or a dict, not {type(grid).__name__}", key="grid")


def _probe_errors(pairs: Iterable[tuple[str, str, str, Any]]) -> None:
    """Check that each (value's location, key's location, config key, value) parses in the
    simulator's schema: the key exists and the value has the right type or spelling.

    Each pair is checked on its own by the Rust core's parser, in a config that cannot build a
    drive (no capacity, or a 1-byte memory limit), so nothing is allocated.  Only parse errors
    count; value and combination errors are the point's business when it runs."""
    from .sim import _core

    core = _core()
    seen = set()
    for loc, key_loc, key, value in pairs:
        sig = (key, _canonical(value))
        if sig in seen:
            continue
        seen.add(sig)
        cfg: dict = {"drive": {}, "run": {"memory_limit": 1}}
        if key == "run.memory_limit":
            cfg["run"] = {}
        d = cfg
        parts = key.split(".")
        for p in parts[:-1]:
            nxt = d.get(p)
            if not isinstance(nxt, dict):
                nxt = d[p] = {}
            d = nxt
        d[parts[-1]] = value
        try:
            core.describe(_canonical(cfg), "json")
        except OpsimError as e:
            msg = str(e)
            if e.key and msg.startswith(f"{e.key}: "):
                msg = msg[len(e.key) + 2:]
            structural = msg.startswith("invalid config:") or (e.key == "preset" and key == "preset")
            if structural:
                msg = " ".join(msg.replace("invalid config: ", "", 1).split())
                where = key_loc if msg.startswith("unknown field") else loc
                raise ConfigError(f"{where}: {msg}", key=where) from None


def _grid_key_loc(dim: str, i: int, key: str) -> str:
    """Where the key ``key`` set by item ``i`` of grid dimension ``dim`` is written: the
    dimension itself for plain values, the item's own key for table items."""
    return f"sweep.grid.{dim}" if key == dim else _grid_loc(dim, i, key)


def _grid_loc(dim: str, i: int, key: str) -> str:
    """Where a value of grid dimension ``dim`` (item ``i``) setting config ``key`` is written."""
    return f"sweep.grid.{dim}[{i}]" + ("" if key == dim else f".{key[len(dim) + 1:]}")


def load_grid(grid) -> Grid:
    """Read, validate and expand a grid (a TOML path, TOML text or a dict)."""
    doc, path = _load_document(grid)
    sweep = doc.pop("sweep", None)
    if sweep is None:
        raise ConfigError("sweep: a grid file needs a [sweep] table with sweep.grid and/or sweep.points "
                          "(see docs/sweeps.md)", key="sweep")
    if not isinstance(sweep, Mapping):
        raise ConfigError(f"sweep: must be a table, not a {_type_name(sweep)}", key="sweep")
    for k in sweep:
        if k not in SWEEP_KEYS:
            raise ConfigError(f"sweep.{k}: unknown key; the [sweep] keys are {', '.join(SWEEP_KEYS)}",
                              key=f"sweep.{k}")

    name = sweep.get("name")
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"sweep.name: must be a string, not a {_type_name(name)}", key="sweep.name")
    seed = sweep.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ConfigError(f"sweep.seed: must be an integer from 0 to 2^64-1 (got {seed!r})", key="sweep.seed")
    documents = sweep.get("documents", False)
    if not isinstance(documents, bool):
        raise ConfigError(f"sweep.documents: must be true or false (got {documents!r})",
                          key="sweep.documents")
    reps = sweep.get("replicates", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= MAX_POINTS:
        raise ConfigError(f"sweep.replicates: must be a whole number of runs per point, at least 1 "
                          f"(got {reps!r})", key="sweep.replicates")

    # the base config: an optional file, then the grid file's own top-level keys over it
    base_doc: dict = {}
    if "base" in sweep:
        b = sweep["base"]
        if not isinstance(b, str):
            raise ConfigError(f"sweep.base: must be a path to a config file, not a {_type_name(b)}",
                              key="sweep.base")
        bpath = b if os.path.isabs(b) or path is None else os.path.join(os.path.dirname(path), b)
        base_doc = _read_toml(bpath, "sweep.base")
        if "sweep" in base_doc:
            raise ConfigError(f"sweep.base: {b} has its own [sweep] table; the base must be a plain config",
                              key="sweep.base")
    base = _flatten(base_doc)
    base.update(_flatten(doc))
    for k, v in base.items():
        _check_value(k, v)

    # the grid: dimensions, each a list of overrides (flat dicts)
    dims: list[tuple[str, list[dict]]] = []
    grid_tbl = sweep.get("grid")
    if grid_tbl is not None:
        if not isinstance(grid_tbl, Mapping):
            raise ConfigError(f"sweep.grid: must be a table of config keys and lists of values, "
                              f"not a {_type_name(grid_tbl)}", key="sweep.grid")

        def walk(tbl, prefix):
            for k, v in tbl.items():
                key = f"{prefix}{k}"
                if isinstance(v, Mapping):
                    if not v:
                        raise ConfigError(f"sweep.grid.{key}: an empty table; give lists of values",
                                          key=f"sweep.grid.{key}")
                    walk(v, key + ".")
                    continue
                loc = f"sweep.grid.{key}"
                if not isinstance(v, list):
                    raise ConfigError(f"{loc}: must be a list of values (got the {_type_name(v)} {v!r}); "
                                      "a single value belongs in the base config", key=loc)
                if not v:
                    raise ConfigError(f"{loc}: an empty list; give at least one value", key=loc)
                items, seen = [], {}
                for i, item in enumerate(v):
                    iloc = f"{loc}[{i}]"
                    if isinstance(item, Mapping):
                        ov = {f"{key}.{sk}": sv for sk, sv in _flatten(item).items()}
                    else:
                        ov = {key: item}
                    for ok, ovv in ov.items():
                        _check_value(_grid_loc(key, i, ok), ovv)
                    c = _canonical(ov)
                    if c in seen:
                        raise ConfigError(f"{iloc}: the same value as {loc}[{seen[c]}]", key=iloc)
                    seen[c] = i
                    items.append(ov)
                dims.append((key, items))

        walk(grid_tbl, "")

    # explicit points: each a table of overrides
    explicit: list[tuple[str, dict]] = []
    pts = sweep.get("points")
    if pts is not None:
        if not isinstance(pts, list):
            raise ConfigError(f"sweep.points: must be a list of tables ([[sweep.points]]), "
                              f"not a {_type_name(pts)}", key="sweep.points")
        if not pts:
            raise ConfigError("sweep.points: an empty list; give at least one point", key="sweep.points")
        for i, p in enumerate(pts):
            loc = f"sweep.points[{i}]"
            if not isinstance(p, Mapping):
                raise ConfigError(f"{loc}: must be a table of config keys, not a {_type_name(p)}", key=loc)
            ov = _flatten(p)
            for k, v in ov.items():
                _check_value(f"{loc}.{k}", v)
            explicit.append((loc, ov))

    if not dims and not explicit:
        raise ConfigError("sweep.grid: empty; give sweep.grid (config keys with lists of values) "
                          "and/or sweep.points (a list of tables)", key="sweep.grid")

    # run.seed is derived, never given
    seed_msg = ("a sweep derives each point's seed from sweep.seed and the point's config; set "
                "sweep.seed (and sweep.replicates for several seeds per point) instead of run.seed")
    if "run.seed" in base:
        raise ConfigError(f"run.seed: {seed_msg}", key="run.seed")
    for key, items in dims:
        for i, ov in enumerate(items):
            if "run.seed" in ov:
                loc = _grid_key_loc(key, i, "run.seed")
                raise ConfigError(f"{loc}: {seed_msg}", key=loc)
    for loc, ov in explicit:
        if "run.seed" in ov:
            raise ConfigError(f"{loc}.run.seed: {seed_msg}", key=f"{loc}.run.seed")

    # keys of different dimensions, or of a dimension and a point, must not overlap
    def overlap(a, b):
        return a == b or a.startswith(b + ".") or b.startswith(a + ".")

    for (i, (ka, _)), (j, (kb, _)) in itertools.combinations(enumerate(dims), 2):
        if overlap(ka, kb):
            raise ConfigError(f"sweep.grid.{kb}: overlaps sweep.grid.{ka}; vary a key in one place",
                              key=f"sweep.grid.{kb}")
    for loc, ov in explicit:
        for k in ov:
            for kd, _ in dims:
                if overlap(k, kd):
                    raise ConfigError(f"{loc}.{k}: also varied by sweep.grid.{kd}; a key is either in the "
                                      "grid or in the points", key=f"{loc}.{k}")

    # the whole schema check, one (key, value) at a time
    pairs = [(k, k, k, v) for k, v in base.items()]
    for key, items in dims:
        for i, ov in enumerate(items):
            pairs += [(_grid_loc(key, i, k), _grid_key_loc(key, i, k), k, v) for k, v in ov.items()]
    for loc, ov in explicit:
        pairs += [(f"{loc}.{k}", f"{loc}.{k}", k, v) for k, v in ov.items()]
    _probe_errors(pairs)

    n_configs = max(len(explicit), 1) * math.prod(len(items) for _, items in dims)
    if n_configs * reps > MAX_POINTS:
        raise ConfigError(f"sweep.grid: {n_configs:,} configs x {reps} replicates is more than "
                          f"{MAX_POINTS:,} points", key="sweep.grid")

    points: list[Point] = []
    by_config: dict[str, str] = {}
    by_id: set[str] = set()
    for loc, ov in (explicit or [(None, {})]):
        for combo in itertools.product(*(list(enumerate(items)) for _, items in dims)):
            flat = dict(base)
            flat.update(ov)
            for _, c in combo:
                flat.update(c)
            where = ", ".join(f"{key}[{i}]" for (key, _), (i, _) in zip(dims, combo))
            if not where:
                source = loc
            else:
                source = f"sweep.grid ({where})" if loc is None else f"{loc} x sweep.grid ({where})"
            ch = _sha(_canonical(flat))
            if ch in by_config:
                key = loc or "sweep.grid"
                raise ConfigError(f"{key}: {source} gives the same config as {by_config[ch]} (after merging "
                                  "with the base config); every point must differ", key=key)
            by_config[ch] = source
            for r in range(reps):
                s = derive_seed(seed, ch, r)
                full = dict(flat)
                full["run.seed"] = s
                pid = _sha(_canonical(full))[:16]
                if pid in by_id:  # pragma: no cover - a 64-bit collision
                    raise InternalError(f"point id collision ({pid}); change sweep.seed")
                by_id.add(pid)
                points.append(Point(len(points), pid, ch[:16], r, s, full, source))

    cols = sorted({k for p in points for k in p.config},
                  key=lambda k: (_SECTION_ORDER.get(k.split(".")[0], 9), k))
    varying = [c for c in cols if c != "run.seed"
               and len({_canonical(p.config.get(c)) for p in points}) > 1]
    timed = any(k == "preset" or k.startswith("timing.") for p in points for k in p.config)
    return Grid(points=points, seed=seed, replicates=reps, name=name, path=path, config_columns=cols,
                varying=varying, timed=timed, configs=n_configs, documents=documents,
                base_dir=os.path.dirname(path) if path else os.getcwd())


# --------------------------------------------------------------------------- one point


def _dig(d, path):
    for p in path:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def metrics(data: Mapping) -> dict:
    """The sweep's metric columns from one ``opsim simulate`` result document."""
    out = {}
    for col, _, path in _BASE_METRICS + _TIMED_METRICS:
        out[col] = _dig(data, path)
    t = data.get("timed")
    if t:
        for cls in ("read", "write"):  # no commands of that kind: no latency, not zeros
            if not _dig(t, ("latency_us", cls, "count")):
                for col, _, path in _TIMED_METRICS:
                    if path[:3] == ("timed", "latency_us", cls):
                        out[col] = None
    return out


def _error_fields(e: BaseException) -> dict:
    return {"status": "error", "error_type": type(e).__name__, "error_key": getattr(e, "key", None),
            "error_message": str(e) or repr(e)}


def run_point(config_json: str, document: bool = False, base_dir: str | None = None) -> dict:
    """Simulate one point (a config as JSON text); never raises: an error becomes the row.
    With ``document``, the row keeps the whole result document (without its machine-dependent
    ``perf``) as JSON text in ``result_json``.  Relative paths in the config (traces) are
    taken relative to ``base_dir``.

    This is the function the Dask workers run; it needs only ``opsim`` importable there.
    """
    t0 = time.perf_counter()
    try:
        from .sim import _core

        data = json.loads(_core().simulate(config_json, "json", base_dir))
        row = {"status": "ok", "error_type": None, "error_key": None, "error_message": None}
        row.update(metrics(data))
        if document:
            data.pop("perf", None)
            row["result_json"] = json.dumps(data, separators=(",", ":"))
    except Exception as e:  # recorded, never raised: one bad point must not stop a sweep
        row = _error_fields(e)
    row["opsim_version"] = __version__
    row["wall_seconds"] = time.perf_counter() - t0
    return row


# --------------------------------------------------------------------------- the results table


def _config_arrow_type(values: list):
    """One column type for a config key over every point: the values' own type when they
    share one (int and float together: float), otherwise strings (numbers as JSON)."""
    import pyarrow as pa

    vals = [v for v in values if v is not None]
    kinds = {type(v) for v in vals}
    if kinds == {bool}:
        return pa.bool_(), None
    if kinds == {int} and all(-2**63 <= v < 2**63 for v in vals):
        return pa.int64(), None
    if kinds and kinds <= {int, float} and all(isinstance(v, float) or abs(v) <= 2**53 for v in vals):
        return pa.float64(), float
    if kinds == {str} or not kinds:
        return pa.string(), None
    return pa.string(), lambda v: v if isinstance(v, str) else json.dumps(v)


def _arrow_type(code: str):
    import pyarrow as pa

    return {"f": pa.float64(), "i": pa.int64(), "b": pa.bool_()}[code]


def _cast(code, v):
    if v is None:
        return None
    if code == "f":
        return float(v)
    if code == "i":
        return int(v)
    return bool(v)


def columns(grid: Grid) -> dict:
    """The table's columns by role."""
    return {"id": list(_ID_COLUMNS), "config": list(grid.config_columns), "status": list(_ERROR_COLUMNS),
            "metrics": [c for c, _, _ in grid.metrics],
            "other": (["result_json"] if grid.documents else []) + list(_TAIL_COLUMNS),
            "wall_clock": list(WALL_CLOCK_COLUMNS)}


def build_table(grid: Grid, rows: Mapping[str, dict]):
    """The results as a pyarrow Table: one row per point that has a result, in grid order."""
    import pyarrow as pa

    done = [p for p in grid.points if p.point_id in rows]
    arrays, fields = [], []

    def add(name, typ, values):
        fields.append(pa.field(name, typ))
        arrays.append(pa.array(values, type=typ))

    add("point_id", pa.string(), [p.point_id for p in done])
    add("config_id", pa.string(), [p.config_id for p in done])
    add("replicate", pa.int64(), [p.replicate for p in done])
    for c in grid.config_columns:
        typ, conv = _config_arrow_type([p.config.get(c) for p in grid.points])
        vals = [p.config.get(c) for p in done]
        if conv is not None:
            vals = [None if v is None else conv(v) for v in vals]
        add(c, typ, vals)
    for c in _ERROR_COLUMNS:
        add(c, pa.string(), [rows[p.point_id].get(c) for p in done])
    for col, code, _ in grid.metrics:
        add(col, _arrow_type(code), [_cast(code, rows[p.point_id].get(col)) for p in done])
    if grid.documents:
        add("result_json", pa.string(), [rows[p.point_id].get("result_json") for p in done])
    add("opsim_version", pa.string(), [rows[p.point_id].get("opsim_version") for p in done])
    add("wall_seconds", pa.float64(), [_cast("f", rows[p.point_id].get("wall_seconds")) for p in done])
    meta = {"schema": SCHEMA_VERSION, "opsim_version": __version__, "grid": grid.describe(),
            "columns": columns(grid)}
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata={META_KEY: _canonical(meta)}))


def to_frame(table):
    """A pandas DataFrame of a results table (the same as ``pandas.read_parquet`` gives)."""
    return table.to_pandas()


def _write_atomic(table, path: str) -> None:
    """Replace the results file whole (see :func:`opsim._output.atomic_write`); the temporary
    file is named ``.NAME.*.tmp`` so that the next holder of the lock can clear one left by a
    writer that was killed."""
    import pyarrow.parquet as pq

    import pyarrow as pa

    try:
        atomic_write(path, lambda f: pq.write_table(table, f), binary=True,
                     prefix=f".{os.path.basename(path)}.")
    except pa.ArrowException as e:
        raise OpsimError(f"cannot write the results to {path}: {e}") from None


class _Store:
    """The results file: previous rows in, atomic whole-file writes out, and a lock so two
    sweeps never write the same file."""

    def __init__(self, path: str | None, grid: Grid, fresh: bool):
        self.path = path
        self.grid = grid
        self.rows: dict[str, dict] = {}
        self.stale = 0
        self._lock = None
        if path is None:
            return
        # a symbolic link is followed: the lock and the writes are on the file it names, so a
        # second sweep through another name of the same file finds the lock, and the link stays
        path = os.path.realpath(path)
        self.path = path
        d = os.path.dirname(path)
        if not os.path.isdir(d):
            raise InputError(f"output: directory {d} does not exist", key="output")
        if os.path.isdir(path):
            raise InputError(f"output: {path} is a directory; give a .parquet file path", key="output")
        self._acquire_lock()
        if fresh or not os.path.exists(path):
            return
        try:
            self._load()
        except BaseException:
            self.close()
            raise

    def _acquire_lock(self):
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not a POSIX system: no lock
            return
        lock_path = os.path.join(os.path.dirname(self.path), f".{os.path.basename(self.path)}.lock")
        while True:
            try:
                fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                raise InputError(f"output: cannot write in {os.path.dirname(self.path)}: {e.strerror}",
                                 key="output") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise InputError(f"output: another opsim sweep is writing {self.path} (lock {lock_path})",
                                 key="output") from None
            try:  # the holder before us may have removed the file after we opened it
                same = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                self._lock, self._lock_path = fd, lock_path
                break
            os.close(fd)
        # temporary files of a writer that was killed mid-write (we hold the lock: no one else writes)
        d, name = os.path.split(self.path)
        for f in os.listdir(d):
            if f.startswith(f".{name}.") and f.endswith(".tmp"):
                try:
                    os.unlink(os.path.join(d, f))
                except OSError:
                    pass

    def close(self):
        if self._lock is not None:
            try:
                os.unlink(self._lock_path)
            except FileNotFoundError:
                pass
            os.close(self._lock)
            self._lock = None

    def _load(self):
        import pyarrow.parquet as pq

        try:
            pf = pq.ParquetFile(self.path)
            meta = (pf.schema_arrow.metadata or {}).get(META_KEY)
            table = pf.read()
        except Exception as e:
            raise InputError(f"output: {self.path} exists but is not a readable Parquet file ({e}); "
                             "give another -o or --fresh to replace it", key="output") from None
        if meta is None:
            raise InputError(f"output: {self.path} exists and is not an opsim sweep result; give another -o "
                             "or --fresh to replace it", key="output")
        ids = {p.point_id for p in self.grid.points}
        keep = (set(_ERROR_COLUMNS) | {c for c, _, _ in _BASE_METRICS + _TIMED_METRICS} | set(_TAIL_COLUMNS)
                | {"result_json"})
        records = table.to_pylist()
        for r in records:
            pid = r.get("point_id")
            if pid in ids:
                self.rows[pid] = {k: v for k, v in r.items() if k in keep}
            else:
                self.stale += 1
        if records and not self.rows:
            raise InputError(f"output: {self.path} holds {len(records)} results of another grid (none of its "
                             "points is in this one); give another -o, or --fresh to replace it",
                             key="output")

    def write(self):
        if self.path is not None:
            _write_atomic(build_table(self.grid, self.rows), self.path)


# --------------------------------------------------------------------------- running


@dataclass
class SweepOutcome:
    """What :func:`run_sweep` did, and the table."""

    grid: Grid
    table: Any                  #: pyarrow.Table, one row per point with a result, grid order
    output: str | None
    summary: dict

    @property
    def frame(self):
        df = to_frame(self.table)
        df.attrs["sweep"] = self.summary
        return df


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover
        return os.cpu_count() or 1


def _progress_bar(total: int, enabled: bool | None):
    """tqdm on stderr; ``enabled=None``: only when stderr is a terminal."""
    from tqdm import tqdm

    disable = (not sys.stderr.isatty()) if enabled is None else not enabled
    return tqdm(total=total, desc="opsim sweep", unit="pt", file=sys.stderr, disable=disable,
                dynamic_ncols=True, smoothing=0.05)


class _Checkpoint:
    """Write the results file at most every ``interval`` seconds, and never spend more than
    about a tenth of the time writing it."""

    def __init__(self, store: _Store, interval: float):
        self.store, self.interval = store, interval
        self.last = time.monotonic()
        self.cost = 0.0
        self.dirty = False

    def mark(self):
        self.dirty = True
        if time.monotonic() - self.last >= max(self.interval, 10 * self.cost):
            self.flush()

    def flush(self):
        if not self.dirty:
            return
        t0 = time.monotonic()
        self.store.write()
        self.last = time.monotonic()
        self.cost = self.last - t0
        self.dirty = False


def _connect(scheduler, workers, client):
    """(client, cluster or None, description).  The caller closes what it opened."""
    import logging

    if client is not None:
        return client, None, {"runner": "client", "scheduler": client.scheduler.address,
                              "workers": len(client.nthreads())}
    from distributed import Client, LocalCluster

    if scheduler is not None:
        if not isinstance(scheduler, str) or "://" not in scheduler:
            raise InputError(f"scheduler: {scheduler!r} is not a scheduler address (tcp://HOST:PORT)",
                             key="scheduler")
        try:
            c = Client(scheduler, timeout="15s", set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise CommandError(f"cannot connect to the Dask scheduler at {scheduler}: {e}") from None
        except ValueError as e:
            raise InputError(f"scheduler: {e}", key="scheduler") from None
        return c, None, {"runner": "scheduler", "scheduler": scheduler, "workers": len(c.nthreads())}
    n = workers or _cpu_count()
    try:
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                               silence_logs=logging.ERROR)
        c = Client(cluster, set_as_default=False)
        # Ctrl-C reaches the whole process group: let the workers of our own cluster ignore it,
        # so that this process saves what has finished and shuts them down in order
        c.register_plugin(_ignore_sigint_plugin())
    except Exception as e:
        raise CommandError(f"cannot start a Dask LocalCluster with {n} workers: {e}") from None
    return c, cluster, {"runner": "local-cluster", "scheduler": cluster.scheduler_address, "workers": n}


def _ignore_sigint_plugin():
    """A Dask worker plugin (run on every worker, restarted ones too) that makes the worker
    ignore SIGINT.  Built here so that importing opsim does not import distributed."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class IgnoreSigint(WorkerPlugin):
        name = "opsim-ignore-sigint"

        def setup(self, worker):
            import signal
            import threading

            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)

    return IgnoreSigint()


def _run_dask(client, todo: list[Point], record: Callable[[Point, dict], None], g: Grid) -> None:
    from distributed import as_completed

    nthreads = max(1, sum(client.nthreads().values()))
    window = max(16, 4 * nthreads)
    token = uuid.uuid4().hex[:8]
    pending = iter(todo)
    inflight: dict[str, tuple[Point, Any]] = {}

    def submit(p: Point):
        f = client.submit(run_point, p.config_json(), g.documents, g.base_dir,
                          key=f"opsim-point-{p.point_id}-{token}", pure=False)
        inflight[f.key] = (p, f)
        return f

    ac = as_completed([submit(p) for p in itertools.islice(pending, window)], loop=client.loop)
    try:
        for fut in ac:
            p, _ = inflight.pop(fut.key)
            try:
                row = fut.result()
            except Exception as e:  # the worker died (KilledWorker), was lost, ...: record, go on
                row = _error_fields(e)
                row["opsim_version"] = None
                row["wall_seconds"] = None
            fut.release()
            record(p, row)
            nxt = next(pending, None)
            if nxt is not None:
                ac.add(submit(nxt))
    finally:
        if inflight:  # interrupted: drop what has not finished
            _quietly(lambda: client.cancel([f for _, f in inflight.values()]))


def run_sweep(grid, output: str | os.PathLike | None = None, *, workers: int | None = None,
              scheduler: str | None = None, client=None, limit: int | None = None, fresh: bool = False,
              progress: bool | None = False, checkpoint_seconds: float = 1.0,
              on_interrupt: str = "raise") -> SweepOutcome:
    """Run (or resume) a sweep; see :func:`sweep`.  With ``on_interrupt="return"`` a
    KeyboardInterrupt ends the run like ``limit`` does (results kept, ``summary["interrupted"]``)
    instead of propagating after the results are saved."""
    t0 = time.perf_counter()
    g = grid if isinstance(grid, Grid) else load_grid(grid)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 0):
        raise InputError(f"workers: must be 0 (serial) or a number of worker processes (got {workers!r})",
                         key="workers")
    if workers is not None and (scheduler is not None or client is not None):
        raise InputError("workers: an existing cluster has its own workers; give workers or a scheduler, "
                         "not both", key="workers")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise InputError(f"limit: must be a number of points, 0 or more (got {limit!r})", key="limit")
    import pyarrow.parquet  # noqa: F401  (imported now, not in the middle of the progress bar)

    store = _Store(None if output is None else os.fspath(output), g, fresh)
    try:
        done_before = {pid for pid, r in store.rows.items() if r.get("status") == "ok"
                       and (r.get("result_json") is not None or not g.documents)}
        todo = [p for p in g.points if p.point_id not in done_before]
        summary: dict = {
            "points": len(g.points), "skipped": len(done_before),
            "retried": sum(1 for p in todo if p.point_id in store.rows),
            "to_run": len(todo) if limit is None else min(limit, len(todo)),
            "computed": 0, "failed": 0, "stale_dropped": store.stale, "interrupted": False,
            "runner": None, "workers": 0, "scheduler": None, "output": store.path,
        }
        if limit is not None:
            todo = todo[:limit]
        check = _Checkpoint(store, checkpoint_seconds)
        check.dirty = bool(store.stale or fresh)
        bar = None

        def record(p: Point, row: dict):
            store.rows[p.point_id] = row
            summary["computed"] += 1
            if row.get("status") != "ok":
                summary["failed"] += 1
            if bar is not None:
                if summary["failed"]:
                    bar.set_postfix(failed=summary["failed"], refresh=False)
                bar.update(1)
            check.mark()

        cl = cluster = None
        try:
            if todo and workers == 0:
                summary["runner"] = "serial"
                bar = _progress_bar(len(todo), progress)
                for p in todo:
                    record(p, run_point(p.config_json(), g.documents, g.base_dir))
            elif todo:
                cl, cluster, info = _connect(scheduler, workers, client)
                summary.update(info)
                bar = _progress_bar(len(todo), progress)
                _run_dask(cl, todo, record, g)
        except KeyboardInterrupt:
            summary["interrupted"] = True
            if on_interrupt != "return":
                raise
        finally:
            if bar is not None:
                bar.close()
            if cl is not None and cl is not client:
                _quietly(cl.close)
            if cluster is not None:
                _quietly(cluster.close)
            check.flush()   # also when interrupted: what finished is kept
        ok = sum(1 for pid, r in store.rows.items() if r.get("status") == "ok")
        summary.update(ok=ok, errors=len(store.rows) - ok, pending=len(g.points) - ok,
                       wall_seconds=time.perf_counter() - t0)
        return SweepOutcome(grid=g, table=build_table(g, store.rows), output=store.path, summary=summary)
    finally:
        store.close()


def _quietly(fn):
    try:
        fn()
    except Exception:
        pass


def sweep(grid, output: str | os.PathLike | None = None, *, workers: int | None = None,
          scheduler: str | None = None, client=None, limit: int | None = None, fresh: bool = False,
          progress: bool | None = False):
    """Run a sweep and return its results as a pandas DataFrame (one row per point).

    ``grid``: a grid file path, TOML text or a dict with the same structure (docs/sweeps.md).
    ``output``: a Parquet file; the sweep resumes from it (points already there are skipped,
    failed ones retried) and it is rewritten atomically as points finish.  Without it
    nothing is written.  ``workers``: 0 runs the points one after another in this process;
    N (default: every CPU) starts a Dask LocalCluster of N processes.  ``scheduler``
    (``tcp://HOST:PORT``) or ``client`` (a ``distributed.Client``) runs on an existing cluster
    instead.  ``limit``: run at most this many of the points still to do, then stop.
    ``fresh``: ignore (and replace) what ``output`` holds.

    The table is the same, apart from ``wall_seconds``, however the points are run.
    ``df.attrs["sweep"]`` holds the counts (computed, skipped, failed, ...).
    """
    return run_sweep(grid, output, workers=workers, scheduler=scheduler, client=client, limit=limit,
                     fresh=fresh, progress=progress).frame


__all__ = ["sweep", "run_sweep", "load_grid", "Grid", "Point", "SweepOutcome", "run_point", "metrics",
           "build_table", "derive_seed", "columns", "WALL_CLOCK_COLUMNS"]
