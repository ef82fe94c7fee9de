"""The report's "Drives and workloads" section: one row per drive (simulated: preset,
geometry and timing; measured: the target) naming the results on it, and one row per
workload group with its parameters and how it was run."""

from __future__ import annotations

import json
from collections.abc import Sequence

from .. import results
from .markup import html_table, size
from .rows import groups_of


def _drives(docs: Sequence[dict], labels: Sequence[str]) -> dict[str, list]:
    """drive key -> [its first result, the labels of its results]."""
    drives: dict[str, list] = {}
    for d, lab in zip(docs, labels):
        if results.kind_of(d) == results.SIM:
            cfg, drv = d["config"], d["drive"]
            key = json.dumps(
                [cfg.get("preset"), drv["physical_bytes"], drv["pages_per_block"], drv["page_size"], cfg.get("timing")],
                sort_keys=True,
                default=str,
            )
            if lab not in drives.setdefault(key, [d, []])[1]:
                drives[key][1].append(lab)
        else:
            t = d.get("target") or {}
            key = json.dumps(["measured", t.get("path")])
            drives.setdefault(key, [d, []])[1].append(lab)
    return drives


def _timing_text(d: dict) -> str:
    t = d["config"].get("timing") or {}
    if not d.get("timed"):
        return "-"
    return (
        f"{t.get('interface')}, QD{t.get('queue_depth')}, {t.get('channels')} ch x "
        f"{t.get('dies_per_channel')} dies x {t.get('planes')} planes, tR {t.get('t_read_us')} us, "
        f"tPROG {t.get('t_prog_us')} us, tBERS {t.get('t_erase_us')} us, "
        f"buffer {size(t.get('write_buffer'))}"
    )


def _drive_row(d: dict, labs: list[str]) -> list[str]:
    if results.kind_of(d) == results.SIM:
        drv = d["drive"]
        return [
            d["config"].get("preset") or "(no preset)",
            "simulated",
            f"{size(drv['physical_bytes'])} NAND, {drv['blocks']:,} blocks x {drv['pages_per_block']:,} "
            f"pages x {size(drv['page_size'])}",
            _timing_text(d),
            ", ".join(labs),
        ]
    t = d.get("target") or {}
    return [
        t.get("path", "?"),
        f"measured ({d.get('source', 'fio')}, {d.get('fio_version', '')})",
        f"{t.get('kind', '?')}, span {size(t.get('span_bytes'))}",
        "-",
        ", ".join(labs),
    ]


def _tenant_parameters(tenants: list) -> str:
    """Each tenant's own workload (not the unused top-level one), without unset keys."""
    return json.dumps(
        [
            {
                k: ({kk: vv for kk, vv in v.items() if vv is not None} if isinstance(v, dict) else v)
                for k, v in t.items()
                if v is not None
            }
            for t in tenants
            if isinstance(t, dict)
        ]
    )


def _workload_row(g: str, d: dict) -> list[str]:
    if results.kind_of(d) != results.SIM:
        p = d.get("parameters") or {}
        return [
            g,
            json.dumps({k: p.get(k) for k in ("bs", "rwmix", "iodepth", "numjobs", "round_s")}),
            f"{d.get('test')}: {d.get('stop_reason')}",
        ]
    wl, run = d["config"]["workload"], d["config"]["run"]
    how = (
        f"precondition {run.get('precondition')}, warm-up {run.get('warmup_drive_writes')} and measured "
        f"{run.get('measure_drive_writes')} drive writes in rounds of {run.get('round_drive_writes')}; "
        f"GC {d['gc']}; seed {run.get('seed')}"
    )
    tenants = d["config"].get("namespace") if results.namespaces_of(d) is not None else None
    if isinstance(tenants, list) and tenants:
        params = _tenant_parameters(tenants)
    else:
        params = json.dumps({k: v for k, v in wl.items() if v is not None})
    return [g, params, how]


def drives_section(docs: Sequence[dict], labels: Sequence[str]) -> list[str]:
    """The section's heading and its two tables."""
    rows = [_drive_row(d, labs) for d, labs in _drives(docs, labels).values()]
    grp = groups_of(docs)
    wrows = [_workload_row(g, docs[grp.index(g)]) for g in dict.fromkeys(grp)]
    return [
        "<h2>Drives and workloads</h2>",
        html_table(["drive", "source", "geometry", "timing", "results"], rows, [False] * 5),
        html_table(["workload", "parameters", "run"], wrows, [False] * 3),
    ]
