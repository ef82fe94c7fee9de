"""A sweep's grid file: the ``[sweep]`` table read and checked, and the points it names, each
with its identity (the SHA-256 of its canonical flattened config) and its seed (derived from
the grid seed, that identity and the replicate number, never from the order points run in)."""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import userfile
from ..errors import ConfigError, InputError, InternalError, OpsimError, SchemaError, UnknownKeyError
from .columns import _BASE_METRICS, _TIMED_METRICS

#: keys of the ``[sweep]`` table
SWEEP_KEYS = ("name", "base", "seed", "replicates", "grid", "points", "documents")


#: refuse grids larger than this (a typo in a product can ask for billions of points)
MAX_POINTS = 1_000_000


_SECTION_ORDER = {"preset": 0, "drive": 1, "ftl": 2, "workload": 3, "run": 4, "timing": 5}


@dataclass(frozen=True)
class Point:
    """One simulation of a sweep."""

    index: int  #: position in grid order (points x grid product x replicates)
    point_id: str  #: hash of the flattened config including the derived seed
    config_id: str  #: hash of the flattened config without the seed (same for every replicate)
    replicate: int
    seed: int  #: ``run.seed`` of this point
    config: dict  #: flattened config: dotted key -> value, including ``run.seed``
    source: str  #: where in the grid file the point comes from (for messages)

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
    documents: bool = False  #: keep each point's whole result document (column result_json)
    base_dir: str | None = None  #: relative paths in configs (traces, drive files) are relative to this

    @property
    def metrics(self) -> list[tuple[str, str, tuple]]:
        return _BASE_METRICS + (_TIMED_METRICS if self.timed else [])

    def describe(self) -> dict:
        return {
            "name": self.name,
            "file": self.path,
            "seed": self.seed,
            "replicates": self.replicates,
            "configs": self.configs,
            "points": len(self.points),
            "varying": self.varying,
            "timed": self.timed,
            "documents": self.documents,
        }


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
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "table"}.get(
        type(v), type(v).__name__
    )


def _check_value(loc: str, v) -> None:
    """A config value is a string, number, boolean or a list of them or of tables; numbers are
    finite; no dates or times."""
    if not _is_value(v):
        raise ConfigError(
            f"{loc}: {v!r} is not a config value (strings, finite numbers, booleans, lists and tables only)", key=loc
        )


def _read_toml(path: str, key: str) -> dict:
    # a regular file (a FIFO or device refused unread), capped, nested at most MAX_NESTING levels
    return userfile.load_toml(path, what=f"{key}: file", key=key)


def _load_document(grid) -> tuple[dict, str | None]:
    if isinstance(grid, Mapping):
        return copy.deepcopy(dict(grid)), None
    if isinstance(grid, (str, os.PathLike)):
        path = os.fspath(grid)
        if "\n" in path and not os.path.exists(path):  # TOML text
            return userfile.loads_toml(path, source="grid", key="grid"), None
        return _read_toml(path, "grid"), os.path.abspath(path)
    raise InputError(f"grid must be a path to a TOML file or a dict, not {type(grid).__name__}", key="grid")


def _probe_errors(pairs: Iterable[tuple[str, str, str, Any]], base_dir: str | None = None) -> None:
    """Check that each (value's location, key's location, config key, value) parses in the
    simulator's schema: the key exists and the value has the right type or spelling (and a
    drive file ``preset`` names, relative to ``base_dir``, exists and reads).

    Each pair is checked on its own by the Rust core's parser, in a config that cannot build a
    drive (no capacity, or a 1-byte memory limit), so nothing is allocated.  Only parse errors
    count, and the errors of a value's own range (the core's error names the key itself);
    combination errors are the point's business when it runs."""
    from ..sim import _core

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
            core.describe(_canonical(cfg), "json", base_dir=base_dir)
        except SchemaError as e:
            where = key_loc if isinstance(e, UnknownKeyError) else loc
            raise ConfigError(f"{where}: {' '.join(e.detail.split())}", key=where) from None
        except OpsimError as e:
            # the core checks a value's own range before the drive it is in; an error naming
            # the probed key itself is that (``drive.op = -1``, ``pages_per_block = 0``): the
            # value's own, refused now.  Any other (no capacity here, the 1-byte memory
            # limit) is a combination's: the point's business when it runs
            if getattr(e, "key", None) == key:
                raise ConfigError(f"{loc}: {' '.join(e.detail.split())}", key=loc) from None


def _grid_key_loc(dim: str, i: int, key: str) -> str:
    """Where the key ``key`` set by item ``i`` of grid dimension ``dim`` is written: the
    dimension itself for plain values, the item's own key for table items."""
    return f"sweep.grid.{dim}" if key == dim else _grid_loc(dim, i, key)


def _grid_loc(dim: str, i: int, key: str) -> str:
    """Where a value of grid dimension ``dim`` (item ``i``) setting config ``key`` is written."""
    return f"sweep.grid.{dim}[{i}]" + ("" if key == dim else f".{key[len(dim) + 1 :]}")


