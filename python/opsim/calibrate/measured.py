"""Figures from opsim's own measurement results: ``opsim measure`` (the steady-state IOPS over
the span it wrote, and the WAF of its own SMART snapshots with ``--smart``) and an interval
result of ``opsim smart waf`` (the WAF over the interval)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from .. import userfile
from ..errors import InputError
from ..measure.fio import size_bytes
from .inputs import SIGMA_MEASURED, Figure, _read_text


def _get(doc: dict, path: str, where: str, types: tuple) -> Any:
    cur: Any = doc
    for k in path.split("."):
        if not isinstance(cur, dict) or k not in cur:
            raise InputError(f"measured {where}: no {path}", key="measured")
        cur = cur[k]
    if not isinstance(cur, types) or isinstance(cur, bool):
        raise InputError(f"measured {where}: {path} is {cur!r}", key="measured")
    return cur


def from_measure(doc: dict, path: str, name: str) -> tuple[list[Figure], dict]:
    if doc.get("schema") != "opsim-measure":
        raise InputError(f"measured {path}: not an `opsim measure` result (schema)", key="measured")
    span = int(_get(doc, "target.span_bytes", path, (int,)))
    params = _get(doc, "parameters", path, (dict,))
    bs_list, mixes = params.get("bs") or [4096], params.get("rwmix") or ["0/100"]
    try:
        bs = size_bytes(bs_list[0])
    except InputError:
        raise InputError(f"measured {path}: parameters.bs {bs_list[0]!r} is not a block size", key="measured") from None
    try:
        read_pct = float(str(mixes[0]).split("/")[0])
    except ValueError:
        raise InputError(f"measured {path}: parameters.rwmix {mixes[0]!r} is not R/W", key="measured") from None
    qd = int(params.get("iodepth") or 1) * int(params.get("numjobs") or 1)
    steady = doc.get("steady_state") or {}
    iops = doc.get("steady_iops")
    notes = []
    if iops is None:
        iops = doc.get("measured_iops")
        notes.append(f"{name}: no SNIA steady state was reached; its measured IOPS over the last rounds is used")
    if not isinstance(iops, (int, float)) or isinstance(iops, bool) or not iops > 0:
        raise InputError(f"measured {path}: no IOPS figure (steady_iops and measured_iops are empty)", key="measured")
    if doc.get("interrupted"):
        notes.append(f"{name}: the run was interrupted ({doc.get('interrupted_by')}); its finished rounds are used")
    label = f"{name} ({doc.get('test')}, {'steady state' if steady.get('reached') else 'no steady state'})"
    lat = ((doc.get("latency_us") or {}).get("all") or {}).get("p99")
    fig = Figure(
        "steady_iops",
        float(iops),
        label,
        span=span,
        block_size=bs,
        queue_depth=qd,
        read_fraction=read_pct / 100,
        sigma=SIGMA_MEASURED,
        p99_us=lat if isinstance(lat, (int, float)) else None,
    )
    figs = [fig]
    waf = _steady_waf(doc.get("smart") or {}, name, notes)
    if waf is not None:
        figs.append(replace(fig, kind="waf", value=waf[0], sigma=waf[1], source=f"{name} ({waf[2]})"))
    target = doc.get("target") or {}
    info = {
        "target_bytes": params.get("target_bytes"),
        "file_target": target.get("kind") == "file",
        "notes": notes,
    }
    return figs, info


def _steady_waf(smart: dict, name: str, notes: list) -> tuple[float, float, str] | None:
    """The steady WAF of a measurement with ``--smart`` as (value, sigma, where from): the
    steady window's (measure/smart_window.py) with the uncertainty the run showed; None, with a
    note, when the result has none (a result of an earlier opsim, whose one SMART interval spans
    the preconditioning and the rounds before steady state, is not a steady WAF)."""
    if not smart:
        return None
    st = smart.get("steady")
    if not isinstance(st, dict):
        if smart.get("waf") is not None:
            notes.append(
                f"{name}: its SMART WAF spans the whole run (the preconditioning's sequential passes and the "
                "rounds before steady state), not a steady state: not fitted; measure again with this opsim "
                "for the steady window's WAF"
            )
        return None
    waf, sigma = st.get("waf"), st.get("sigma")
    if not st.get("available") or not isinstance(waf, (int, float)) or isinstance(waf, bool) or waf < 1:
        notes.append(f"{name}: no steady SMART WAF ({st.get('reason')})")
        return None
    if not isinstance(sigma, (int, float)) or isinstance(sigma, bool) or not sigma > 0:
        notes.append(
            f"{name}: the steady SMART WAF has no uncertainty of its own ({st.get('reason')}); {SIGMA_MEASURED:.0%} taken"
        )
        sigma = SIGMA_MEASURED
    rounds = st.get("rounds") or ["?", "?"]
    return float(waf), float(sigma), f"SMART counters over the steady window, rounds {rounds[0]}-{rounds[1]}"


def from_smart(doc: dict, path: str, name: str) -> tuple[list[Figure], dict]:
    if doc.get("mode") != "interval":
        raise InputError(
            f"measured {path}: a lifetime WAF (one snapshot) says nothing about a steady state; "
            "give an interval result of `opsim smart waf BEFORE AFTER`",
            key="measured",
        )
    waf = doc.get("waf")
    if not isinstance(waf, (int, float)) or isinstance(waf, bool):
        raise InputError(f"measured {path}: the interval has no WAF ({doc.get('reason')})", key="measured")
    if waf < 1:
        raise InputError(f"measured {path}: WAF {waf} is below 1", key="measured")
    drive = doc.get("drive") or {}
    note = (
        f"{name}: the interval's writes are taken as steady random writes over the whole drive; "
        "for a partition or a part of the drive, give the span in a points file"
    )
    fig = Figure("waf", float(waf), f"{name} (SMART interval)", sigma=SIGMA_MEASURED)
    return [fig], {"target_bytes": drive.get("capacity_bytes"), "file_target": False, "notes": [note]}


def read_measured(path: str) -> tuple[list[Figure], dict]:
    """A result of ``opsim measure`` (its steady-state IOPS over the span it wrote) or an interval
    result of ``opsim smart waf`` (the WAF over the interval).  Returns the figures and what the
    file says about the target (``{"target_bytes", "file_target"}``)."""
    doc = userfile.loads_json(_read_text(path, "measured"), source=f"measured {path}", key="measured")
    if not isinstance(doc, dict):
        raise InputError(f"measured {path}: not an opsim measure or smart waf result", key="measured")
    name = os.path.basename(path)
    if doc.get("schema") == "opsim-measure":
        return from_measure(doc, path, name)
    if doc.get("mode") in ("interval", "lifetime") and "waf" in doc:
        return from_smart(doc, path, name)
    raise InputError(
        f"measured {path}: neither an `opsim measure` result nor an interval result of `opsim smart waf`",
        key="measured",
    )
