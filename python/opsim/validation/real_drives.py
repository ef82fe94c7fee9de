"""Real drives: published measurements of whole drives at several spans or OP levels, each
predicted by ``opsim calibrate`` from figures that exclude it (``opsim validate --suite
real-drives``; docs/validation.md, "Real drives").

The cases are data (:data:`DATA`, ``real_drives.toml``): every figure with its source.  A
case names the checked-in input that describes the drive (crates/opsim-core/presets/inputs/);
the input's own ``[[point]]`` and ``[[ratio]]`` tables are dropped and each of the case's fits
puts back only the figures it names, so what is fitted is exactly what the fit says, and a
figure a fit predicts is never one it fitted (:func:`load` refuses such a fit).

    python -m opsim.validation.real_drives [--case ID]   # the table (minutes)
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomli_w

from .._output import markdown_table
from ..calibrate import calibrate, read_inputs
from ..calibrate.inputs import DATASHEET_KEYS, _bad, _number
from ..errors import InputError
from ..presets import INPUTS
from ..units import parse_size

DATA = Path(__file__).with_name("real_drives.toml")
WHATS = ("iops", "waf", "iops_ratio", "waf_ratio")
READINGS = ("text", "table", "plot")
#: what the interval of a ratio is: the model's 95% intervals of its two sides, combined at
#: their extremes (the correlation between them is ignored, so the interval is wider than 95%)
RATIO_INTERVAL = "the extremes of the two sides' 95% intervals (correlation ignored: conservative)"


@dataclass(frozen=True)
class Where:
    """``user``: the max address lowered to ``size`` bytes; ``span``: ``size`` bytes written."""

    key: str
    text: str
    size: int


@dataclass(frozen=True)
class Measured:
    id: str
    what: str
    at: Where
    over: Where | None
    value: float
    queue_depth: int
    reading: str
    reading_uncertainty: float | None
    source: str


@dataclass(frozen=True)
class Fit:
    name: str
    datasheet: bool
    points: tuple[str, ...]
    predict: tuple[str, ...]
    #: "input": the NAND behind the drive as the input gives it; "prior": dropped, so the
    #: calibration's prior stands (a datasheet does not state the NAND)
    nand: str = "input"
    #: "input": the input's [model] estimates (channels, planes, the GC unit ...) kept; "none":
    #: dropped, as from a user who types the datasheet alone (calibrate's priors stand)
    model: str = "input"


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    input: str
    who_measured: str
    document: str
    figures: dict[str, Measured]
    fits: tuple[Fit, ...]
    #: datasheet figures the case gives (``[case.datasheet]``, keys of the calibrate reader's
    #: ``[datasheet]``) with a source each; empty: the input's ``[datasheet]``
    datasheet: dict[str, float] = field(default_factory=dict)
    datasheet_sources: dict[str, str] = field(default_factory=dict)


def _inputs_dir() -> Path:
    return INPUTS


def _str(path: Any, key: str, v: Any) -> str:
    if not isinstance(v, str) or not v.strip():
        raise _bad(path, key, "must be a non-empty string")
    return v


def _where(path: Any, key: str, v: Any) -> Where:
    if not isinstance(v, dict) or len(v) != 1 or next(iter(v)) not in ("user", "span"):
        raise _bad(path, key, 'must be { user = "SIZE" } (a lowered max address) or { span = "SIZE" }')
    k, text = next(iter(v.items()))
    text = _str(path, f"{key}.{k}", text)
    try:
        size = int(parse_size(text))
    except (ValueError, InputError) as e:
        raise _bad(path, f"{key}.{k}", f"not a size: {e}") from None
    if size <= 0:
        raise _bad(path, f"{key}.{k}", "must be more than 0")
    return Where(k, text, size)


def _figure(path: Any, key: str, row: Any) -> Measured:
    if not isinstance(row, dict):
        raise _bad(path, key, "must be a table")
    allowed = {"id", "what", "at", "over", "value", "queue_depth", "reading", "reading_uncertainty", "source"}
    extra = set(row) - allowed
    if extra:
        raise _bad(path, f"{key}.{sorted(extra)[0]}", f"unknown key; a figure has {', '.join(sorted(allowed))}")
    for k in ("id", "what", "at", "value", "queue_depth", "reading", "source"):
        if k not in row:
            raise _bad(path, f"{key}.{k}", "is missing (every figure has its source and how it was read)")
    what = _str(path, f"{key}.what", row["what"])
    if what not in WHATS:
        raise _bad(path, f"{key}.what", f"{what!r}: must be one of {', '.join(WHATS)}")
    ratio = what.endswith("_ratio")
    if ratio != ("over" in row):
        raise _bad(path, f"{key}.over", "a ratio needs `over` (its denominator); only a ratio has one")
    value = _number(path, f"{key}.value", row["value"])
    if what == "waf" and value < 1:
        raise _bad(path, f"{key}.value", "a WAF is at least 1")
    qd = row["queue_depth"]
    if isinstance(qd, bool) or not isinstance(qd, int) or qd < 1:
        raise _bad(path, f"{key}.queue_depth", "must be a whole number of at least 1")
    reading = _str(path, f"{key}.reading", row["reading"])
    if reading not in READINGS:
        raise _bad(path, f"{key}.reading", f"{reading!r}: must be one of {', '.join(READINGS)}")
    unc = row.get("reading_uncertainty")
    if reading == "plot" and unc is None:
        raise _bad(path, f"{key}.reading_uncertainty", "a figure read off a plot says how well it was read")
    if unc is not None:
        unc = _number(path, f"{key}.reading_uncertainty", unc)
    return Measured(
        id=_str(path, f"{key}.id", row["id"]),
        what=what,
        at=_where(path, f"{key}.at", row["at"]),
        over=_where(path, f"{key}.over", row["over"]) if ratio else None,
        value=value,
        queue_depth=qd,
        reading=reading,
        reading_uncertainty=unc,
        source=_str(path, f"{key}.source", row["source"]),
    )


def _fit(path: Any, key: str, row: Any, figures: dict[str, Measured]) -> Fit:
    if not isinstance(row, dict):
        raise _bad(path, key, "must be a table")
    allowed = {"name", "datasheet", "points", "predict", "nand", "model"}
    extra = set(row) - allowed
    if extra:
        raise _bad(path, f"{key}.{sorted(extra)[0]}", f"unknown key; a fit has {', '.join(sorted(allowed))}")
    name = _str(path, f"{key}.name", row.get("name"))
    ds = row.get("datasheet", False)
    if not isinstance(ds, bool):
        raise _bad(path, f"{key}.datasheet", "must be true or false")
    lists = {}
    for k in ("points", "predict"):
        v = row.get(k, [])
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _bad(path, f"{key}.{k}", "must be a list of figure ids")
        for x in v:
            if x not in figures:
                raise _bad(path, f"{key}.{k}", f"{x!r} is not a figure of this case ({', '.join(figures)})")
        lists[k] = tuple(v)
    if not lists["predict"]:
        raise _bad(path, f"{key}.predict", "names no figure: a fit is here to predict")
    if not ds and not lists["points"]:
        raise _bad(path, f"{key}.points", "nothing to fit: give points or datasheet = true")
    both = sorted(set(lists["points"]) & set(lists["predict"]))
    if both:
        raise _bad(
            path,
            f"{key}.predict",
            f"{both[0]!r} is also fitted (in points): a predicted figure is never one that was fitted "
            "(held out by construction)",
        )
    nand = row.get("nand", "input")
    if nand not in ("input", "prior"):
        raise _bad(path, f"{key}.nand", f"{nand!r}: must be input (the NAND the input gives) or prior")
    model = row.get("model", "input")
    if model not in ("input", "none"):
        raise _bad(path, f"{key}.model", f"{model!r}: must be input (the input's [model] estimates) or none")
    return Fit(name, ds, lists["points"], lists["predict"], nand, model)


def _datasheet(path: Any, key: str, c: dict) -> tuple[dict[str, float], dict[str, str]]:
    """``[case.datasheet]`` and ``[case.datasheet_sources]``: every figure with its source."""
    ds, src = c.get("datasheet", {}), c.get("datasheet_sources", {})
    if not isinstance(ds, dict) or not isinstance(src, dict):
        raise _bad(path, f"{key}.datasheet", "must be a table, with datasheet_sources beside it")
    values: dict[str, float] = {}
    for k, v in ds.items():
        if k not in DATASHEET_KEYS:
            raise _bad(path, f"{key}.datasheet.{k}", f"unknown key; a datasheet has {', '.join(DATASHEET_KEYS)}")
        values[k] = _number(path, f"{key}.datasheet.{k}", v)
        _str(path, f"{key}.datasheet_sources.{k}", src.get(k))
    extra = set(src) - set(ds)
    if extra:
        raise _bad(path, f"{key}.datasheet_sources.{sorted(extra)[0]}", "a source of no datasheet figure")
    return values, {k: str(v) for k, v in src.items()}


def parse(doc: dict, path: Any = DATA) -> list[Case]:
    """The cases of a parsed data file; every refusal names the key (exit 2)."""
    cases = doc.get("case")
    if not isinstance(cases, list) or not cases:
        raise _bad(path, "case", "must be a non-empty array of tables ([[case]])")
    out: list[Case] = []
    ids: set[str] = set()
    for i, c in enumerate(cases):
        key = f"case[{i}]"
        if not isinstance(c, dict):
            raise _bad(path, key, "must be a table")
        allowed = {
            "id",
            "title",
            "input",
            "who_measured",
            "document",
            "figure",
            "fit",
            "datasheet",
            "datasheet_sources",
        }
        extra = set(c) - allowed
        if extra:
            raise _bad(path, f"{key}.{sorted(extra)[0]}", f"unknown key; a case has {', '.join(sorted(allowed))}")
        cid = _str(path, f"{key}.id", c.get("id"))
        if cid in ids:
            raise _bad(path, f"{key}.id", f"{cid!r} appears twice")
        ids.add(cid)
        name = _str(path, f"{key}.input", c.get("input"))
        if not (_inputs_dir() / f"{name}.toml").is_file():
            raise _bad(path, f"{key}.input", f"no input {name}.toml in {_inputs_dir()}")
        figures: dict[str, Measured] = {}
        rows = c.get("figure", [])
        if not isinstance(rows, list) or not rows:
            raise _bad(path, f"{key}.figure", "must be a non-empty array of tables ([[case.figure]])")
        for j, row in enumerate(rows):
            m = _figure(path, f"{key}.figure[{j}]", row)
            if m.id in figures:
                raise _bad(path, f"{key}.figure[{j}].id", f"{m.id!r} appears twice")
            figures[m.id] = m
        fits = c.get("fit", [])
        if not isinstance(fits, list) or not fits:
            raise _bad(path, f"{key}.fit", "must be a non-empty array of tables ([[case.fit]])")
        ds, ds_src = _datasheet(path, key, c)
        out.append(
            Case(
                datasheet=ds,
                datasheet_sources=ds_src,
                id=cid,
                title=_str(path, f"{key}.title", c.get("title")),
                input=name,
                who_measured=_str(path, f"{key}.who_measured", c.get("who_measured")),
                document=_str(path, f"{key}.document", c.get("document")),
                figures=figures,
                fits=tuple(_fit(path, f"{key}.fit[{j}]", r, figures) for j, r in enumerate(fits)),
            )
        )
    return out


def load(path: str | Path = DATA) -> list[Case]:
    """The cases of the data file at ``path``."""
    try:
        doc = tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}", key="data") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"{path}: not TOML: {e}", key="data") from None
    return parse(doc, path)


def select(cases: list[Case], ids: list[str] | None) -> list[Case]:
    """The cases named by ``ids`` (all when None); an unknown id is refused (key ``case``)."""
    if not ids:
        return cases
    known = {c.id: c for c in cases}
    for i in ids:
        if i not in known:
            raise InputError(f"--case {i}: no such case; the cases are {', '.join(known)}", key="case")
    return [c for c in cases if c.id in ids]


def _input_doc(case: Case, fit: Fit) -> dict:
    """The case's input with only this fit's figures: its points and ratios replaced by the fit's,
    its datasheet figures kept only when the fit says so."""
    doc = tomllib.loads((_inputs_dir() / f"{case.input}.toml").read_text())
    doc.pop("point", None)
    doc.pop("ratio", None)
    if not fit.datasheet:
        doc.pop("datasheet", None)
    elif case.datasheet:
        if doc.get("datasheet"):
            raise InputError(
                f"case {case.id}: gives datasheet figures and so does input {case.input}: say which, not both",
                key="datasheet",
            )
        doc["datasheet"] = dict(case.datasheet)
        source = doc.setdefault("source", {})
        source["figures"] = {**source.get("figures", {}), **case.datasheet_sources}
    if fit.nand == "prior":
        doc.get("drive", {}).pop("physical", None)
    if fit.model == "none":  # what a user types: the drive and its datasheet, no estimates
        doc.pop("model", None)
        doc.pop("calibration", None)
    _datasheet_held_out(case, fit, doc)
    points, ratios = [], []
    for fid in fit.points:
        m = case.figures[fid]
        common = {"block_size": "4KiB", "queue_depth": m.queue_depth, "source": m.source}
        if m.what in ("iops_ratio", "waf_ratio"):
            assert m.over is not None
            ratios.append(
                {
                    "value": m.value,
                    "of": m.what.removesuffix("_ratio"),
                    **common,
                    "numerator": {m.at.key: m.at.text},
                    "denominator": {m.over.key: m.over.text},
                }
            )
        else:
            points.append({m.at.key: m.at.text, **common, "read_fraction": 0, m.what: m.value})
    if points:
        doc["point"] = points
    if ratios:
        doc["ratio"] = ratios
    return doc


def _datasheet_held_out(case: Case, fit: Fit, doc: dict) -> None:
    """A datasheet's steady random-write IOPS is a figure over the whole drive: a fit to it may
    not predict a measured IOPS over the whole drive (the same figure, fitted)."""
    ds = doc.get("datasheet") or {}
    if not fit.datasheet or not ds.get("rand_write_iops"):
        return
    native = int(parse_size(str(doc.get("drive", {}).get("native", "0"))))
    for fid in fit.predict:
        m = case.figures[fid]
        if m.what == "iops" and m.at.size == native:
            raise InputError(
                f"case {case.id}, fit {fit.name!r}: {fid!r} is the steady random-write IOPS over the whole "
                "drive, which the datasheet's rand_write_iops already gives and the fit fits: a predicted "
                "figure is never one that was fitted (held out by construction)",
                key="predict",
            )


def calibrate_fit(case: Case, fit: Fit):
    """The calibration of ``case`` from ``fit``'s figures alone (the public readers and
    :func:`opsim.calibrate.calibrate`)."""
    doc = _input_doc(case, fit)
    if fit.datasheet and not doc.get("datasheet"):
        raise InputError(
            f"case {case.id}, fit {fit.name!r}: datasheet = true but input {case.input} has no [datasheet] figures",
            key="datasheet",
        )
    with tempfile.TemporaryDirectory(prefix="opsim-real-drives-") as d:
        path = os.path.join(d, f"{case.input}.toml")
        with open(path, "w") as fh:
            fh.write(tomli_w.dumps(doc))
        spec, figures = read_inputs(path)
    return calibrate(spec, figures)


def _side(cal, where: Where, qd: int, cache: dict) -> dict:
    k = (where.key, where.size, qd)
    if k not in cache:
        cache[k] = cal.predict([where.size], queue_depth=qd, max_address=where.key == "user")[0]
    return cache[k]


def predict_figure(cal, m: Measured, cache: dict | None = None) -> dict:
    """The calibration's prediction of ``m``: value, 95% interval (for a ratio: the extremes
    of its sides' intervals) and whether the measured value lies inside."""
    cache = {} if cache is None else cache
    metric = "iops" if m.what.startswith("iops") else "waf"
    a = _side(cal, m.at, m.queue_depth, cache)
    if m.over is None:
        value, low, high, kind = a[metric], a[f"{metric}_low"], a[f"{metric}_high"], "95%"
    else:
        b = _side(cal, m.over, m.queue_depth, cache)
        value = a[metric] / b[metric]
        low = a[f"{metric}_low"] / b[f"{metric}_high"]
        high = a[f"{metric}_high"] / b[f"{metric}_low"]
        kind = RATIO_INTERVAL
    # a figure read off a plot is a range: inside when the range meets the interval
    u = m.reading_uncertainty or 0.0
    inside = low <= m.value * (1 + u) and m.value * (1 - u) <= high
    return {
        "predicted": value,
        "low": low,
        "high": high,
        "interval": kind,
        "inside": bool(inside),
        "error": value / m.value - 1,
    }