def _sweep_table(doc: dict) -> Mapping:
    """The ``[sweep]`` table, taken out of ``doc``: present, a table, only known keys."""
    sweep = doc.pop("sweep", None)
    if sweep is None:
        raise ConfigError(
            "sweep: a grid file needs a [sweep] table with sweep.grid and/or sweep.points (see docs/sweeps.md)",
            key="sweep",
        )
    if not isinstance(sweep, Mapping):
        raise ConfigError(f"sweep: must be a table, not a {_type_name(sweep)}", key="sweep")
    for k in sweep:
        if k not in SWEEP_KEYS:
            raise ConfigError(f"sweep.{k}: unknown key; the [sweep] keys are {', '.join(SWEEP_KEYS)}", key=f"sweep.{k}")
    return sweep


def _sweep_settings(sweep: Mapping) -> tuple[str | None, int, bool, int]:
    """(name, seed, documents, replicates), each checked."""
    name = sweep.get("name")
    if name is not None and not isinstance(name, str):
        raise ConfigError(f"sweep.name: must be a string, not a {_type_name(name)}", key="sweep.name")
    seed = sweep.get("seed", 1)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ConfigError(f"sweep.seed: must be an integer from 0 to 2^64-1 (got {seed!r})", key="sweep.seed")
    documents = sweep.get("documents", False)
    if not isinstance(documents, bool):
        raise ConfigError(f"sweep.documents: must be true or false (got {documents!r})", key="sweep.documents")
    reps = sweep.get("replicates", 1)
    if isinstance(reps, bool) or not isinstance(reps, int) or not 1 <= reps <= MAX_POINTS:
        raise ConfigError(
            f"sweep.replicates: must be a whole number of runs per point, at least 1 (got {reps!r})",
            key="sweep.replicates",
        )
    return name, seed, documents, reps


def _base_config(sweep: Mapping, doc: dict, path: str | None) -> dict:
    """The base config, flattened: the ``sweep.base`` file (relative to the grid file), then the
    grid file's own top-level keys over it."""
    base_doc: dict = {}
    if "base" in sweep:
        b = sweep["base"]
        if not isinstance(b, str):
            raise ConfigError(f"sweep.base: must be a path to a config file, not a {_type_name(b)}", key="sweep.base")
        bpath = b if os.path.isabs(b) or path is None else os.path.join(os.path.dirname(path), b)
        base_doc = _read_toml(bpath, "sweep.base")
        if "sweep" in base_doc:
            raise ConfigError(
                f"sweep.base: {b} has its own [sweep] table; the base must be a plain config", key="sweep.base"
            )
    base = _flatten(base_doc)
    base.update(_flatten(doc))
    for k, v in base.items():
        _check_value(k, v)
    return base


def _dimension(key: str, v) -> list[dict]:
    """The overrides (flat dicts) of grid dimension ``key`` with the values ``v``: a non-empty
    list of distinct config values or tables."""
    loc = f"sweep.grid.{key}"
    if not isinstance(v, list):
        raise ConfigError(
            f"{loc}: must be a list of values (got the {_type_name(v)} {v!r}); a single value belongs in the base config",
            key=loc,
        )
    if not v:
        raise ConfigError(f"{loc}: an empty list; give at least one value", key=loc)
    items: list[dict] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(v):
        iloc = f"{loc}[{i}]"
        ov = {f"{key}.{sk}": sv for sk, sv in _flatten(item).items()} if isinstance(item, Mapping) else {key: item}
        for ok, ovv in ov.items():
            _check_value(_grid_loc(key, i, ok), ovv)
        c = _canonical(ov)
        if c in seen:
            raise ConfigError(f"{iloc}: the same value as {loc}[{seen[c]}]", key=iloc)
        seen[c] = i
        items.append(ov)
    return items


def _grid_dimensions(sweep: Mapping) -> list[tuple[str, list[dict]]]:
    """``sweep.grid``: (config key, its overrides) per dimension, nested tables walked in order."""
    dims: list[tuple[str, list[dict]]] = []
    grid_tbl = sweep.get("grid")
    if grid_tbl is None:
        return dims
    if not isinstance(grid_tbl, Mapping):
        raise ConfigError(
            f"sweep.grid: must be a table of config keys and lists of values, not a {_type_name(grid_tbl)}",
            key="sweep.grid",
        )

    def walk(tbl, prefix):
        for k, v in tbl.items():
            key = f"{prefix}{k}"
            if isinstance(v, Mapping):
                if not v:
                    raise ConfigError(
                        f"sweep.grid.{key}: an empty table; give lists of values", key=f"sweep.grid.{key}"
                    )
                walk(v, key + ".")
            else:
                dims.append((key, _dimension(key, v)))

    walk(grid_tbl, "")
    return dims


def _explicit_points(sweep: Mapping) -> list[tuple[str, dict]]:
    """``sweep.points``: (where, flat overrides) per point."""
    explicit: list[tuple[str, dict]] = []
    pts = sweep.get("points")
    if pts is None:
        return explicit
    if not isinstance(pts, list):
        raise ConfigError(
            f"sweep.points: must be a list of tables ([[sweep.points]]), not a {_type_name(pts)}",
            key="sweep.points",
        )
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
    return explicit


