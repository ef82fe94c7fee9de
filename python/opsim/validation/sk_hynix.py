"""The SK hynix urgent-state case studies (seed 004; ``opsim validate --suite sk-hynix``)."""

from __future__ import annotations

import copy
import itertools
from typing import Any

import numpy as np

from .._output import markdown_table
from ..presets import get
from ..sim import describe, simulate
from ..units import parse_size

# "Over-Provisioning and Performance of Mobile Storage" (SK hynix, 2016; seed 004): BrickSim on a
# 64 GB mobile drive of 1024 main blocks (93% user, 2% free, 5% system) plus 0-6% of external OP
# blocks, workload "repeat (Sequential Write 1G -> Random Write 200M)" until the user area is full;
# the urgent state begins when the free blocks are about N% (3) of the blocks.  Case #1: performance
# from entering the urgent state to 100% occupation of the user area, per external OP level;
# Case #2: the gain per 1% of OP (the talk: about 1.6%); Case #3: the effect of entering the urgent
# state earlier and of the sustain-state performance.  docs/validation.md has the tables.

SKH_PRESET = "sk-hynix-mobile-64gb"
SKH_MAIN_BLOCKS = 1024  # seed 004: "Main Block: Total 1024 Blocks (100%)"
SKH_OP_STEP_BLOCKS = 4  # the talk's external-OP axis is 0, 4, ... 60 blocks of the 1024 ...
SKH_OP_LEVELS = 16
# ... as printed on its Case #1 figure (published labels; tests check the block counts against them)
SKH_TALK_OP_AXIS = (0.0, 0.4, 0.8, 1.2, 1.6, 2.0, 2.3, 2.7, 3.1, 3.5, 3.9, 4.3, 4.7, 5.1, 5.5, 5.9)
SKH_TALK_GAIN_PER_PCT = 1.6  # seed 004, Case #2: "1.6% of performance gain ... as OP increases by 1%"
SKH_SEQ_CHUNK = 2**30  # seed 004: Sequential Write 1G ...
SKH_RAND_CHUNK = 200 * 2**20  # ... -> Random Write 200M


def _skh_preset() -> dict:
    return get(SKH_PRESET)


def skh_geometry(scale: int = 64) -> dict:
    """The talk's block usage on the preset, and the scale model: the same 1024-block structure
    with blocks ``scale`` times smaller (pages per block / scale), so every block count, ratio and
    the OP steps stay exact."""
    geo = describe({"preset": SKH_PRESET}, model_limits=False)["drive"]  # the core's geometry
    page, ppb = geo["page_size"], geo["pages_per_block"]
    if scale < 1 or ppb % scale:
        raise ValueError(f"scale {scale} must divide the preset's {ppb} pages per block")
    block = ppb * page
    user_blocks = geo["user_pages"] // ppb
    phys_blocks = geo["blocks"]
    return {
        "scale": scale,
        "page_size": page,
        "pages_per_block": ppb // scale,
        "block_bytes": block // scale,
        "full_block_bytes": block,
        "main_blocks": SKH_MAIN_BLOCKS,
        "user_blocks": user_blocks,
        "free_blocks": phys_blocks - user_blocks,
        "system_blocks": SKH_MAIN_BLOCKS - phys_blocks,
        "seq_chunk": SKH_SEQ_CHUNK // scale,
        "rand_chunk": SKH_RAND_CHUNK // scale,
    }


def skh_op_levels() -> list[int]:
    """External OP levels of the talk, in blocks beyond the 1024 main blocks."""
    return [SKH_OP_STEP_BLOCKS * k for k in range(SKH_OP_LEVELS)]


SKH_SUSTAIN_WINDOW_S = 10.0  # the core's default measuring window of the sustained rate (an estimate)


