"""A calibration: the fitted model, every parameter with its source, predictions with
intervals, and the drive file it writes."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import Any

from .._version import __version__
from ..errors import InputError
from ..planner.endurance import RATED_PE_SOURCE, dwpd_of, rated_host_bytes
from ..units import fmt_bytes
from . import burst, endurance, gc_cost, stored, timed
from .bounds import queue_depth_refusal
from .fit import Z95, Fitted, fit
from .inputs import DriveSpec, Figure, check_endurance, read_datasheet, read_points, resolve_spans, unused_fit_from
from .measured import read_measured
from .model import build, predict, structure_of
from .structure import NATIVE_KEY, gc_cost_top, gc_prior_text
from .uncertainty import PINNED, Profile, gc_unpinned, narrowing, native_unpinned, profile

#: the queue depth a datasheet's random IOPS are taken at when it does not say: NVMe briefs
#: measure at QD 128-256 (4 jobs x 64 is common), SATA at its NCQ limit of 32
DATASHEET_QD = {"nvme": 256, "sata": 32, "sas": 32}
#: the warranty an endurance rating is spread over when the datasheet does not say (years)
DEFAULT_WARRANTY = 5.0
SECTOR = stored.SECTOR


def read_inputs(
    datasheet: str | None = None,
    points: str | None = None,
    measured: list[str] | None = None,
    flags: dict[str, Any] | None = None,
) -> tuple[DriveSpec, list[Figure]]:
    """The drive and its figures from a datasheet file, a points file, measurement results and
    flags (``native``, ``interface``, ``physical``, ``cell``, ``page_size``, ``pe``: a flag
    overrides the datasheet and counts as "given")."""
    spec, figures = read_datasheet(datasheet) if datasheet else (DriveSpec(), [])
    if datasheet and spec.fit_from is not None:
        spec.unused["calibration.fit_from"] = unused_fit_from(spec.fit_from)
    for k, v in (flags or {}).items():
        if v is not None:
            setattr(spec, k, v)
            spec.origin[k] = "given"
    if points:
        figures += read_points(points)
    for path in measured or []:
        figs, info = read_measured(path)
        figures += figs
        spec.notes += info.get("notes", [])
        if info.get("file_target") and spec.title is None:
            spec.title = f"model of a measurement of a file, {os.path.basename(path)} (a file is not an SSD)"
        if info.get("file_target") and not any("a file is not an SSD" in n for n in spec.notes):
            spec.notes.append(
                "a measurement of a file is a measurement of the file system and the device beneath it, "
                "not of an SSD: the model reproduces the file's figures, not a drive's (a file is not an SSD)"
            )
        if spec.native is None and info.get("target_bytes"):
            spec.native = int(info["target_bytes"]) // SECTOR * SECTOR
            spec.origin["native"] = "measured"
    if spec.native is None:
        raise InputError(
            "the drive's native (user) capacity is needed: --native 960GB, or [drive] native in the datasheet",
            key="native",
        )
    check_endurance(spec, spec.warranty_years or DEFAULT_WARRANTY)
    qd = DATASHEET_QD.get(spec.interface or "sata", 32)
    figures = [
        replace(f, queue_depth=qd)
        if f.queue_depth is None
        and f.source.startswith("datasheet")
        and f.kind in ("steady_iops", "rand_read", "fob_iops")
        else f
        for f in figures
    ]
    return spec, resolve_spans(figures, spec.native)


@dataclass
class Calibration:
    fitted: Fitted
    pe: dict | None = None
    notes: list[str] = field(default_factory=list)
    #: the profile over the NAND capacity the intervals come from (None: the NAND was given)
    profile: Profile | None = None

    @property
    def spec(self) -> DriveSpec:
        return self.fitted.model.spec

    @property
    def user_bytes(self) -> int:
        return self.fitted.model.user_bytes

    def config(self) -> dict:
        return self.fitted.model.config(self.fitted.values)

    def parameters(self) -> list[dict]:
        """Every parameter of the drive file, with its value, interval and source."""
        f = self.fitted
        out = []
        by_key = {p.key: p for p in f.model.params}
        cfg = self.config()
        for section in ("drive", "ftl", "timing"):
            for k, v in cfg.get(section, {}).items():
                key = f"{section}.{k}"
                p = by_key.get(key)
                if p is None:
                    out.append({"name": key, "value": v, "low": None, "high": None, "source": f.model.sources[key]})
                    continue
                lo, hi = f.interval(p) if f.status[p.name] == "fitted" else (None, None)
                if p.name == self.profile_param:
                    lo, hi = self.profile.nand_interval()  # type: ignore[union-attr]
                out.append(
                    {"name": key, "value": cfg[section][k], "low": lo, "high": hi, "source": self.source(p.name)}
                )
        self._bound_gc_costs(out)
        native = self.native_grid()
        row = next((r for r in out if r["name"] == NATIVE_KEY), None)
        if native and row is not None:  # a datasheet of bursts: the native program time's prior range
            ts = [t for t, _, _ in native] + [row["value"]]
            row |= {"low": min(ts), "high": max(ts), "source": burst.prior_text()}
        if self.pe:
            out.append({"name": "pe_cycles", **{k: self.pe[k] for k in ("value", "low", "high", "source")}})
        return out

    def _bound_gc_costs(self, rows: list[dict]) -> None:
        """The GC controller costs the figures do not pin (:mod:`.gc_cost`), each with its prior
        interval, from none to the largest at which the steady random-write figures are still
        met at their 95% lower end; a row added for a cost the config does not set.  A cost the
        fit pinned keeps its row; a fit with no steady write figure has no bound."""
        by_name = {r["name"]: r for r in rows}
        if not gc_cost.steady_write_figures(self.fitted):
            width = self.gc_prior_width()
            row = by_name.get("timing.gc_fw_us")
            if width is not None and row is not None:
                row |= {"low": 0.0, "high": gc_cost_top(width), "source": gc_prior_text(width)}
            return
        for key, b in gc_cost.bounds(self.fitted).items():
            if b.status == "fitted":
                continue
            row = by_name.get(key)
            if row is None:
                row = {"name": key, "value": b.value}
                rows.append(row)
            row |= {"low": b.low, "high": b.high, "source": b.source()}

    def native_grid(self) -> list[tuple[float, float, float]] | None:
        """The native program times the intervals range over (a datasheet of bursts, with a
        profile: :func:`.uncertainty.native_unpinned`)."""
        return native_unpinned(self.fitted) if self.profile is not None else None

    def gc_prior_width(self) -> float | None:
        """The prior width of the controller's time per GC copy when the intervals range over it
        (no figure pins it and the profile carries the structures: :func:`.uncertainty.gc_unpinned`)."""
        return gc_unpinned(self.fitted) if self.profile is not None else None

    @property
    def profile_param(self) -> str | None:
        return self.profile.param if self.profile else None

    def source(self, name: str) -> str:
        f = self.fitted
        p = next(q for q in f.model.params if q.name == name)
        if f.status[name] == "fitted":
            used = sorted({x.source for x in f.figures})
            return f"fitted: {p.what}, to {'; '.join(used)} (95% interval in [preset.calibration])"
        return f"default: {p.what}; the figures do not pin it, so it stays at {p.prior_source}"

    def fit_report(self) -> dict:
        f = self.fitted
        preds = predict(f.model, f.values, f.figures)
        rows = []
        for x, p in zip(f.figures, preds):
            rows.append(
                {
                    "figure": x.label(),
                    "source": x.source,
                    "observed": x.value,
                    "model": p.value,
                    "error": p.value / x.value - 1,
                    "sigma": x.sigma,
                    "bottleneck": p.bottleneck if x.kind not in ("waf", "waf_ratio") else None,
                    "waf": p.waf,
                }
            )
        return {
            "figures": rows,
            "fitted": [p.name for p in f.free],
            "residual_scale": math.sqrt(f.scale2),
            "unused": dict(self.spec.unused),
            "timed_runs": [
                {
                    "condition": list(map(str, c)),
                    "iops": r.iops,
                    "bound": r.bound,
                    "efficiency": r.efficiency,
                    "waf": r.waf,
                    "scale": r.scale,
                }
                for c, r in f.timed_runs.items()
            ],
        }

    def predict(
        self,
        spans: list[int],
        *,
        held_back: list[float] | None = None,
        queue_depth: int | None = None,
        simulate: bool = True,
        max_address: bool = False,
    ) -> list[dict]:
        """Steady WAF and 4 KiB random-write IOPS (and p99 latency, endurance) with 95% intervals
        when ``spans`` bytes of the drive are written (the rest trimmed or never written), or with
        ``max_address`` when the max address is lowered to each span (SET MAX ADDRESS)."""
        f = self.fitted
        out = []
        check_queue_depth(queue_depth)
        qd = queue_depth or self.spec.rand_write_qd
        cfg = self.config()
        for span in spans:
            if not 0 < span <= self.user_bytes:
                raise InputError(
                    f"span {fmt_bytes(span)} is outside the drive's user capacity {fmt_bytes(self.user_bytes)}",
                    key="predict",
                )
        figs = [
            Figure("steady_iops", 1.0, "prediction", span=span, queue_depth=qd, user=span if max_address else None)
            for span in spans
        ]
        # the profile's points of the IOPS interval's two ends at each span, then every timed
        # run (the fit's, and each end's that needs its own: :meth:`_iops_ends`) side by side on the cores
        ends = [self._iops_ends(fig) for fig in figs]
        todo = [(cfg, fig) for fig in figs]
        todo += [(f.model.config(pt), fig) for fig, e in zip(figs, ends) for pt, _, _, own in e if own]
        done = timed.run_each(todo, self.user_bytes) if simulate else [None] * len(todo)
        runs, rest = done[: len(figs)], iter(done[len(figs) :])
        timed_ends = [[next(rest) if own else None for *_, own in e] for e in ends]
        for i, (span, fig, t) in enumerate(zip(spans, figs, runs)):
            wfig = replace(fig, kind="waf")

            def iops_of(values, fig=fig):
                return predict(f.model, values, [fig])[0].value

            def waf_of(values, wfig=wfig):
                return predict(f.model, values, [wfig])[0].value

            def copies_of(values, waf_of=waf_of):  # the interval is on WAF - 1, which stays positive
                return max(1e-12, waf_of(values) - 1.0)

            bound = iops_of(f.values)
            waf = waf_of(f.values)
            iops, p99 = (bound, None) if t is None else (t.iops, t.p99_us)
            s_w = f.log_sd(copies_of)
            waf_lo, waf_hi = 1 + (waf - 1) * math.exp(-Z95 * s_w), 1 + (waf - 1) * math.exp(Z95 * s_w)
            down, up = f.reach(iops_of, Z95, figures=f.figures)
            iops_lo, iops_hi = iops * math.exp(down), iops * math.exp(up)
            if self.profile:
                # the profile's interval (docs/calibrate.md, "The uncertainty model"): WAF is the
                # NAND's alone; the IOPS at its two ends (:meth:`_iops_ends`), each its own timed
                # run's or the bound there at the fit's efficiency, reaching on; and the fit's own
                # reach, whichever goes further
                waf_lo, waf_hi = self.profile.interval(waf_of)
                eff = iops / bound if bound > 0 else 1.0
                for (_, end_bound, reach, _), te in zip(ends[i], timed_ends[i]):
                    v = (te.iops if te is not None else end_bound * eff) * math.exp(reach)
                    iops_lo, iops_hi = min(iops_lo, v), max(iops_hi, v)
            row = {
                "span_bytes": span,
                "held_back": (held_back[i] if held_back else 1 - span / self.user_bytes),
                "waf": waf,
                "waf_low": waf_lo,
                "waf_high": waf_hi,
                "waf_pinned": waf_hi / waf_lo <= PINNED,
                "iops": iops,
                "iops_low": iops_lo,
                "iops_high": iops_hi,
                "iops_bound": bound,
                "p99_us": p99,
            }
            if self.pe:
                years = self.spec.warranty_years or DEFAULT_WARRANTY
                physical = f.values.get("physical") or cfg["drive"]["physical_capacity"]
                tbw = float(physical) * self.pe["value"] / waf
                row["tbw_tb"] = tbw / 1e12
                row["dwpd"] = dwpd_of(tbw, span, years)
            out.append(row)
        return out

    def _iops_ends(self, fig: Figure) -> list[tuple[dict[str, Any], float, float, bool]]:
        """The IOPS interval's two ends over the profile (none without one): each a point, its
        bound, its log-distance (signed) from the point's IOPS, and whether it needs a timed run
        of its own (the event model's efficiency is the busiest resource's of a device: an end
        where another resource than at the fit is the busiest, or whose structure is another
        device, a ``[timing]`` key; else the fit's efficiency holds).  The interval
        is the prediction's range over every parameter value within the threshold of the least
        cost: the profile walks the NAND and the structures with the others refitted, and around
        each point they may move on by the cost it has left (``budget``): ``sqrt(budget)`` sds of
        the refit's covariance there (what the figures pin around that point; at the fit, the
        fit's given the NAND), the bound evaluated where the delta method's line is least and
        most (:meth:`.fit.Fitted.reach`).  Of equal ends (a controller's bound over a range of
        NAND) the least's is of the most WAF, the most's of the least: its other resources the
        busiest, and the idlest, as the timed run of it sees them."""
        if self.profile is None:
            return []
        f = self.fitted
        wfig = replace(fig, kind="waf")

        def bound(values: dict[str, Any]) -> float:
            return predict(f.model, values, [fig])[0].value

        scored = []
        for i, (pt, budget, cov) in enumerate(self.profile.budgets()):
            at = predict(f.model, pt, [fig])[0]
            if not (math.isfinite(at.value) and at.value > 0):
                continue
            down, up = f.reach(bound, math.sqrt(budget), pt, self.profile.param, cov, self.profile.figures)
            waf = predict(f.model, pt, [wfig])[0].value
            scored.append((math.log(at.value), (down, up), waf, i, f.values if i == 0 else pt, at))
        fit_neck = predict(f.model, f.values, [fig])[0].bottleneck

        def end(sign: int) -> tuple[dict[str, Any], float, float, bool]:
            # the least of -sign * (log bound + its reach that way): the lower end (-1), the upper (+1)
            side = (sign + 1) // 2
            e = min(scored, key=lambda e: (float(f"{-sign * (e[0] + e[1][side]):.9g}"), sign * e[2], e[3]))
            # timed on its own where another resource is the busiest, or the device is another
            # (a NAND array of the structure's): the efficiency is that device's busiest resource's
            other = any(k.startswith("timing.") for k in structure_of(e[4]))
            return e[4], e[5].value, e[1][side], e[3] > 0 and (e[5].bottleneck != fit_neck or other)

        return [end(-1), end(1)]

    def drive_toml(self, name: str | None = None, title: str | None = None) -> dict:
        """The drive file: the presets' schema, every parameter with its source."""
        spec = self.spec
        cfg = self.config()
        params = self.parameters()
        sources = {p["name"]: p["source"] for p in params if p["name"] != "pe_cycles"}
        meta: dict[str, Any] = {
            "name": name or spec.name or "calibrated-drive",
            "title": title or spec.title or f"calibrated drive ({fmt_bytes(self.user_bytes)})",
        }
        if spec.family:
            meta["family"] = spec.family
        meta["sources"] = sources
        intervals = {
            p["name"]: stored.interval(p["low"], p["high"])
            for p in params
            if p["low"] is not None and p["name"] != "pe_cycles"
        }
        calib: dict[str, Any] = {"opsim_version": __version__, "intervals_95": intervals}
        if self.profile:
            keys = {p.name: p.key for p in self.fitted.model.params}
            whole = Figure("waf", 1.0, "the whole drive")

            def waf_whole(values: dict[str, Any]) -> float:
                return predict(self.fitted.model, values, [whole])[0].value

            model = self.fitted.model

            def native(values: dict[str, Any]) -> dict[str, Any]:
                return {NATIVE_KEY: model.config(values)["timing"][NATIVE_KEY.split(".")[1]]}

            calib["profile"] = self.profile.stored(keys, waf_whole, native if model.native_share is not None else None)
        if self.pe:
            calib["pe_cycles"] = stored.pe_cycles(self.pe["value"])
            calib["pe_cycles_source"] = self.pe["source"]
        src = {k: v for k, v in spec.source.items() if isinstance(v, (str, list)) and k != "figures"}
        if src:
            calib["source"] = src
        meta["calibration"] = calib
        tables: dict[str, Any] = {"preset": meta}
        for section in ("drive", "ftl", "timing"):
            if cfg.get(section):
                tables[section] = {k: _toml_value(f"{section}.{k}", v) for k, v in cfg[section].items()}
        return tables


#: keys a drive file writes as sizes ("960GB"), exact
SIZE_KEYS = {
    "drive.user_capacity",
    "drive.physical_capacity",
    "drive.page_size",
    "timing.nand_page_size",
    "timing.nand_block_size",
    "timing.write_buffer",
}


def _exact_size(n: int) -> str:
    """``n`` bytes in the largest unit that states it exactly (960GB, 48KiB, 1192045838336B)."""
    units = (
        ("TiB", 2**40),
        ("GiB", 2**30),
        ("MiB", 2**20),
        ("KiB", 2**10),
        ("TB", 10**12),
        ("GB", 10**9),
        ("MB", 10**6),
    )
    return min((f"{n // m}{u}" for u, m in units if n >= m and n % m == 0), key=len, default=f"{n}B")


def _toml_value(key: str, v: Any) -> Any:
    if key in SIZE_KEYS and isinstance(v, int) and not isinstance(v, bool):
        return _exact_size(v)
    if isinstance(v, float):
        return round(v, 4)
    return v


def check_queue_depth(queue_depth, key: str = "queue_depth") -> None:
    """A prediction's queue depth: None (the datasheet's) or one the core runs
    (:func:`.bounds.queue_depth_refusal`); the CLI checks it before the fit."""
    if queue_depth is not None:
        why = queue_depth_refusal(queue_depth)
        if why is not None:
            raise InputError(f"{key}: {why}", key=key)


def calibrate(spec: DriveSpec, figures: list[Figure], *, progress=None, timed_rounds: int | None = None) -> Calibration:
    """Fit the drive model of ``spec`` to ``figures`` and derive its P/E rating from the
    datasheet's endurance."""
    model = build(spec, figures)
    kw = {} if timed_rounds is None else {"timed_rounds": timed_rounds}
    fitted = fit(model, figures, progress=progress, **kw)
    fitted.values = {k: stored.value(k, v) for k, v in fitted.values.items()}  # what the drive file runs
    cal = Calibration(fitted, notes=list(spec.notes), profile=profile(fitted))
    width = cal.gc_prior_width()
    priors = [gc_prior_text(width) if width is not None else "", burst.prior_text() if cal.native_grid() else ""]
    if any(priors):
        cal.notes.append(
            "no figure is of a steady state (a fresh-out-of-box random write is a burst): "
            f"{'; '.join(x for x in priors if x)}; one steady random-write measurement pins "
            f"{'them' if all(priors) else 'it'} (`opsim measure iops --device DEV --destroy-data DEV`, then --measured)"
        )
    cal.pe = _pe(cal)
    return cal


def suggestion(cal: Calibration, span: int | None, queue_depth: int | None = None) -> dict | None:
    """The one measurement that would narrow the WAF interval at ``span`` (None: the whole
    drive) most, computed (:func:`.uncertainty.narrowing`), with every candidate; None when the
    NAND was given."""
    if cal.profile is None:
        return None
    rows = narrowing(cal.fitted, span, queue_depth or cal.spec.rand_write_qd, cal.profile)
    if not rows:
        return None
    best = rows[0]
    return {"span_bytes": span or cal.user_bytes, "best": best, "candidates": rows}


def _pe(cal: Calibration) -> dict | None:
    """The P/E rating: given, or derived from the datasheet's endurance at the WAF of the
    JESD219 workload of the rating's class (:mod:`.endurance`)."""
    spec, f = cal.spec, cal.fitted
    if spec.pe is not None:
        return {"value": spec.pe, "low": None, "high": None, "source": f"{spec.origin.get('pe', 'given')}: P/E rating"}
    if spec.tbw is None and spec.dwpd is None:
        return None
    years = spec.warranty_years or DEFAULT_WARRANTY
    if spec.tbw is not None:
        written, how = spec.tbw * 1e12, f"{spec.tbw:g} TBW"
    else:
        assert spec.dwpd is not None
        written, how = rated_host_bytes(spec.dwpd, cal.user_bytes, years), f"{spec.dwpd:g} DWPD over {years:g} years"
    cls, why = endurance.rating_class(spec)
    waf_of = _rating_waf(cal, cls)

    def pe_of(values):
        physical = values.get("physical") or f.model.tables["drive"]["physical_capacity"]
        return written * waf_of(values) / float(physical)

    v = pe_of(f.values)
    s = f.log_sd(pe_of)
    w = waf_of(f.values)
    u = predict(f.model, f.values, [Figure("waf", 1.0, "endurance")])[0].value
    if cls == "enterprise":
        cal.notes.append(
            f"the predictions' DWPD and TBW are for 4 KiB random writes over each span (WAF {u:.2f} over the whole "
            f"drive); the endurance rating is for the JESD219 enterprise workload (WAF {w:.2f}), at which the "
            f"P/E rating gives the datasheet's {how}"
        )
    return {
        "value": v,
        "low": v * math.exp(-Z95 * s),
        "high": v * math.exp(Z95 * s),
        "class": cls,
        "waf": w,
        "source": f"{RATED_PE_SOURCE} ({how}) at the model's WAF under "
        f"{endurance.WORKLOAD[cls]} ({w:.2f}; JESD218 {cls} class: {why}), over the NAND: "
        "P/E = host bytes x WAF / NAND bytes"
        + ("" if spec.warranty_years else f"; the warranty taken as {DEFAULT_WARRANTY:g} years"),
    }


def _rating_waf(cal: Calibration, cls: str):
    """WAF under the rating's workload at a set of parameter values.  Enterprise: the JESD219
    workload simulated at the fitted values, its GC copies scaled with the 4 KiB curve's
    copies at other values (their sensitivity to the NAND carries over to the interval).
    Client: the 4 KiB curve."""
    f = cal.fitted
    wfig = Figure("waf", 1.0, "endurance")

    def uniform(values) -> float:
        return predict(f.model, values, [wfig])[0].value

    if cls != "enterprise":
        return uniform
    base = endurance.enterprise_waf(cal.config(), cal.user_bytes)
    u0 = uniform(f.values)

    def waf(values) -> float:
        if values is f.values or u0 - 1.0 < 1e-9:  # at the fit, or no GC to scale
            return base.waf
        return 1.0 + (base.waf - 1.0) * (uniform(values) - 1.0) / (u0 - 1.0)

    return waf
