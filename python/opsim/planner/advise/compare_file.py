"""The file of ``opsim advise --compare FILE``: the fleet's need and the drives that could meet it.

::

    [need]
    usable = "100TB"               # the fleet's usable capacity (decimal TB: 10^12 bytes)
    host_writes_per_day = "150TB"  # the fleet's host writes a day, spread evenly over the drives
    years = 5                      # how long the drives must last, and the TB-years the cost is spread over
    # optional: min_iops_per_tb = 50, max_latency = "p99=5ms" (or a list), read_write = "70:30",
    # skew = "zipf:0.8", block_size = "4KiB", profile = "jesd219", fio = "job.fio", section = "NAME",
    # trace = "vol.csv" (or { path = "vol.csv", format = "msr", device = "0", ... }: the reader's options)

    [[candidate]]
    preset = "micron-7450-pro-960gb"   # or drive = "./mydrive.toml" (relative to this file)
    price = 100                        # per drive, any currency
    # optional: name, pe (P/E rating, when the drive has none), watts_active, power_cost_per_kwh
    # (together), slots (the cost of a drive bay)

Everything is checked here, before any long work: every error names the file, the line and
the key (``fleet.toml:12: candidate[1].price: must be a positive number``), as the core's
config reader does; tomllib keeps no positions, :func:`opsim.userfile.toml_key_lines` finds
them.  Each candidate's drive is loaded (the core describes it) here too.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field

from ... import presets, userfile
from ... import trace as trace_api
from ...errors import InputError
from ...units import parse_size
from ...workload import Workload, parse_read_write, parse_skew
from ...workload.fio import fio_workload
from .drive import Drive, load_drive
from .targets import parse_latency
from .trace import TraceSource, check_for_drive, fit_trace, fitted_workload

#: the largest compare file read (bytes): a few dozen tables
MAX_FILE_BYTES = 1 << 20

NEED_KEYS = (
    "usable",
    "host_writes_per_day",
    "years",
    "min_iops_per_tb",
    "max_latency",
    "read_write",
    "skew",
    "block_size",
    "profile",
    "fio",
    "section",
    "trace",
)
#: a ``trace`` inline table's keys: its path and the trace reader's options (``opsim trace info``'s)
TRACE_KEYS = ("path", "format", "device", "skip_bad", "columns", "delimiter", "skip_lines", "action")
CANDIDATE_KEYS = ("name", "preset", "drive", "price", "pe", "watts_active", "power_cost_per_kwh", "slots")


@dataclass
class Need:
    """What the fleet must give: usable bytes, host bytes written a day, for ``years``, at
    ``min_iops_per_tb`` IOPS per TB of the usable capacity (optional) and latency bounds."""

    usable: int
    host_writes_per_day: int
    years: float
    workload: Workload
    min_iops_per_tb: float | None = None
    latency: list = field(default_factory=list)  # [(ios, percentile, us)]: parse_latency's
    #: a block trace as the workload (``workload`` is then its fitted one): :mod:`.trace`
    trace: TraceSource | None = None

    def to_dict(self) -> dict:
        return {
            "usable_bytes": self.usable,
            "host_writes_per_day_bytes": self.host_writes_per_day,
            "years": self.years,
            "min_iops_per_tb": self.min_iops_per_tb,
            "max_latency_us": [{"ios": k, "percentile": p, "us": us} for k, p, us in self.latency],
            "workload": self.workload.to_dict(),
            "trace": None if self.trace is None else self.trace.to_dict(),
        }


@dataclass
class Candidate:
    """A drive to buy: its price and, when given, its power and the cost of its bay."""

    name: str
    drive: Drive
    price: float
    watts_active: float | None = None
    power_cost_per_kwh: float | None = None
    slots: float | None = None  # the cost of one drive bay
    line: int | None = None

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "title": self.drive.title,
            "preset": self.drive.preset,
            "price": self.price,
            "watts_active": self.watts_active,
            "power_cost_per_kwh": self.power_cost_per_kwh,
            "slots": self.slots,
        }


@dataclass
class CompareFile:
    path: str
    need: Need
    candidates: list[Candidate]
    #: {key path: line} of the file (:func:`opsim.userfile.toml_key_lines`), for later messages
    lines: dict = field(default_factory=dict, repr=False)

    def error(self, path: tuple, detail: str) -> InputError:
        return _error(self.path, self.lines, path, detail)


def _key(path: tuple) -> str:
    """``("candidate", 1, "price")`` -> ``candidate[1].price``."""
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _error(file: str, lines: dict, path: tuple, detail: str) -> InputError:
    line = userfile.line_of(lines, path)
    where = f"{file}:{line}" if line is not None else file
    key = _key(path)
    return InputError(f"{where}: {key}: {detail}", key=key, detail=detail)


def _detail(e: InputError) -> str:
    """An error's message without the option or key in front (``--skew: ...`` -> ``...``)."""
    return str(e.detail).split(": ", 1)[-1] if str(e.detail).startswith("--") else str(e.detail)