def skh_config(
    ext_blocks: int,
    scale: int = 64,
    timing: dict | None = None,
    ftl: dict | None = None,
    workload: dict | None = None,
    urgent: bool = True,
    seed: int = 1,
) -> dict:
    """A run of the talk's experiment on the preset's scale model with ``ext_blocks`` external OP
    blocks: fresh drive, the SK hynix workload until the user area is 100% occupied, one round per
    cycle (sequential chunk + random chunk).

    Every timing of the preset is kept except those the scale model must rescale: the erase time,
    so an erase costs the same per page as on the full-size superblock (the core charges tBERS per
    physical block a collected block spans, at most one per die), and the two time scales (the
    series interval, 1 s / scale, and the urgent state's measuring window of the sustained rate,
    10 s / scale).  The urgent state is the core's (timing.urgent_*: free blocks under N% of the
    1024 main blocks, GC takes over, host writes at K% of the sustained rate); ``urgent=False``
    leaves it out (garbage collection only when the FTL runs out of free blocks)."""
    g = skh_geometry(scale)
    s = copy.deepcopy(_skh_preset()["settings"])
    t = s["timing"]
    if not urgent:
        for k in [k for k in t if k.startswith("urgent_")]:
            t.pop(k)
    else:
        t["urgent_sustain_window_s"] = SKH_SUSTAIN_WINDOW_S / scale
    dies = int(t["channels"]) * int(t["dies_per_channel"])
    nand_block_units = parse_size(t["nand_block_size"]) // g["page_size"]
    full_units = g["pages_per_block"] * scale

    def erase_share(units):
        return min(1.0, units / dies / nand_block_units)

    t["t_erase_us"] = float(t["t_erase_us"]) * erase_share(full_units) / erase_share(g["pages_per_block"]) / scale
    t["series_interval_s"] = 1.0 / scale
    t.update(timing or {})
    user = g["user_blocks"] * g["block_bytes"]
    s["drive"].update(
        {
            "user_capacity": user,
            "pages_per_block": g["pages_per_block"],
            "physical_capacity": (g["user_blocks"] + g["free_blocks"] + ext_blocks) * g["block_bytes"],
        }
    )
    s["ftl"].update(ftl or {})
    cycle = g["seq_chunk"] + g["rand_chunk"]
    # whole cycles until the sequential writes have covered the user area: the last one reaches
    # 100% occupation
    total = -(-user // g["seq_chunk"]) * cycle
    s["workload"] = {"type": "sk-hynix", "sequential_chunk": g["seq_chunk"], "random_chunk": g["rand_chunk"]} | (
        workload or {}
    )
    s["run"] = {
        "seed": seed,
        "precondition": "none",
        "warmup_drive_writes": 0,
        "measure_drive_writes": total / user,
        "round_drive_writes": cycle / user,
    }
    return s


def _skh_occupation(host_bytes: int, seq: int, rand: int, user: int) -> float:
    """User-area occupation after ``host_bytes`` of the SK hynix workload from a fresh drive: the
    sequential chunks advance through the user area, the random ones land in the part written."""
    cycles, rem = divmod(host_bytes, seq + rand)
    return min(1.0, (cycles * seq + min(seq, rem)) / user)


def _skh_cycles(r, g: dict) -> list[dict[str, Any]]:
    """Per cycle (timed round) of the result ``r`` on the geometry ``g``: the occupation of the
    user area at its start and end, host MB/s, WAF, the fewest free blocks, the time in the
    core's urgent state."""
    user = g["user_blocks"] * g["block_bytes"]
    cycles: list[dict[str, Any]] = []
    written = 0
    for tr in r.timed["rounds"]:
        f = r.rounds[tr["index"]]
        start_occ = _skh_occupation(written, g["seq_chunk"], g["rand_chunk"], user)
        written += tr["host_write_bytes"]
        secs = tr["t_end_s"] - tr["t_start_s"]
        cycles.append(
            {
                "cycle": len(cycles),
                "occupation_start": start_occ,
                "occupation": _skh_occupation(written, g["seq_chunk"], g["rand_chunk"], user),
                "mbps": tr["completed_write_bytes"] / secs / 1e6,
                "seconds": secs,
                "host_write_bytes": tr["host_write_bytes"],
                "completed_write_bytes": tr["completed_write_bytes"],
                "waf": tr["waf"],
                "gc_copy_pages": tr["gc_copy_pages"],
                "free_blocks_min": f["free_blocks_min"],
                "urgent_s": tr.get("urgent_s") or 0.0,
                "urgent_write_bytes": tr.get("urgent_write_bytes") or 0,
                "t_start_s": tr["t_start_s"],
                "t_end_s": tr["t_end_s"],
            }
        )
    return cycles


def skh_run(ext_blocks: int, scale: int = 64, window_from: float | None = None, **kw) -> dict:
    """One external-OP level: per-cycle performance against occupation, the urgent-state entry
    (the cycle in which the core first entered its urgent state: free blocks under N% of the 1024
    main blocks), the sustain-state performance (the cycles before) and the urgent-state
    performance from the entry to 100% occupation: host bytes over all the time (``urgent_mbps``,
    Case #1's window) and over the time in the urgent state only (``in_state_mbps``).  Without the
    core's urgent state (``urgent=False``) the entry is the first cycle whose free pool fell under
    N% of the 1024 main blocks.  ``window_from``: start the window at this occupation instead (Case
    #3 compares settings over one window).  Performance is host bytes completed over time."""
    g = skh_geometry(scale)
    cfg = skh_config(ext_blocks, scale, **kw)
    r = simulate(cfg)
    preset_t = _skh_preset()["settings"]["timing"]
    n = float(cfg["timing"].get("urgent_free_pct", preset_t["urgent_free_pct"]))
    threshold = n / 100 * SKH_MAIN_BLOCKS
    cycles = _skh_cycles(r, g)
    core = r.timed.get("urgent")
    if core:
        entry = next((c["cycle"] for c in cycles if c["urgent_s"] > 0), None)
    else:
        entry = next((c["cycle"] for c in cycles if c["free_blocks_min"] < threshold), None)
    first = entry if window_from is None else next(c["cycle"] for c in cycles if c["occupation"] > window_from)
    if first is None:
        raise RuntimeError(
            f"{ext_blocks} external blocks: the urgent state (free pool under {threshold:.1f} blocks) was never entered"
        )
    window = cycles[first:]
    sustain = _skh_rate(cycles[:entry]) if entry else None
    urgent_mbps = _skh_rate(window)
    in_state_s = sum(c["urgent_s"] for c in window)
    in_state = sum(c["urgent_write_bytes"] for c in window) / in_state_s / 1e6 if in_state_s > 0 else None
    win_s = sum(c["seconds"] for c in window)
    return {
        "ext_blocks": ext_blocks,
        "op_pct": 100 * ext_blocks / SKH_MAIN_BLOCKS,
        "op_user": r.op["user"],
        "blocks": r.drive["blocks"],
        "n_pct": n,
        "threshold_blocks": threshold,
        "entry_cycle": entry,
        "entry_occupation": cycles[entry]["occupation_start"] if entry is not None else None,
        "window_first_cycle": first,
        "window_from_occupation": window[0]["occupation_start"],
        "sustain_mbps": sustain,
        "urgent_mbps": urgent_mbps,
        "in_state_mbps": in_state,
        "in_state_share": in_state_s / win_s if win_s else 0.0,
        "urgent_pct_of_sustain": 100 * urgent_mbps / sustain if sustain else None,
        "final_mbps": cycles[-1]["mbps"],
        "window_waf": _skh_waf(window, g["page_size"]),
        "core": core,
        "cycles": cycles,
    }


def _skh_waf(cycles, page):
    host = sum(c["host_write_bytes"] for c in cycles) / page
    return (host + sum(c["gc_copy_pages"] for c in cycles)) / host


def _skh_rate(cycles) -> float:
    return sum(c["completed_write_bytes"] for c in cycles) / sum(c["seconds"] for c in cycles) / 1e6


def skh_fit(op_pct, mbps, sustain_mbps=None) -> dict:
    """Least-squares line through (external OP %, performance): the gain per 1% of OP as a share
    of the line's value at 0% OP (``gain_pct_per_pct``), of the measured 0% value, and in points
    of the sustain-state performance; R^2 says how straight the relation is."""
    x, y = np.asarray(op_pct, float), np.asarray(mbps, float)
    b, a = np.polyfit(x, y, 1)
    resid = y - (a + b * x)
    ss = float(((y - y.mean()) ** 2).sum())
    r2 = 1 - float(resid @ resid) / ss if ss > 0 else 1.0
    return {
        "slope_mbps_per_pct": float(b),
        "intercept_mbps": float(a),
        "r2": r2,
        "gain_pct_per_pct": 100 * float(b / a),
        "gain_pct_of_0pct_per_pct": 100 * float(b / y[0]),
        "gain_points_of_sustain_per_pct": 100 * float(b / sustain_mbps) if sustain_mbps else None,
        "ratio_to_talk": float(100 * b / a / SKH_TALK_GAIN_PER_PCT),
    }


SKH_METRICS = {
    "window": "host MB/s from each level's own urgent-state entry to 100% occupation (Case #1's window; the headline)",
    "in_state": "host MB/s over the time in the urgent state only, same window",
    "common": "host MB/s over the occupation range in which every OP level is in the urgent state "
    "(from the last entry to 100%)",
    "final": "host MB/s in the cycle that reaches 100% occupation",
}


def skh_op_study(scale: int = 64, seed: int = 1, progress=None, **kw) -> dict:
    """Cases #1 and #2: every external OP level of the talk, its performance from the urgent-state
    entry to 100% occupation, and the fitted gain per 1% of OP for each metric.  ``reference``:
    "main" (N% of the 1024 main blocks, the preset) or "all" (of the main and external blocks)."""
    levels = skh_op_levels()
    reference = kw.pop("reference", "main")
    runs = []
    for i, e in enumerate(levels):
        k = dict(kw)
        if reference == "all":
            k["timing"] = (k.get("timing") or {}) | {"urgent_reference_blocks": SKH_MAIN_BLOCKS + e}
        runs.append(skh_run(e, scale, seed=seed, **k))
        if progress:
            progress(i + 1, len(levels))
    first = max(r["entry_cycle"] for r in runs)
    for r in runs:
        r["common_mbps"] = _skh_rate(r["cycles"][first:])
        r["common_pct_of_sustain"] = 100 * r["common_mbps"] / r["sustain_mbps"]
    sustain = [r["sustain_mbps"] for r in runs]
    s_mean = sum(sustain) / len(sustain)
    op = [r["op_pct"] for r in runs]
    fits = {
        "window": skh_fit(op, [r["urgent_mbps"] for r in runs], s_mean),
        "common": skh_fit(op, [r["common_mbps"] for r in runs], s_mean),
        "final": skh_fit(op, [r["final_mbps"] for r in runs], s_mean),
    }
    if all(r["in_state_mbps"] for r in runs):
        fits["in_state"] = skh_fit(op, [r["in_state_mbps"] for r in runs], s_mean)
    return {
        "scale": scale,
        "seed": seed,
        "common_from_cycle": first,
        "common_from_occupation": runs[0]["cycles"][first]["occupation_start"],
        "sustain_mbps_min": min(sustain),
        "sustain_mbps_max": max(sustain),
        "runs": runs,
        "fits": fits,
    }


def _skh_variations(scale: int) -> list[tuple[str, dict[str, Any], str]]:
    """(label, what changes, why) of every variation of the sensitivity study."""
    base = _skh_preset()["settings"]["timing"]
    w = SKH_SUSTAIN_WINDOW_S / scale
    return [
        ("preset (baseline)", {}, "N = 3% of 1024 blocks, K = 30%; greedy GC; sustain state NAND-bound"),
        ("seed 2", {"seed": 2}, "another random-write sequence"),
        ("seed 3", {"seed": 3}, "another random-write sequence"),
        ("scale 1/16", {"scale": max(1, scale // 4)}, "blocks 4x larger than the baseline's scale model"),
        ("GC fifo", {"ftl": {"gc": "fifo"}}, "victim policy (the talk does not say)"),
        ("GC cost-benefit", {"ftl": {"gc": "cost-benefit"}}, "victim policy (the talk does not say)"),
        ("free-block reserve 4", {"ftl": {"gc_low_watermark": 4}}, "ftl.gc_low_watermark (estimate: 2)"),
        ("tPROG x2", {"timing": {"t_prog_us": 2 * float(base["t_prog_us"])}}, "slower NAND (estimate)"),
        (
            "tR / 24",
            {"timing": {"t_read_us": float(base["t_read_us"]) / 24}},
            "GC reads a whole multi-plane page per tR (the core charges tR per 4 KiB copied; estimate)",
        ),
        (
            "GC firmware x10",
            {"timing": {"gc_fw_us": 10 * float(base["gc_fw_us"])}},
            "controller time per copied page (estimate)",
        ),
        (
            "sequential requests 4 KiB",
            {"workload": {"sequential_request_size": 4096}},
            "the talk gives no request size (the core's default: 512 KiB)",
        ),
        ("host link 150 MB/s", {"timing": {"link_mbps": 150}}, "sustain state below the NAND's rate"),
        ("host link 100 MB/s", {"timing": {"link_mbps": 100}}, "sustain state below the NAND's rate"),
        ("host link 60 MB/s", {"timing": {"link_mbps": 60}}, "sustain state below the NAND's rate"),
        ("leave at 5%", {"timing": {"urgent_exit_pct": 5}}, "urgent_exit_pct (the talk does not say; default N)"),
        (
            "sustain window 1 s",
            {"timing": {"urgent_sustain_window_s": w / 10}},
            "urgent_sustain_window_s (full-size seconds; estimate: 10)",
        ),
        (
            "sustain window 60 s",
            {"timing": {"urgent_sustain_window_s": 6 * w}},
            "urgent_sustain_window_s (full-size seconds; estimate: 10)",
        ),
        ("N% of all blocks", {"reference": "all"}, "1024 + external blocks as the reference (the talk: 'total block')"),
        ("K = 10%", {"timing": {"urgent_perf_pct": 10}}, "the talk's K is 30 by default"),
        ("K = 50%", {"timing": {"urgent_perf_pct": 50}}, "the talk's K is 30 by default"),
        ("GC does not take over", {"timing": {"urgent_gc": False}}, "urgent_gc = false: the throttle only"),
        ("no urgent state", {"urgent": False}, "garbage collection only when the FTL runs out of free blocks"),
    ]


def skh_sensitivity(scale: int = 64, progress=None) -> list[dict]:
    """The Case #2 slope when the parameters the talk does not give (the preset's estimates, the
    urgent state's own settings) or the study's choices change, one at a time."""
    variations = _skh_variations(scale)
    rows = []
    for i, (label, kw, note) in enumerate(variations):
        kw = dict(kw)
        sc = kw.pop("scale", scale)
        s = skh_op_study(sc, **kw)
        f = s["fits"]
        rows.append(
            {
                "variation": label,
                "note": note,
                "scale": sc,
                "sustain_mbps": s["sustain_mbps_min"],
                "urgent_mbps_0": s["runs"][0]["urgent_mbps"],
                "urgent_mbps_max": s["runs"][-1]["urgent_mbps"],
                "gain_pct_per_pct": f["window"]["gain_pct_per_pct"],
                "r2": f["window"]["r2"],
                "gain_points_of_sustain_per_pct": f["window"]["gain_points_of_sustain_per_pct"],
                "in_state_gain_pct_per_pct": f["in_state"]["gain_pct_per_pct"] if "in_state" in f else None,
                "common_gain_pct_per_pct": f["common"]["gain_pct_per_pct"],
                "final_gain_pct_per_pct": f["final"]["gain_pct_per_pct"],
                "monotone": all(b["common_mbps"] > a["common_mbps"] for a, b in zip(s["runs"], s["runs"][1:])),
            }
        )
        if progress:
            progress(i + 1, len(variations))
    return rows


SKH_CASE3_OP_BLOCKS = (0, 28)  # 0.0% and 2.7% external OP (the talk's axis)
SKH_CASE3_N = (3, 5, 10, 20)
SKH_CASE3_LINKS = (150, 100, 60)


def skh_case3(scale: int = 64, progress=None) -> list[dict]:
    """Case #3 at fixed OP: the sustain-state performance (set by capping the host link below the
    NAND's rate) and an earlier urgent-state entry (N% at the talk's K).  Every row is measured over
    the same occupation window: from the urgent-state entry of the level's baseline run (N = 3%) to
    100%."""
    k = float(_skh_preset()["settings"]["timing"]["urgent_perf_pct"])
    steps: list[tuple[int, str, str, dict[str, Any]]] = []
    for e in SKH_CASE3_OP_BLOCKS:
        steps.append((e, "sustain state", "NAND-bound (preset)", {}))
        for link in SKH_CASE3_LINKS:
            steps.append((e, "sustain state", f"host link {link} MB/s", {"timing": {"link_mbps": link}}))
        for n in SKH_CASE3_N[1:]:
            steps.append((e, "urgent entry", f"N = {n}%, K = {k:g}%", {"timing": {"urgent_free_pct": n}}))
    rows, base = [], {}
    for i, (e, factor, setting, kw) in enumerate(steps):
        if e not in base:
            base[e] = skh_run(e, scale)
        r = skh_run(e, scale, window_from=base[e]["entry_occupation"], **kw)
        rows.append(
            {
                "ext_blocks": e,
                "op_pct": 100 * e / SKH_MAIN_BLOCKS,
                "factor": factor,
                "setting": setting,
                "scale": scale,
                "window_from_occupation": r["window_from_occupation"],
                "entry_occupation": r["entry_occupation"],
                "sustain_mbps": r["sustain_mbps"],
                "urgent_mbps": r["urgent_mbps"],
                "urgent_pct_of_sustain": r["urgent_pct_of_sustain"],
                "final_mbps": r["final_mbps"],
                "window_waf": r["window_waf"],
                "in_state_share": r["in_state_share"],
                "throttle_mbps": (r["core"] or {}).get("throttle_mbps"),
            }
        )
        if progress:
            progress(i + 1, len(steps))
    return rows


SKH_SERIES_OP_BLOCKS = (0, 12, 24, 36, 48, 60)  # the OP levels shown in the series table
SKH_SENSITIVITY_ROWS = 22
SKH_CASE3_ROWS = len(SKH_CASE3_OP_BLOCKS) * (1 + len(SKH_CASE3_LINKS) + len(SKH_CASE3_N) - 1)


def skh_suite(scale: int = 1, model_scale: int = 64, progress=None) -> dict:
    """The three case studies and the sensitivity of the Case #2 slope (``opsim validate --suite
    sk-hynix``): Cases #1 and #2 on the preset at ``scale`` (1: full size), the sensitivity and
    Case #3 on the ``model_scale`` scale model."""
    g = skh_geometry(scale)
    skh_geometry(model_scale)
    parts = {"op": 16, "sensitivity": SKH_SENSITIVITY_ROWS, "case3": SKH_CASE3_ROWS}
    total = sum(parts.values())
    done = 0

    def sub(n):
        def p(i, _):
            if progress:
                progress(done + i, total)

        return p

    study = skh_op_study(scale, progress=sub(parts["op"]))
    done += parts["op"]
    sens = skh_sensitivity(model_scale, progress=sub(parts["sensitivity"]))
    done += parts["sensitivity"]
    case3 = skh_case3(model_scale, progress=sub(parts["case3"]))
    runs = study["runs"]
    t = _skh_preset()["settings"]["timing"]
    checks = {
        "monotone_common": all(b["common_mbps"] > a["common_mbps"] for a, b in itertools.pairwise(runs)),
        "monotone_final": all(b["final_mbps"] > a["final_mbps"] for a, b in itertools.pairwise(runs)),
        "sustain_fixed": (study["sustain_mbps_max"] - study["sustain_mbps_min"]) / study["sustain_mbps_max"] < 0.01,
        "op_axis_matches_talk": [round(r["op_pct"], 1) for r in runs] == list(SKH_TALK_OP_AXIS),
        "core_urgent_entered": [r["ext_blocks"] for r in runs if r["core"] and r["core"]["entries"] > 0],
    }
    return {
        "suite": "sk-hynix",
        "preset": SKH_PRESET,
        "geometry": g,
        "model_scale": model_scale,
        "talk": {
            "source": "seed 004 (SK hynix, Over-Provisioning and Performance of Mobile Storage, 2016)",
            "gain_pct_per_pct": SKH_TALK_GAIN_PER_PCT,
            "op_axis_pct": list(SKH_TALK_OP_AXIS),
            "n_pct": float(t["urgent_free_pct"]),
            "k_pct": float(t["urgent_perf_pct"]),
        },
        "metrics": SKH_METRICS,
        "study": study,
        "sensitivity": sens,
        "case3": case3,
        "checks": checks,
        "headline": {"metric": "window", **study["fits"]["window"]},
    }


#: (title, headers, align, rows): one table of the suite
Table = tuple[str, list[str], str, list[list]]


def _case1_table(doc: dict) -> Table:
    """Case #1: per OP level, the urgent-state entry and performance from it to 100% occupation."""
    st, runs = doc["study"], doc["study"]["runs"]
    rows = []
    for r, label in zip(runs, doc["talk"]["op_axis_pct"]):
        c = r["core"] or {}
        rows.append(
            [
                f"{r['ext_blocks']}",
                f"{r['op_pct']:.2f}%",
                f"{label:.1f}%",
                f"{100 * r['op_user']:.2f}%",
                f"{100 * r['entry_occupation']:.1f}%",
                f"{r['sustain_mbps']:.1f}",
                f"{c['throttle_mbps']:.1f}" if c.get("throttle_mbps") else "-",
                f"{r['urgent_mbps']:.1f}",
                f"{r['urgent_pct_of_sustain']:.1f}%",
                f"{r['in_state_mbps']:.1f}" if r["in_state_mbps"] else "-",
                f"{r['common_mbps']:.1f}",
                f"{r['final_mbps']:.1f}",
                f"{r['window_waf']:.2f}",
            ]
        )
    return (
        "Case #1: performance from the urgent-state entry to 100% occupation of the user area",
        [
            "external OP blocks",
            "of 1024",
            "talk's axis",
            "OP (user basis)",
            "urgent entry at",
            "sustain MB/s",
            "K% of it",
            "urgent MB/s",
            "urgent / sustain",
            "in the state",
            f"MB/s from {100 * st['common_from_occupation']:.1f}%",
            "MB/s at 100%",
            "WAF in window",
        ],
        "rrrrrrrrrrrrr",
        rows,
    )


def _case1_series_table(doc: dict) -> Table:
    """Case #1's series: host MB/s per cycle against occupation at a few OP levels."""
    runs = doc["study"]["runs"]
    show = [r for r in runs if r["ext_blocks"] in SKH_SERIES_OP_BLOCKS]
    first = min(r["entry_cycle"] for r in runs)
    rows = []
    for i in range(first, len(runs[0]["cycles"])):
        c0 = runs[0]["cycles"][i]
        rows.append(
            [f"{100 * c0['occupation_start']:.1f}-{100 * c0['occupation']:.1f}%"]
            + [
                f"{r['cycles'][i]['mbps']:.1f} ({r['cycles'][i]['free_blocks_min']})" if i >= r["entry_cycle"] else "-"
                for r in show
            ]
        )
    return (
        "Case #1 series: host MB/s per cycle (1 GiB sequential + 200 MiB random, full-size) against "
        "occupation, from each level's urgent-state entry, with the fewest free blocks in the cycle "
        "('-': not yet urgent)",
        ["occupation"] + [f"OP {r['op_pct']:.1f}%" for r in show],
        "l" + "r" * len(show),
        rows,
    )


def _case2_table(doc: dict) -> Table:
    """Case #2: the gain per 1% of external OP, by each measure of urgent-state performance."""
    st = doc["study"]
    short = {
        "window": "own window (entry-100%)",
        "in_state": "in the urgent state (entry-100%)",
        "common": f"common window ({100 * st['common_from_occupation']:.1f}-100%)",
        "final": "at 100% (last cycle)",
    }
    rows = []
    for key, f in st["fits"].items():
        rows.append(
            [
                short[key],
                f"{f['gain_pct_per_pct']:.2f}",
                f"{f['gain_pct_of_0pct_per_pct']:.2f}",
                f"{f['r2']:.3f}",
                f"{f['gain_points_of_sustain_per_pct']:.2f}",
                f"{doc['talk']['gain_pct_per_pct']:g}",
                f"{f['ratio_to_talk']:.1f}x",
                f"{f['gain_points_of_sustain_per_pct'] / doc['talk']['gain_pct_per_pct']:.2f}x",
            ]
        )
    return (
        "Case #2: gain per 1% of external OP, linear fit over the 16 levels (predicted; nothing fitted to the talk)",
        [
            "urgent-state performance (host MB/s)",
            "gain % per 1% OP",
            "% of the 0% value",
            "R^2",
            "points of sustain per 1% OP",
            "talk",
            "model / talk (relative gain)",
            "model / talk (points of sustain)",
        ],
        "lrrrrrrr",
        rows,
    )


def _sensitivity_table(doc: dict) -> Table:
    """Case #2's sensitivity: the slope when one estimate or choice changes."""
    rows = []
    for s in doc["sensitivity"]:
        ins = s["in_state_gain_pct_per_pct"]
        rows.append(
            [
                s["variation"],
                f"1/{s['scale']}",
                f"{s['sustain_mbps']:.1f}",
                f"{s['urgent_mbps_0']:.1f}",
                f"{s['urgent_mbps_max']:.1f}",
                f"{s['gain_pct_per_pct']:.2f}",
                f"{s['r2']:.3f}",
                f"{s['gain_points_of_sustain_per_pct']:.2f}",
                "-" if ins is None else f"{ins:.2f}",
                f"{s['common_gain_pct_per_pct']:.2f}",
                f"{s['final_gain_pct_per_pct']:.2f}",
                "yes" if s["monotone"] else "no",
                s["note"],
            ]
        )
    return (
        "Case #2 sensitivity: the slope when one estimate or choice changes",
        [
            "variation",
            "scale",
            "sustain MB/s",
            "urgent MB/s at 0%",
            "at 5.9%",
            "gain %/1% OP",
            "R^2",
            "points of sustain",
            "in the state",
            "common window",
            "at 100%",
            "rises at every step",
            "what",
        ],
        "lrrrrrrrrrrll",
        rows,
    )


def _case3_table(doc: dict) -> Table:
    """Case #3: sustain-state performance and an earlier urgent-state entry at fixed OP."""
    rows = []
    for c in doc["case3"]:
        rows.append(
            [
                f"{c['op_pct']:.1f}%",
                c["factor"],
                c["setting"],
                f"1/{c['scale']}",
                f"{100 * c['entry_occupation']:.1f}%",
                f"{100 * c['window_from_occupation']:.1f}%",
                f"{c['sustain_mbps']:.1f}",
                f"{c['throttle_mbps']:.1f}" if c["throttle_mbps"] else "-",
                f"{c['urgent_mbps']:.1f}",
                f"{c['urgent_pct_of_sustain']:.1f}%",
                f"{c['final_mbps']:.1f}",
                f"{c['window_waf']:.2f}",
            ]
        )
    return (
        "Case #3: sustain-state performance and an earlier urgent-state entry at fixed OP (window: from "
        "the N = 3% entry to 100%)",
        [
            "external OP",
            "factor",
            "setting",
            "scale",
            "entry at",
            "window from",
            "sustain MB/s",
            "K% of it",
            "urgent MB/s",
            "urgent / sustain",
            "MB/s at 100%",
            "WAF in window",
        ],
        "rllrrrrrrrrr",
        rows,
    )


def skh_tables(doc: dict) -> list[Table]:
    """(title, headers, align, rows) of every table of the suite, for the terminal and Markdown."""
    return [
        _case1_table(doc),
        _case1_series_table(doc),
        _case2_table(doc),
        _sensitivity_table(doc),
        _case3_table(doc),
    ]


def skh_markdown(doc: dict) -> str:
    parts = []
    for title, headers, align, rows in skh_tables(doc):
        parts.append(f"**{title}**\n\n" + markdown_table(headers, align, rows))
    return "\n\n".join(parts) + "\n"