def steps(cases: list[Case]) -> list[tuple[Case, Fit]]:
    return [(c, f) for c in cases for f in c.fits]


def run(
    cases: list[Case],
    progress: Callable[[int, int, Case | None, Fit | None], None] | None = None,
    rows_out: list[dict] | None = None,
) -> list[dict]:
    """Every fit of every case: one row per predicted figure.  Rows are appended to
    ``rows_out`` as they come (what an interrupted run keeps)."""
    rows: list[dict] = [] if rows_out is None else rows_out
    todo = steps(cases)
    for i, (case, fit) in enumerate(todo):
        if progress:
            progress(i, len(todo), case, fit)
        cal = calibrate_fit(case, fit)
        cache: dict = {}
        fitted = [{"id": x, "value": case.figures[x].value, "source": case.figures[x].source} for x in fit.points]
        if fit.datasheet:
            fitted = [
                {"id": f"datasheet {f.kind}", "value": f.value, "source": f.source}
                for f in cal.fitted.figures
                if f.source.startswith("datasheet")
            ] + fitted
        for fid in fit.predict:
            m = case.figures[fid]
            p = predict_figure(cal, m, cache)
            rows.append(
                {
                    "case": case.id,
                    "drive": case.title,
                    "fit": fit.name,
                    "datasheet": fit.datasheet,
                    "nand": fit.nand,
                    "points": list(fit.points),
                    "fitted": fitted,
                    "figure": m.id,
                    "what": m.what,
                    "at": {m.at.key: m.at.size},
                    "over": {m.over.key: m.over.size} if m.over else None,
                    "queue_depth": m.queue_depth,
                    "measured": m.value,
                    **p,
                    "reading": m.reading,
                    "reading_uncertainty": m.reading_uncertainty,
                    "source": m.source,
                    "who_measured": case.who_measured,
                }
            )
    if progress:
        progress(len(todo), len(todo), None, None)
    return rows


