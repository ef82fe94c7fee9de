"""What a user can know about a drive, read into one form: the drive (:class:`DriveSpec`) and
the figures a calibration fits (:class:`Figure`).

Three readers, each naming the file and the key or line of anything it refuses:

* a datasheet file (TOML): ``[drive]`` (native capacity, interface, cell; optionally the NAND
  behind it, the mapping unit, the P/E rating), ``[datasheet]`` (published figures, any
  subset), ``[source]`` (where they come from), ``[model]`` (model keys given with a source in
  ``[model.sources]``: how a checked-in preset's estimates are carried) and ``[[point]]``
  tables (the rows of a points file, with a ``source`` each);
* a points file (CSV, header exactly ``span,block_size,queue_depth,read_fraction,waf,iops``
  and optionally ``p99_us``): one steady-state measurement per row;
* results of ``opsim measure`` and interval results of ``opsim smart waf`` (JSON).
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass, field, replace
from typing import Any

from .. import userfile
from ..errors import InputError
from ..units import fmt_bytes, parse_size
from . import bounds

#: the size of file any reader here takes (a datasheet, a points file, a result)
MAX_FILE = 16 << 20

CELLS = ("slc", "mlc", "tlc", "qlc")
INTERFACES = ("sata", "nvme", "sas")
#: JESD218's application classes, each rated under its JESD219 workload (calibrate/endurance.py)
ENDURANCE_CLASSES = ("enterprise", "client")

#: ``[datasheet]`` keys: (what it is, the figure kind it becomes or None)
DATASHEET_KEYS: dict[str, str] = {
    "seq_read_mbps": "128 KiB sequential read, MB/s",
    "seq_write_mbps": "128 KiB sequential write, MB/s",
    "rand_read_iops": "4 KiB random read IOPS",
    "rand_write_iops": "4 KiB random write IOPS, steady state over the whole drive",
    "rand_write_qd": "queue depth of the random-write figure",
    "fob_write_iops": "4 KiB random write IOPS, fresh out of box",
    "dwpd": "drive writes per day over the warranty",
    "tbw": "terabytes written over the warranty",
    "warranty_years": "warranty, years",
    "class": 'JESD218 application class of the endurance rating: "enterprise" or "client" (calibrate/endurance.py)',
}

POINT_COLUMNS = ("span", "block_size", "queue_depth", "read_fraction", "waf", "iops")

#: relative (log) uncertainty of a figure by where it comes from: vendors round their
#: datasheets ("up to"), a measurement of a steady state moves by a few percent
SIGMA_DATASHEET = 0.10
SIGMA_MEASURED = 0.05


@dataclass(frozen=True)
class Figure:
    """One published or measured figure the calibration fits.

    ``kind``: ``steady_iops`` (random IOPS in steady state over ``span`` bytes), ``waf``
    (steady WAF over ``span``), ``fob_iops`` (random-write IOPS fresh out of box),
    ``seq_write`` (sequential-write IOPS of ``block_size``), ``seq_read`` (sequential-read IOPS of
    ``block_size``), ``rand_read`` (random-read IOPS)."""

    kind: str
    value: float
    source: str
    span: int | None = None  # bytes written; None: the whole user capacity
    block_size: int = 4096
    queue_depth: int | None = None
    read_fraction: float = 0.0
    sigma: float = SIGMA_DATASHEET
    p99_us: float | None = None
    #: the OP was set by lowering the max address to ``user`` bytes (SET MAX ADDRESS, a
    #: namespace) rather than by writing only ``span``: the same spare for GC, but not free
    #: user capacity for a dynamic SLC cache
    user: int | None = None
    #: ``steady_ratio``: the figure is this condition's steady IOPS over ``ref``'s (a
    #: ``steady_iops`` figure whose value is not used); sources that publish only ratios
    ref: Figure | None = None

    def label(self) -> str:
        where = f" over {fmt_bytes(self.span)}" if self.span is not None else ""
        if self.user is not None:
            where = f" at a max address of {fmt_bytes(self.user)}"
        bs = fmt_bytes(self.block_size)
        mix = f", {self.read_fraction:.0%} reads" if self.read_fraction else ""
        return {
            "steady_iops": f"steady {bs} random IOPS{where}{mix}",
            "waf": f"steady WAF{where}",
            "fob_iops": f"fresh-out-of-box {bs} random-write IOPS",
            "seq_write": f"{bs} sequential-write IOPS",
            "seq_read": f"{bs} sequential-read IOPS",
            "rand_read": f"{bs} random-read IOPS",
            "steady_ratio": f"steady {bs} random IOPS{where}{mix}, relative to "
            + (self.ref.label().replace("steady ", "", 1) if self.ref else "?")
            + (f" at {fmt_bytes(self.ref.user)}" if self.ref and self.ref.user else ""),
            "waf_ratio": f"steady {bs} random-write WAF{where}, relative to "
            + (self.ref.label().replace("steady ", "", 1) if self.ref else "?")
            + (f" at {fmt_bytes(self.ref.user)}" if self.ref and self.ref.user else ""),
        }[self.kind]


@dataclass
class DriveSpec:
    """The drive as the user describes it; ``None`` where nothing was said."""

    native: int | None = None
    interface: str | None = None
    cell: str | None = None
    physical: int | None = None
    page_size: int | None = None
    pe: float | None = None
    name: str | None = None
    title: str | None = None
    family: str | None = None
    #: where each drive value came from: "given" (a flag) or "datasheet" (the file)
    origin: dict[str, str] = field(default_factory=dict)
    #: model keys given ("timing.channels": 8) and their sources
    model: dict[str, Any] = field(default_factory=dict)
    model_sources: dict[str, str] = field(default_factory=dict)
    #: the datasheet's endurance figures (not fitted by least squares: they give the P/E rating)
    dwpd: float | None = None
    tbw: float | None = None
    warranty_years: float | None = None
    #: JESD218's application class of the endurance rating (``[datasheet] class``), None: inferred
    endurance_class: str | None = None
    #: figures the model does not use, with why (reported, never silently dropped)
    unused: dict[str, str] = field(default_factory=dict)
    source: dict[str, Any] = field(default_factory=dict)
    #: the random-write figure's queue depth (datasheet), when given
    rand_write_qd: int | None = None
    #: a note the output carries (a file is not an SSD, ...)
    notes: list[str] = field(default_factory=list)
    #: the datasheet file's ``[calibration] fit_from`` (a preset input's; a calibration refuses it)
    fit_from: str | None = None


def _bad(where: str, key: str, msg: str) -> InputError:
    return InputError(f"{where}: {key}: {msg}", key=key)


def _read_text(path: str, what: str) -> str:
    # a regular file (a FIFO or device refused unread) of at most MAX_FILE bytes of UTF-8
    return userfile.read_text(path, what=what, cap=MAX_FILE)


def _number(where: str, key: str, v: Any, *, positive: bool = True, integer: bool = False) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _bad(where, key, f"{v!r} is not a number")
    x = float(v)
    if not math.isfinite(x):
        raise _bad(where, key, f"{v!r} is not a finite number")
    if positive and x <= 0:
        raise _bad(where, key, f"{v!r} must be positive")
    if integer and x != int(x):
        raise _bad(where, key, f"{v!r} must be a whole number")
    return x


def _choice(where: str, key: str, v: Any, choices: tuple[str, ...]) -> str:
    if not isinstance(v, str) or v.lower() not in choices:
        raise _bad(where, key, f"{v!r} is not one of {', '.join(choices)}")
    return v.lower()


def _size(where: str, key: str, v: Any) -> int:
    try:
        n = parse_size(v, key=key)
    except InputError as e:
        raise _bad(where, key, e.detail.split(": ", 1)[-1]) from None
    if n <= 0:
        raise _bad(where, key, "must be a positive size")
    return n


def read_datasheet(path: str) -> tuple[DriveSpec, list[Figure]]:
    """A datasheet file: the drive and its figures."""
    doc = userfile.load_toml(path, what="datasheet", cap=MAX_FILE)
    known = {"drive", "datasheet", "source", "model", "point", "ratio", "calibration"}
    for k in doc:
        if k not in known:
            raise _bad(path, k, f"unknown table; a datasheet file has {', '.join(sorted(known))}")
    fit_from = _check_calibration_table(path, doc)
    spec = DriveSpec(source=dict(doc.get("source", {})), fit_from=fit_from)
    _read_drive_table(path, doc, spec)
    figures = _read_datasheet_table(path, doc, spec)
    _read_model_table(path, doc, spec)
    figures += _read_points(path, doc)
    ratios = doc.get("ratio", [])
    if not isinstance(ratios, list):
        raise _bad(path, "ratio", "must be an array of tables ([[ratio]])")
    for i, row in enumerate(ratios):
        figures.append(_ratio(path, i, row))
    return spec, figures


def _check_calibration_table(path: str, doc: dict) -> str | None:
    """``[calibration]``: how the presets are built from their inputs (:mod:`.presets`):
    ``whole`` (a bool: the preset is written whole) and ``fit_from`` (a preset input whose fit
    this one takes; returned, and reported as not used by :func:`.result.read_inputs`: a
    calibration fits the file's own figures)."""
    cal = doc.get("calibration", {})
    if not isinstance(cal, dict):
        raise _bad(path, "calibration", "must be a table")
    for k, v in cal.items():
        key = f"calibration.{k}"
        if k == "whole" and not isinstance(v, bool):
            raise _bad(path, key, f"{v!r} is not true or false")
        if k == "fit_from" and (not isinstance(v, str) or not v.strip()):
            raise _bad(path, key, f"{v!r} is not a preset input's name")
        if k not in ("whole", "fit_from"):
            raise _bad(path, key, "unknown key; [calibration] has whole and fit_from (for the presets' build)")
    return cal.get("fit_from")


def unused_fit_from(fit_from: str) -> str:
    """Why a calibration does not use the file's ``[calibration] fit_from`` (reported with the
    figures not used, never silently dropped; the presets' held-out validation calibrates such
    an input on its own figures, so it is not refused)."""
    return (
        f"{fit_from!r} is the preset input whose fitted values this one takes when the presets are built "
        "(python -m opsim.calibrate.presets); this calibration fits the file's own figures instead"
    )


def _read_drive_table(path: str, doc: dict, spec: DriveSpec) -> None:
    """``[drive]``: capacities, page, interface, cell, P/E rating and names."""
    drive = doc.get("drive", {})
    if not isinstance(drive, dict):
        raise _bad(path, "drive", "must be a table")
    for k, v in drive.items():
        key = f"drive.{k}"
        if k == "native":
            spec.native = _size(path, key, v)
        elif k == "physical":
            spec.physical = _size(path, key, v)
        elif k == "page_size":
            spec.page_size = _size(path, key, v)
        elif k == "interface":
            spec.interface = _choice(path, key, v, INTERFACES)
        elif k == "cell":
            spec.cell = _choice(path, key, v, CELLS)
        elif k == "pe":
            spec.pe = _number(path, key, v)
        elif k in ("name", "title", "family"):
            if not isinstance(v, str) or not v.strip():
                raise _bad(path, key, "must be a non-empty string")
            setattr(spec, k, v.strip())
        else:
            raise _bad(
                path,
                key,
                "unknown key; [drive] has native, physical, page_size, interface, cell, pe, name, title, family",
            )
        if k in ("native", "physical", "page_size", "interface", "cell", "pe"):
            spec.origin[k] = "datasheet"


def _read_datasheet_table(path: str, doc: dict, spec: DriveSpec) -> list[Figure]:
    """``[datasheet]``: the figures the datasheet states (0: not given)."""
    ds = doc.get("datasheet", {})
    if not isinstance(ds, dict):
        raise _bad(path, "datasheet", "must be a table")
    figures: list[Figure] = []
    sources = spec.source.get("figures", {}) if isinstance(spec.source.get("figures", {}), dict) else {}
    values: dict[str, float] = {}
    for k, v in ds.items():
        key = f"datasheet.{k}"
        if k not in DATASHEET_KEYS:
            raise _bad(path, key, f"unknown key; [datasheet] has {', '.join(DATASHEET_KEYS)}")
        if k == "class":
            spec.endurance_class = _choice(path, key, v, ENDURANCE_CLASSES)
            continue
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0:
            continue  # 0: not given (the template writes 0 for absent figures)
        values[k] = _number(path, key, v, integer=k == "rand_write_qd")
    _check_reachable(path, values)
    spec.dwpd, spec.tbw, spec.warranty_years = values.get("dwpd"), values.get("tbw"), values.get("warranty_years")
    if "rand_write_qd" in values:
        spec.rand_write_qd = int(values["rand_write_qd"])

    def src(k: str) -> str:
        return f"datasheet {k}" + (f" ({sources[k]})" if k in sources else "")

    if "rand_write_iops" in values:
        figures.append(
            Figure("steady_iops", values["rand_write_iops"], src("rand_write_iops"), queue_depth=spec.rand_write_qd)
        )
    if "fob_write_iops" in values:
        figures.append(Figure("fob_iops", values["fob_write_iops"], src("fob_write_iops")))
    if "seq_write_mbps" in values:
        bs = 128 << 10
        figures.append(Figure("seq_write", values["seq_write_mbps"] * 1e6 / bs, src("seq_write_mbps"), block_size=bs))
    if "rand_read_iops" in values:
        figures.append(Figure("rand_read", values["rand_read_iops"], src("rand_read_iops"), read_fraction=1.0))
    if "seq_read_mbps" in values:
        bs = 128 << 10
        figures.append(
            Figure(
                "seq_read", values["seq_read_mbps"] * 1e6 / bs, src("seq_read_mbps"), block_size=bs, read_fraction=1.0
            )
        )
        spec.source["seq_read_mbps"] = values["seq_read_mbps"]  # also sets the PCIe generation (model.build)
    if (
        "fob_write_iops" in values
        and "rand_write_iops" in values
        and values["rand_write_iops"] > values["fob_write_iops"]
    ):
        raise _bad(
            path,
            "datasheet.rand_write_iops",
            f"steady-state IOPS ({values['rand_write_iops']:g}) above the fresh-out-of-box burst "
            f"({values['fob_write_iops']:g}): a drive is never faster after garbage collection starts",
        )
    return figures


#: the datasheet's rate figures: the bytes a second each stands for per unit (4 KiB commands, MB/s)
_RATE_BYTES = {
    "rand_write_iops": 4096,
    "fob_write_iops": 4096,
    "rand_read_iops": 4096,
    "seq_read_mbps": 1e6,
    "seq_write_mbps": 1e6,
}


def _check_reachable(path: str, values: dict[str, float]) -> None:
    """Refuse a figure no model within the core's bounds could show (:mod:`.bounds`): a rate
    faster than any host link the core models, a queue depth past its commands in flight, a
    warranty past :data:`.bounds.MAX_WARRANTY_YEARS`."""
    for k, per in _RATE_BYTES.items():
        if k in values:
            mbps = values[k] * per / 1e6
            why = bounds.link_refusal(mbps)
            if why is not None:
                raise _bad(path, f"datasheet.{k}", f"{values[k]:g}: {why}")
    if "rand_write_qd" in values:
        why = bounds.queue_depth_refusal(int(values["rand_write_qd"]))
        if why is not None:
            raise _bad(path, "datasheet.rand_write_qd", why)
    years = values.get("warranty_years")
    if years is not None and years > bounds.MAX_WARRANTY_YEARS:
        raise _bad(path, "datasheet.warranty_years", f"{years:g} years: at most {bounds.MAX_WARRANTY_YEARS}")


def check_endurance(spec: DriveSpec, years: float) -> None:
    """Refuse an endurance rating (``dwpd``, ``tbw``) whose host writes, spread over the
    warranty of ``years``, need a host link faster than any the core models; the key named is
    the datasheet's (the capacity is known only once every input is read)."""
    assert spec.native is not None
    for key, written in (
        ("dwpd", None if spec.dwpd is None else spec.dwpd * spec.native * years * 365),
        ("tbw", None if spec.tbw is None else spec.tbw * 1e12),
    ):
        if written is None:
            continue
        mbps = written / (years * 365 * bounds.SECONDS_PER_DAY) / 1e6
        why = bounds.link_refusal(mbps)
        if why is not None:
            v = getattr(spec, key)
            raise InputError(
                f"datasheet.{key}: {v:g} over {years:g} years means writing {mbps:,.3g} MB/s around the clock, {why}",
                key=f"datasheet.{key}",
            )


def _read_model_table(path: str, doc: dict, spec: DriveSpec) -> None:
    """``[model]``: preset keys the datasheet file fixes, with their sources."""
    model = doc.get("model", {})
    if not isinstance(model, dict):
        raise _bad(path, "model", "must be a table")
    msrc = model.get("sources", {})
    for k, v in model.items():
        if k == "sources":
            continue
        if "." not in k or k.split(".", 1)[0] not in ("drive", "ftl", "timing"):
            raise _bad(path, f"model.{k}", 'keys are preset keys such as "timing.channels" or "drive.pages_per_block"')
        spec.model[k] = v
        spec.model_sources[k] = str(msrc.get(k, "given in the datasheet file"))


def _read_points(path: str, doc: dict) -> list[Figure]:
    """``[[point]]``: measured figures (the columns of a figures CSV)."""
    figures: list[Figure] = []
    points = doc.get("point", [])
    if not isinstance(points, list):
        raise _bad(path, "point", "must be an array of tables ([[point]])")
    for i, row in enumerate(points):
        if not isinstance(row, dict):
            raise _bad(path, f"point[{i}]", "must be a table")
        extra = set(row) - {*POINT_COLUMNS, "p99_us", "source", "user"}
        if extra:
            raise _bad(
                path,
                f"point[{i}].{sorted(extra)[0]}",
                f"unknown key; a point has {', '.join(POINT_COLUMNS)}, p99_us, source",
            )
        cells = {k: ("" if row.get(k) is None else str(row[k])) for k in (*POINT_COLUMNS, "p99_us")}
        label = str(row.get("source", f"{path} point[{i}]"))
        if "user" in row:
            if "span" in row:
                raise _bad(path, f"point[{i}].user", "give span (the LBAs written) or user (the max address), not both")
            cells["span"] = str(row["user"])
        figs = _point(cells, f"{path} point[{i}]", label, SIGMA_MEASURED)
        if "user" in row:
            figs = [replace(f, user=_size(path, f"point[{i}].user", row["user"])) for f in figs]
        figures += figs
    return figures


def _where(path: str, key: str, row: Any) -> dict:
    """A ratio's side: ``{span = ...}`` or ``{user = ...}`` (a max address)."""
    if not isinstance(row, dict) or len(row) != 1 or next(iter(row)) not in ("span", "user"):
        raise _bad(path, key, 'must be { span = "..." } or { user = "..." }')
    k, v = next(iter(row.items()))
    return {k: _size(path, f"{key}.{k}", v)}


#: what a ``[[ratio]]`` is of (``of``): the ratio figure's kind and its sides'
RATIO_OF = {"iops": ("steady_ratio", "steady_iops"), "waf": ("waf_ratio", "waf")}


def _ratio(path: str, i: int, row: Any) -> Figure:
    key = f"ratio[{i}]"
    if not isinstance(row, dict):
        raise _bad(path, key, "must be a table")
    allowed = {"numerator", "denominator", "value", "of", "block_size", "queue_depth", "read_fraction", "source"}
    extra = set(row) - allowed
    if extra:
        raise _bad(path, f"{key}.{sorted(extra)[0]}", f"unknown key; a ratio has {', '.join(sorted(allowed))}")
    if "numerator" not in row or "value" not in row:
        raise _bad(path, key, "needs numerator and value")
    value = _number(path, f"{key}.value", row["value"])
    bs = _size(path, f"{key}.block_size", row.get("block_size", "4KiB"))
    qd = int(_number(path, f"{key}.queue_depth", row["queue_depth"], integer=True)) if "queue_depth" in row else None
    rf = _fraction(path, f"{key}.read_fraction", str(row.get("read_fraction", 0)))
    of = row.get("of", "iops")
    if of not in RATIO_OF:
        raise _bad(path, f"{key}.of", f"{of!r}: a ratio is of {' or '.join(map(repr, RATIO_OF))}")
    num = _where(path, f"{key}.numerator", row["numerator"])
    den = _where(path, f"{key}.denominator", row["denominator"]) if "denominator" in row else {}
    ref = Figure(
        RATIO_OF[of][1],
        1.0,
        "denominator",
        span=den.get("span", den.get("user")),
        user=den.get("user"),
        block_size=bs,
        queue_depth=qd,
        read_fraction=rf,
    )
    src = str(row.get("source", f"{path} {key}"))
    return Figure(
        RATIO_OF[of][0],
        value,
        src,
        span=num.get("span", num.get("user")),
        user=num.get("user"),
        block_size=bs,
        queue_depth=qd,
        read_fraction=rf,
        sigma=SIGMA_MEASURED,
        ref=ref,
    )


def _fraction(where: str, key: str, text: str) -> float:
    t = text.strip()
    try:
        x = float(t[:-1]) / 100 if t.endswith("%") else float(t)
    except ValueError:
        raise _bad(where, key, f"{text!r} is not a fraction (0.5 or 50%)") from None
    if not (math.isfinite(x) and 0 <= x <= 1):
        raise _bad(where, key, f"{text!r} is not between 0 and 1 (0% and 100%)")
    return x


def _span(where: str, text: str) -> int | float:
    """Bytes, or a fraction of the user capacity (a float) for ``80%``."""
    t = text.strip()
    if not t:
        raise _bad(where, "span", "is empty: the written LBA range (745GiB or 80%)")
    if t.endswith("%"):
        f = _fraction(where, "span", t)
        if f <= 0:
            raise _bad(where, "span", "must be more than 0%")
        return f
    return _size(where, "span", t)


def _point(cells: dict[str, str], where: str, label: str, sigma: float) -> list[Figure]:
    span = _span(where, cells["span"])
    bs = _size(where, "block_size", cells["block_size"] or "4KiB")
    qd_text = cells["queue_depth"].strip()
    qd = (
        int(_number(where, "queue_depth", float(qd_text) if _isnum(qd_text) else qd_text, integer=True))
        if qd_text
        else None
    )
    rf = _fraction(where, "read_fraction", cells["read_fraction"] or "0")
    p99 = cells.get("p99_us", "").strip()
    p99v = _number(where, "p99_us", float(p99) if _isnum(p99) else p99) if p99 else None
    # a fractional span is resolved against the user capacity later (Figure.span holds bytes or a
    # negative marker is avoided: fractions are kept in span_fraction via the value below)
    figs = []
    for kind, col in (("waf", "waf"), ("steady_iops", "iops")):
        text = cells[col].strip()
        if not text:
            continue
        v = _number(where, col, float(text) if _isnum(text) else text)
        if kind == "waf" and v < 1:
            raise _bad(where, "waf", f"{text} is below 1: a drive writes at least what the host writes")
        figs.append(
            _with_span(
                Figure(kind, v, label, block_size=bs, queue_depth=qd, read_fraction=rf, sigma=sigma, p99_us=p99v), span
            )
        )
    if not figs:
        raise _bad(where, "waf", "a point needs a waf or an iops value (or both)")
    return figs


def _isnum(t: str) -> bool:
    try:
        float(t)
    except ValueError:
        return False
    return True


#: spans given as a fraction are kept as negative parts-per-billion until the user capacity is
#: known (:func:`resolve_spans`); bytes are positive
_FRACTION_SCALE = 10**9


def _with_span(f: Figure, span: int | float) -> Figure:
    if isinstance(span, float):
        return replace(f, span=-round(span * _FRACTION_SCALE))
    return replace(f, span=span)


def resolve_spans(figures: list[Figure], user_bytes: int, sector: int = 4096) -> list[Figure]:
    """Fractional spans (``80%``) to bytes of ``user_bytes``, rounded down to ``sector``; a span
    larger than the drive is an error naming the figure."""
    out = []
    for f in figures:
        span = f.span
        if span is not None and span < 0:
            span = (user_bytes * -span // _FRACTION_SCALE) // sector * sector
        if span is not None and span > user_bytes:
            raise InputError(
                f"{f.source}: span {fmt_bytes(span)} is larger than the drive's user capacity {fmt_bytes(user_bytes)}",
                key="span",
            )
        if span is not None and span <= 0:
            raise InputError(f"{f.source}: span rounds to nothing", key="span")
        ref = resolve_spans([f.ref], user_bytes, sector)[0] if f.ref else None
        out.append(replace(f, span=span, ref=ref))
    return out


def read_points(path: str) -> list[Figure]:
    """A points file: ``span,block_size,queue_depth,read_fraction,waf,iops[,p99_us]``."""
    text = _read_text(path, "points")
    rows = csv.reader(io.StringIO(text))
    try:
        header = next(rows)
    except StopIteration:
        raise InputError(f"points {path}: empty file; the header is {','.join(POINT_COLUMNS)}", key="points") from None
    except csv.Error as e:
        raise InputError(f"points {path}:1: {e}", key="points") from None
    head = [h.strip() for h in header]
    if head not in (list(POINT_COLUMNS), [*POINT_COLUMNS, "p99_us"]):
        raise InputError(
            f"points {path}:1: the header must be exactly {','.join(POINT_COLUMNS)} (optionally ,p99_us), not {','.join(head)}",
            key="points",
        )
    figs: list[Figure] = []
    try:
        for n, row in enumerate(rows, start=2):
            if not any(c.strip() for c in row):
                continue
            if len(row) != len(head):
                raise InputError(f"points {path}:{n}: {len(row)} columns, the header has {len(head)}", key="points")
            cells = dict(zip(head, row)) | ({} if "p99_us" in head else {"p99_us": ""})
            figs += _point(cells, f"points {path}:{n}", f"{os.path.basename(path)}:{n}", SIGMA_MEASURED)
    except csv.Error as e:
        raise InputError(f"points {path}:{rows.line_num}: {e}", key="points") from None
    if not figs:
        raise InputError(f"points {path}: no rows after the header", key="points")
    return figs
