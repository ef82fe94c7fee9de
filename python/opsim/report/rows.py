"""The report's derived rows: which results are the same drive and the same workload, the OP
table's figures per result (relative endurance against the least-OP simulation of the same
workload on the same drive) and the steady-state verdicts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .. import results
from ..errors import InputError


def model_waf(doc) -> float | None:
    """The analytic model's WAF for a simulated result's GC policy at the OP GC saw (None for
    a measured result, or a policy without a model)."""
    # lazy: the models take numpy and scipy; `opsim --help` and `opsim demo --help` import this
    # package (the demo writes a report) and must not pay for them
    from .. import models  # noqa: PLC0415

    if results.kind_of(doc) != results.SIM:
        return None
    try:
        return models.waf(
            doc["gc"], doc["op"]["effective"], doc["drive"]["pages_per_block"], d=doc["config"]["ftl"].get("d")
        )
    except InputError:
        return None


def drive_key(doc: dict) -> str:
    """What makes two results the same drive (NAND, geometry, preset): endurance compares only those."""
    if results.kind_of(doc) != results.SIM:
        return "measured:" + str((doc.get("target") or {}).get("path"))
    drv = doc["drive"]
    return json.dumps([doc["config"].get("preset"), drv["physical_bytes"], drv["pages_per_block"], drv["page_size"]])


def groups_of(docs: Sequence[dict]) -> list[str]:
    """The workload group of each result (simulated and measured kept apart)."""
    return [
        results.workload_of(d) if results.kind_of(d) == results.SIM else "measured: " + results.workload_label(d)
        for d in docs
    ]


def _references(docs: Sequence[dict], keys: list) -> dict:
    """(workload, drive) -> the least-OP simulation with a WAF (a result without a WAF, e.g. of
    a read-only load, is no reference)."""
    refs: dict = {}
    for d, k in zip(docs, keys):
        if (
            results.kind_of(d) == results.SIM
            and d["waf"] is not None
            and (k not in refs or d["op"]["user"] < refs[k]["op"]["user"])
        ):
            refs[k] = d
    return refs


def _op_row(d: dict, label: str, group: str) -> dict:
    """A result's row without the relative endurance (which needs the reference)."""
    ph = results.phases(d)
    lat = results.latency(d) or {}
    return {
        "label": label,
        "workload": group,
        "kind": results.kind_of(d),
        "user_bytes": results.user_bytes(d),
        "physical_bytes": None,
        "op_user": None,
        "op_physical": None,
        "op_effective": None,
        "gc": None,
        "waf": results.waf(d),
        "waf_model": model_waf(d),
        "tbw_rel": None,
        "dwpd_rel": None,
        "steady_iops": ph["steady_iops"] if ph["steady_reached"] else None,
        "measured_iops": results.measured_iops(d),
        "p99_us": lat.get("p99"),
        "p99_9_us": lat.get("p99.9"),
    }


def op_rows(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """One row per result: capacities, OP in every basis, WAF and model, relative TBW and DWPD
    (against the least-OP simulation of the same workload), steady-state IOPS and latency."""
    grp = groups_of(docs)
    keys = [(g, drive_key(d)) for d, g in zip(docs, grp)]
    refs = _references(docs, keys)
    rows = []
    for d, lab, g, k in zip(docs, labels, grp, keys):
        row = _op_row(d, lab, g)
        if results.kind_of(d) == results.SIM:
            row.update(
                physical_bytes=d["drive"]["physical_bytes"],
                op_user=d["op"]["user"],
                op_physical=d["op"]["physical"],
                op_effective=d["op"]["effective"],
                gc=d["gc"],
            )
            ref = refs.get(k)
            if ref is not None and d["waf"] is not None:  # relative endurance needs both WAFs
                row.update(
                    tbw_rel=ref["waf"] / d["waf"],
                    dwpd_rel=ref["waf"] * ref["drive"]["user_bytes"] / (d["waf"] * d["drive"]["user_bytes"]),
                    reference=next(lb for dd, lb in zip(docs, labels) if dd is ref),
                )
        rows.append(row)
    return rows


def _waf_rule(ss: dict) -> dict:
    """The SNIA rule's verdict on a simulation's per-round WAF."""
    if ss["reached"]:
        return {
            "reached": True,
            "round": ss["round"],
            "mean": ss["mean"],
            "range_ratio": ss["range_ratio"],
            "excursion_ratio": ss["excursion_ratio"],
        }
    return {"reached": False, "range_ratio": ss.get("range_ratio"), "excursion_ratio": ss.get("excursion_ratio")}


def verdicts(docs: Sequence[dict], labels: Sequence[str]) -> list[dict]:
    """Per result: the SNIA rule on WAF (simulated) and on IOPS (with a per-interval series)."""
    out = []
    for d, lab in zip(docs, labels):
        v: dict[str, Any] = {"label": lab, "workload": groups_of([d])[0]}
        if results.kind_of(d) == results.SIM:
            v["waf_rule"] = _waf_rule(d["steady_state"])
        if results.series(d) is not None:
            ph = results.phases(d)
            v["iops_rule"] = {
                "reached": ph["steady_reached"],
                "start_s": ph["steady_start_s"],
                "iops": ph["steady_iops"],
                "fob_end_s": ph["fob_end_s"],
            }
        out.append(v)
    return out