def summary(rows: list[dict]) -> dict:
    """Counts of measured figures inside their intervals, by fit kind and metric."""

    def count(pred) -> dict:
        sel = [r for r in rows if pred(r)]
        return {"inside": sum(r["inside"] for r in sel), "of": len(sel)}

    def is_waf(r):
        return r["what"].startswith("waf")

    def ds_only(r):
        return r["datasheet"] and not r["points"]

    return {
        "waf_datasheet_only": count(lambda r: is_waf(r) and ds_only(r)),
        "waf_from_points": count(lambda r: is_waf(r) and bool(r["points"])),
        "iops_datasheet_only": count(lambda r: not is_waf(r) and ds_only(r)),
        "iops_from_points": count(lambda r: not is_waf(r) and bool(r["points"])),
        "all": count(lambda r: True),
        #: rows whose interval has no width: the fit left nothing the figure depends on free
        #: (what it holds at a given value, a prior or a default counts as certain)
        "zero_width": [
            f"{r['case']} {r['fit']} {r['figure']}" for r in rows if r["high"] - r["low"] <= 1e-9 * r["high"]
        ],
    }


def summary_lines(s: dict) -> list[str]:
    w = s["waf_datasheet_only"]
    lines = [
        f"{w['inside']} of {w['of']} measured WAF inside the datasheet-only 95% interval"
        + ("" if w["of"] else " (no case has a measured WAF and a datasheet to predict it from)"),
    ]
    for k, what in (
        ("waf_from_points", "measured WAF figures inside the interval of a fit to measured points"),
        ("iops_datasheet_only", "IOPS figures inside the datasheet-only 95% interval"),
        ("iops_from_points", "measured IOPS figures inside the interval of a fit to measured points"),
    ):
        lines.append(f"{s[k]['inside']} of {s[k]['of']} {what}")
    if s["zero_width"]:
        groups: dict[str, int] = {}
        for row in s["zero_width"]:
            where = row.rsplit(" ", 1)[0]
            groups[where] = groups.get(where, 0) + 1
        lines.append(
            f"{len(s['zero_width'])} interval(s) of zero width ("
            + "; ".join(f"{k}: {n}" for k, n in groups.items())
            + "): nothing the figure depends on was left free by the fit: what it holds (the NAND the input "
            "gives, or the prior's when the datasheet does not say, and default controller times) is taken as certain"
        )
    return lines


