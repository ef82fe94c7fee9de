"""Data placement validation (docs/validation.md, "Data placement"; docs/placement.md):
the I/O blender with and without FDP, isolated tenants against the greedy mean field at the
spare each effectively holds, and a misplaced hot/cold tenant.  Every figure is computed
when the command runs; tests/sim/test_placement.py asserts the same behaviour.

    python -m opsim.validation.placement          # the markdown tables (about 10 s)
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

from .. import models
from ..sim import simulate

ROOT = Path(__file__).resolve().parents[3]
BLENDER = ROOT / "examples" / "fdp-blender.toml"

#: two uniform-random tenants on a 1 GiB drive, FDP persistently isolated, 10% unallocated
ISOLATED: dict = {
    "drive": {"user_capacity": "1GiB", "op": 0.15, "pages_per_block": 64},
    "ftl": {"gc": "greedy", "placement": {"mode": "fdp", "isolation": "persistently"}},
    "run": {"warmup_drive_writes": 6, "measure_drive_writes": 4, "round_drive_writes": 1},
    "namespace": [
        {"name": "small-busy", "capacity": "30%", "share": 0.6, "placement": 0},
        {"name": "large", "capacity": "60%", "share": 0.4, "placement": 1},
    ],
}

#: a sequential log and a hot/cold key-value store sharing a drive
MISPLACED: dict = {
    "drive": {"user_capacity": "1GiB", "op": 0.20, "pages_per_block": 64},
    "ftl": {"gc": "greedy", "placement": {"mode": "fdp", "handles": 3, "isolation": "persistently"}},
    "run": {"warmup_drive_writes": 6, "measure_drive_writes": 4, "round_drive_writes": 1},
    "namespace": [
        {
            "name": "log",
            "capacity": "50%",
            "share": 0.5,
            "placement": 0,
            "workload": {"type": "sequential", "request_size": "4KiB"},
        },
        {
            "name": "kv",
            "capacity": "50%",
            "share": 0.5,
            "placement": [1, 2],
            "workload": {"type": "hot-cold", "hot_fraction": 0.1, "hot_write_fraction": 0.9},
        },
    ],
}


def blender() -> dict[str, dict]:
    """examples/fdp-blender.toml as given (mode none) and with mode fdp."""
    base = tomllib.loads(BLENDER.read_text())
    out = {}
    for mode in ("none", "fdp"):
        cfg = copy.deepcopy(base)
        cfg["ftl"]["placement"]["mode"] = mode
        out[mode] = simulate(cfg).data
    return out


def isolated() -> tuple[dict, list[dict]]:
    """Each tenant's WAF against the greedy mean field at its effective spare (its blocks at
    the end over its data pages), and the drive against the mean field at the OP the
    unallocated capacity adds."""
    d = simulate(ISOLATED).data
    ppb, page = d["drive"]["pages_per_block"], d["drive"]["page_size"]
    rows = []
    for n, h in zip(d["namespaces"], d["handles"], strict=True):
        op = h["blocks"] * ppb / (n["capacity_bytes"] / page) - 1
        rows.append({"name": n["name"], "waf": n["waf"], "op_eff": op, "model": models.waf_greedy(op, ppb)})
    used = sum(n["capacity_bytes"] for n in d["namespaces"]) / page
    pool = d["drive"]["physical_pages"] - 2 * ppb  # the 2-block free reserve, as op seen by GC
    op = pool / used - 1
    rows.append({"name": "drive", "waf": d["waf"], "op_eff": op, "model": models.waf_greedy(op, ppb)})
    return d, rows


def misplaced() -> dict[str, dict]:
    """The key-value store's hot and cold data on their own handles, on one handle, and no
    placement at all."""
    out = {}
    for case in ("separated", "misplaced", "none"):
        cfg = copy.deepcopy(MISPLACED)
        if case == "misplaced":
            cfg["namespace"][1]["placement"] = 1
        if case == "none":
            cfg["ftl"]["placement"] = {"mode": "none"}
        out[case] = simulate(cfg).data
    return out


def markdown() -> str:
    lines = ["| case | drive WAF | per namespace WAF |", "|---|---:|---|"]
    for mode, d in blender().items():
        per = ", ".join(f"{n['name']} {n['waf']:.3f}" for n in d["namespaces"])
        lines.append(f"| blender, mode {mode} | {d['waf']:.3f} | {per} |")
    lines += [
        "",
        "| tenant (fdp, persistently isolated) | WAF | effective OP | greedy mean field | error |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in isolated()[1]:
        err = r["waf"] / r["model"] - 1
        lines.append(
            f"| {r['name']} | {r['waf']:.4f} | {100 * r['op_eff']:.2f}% | {r['model']:.4f} | {100 * err:+.2f}% |"
        )
    lines += ["", "| key-value store placement | drive WAF | log WAF | kv WAF |", "|---|---:|---:|---:|"]
    for case, d in misplaced().items():
        ns = {n["name"]: n["waf"] for n in d["namespaces"]}
        lines.append(f"| {case} | {d['waf']:.3f} | {ns['log']:.3f} | {ns['kv']:.3f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown())