def _check_no_run_seed(base: dict, dims: list, explicit: list) -> None:
    """``run.seed`` is derived, never given: not in the base, the grid or the points."""
    seed_msg = (
        "a sweep derives each point's seed from sweep.seed and the point's config; set "
        "sweep.seed (and sweep.replicates for several seeds per point) instead of run.seed"
    )
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


def _overlap(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _check_overlaps(dims: list, explicit: list) -> None:
    """Keys of different dimensions, or of a dimension and a point, must not overlap."""
    for (_i, (ka, _)), (_j, (kb, _)) in itertools.combinations(enumerate(dims), 2):
        if _overlap(ka, kb):
            raise ConfigError(
                f"sweep.grid.{kb}: overlaps sweep.grid.{ka}; vary a key in one place", key=f"sweep.grid.{kb}"
            )
    for loc, ov in explicit:
        for k in ov:
            for kd, _ in dims:
                if _overlap(k, kd):
                    raise ConfigError(
                        f"{loc}.{k}: also varied by sweep.grid.{kd}; a key is either in the grid or in the points",
                        key=f"{loc}.{k}",
                    )


def _check_schema(base: dict, dims: list, explicit: list, base_dir: str) -> None:
    """The whole schema check, one (key, value) at a time."""
    pairs = [(k, k, k, v) for k, v in base.items()]
    for key, items in dims:
        for i, ov in enumerate(items):
            pairs += [(_grid_loc(key, i, k), _grid_key_loc(key, i, k), k, v) for k, v in ov.items()]
    for loc, ov in explicit:
        pairs += [(f"{loc}.{k}", f"{loc}.{k}", k, v) for k, v in ov.items()]
    _probe_errors(pairs, base_dir)


def _expand(base: dict, dims: list, explicit: list, seed: int, reps: int) -> list[Point]:
    """Every point: each explicit point (or the grid alone) x the grid product x the replicates,
    in that order; two configs alike after merging with the base are an error."""
    points: list[Point] = []
    by_config: dict[str, str] = {}
    by_id: set[str] = set()
    configs: list[tuple[str | None, dict]] = [*explicit] if explicit else [(None, {})]  # None: the grid alone
    for loc, ov in configs:
        for combo in itertools.product(*(list(enumerate(items)) for _, items in dims)):
            flat = dict(base)
            flat.update(ov)
            for _, c in combo:
                flat.update(c)
            where = ", ".join(f"{key}[{i}]" for (key, _), (i, _) in zip(dims, combo))
            if not where:
                assert loc is not None  # no grid dimensions: every config is an explicit point
                source = loc
            else:
                source = f"sweep.grid ({where})" if loc is None else f"{loc} x sweep.grid ({where})"
            ch = _sha(_canonical(flat))
            if ch in by_config:
                key = loc or "sweep.grid"
                raise ConfigError(
                    f"{key}: {source} gives the same config as {by_config[ch]} (after merging "
                    "with the base config); every point must differ",
                    key=key,
                )
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
    return points


def load_grid(grid) -> Grid:
    """Read, validate and expand a grid (a TOML path, TOML text or a dict)."""
    doc, path = _load_document(grid)
    sweep = _sweep_table(doc)
    name, seed, documents, reps = _sweep_settings(sweep)
    base = _base_config(sweep, doc, path)
    dims = _grid_dimensions(sweep)
    explicit = _explicit_points(sweep)
    if not dims and not explicit:
        raise ConfigError(
            "sweep.grid: empty; give sweep.grid (config keys with lists of values) "
            "and/or sweep.points (a list of tables)",
            key="sweep.grid",
        )
    _check_no_run_seed(base, dims, explicit)
    _check_overlaps(dims, explicit)
    base_dir = os.path.dirname(path) if path else os.getcwd()
    _check_schema(base, dims, explicit, base_dir)
    n_configs = max(len(explicit), 1) * math.prod(len(items) for _, items in dims)
    if n_configs * reps > MAX_POINTS:
        raise ConfigError(
            f"sweep.grid: {n_configs:,} configs x {reps} replicates is more than {MAX_POINTS:,} points",
            key="sweep.grid",
        )
    points = _expand(base, dims, explicit, seed, reps)
    cols = sorted({k for p in points for k in p.config}, key=lambda k: (_SECTION_ORDER.get(k.split(".")[0], 9), k))
    varying = [c for c in cols if c != "run.seed" and len({_canonical(p.config.get(c)) for p in points}) > 1]
    timed = any(k == "preset" or k.startswith("timing.") for p in points for k in p.config)
    return Grid(
        points=points,
        seed=seed,
        replicates=reps,
        name=name,
        path=path,
        config_columns=cols,
        varying=varying,
        timed=timed,
        configs=n_configs,
        documents=documents,
        base_dir=base_dir,
    )