def _fmt(what: str, v: float) -> str:
    if what == "iops":
        return f"{v:,.0f}"
    return f"{v:.2f}"


def cells(rows: list[dict]) -> list[list[str]]:
    return [
        [
            r["case"],
            r["fit"],
            r["figure"],
            _fmt(r["what"], r["measured"])
            + (f" (+-{r['reading_uncertainty']:.1%})" if r["reading_uncertainty"] else ""),
            _fmt(r["what"], r["predicted"]),
            f"{_fmt(r['what'], r['low'])} - {_fmt(r['what'], r['high'])}",
            f"{r['error']:+.1%}",
            "yes" if r["inside"] else "NO",
        ]
        for r in rows
    ]


HEADERS = ["case", "fit", "figure", "measured", "predicted", "95% interval", "error", "inside?"]


def markdown(rows: list[dict]) -> str:
    return markdown_table(HEADERS, "lllrrrrl", cells(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m opsim.validation.real_drives")
    ap.add_argument("--case", action="append")
    a = ap.parse_args(argv)

    def progress(i: int, n: int, case: Case | None, fit: Fit | None) -> None:
        if case is not None and fit is not None:
            print(f"[{i + 1}/{n}] {case.id}: {fit.name}", file=sys.stderr)

    rows = run(select(load(), a.case), progress)
    print(markdown(rows))
    print()
    print("\n".join(summary_lines(summary(rows))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