class _Reader:
    """Reads one file's tables, every error naming its line and key."""

    def __init__(self, path: str, text: str, doc: dict) -> None:
        self.path, self.doc = path, doc
        self.lines = userfile.toml_key_lines(text)
        self.base = os.path.dirname(os.path.abspath(path))
        self.src: TraceSource | None = None  # [need] trace, read once

    def bad(self, path: tuple, detail: str) -> InputError:
        return _error(self.path, self.lines, path, detail)

    def number(self, path: tuple, v, *, allow_zero: bool = False) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.bad(path, f"{v!r} is not a number")
        if v < 0 or (v == 0 and not allow_zero):
            raise self.bad(path, f"{v!r} must be {'zero or more' if allow_zero else 'positive'}")
        return float(v)

    def size(self, path: tuple, v, per_day: bool = False) -> int:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise self.bad(path, f'{v!r} is not a size (write it as "100TB")')
        text = re.sub(r"\s*/\s*d(ay)?$", "", v.strip(), flags=re.I) if per_day and isinstance(v, str) else v
        try:
            n = parse_size(text, key=_key(path))
        except InputError as e:
            raise self.bad(path, _detail(e)) from None
        if n <= 0:
            raise self.bad(path, "must be a positive size")
        return n

    def string(self, path: tuple, v) -> str:
        if not isinstance(v, str) or not v.strip():
            raise self.bad(path, f"{v!r} is not a non-empty string")
        return v.strip()

    def table(self, name: str) -> dict:
        t = self.doc.get(name)
        if not isinstance(t, dict):
            raise self.bad((name,), f"missing: the file needs a [{name}] table")
        return t

    # ------------------------------------------------------------------ [need]

    def need(self) -> Need:
        t = self.table("need")
        for k in t:
            if k not in NEED_KEYS:
                raise self.bad(("need", k), f"unknown key; [need] has {', '.join(NEED_KEYS)}")
        for k in ("usable", "host_writes_per_day", "years"):
            if k not in t:
                raise self.bad(("need",), f"missing key {k}: [need] needs usable, host_writes_per_day and years")
        need = Need(
            usable=self.size(("need", "usable"), t["usable"]),
            host_writes_per_day=self.size(("need", "host_writes_per_day"), t["host_writes_per_day"], per_day=True),
            years=self.number(("need", "years"), t["years"]),
            workload=self.workload(t),
        )
        if "min_iops_per_tb" in t:
            need.min_iops_per_tb = self.number(("need", "min_iops_per_tb"), t["min_iops_per_tb"])
        if "max_latency" in t:
            need.latency = self.latency(t["max_latency"])
            if need.min_iops_per_tb is None:
                raise self.bad(
                    ("need", "max_latency"),
                    "a latency bound is measured at the load each drive carries: give min_iops_per_tb too",
                )
        return need

    def latency(self, v) -> list:
        items = v if isinstance(v, list) else [v]
        out = []
        for x in items:
            if not isinstance(x, str):
                raise self.bad(("need", "max_latency"), f'{x!r}: write it as "p99=5ms" (or a list of such)')
            try:
                out.append(parse_latency(x))
            except InputError as e:
                raise self.bad(("need", "max_latency"), _detail(e)) from None
        return out

    def workload(self, t: dict) -> Workload:
        shape = [k for k in ("read_write", "skew", "block_size", "profile") if k in t]
        if "section" in t and "fio" not in t:
            raise self.bad(("need", "section"), "names a job of a fio job file: give fio too")
        if "trace" in t:
            given = shape + (["fio"] if "fio" in t else [])
            if given:
                raise self.bad(("need", given[0]), "the trace gives the workload; drop this key or trace")
            self.src = self.trace(t["trace"])
            return fitted_workload(self.src)
        if "fio" in t:
            if shape:
                raise self.bad(("need", shape[0]), "the fio job sets the workload; drop this key or fio")
            return self.fio(t)
        wl = Workload()
        try:
            if "read_write" in t:
                wl.read_fraction = parse_read_write(self.string(("need", "read_write"), t["read_write"]))
            if "profile" in t:
                if self.string(("need", "profile"), t["profile"]).lower() != "jesd219":
                    raise self.bad(("need", "profile"), f'{t["profile"]!r}: the one profile is "jesd219"')
                if "skew" in t or "block_size" in t:
                    k = "skew" if "skew" in t else "block_size"
                    raise self.bad(("need", k), "the JESD219 profile has its own zones and sizes; drop it or profile")
                wl.skew, wl.block_size = "jesd219", None
            if "skew" in t:
                for k, v in parse_skew(self.string(("need", "skew"), t["skew"])).items():
                    setattr(wl, k, v)
        except InputError as e:
            if e.key and e.key.startswith("need"):
                raise
            k = "read_write" if e.key == "read_write" else "skew"
            raise self.bad(("need", k), _detail(e)) from None
        if "block_size" in t:
            wl.block_size = self.size(("need", "block_size"), t["block_size"])
            if wl.block_size % 512:
                raise self.bad(("need", "block_size"), f"{wl.block_size} bytes is not a whole number of sectors")
        return wl

    def fio(self, t: dict) -> Workload:
        path = os.path.join(self.base, self.string(("need", "fio"), t["fio"]))
        section = self.string(("need", "section"), t["section"]) if "section" in t else None
        try:
            return fio_workload(path, section)
        except InputError as e:
            raise self.bad(("need", "section" if e.key == "section" else "fio"), _detail(e)) from None

    def trace(self, v) -> TraceSource:
        """The trace, read once by the core and fitted (its own errors name file:line); each
        candidate's drive is checked against its span (:meth:`candidate`)."""
        at = ("need", "trace")
        table = v if isinstance(v, dict) else {"path": v}
        for k in table:
            if k not in TRACE_KEYS:
                raise self.bad(at, f"{k!r}: a trace table has {', '.join(TRACE_KEYS)}")
        path = os.path.join(self.base, self.string(at, table.get("path")))
        opts = {k: x for k, x in table.items() if k != "path"}
        try:
            info = trace_api.info(path, **opts)
            return TraceSource(path, opts, info, fit_trace(path, opts))
        except (InputError, TypeError) as e:
            raise self.bad(at, _detail(e) if isinstance(e, InputError) else str(e)) from None

    # ------------------------------------------------------------------ [[candidate]]

    def candidates(self) -> list[Candidate]:
        cands = self.doc.get("candidate")
        if not isinstance(cands, list) or not cands:
            raise self.bad(("candidate",), "missing: give at least one [[candidate]] table")
        out = [self.candidate(i, c) for i, c in enumerate(cands)]
        seen: dict[str, int] = {}
        for i, c in enumerate(out):
            if c.name in seen:
                raise self.bad(
                    ("candidate", i, "name" if "name" in cands[i] else "preset"),
                    f"a second candidate named {c.name!r} (candidate[{seen[c.name]}]); give each a name",
                )
            seen[c.name] = i
        return out

    def candidate(self, i: int, c) -> Candidate:
        at = ("candidate", i)
        if not isinstance(c, dict):
            raise self.bad(at, "must be a table ([[candidate]])")
        for k in c:
            if k not in CANDIDATE_KEYS:
                raise self.bad((*at, k), f"unknown key; a candidate has {', '.join(CANDIDATE_KEYS)}")
        which = [k for k in ("preset", "drive") if k in c]
        if len(which) != 1:
            raise self.bad(at if not which else (*at, which[1]), "give the drive: preset = NAME or drive = FILE")
        if "price" not in c:
            raise self.bad(at, "missing key price (per drive, any currency)")
        drive = self.drive(at, which[0], self.string((*at, which[0]), c[which[0]]), c.get("pe"))
        cand = Candidate(
            name=self.string((*at, "name"), c["name"]) if "name" in c else drive.name,
            drive=drive,
            price=self.number((*at, "price"), c["price"]),
            line=userfile.line_of(self.lines, at),
        )
        if "slots" in c:
            cand.slots = self.number((*at, "slots"), c["slots"], allow_zero=True)
        power = [k for k in ("watts_active", "power_cost_per_kwh") if k in c]
        if len(power) == 1:
            other = "power_cost_per_kwh" if power[0] == "watts_active" else "watts_active"
            raise self.bad(
                (*at, power[0]), f"the cost of power needs both watts_active and power_cost_per_kwh: give {other}"
            )
        if power:
            cand.watts_active = self.number((*at, "watts_active"), c["watts_active"])
            cand.power_cost_per_kwh = self.number((*at, "power_cost_per_kwh"), c["power_cost_per_kwh"], allow_zero=True)
        if self.src is not None:
            try:
                check_for_drive(self.src.info, drive)
            except InputError as e:
                raise self.bad((*at, which[0]), f"too small for the trace: {_detail(e)}") from None
        if drive.pe is None:
            raise self.bad(
                (*at, which[0]),
                "the drive has no P/E rating, which the endurance over the years needs: give pe = CYCLES, or a "
                "drive file from `opsim calibrate` ([preset.calibration] pe_cycles)",
            )
        return cand

    def drive(self, at: tuple, kind: str, name: str, pe) -> Drive:
        if pe is not None:
            self.number((*at, "pe"), pe)
        if kind == "drive" or presets.is_path(name):
            name = os.path.join(self.base, name)  # a drive file: relative to this file
        try:
            return load_drive(preset=name, pe=pe, preset_option=kind)
        except InputError as e:
            key = (*at, "pe") if e.key == "pe" else (*at, kind)
            raise self.bad(key, _detail(e)) from None


def load_compare(path) -> CompareFile:
    """Read and check ``path`` (exit 2 on anything wrong, naming the line and key)."""
    path = os.fspath(path)
    text = userfile.read_text(path, what="--compare", key="compare", cap=MAX_FILE_BYTES)
    doc = userfile.loads_toml(text, source=f"--compare {path}", key="compare")
    r = _Reader(path, text, doc)
    for k in doc:
        if k not in ("need", "candidate"):
            raise r.bad((k,), "unknown table; the file has [need] and [[candidate]] tables")
    need = r.need()
    need.trace = r.src
    return CompareFile(path, need, r.candidates(), r.lines)
