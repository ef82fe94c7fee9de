"""``opsim simulate CONFIG.toml``: run the functional simulator.

Ctrl-C stops the run within a fraction of a second: the rounds done so far are printed (and
the JSON document, marked ``"interrupted": true``), exit code 130."""

from __future__ import annotations

import os
import sys
import tomllib

from .. import simulate_interval, trace
from .._output import Output, check_output_not_input, kv_table, table
from ..errors import InputError
from ..presets import is_path
from ..results import LATENCY_SUMMARY
from ..sim import check_threads, simulate
from ..simulate_interval import preset_in
from ..units import fmt_bytes, pct
from ..userfile import read_config


def register(sub, common):
    p = sub.add_parser(
        "simulate",
        parents=[common],
        help="run the functional FTL simulator on a TOML config (WAF, wear, steady state)",
        description="Run the functional FTL simulator. The config schema is in docs/config.md.",
    )
    p.add_argument("config", help="TOML config file")
    p.add_argument("--rounds", action="store_true", help="print every round, not only the summary")
    p.add_argument(
        "--interval",
        action="store_true",
        help="when the config's drive file keeps a profile ([preset.calibration.profile], written by `opsim "
        "calibrate`): run again at the profile's two ends for the 95%% interval of WAF and IOPS (three runs)",
    )
    p.add_argument(
        "--threads",
        type=int,
        metavar="N",
        help="threads of the functional model of a drive of independent GC pools (ftl.gc_scope = die or plane), "
        "in place of the config's run.threads; the result does not depend on them (docs/parallel.md)",
    )
    p.set_defaults(func=run)


def waf_text(d: dict) -> str:
    """The measurement window's WAF, or why there is none."""
    if d["waf"] is not None:
        return f"{d['waf']:.4f}"
    if d["measure_window"]["first_round"] > d["measure_window"]["last_round"]:
        return "- (interrupted before the measurement window)"
    return "- (undefined: no host writes in the measurement window, e.g. a read-only load)"


def window_text(d: dict) -> str:
    mw = d["measure_window"]
    if mw["first_round"] > mw["last_round"]:
        return "no round"
    return f"rounds {mw['first_round']}..{mw['last_round']}, {fmt_bytes(mw['host_write_bytes'])} host writes"


def gc_layout_rows(d: dict) -> list[tuple[str, str]]:
    """The GC frontier, scope and reserve, when a config set them (docs/peers.md)."""
    g = d.get("gc_layout")
    if not g:
        return []
    scope = "the whole drive" if g["scope"] == "drive" else f"per {g['scope']} ({g['groups']:,} pools)"
    return [
        ("GC scope", scope),
        ("GC frontier", "shared with the host (compact in place)" if g["frontier"] == "shared" else "separate"),
        ("free-block reserve", f"{g['reserve_blocks']:,} blocks ({g['low']:,} per pool)"),
    ]


def gc_unit_rows(drv: dict) -> list[tuple[str, str]]:
    """The superblock GC collects in, when the config asked for one (docs/config.md)."""
    u = drv.get("gc_unit")
    if not u or u["kind"] != "superblock":
        return []
    scaled = f", scale model 1/{u['scale']}" if u["scale"] > 1 else ""
    return [
        (
            "GC unit",
            f"superblock of {u['pages']:,} pages ({fmt_bytes(u['bytes'])}): {u['dies']} dies x {u['planes']} planes"
            f"{scaled}; open: {u['open_host']} host, {u['open_gc']} GC",
        )
    ]


def _trace_rows(d: dict) -> list[tuple[str, str]]:
    """The replayed trace's requests, passes and skipped lines (none without a trace)."""
    tr = d.get("trace")
    if not tr:
        return []
    bad = f", {tr['skipped_bad_lines']} bad lines skipped" if tr["skipped_bad_lines"] else ""
    return [
        (
            "trace replayed",
            f"{tr['records']:,} requests, {tr['passes']} complete pass(es){', ended' if tr['ended'] else ''}" + bad,
        )
    ]


def _run_rows(d: dict) -> list:
    """The functional run: drive, OP in every basis, GC, workload, WAF, wear, speed."""
    op, drv, ss = d["op"], d["drive"], d["steady_state"]
    mvf = d["victims"]["mean_valid_fraction"]
    return [
        (
            "drive",
            f"{fmt_bytes(drv['user_bytes'])} user, {fmt_bytes(drv['physical_bytes'])} physical, "
            f"{drv['blocks']:,} blocks x {drv['pages_per_block']} pages x {fmt_bytes(drv['page_size'])}",
        ),
        ("OP (user basis)", pct(op["user"])),
        ("OP (physical basis / spare area)", pct(op["physical"])),
        ("OP (native basis)", pct(op["native"]) if op.get("native") is not None else "-"),
        ("OP seen by GC (user basis)", pct(op["effective"])),
        ("GC policy", d["gc"]),
        *gc_unit_rows(drv),
        *gc_layout_rows(d),
        ("workload", workload_text(d["config"])),
        *placement_rows(d),
        ("WAF (measurement window)", waf_text(d)),
        *(
            [("metadata pages (ftl.meta_writes)", f"{d['meta_share']:.2%} of NAND page writes")]
            if d.get("meta_share") is not None
            else []
        ),
        ("measured", window_text(d)),
        ("steady state (SNIA rule on WAF)", f"reached at round {ss['round']}" if ss["reached"] else "not reached"),
        ("erase count min / mean / max", f"{d['wear']['min']} / {d['wear']['mean']:.2f} / {d['wear']['max']}"),
        ("victims' mean valid fraction", f"{mvf:.4f}" if mvf is not None else "-"),
        ("free blocks (min)", d["free_blocks_min"]),
        *_trace_rows(d),
        (
            "speed",
            f"{d['perf']['host_pages_per_second'] / 1e6:.2f} M host pages/s ({d['perf']['wall_seconds']:.2f} s)",
        ),
        ("threads", d["perf"]["parallel"]["reason"]),
    ]


def _timed_text(t: dict) -> list[str]:
    """The timed model's table (and the PTS IOPS test's, when it ran)."""
    lat = t["latency_us"]["all"]
    tss = t["steady_state"]
    rows = [
        ("simulated time", f"{t['simulated_seconds']:,.1f} s"),
        ("IOPS (measurement window)", f"{t['measured_iops']:,.0f}"),
        (
            "steady-state IOPS (SNIA rule)",
            f"{t['steady_iops']:,.0f} from round {tss['window'][0]}" if tss["reached"] else "not reached",
        ),
        ("latency us " + " / ".join(LATENCY_SUMMARY), " / ".join(f"{lat[k]:,.0f}" for k in LATENCY_SUMMARY)),
        ("fresh-out-of-box burst ends", f"{t['phases']['fob_end_s']:.0f} s" if t["phases"]["fob_end_s"] else "-"),
        *map_cache_rows(t.get("map_cache")),
    ]
    lines = ["", kv_table(rows, title="timed model")]
    if t.get("pts_iops"):
        lines += ["", pts_iops_text(t["pts_iops"])]
    return lines


def _rounds_text(d: dict, all_rounds: bool) -> list[str]:
    """The rounds' table (the first 3 and last 8 of more than 12 unless ``all_rounds``)."""
    t = d.get("timed")
    rounds = d["rounds"]
    shown = rounds[:3] + rounds[-8:] if not all_rounds and len(rounds) > 12 else rounds
    iops = {x["index"]: x["iops"] for x in (t or {}).get("rounds", [])}
    rows = [
        [
            r["index"],
            r["phase"],
            fmt_bytes(r["host_write_bytes"]),
            r["waf"],
            r["gc_copy_pages"],
            r["erases"],
            r["free_blocks_min"],
            iops.get(r["index"]),
        ]
        for r in shown
    ]
    headers = ["round", "phase", "host writes", "WAF", "GC copies", "erases", "min free", "IOPS"]
    lines = ["", table(headers, rows, align="rllrrrrr")]
    if len(shown) < len(rounds):
        lines.append(f"({len(rounds) - len(shown)} rounds not shown; --rounds shows all)")
    return lines


def summary_text(d: dict, all_rounds: bool = False) -> str:
    lines = [kv_table(_run_rows(d), title="opsim simulate")]
    t = d.get("timed")
    if t:
        lines += _timed_text(t)
    if d.get("namespaces") or d.get("handles"):
        lines += ["", placement_text(d)]
    lines += _rounds_text(d, all_rounds)
    if d.get("interrupted"):
        lines.append(
            "interrupted (Ctrl-C or SIGTERM): the results above are the rounds done until then, the last one cut short"
        )
    return "\n".join(lines)


def workload_text(cfg: dict) -> str:
    """The workload line: the type, the phases, or the namespaces' workloads."""
    if cfg.get("namespace"):
        return "namespaces: " + ", ".join(
            f"{n.get('name') or f'ns{i + 1}'} ({n.get('workload', {}).get('type', 'uniform')})"
            for i, n in enumerate(cfg["namespace"])
        )
    if cfg.get("phase"):
        return "phases: " + ", ".join(
            f"{p.get('name') or f'phase-{i + 1}'} ({p['workload']['type']})" for i, p in enumerate(cfg["phase"])
        )
    w = cfg["workload"]
    if w["type"] == "fio":  # the job file and the job run
        return f"fio job {w.get('job')}" + (f" [{w['section']}]" if w.get("section") else "")
    return str(w["type"])


def placement_rows(d: dict) -> list[tuple[str, str]]:
    """The placement line of the summary (none when placement is not configured)."""
    p = d.get("placement")
    if not p:
        return []
    how = p["mode"] + (f", {p['isolation']} isolated" if p.get("isolation") else "")
    rows = [("placement", how + (f", {p['handles']} handles" if p["handles"] else ""))]
    f = d.get("fdp_stats")
    if f:
        waf = (
            f["media_bytes_with_metadata_written"] / f["host_bytes_with_metadata_written"]
            if f["host_bytes_with_metadata_written"]
            else None
        )
        rows.append(
            (
                "FDP statistics (drive life)",
                f"HBMW {fmt_bytes(f['host_bytes_with_metadata_written'])}, "
                f"MBMW {fmt_bytes(f['media_bytes_with_metadata_written'])}, "
                f"MBE {fmt_bytes(f['media_bytes_erased'])}" + (f", MBMW/HBMW {waf:.4f}" if waf else ""),
            )
        )
    return rows


def placement_text(d: dict) -> str:
    """Per-namespace and per-handle figures of the measurement window."""
    out = []
    if d.get("namespaces"):
        rows = [
            [
                n["name"],
                fmt_bytes(n["capacity_bytes"]),
                f"{n['share']:.3f}",
                ",".join(map(str, n["placement"])) or "-",
                fmt_bytes(n["host_write_bytes"]),
                fmt_bytes(n["nand_write_bytes"]),
                n["waf"],
            ]
            for n in d["namespaces"]
        ]
        out.append(
            table(
                ["namespace", "capacity", "share", "handles", "host writes", "NAND writes", "WAF"],
                rows,
                align="lrrlrrr",
            )
        )
    if d.get("handles"):
        rows = [
            [
                h["handle"],
                fmt_bytes(h["host_write_bytes"]),
                fmt_bytes(h["media_reallocated_bytes"]),
                h["reclaim_units_opened"],
                h["blocks"],
                h["waf"],
            ]
            for h in d["handles"]
        ]
        if out:
            out.append("")
        out.append(
            table(["handle", "host writes", "moved by GC", "RUs opened", "blocks now", "WAF"], rows, align="rrrrrr")
        )
    return "\n".join(out)


def map_cache_rows(m: dict | None) -> list[tuple[str, str]]:
    """The mapping-table cache's lines of the timed table (none when it is off)."""
    if not m:
        return []
    hit = f"{100 * m['hit_ratio']:.2f}%" if m["hit_ratio"] is not None else "-"
    waf = f"{m['waf_with_map']:.4f}" if m["waf_with_map"] is not None else "-"
    return [
        (
            "mapping cache",
            f"{m['cached_pages']:,} of {m['translation_pages']:,} translation pages "
            f"({fmt_bytes(m['cache_bytes'])} of {fmt_bytes(m['table_bytes'])})",
        ),
        ("map hit ratio / reads / writes", f"{hit} / {m['map_reads']:,} / {m['map_writes']:,} pages"),
        ("WAF with mapping writes", waf),
    ]


def traces_in(config_path: str) -> list[dict]:
    """The `[workload.trace]` tables of a config file (workload and phases), paths resolved
    relative to the config file.  Read here, not by the core: the --json-file check comes before
    any core work, and a trace option's error names its key (trace.info below)."""
    if not os.path.exists(config_path):
        return []  # said below, as the API says it
    text = read_config(config_path)  # a regular file, capped, nested at most MAX_NESTING levels
    try:
        cfg = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []  # the core reports TOML errors with their line below
    base = os.path.dirname(os.path.abspath(config_path))
    wls = [cfg.get("workload", {})] + [p.get("workload", {}) for p in cfg.get("phase", []) if isinstance(p, dict)]
    out = []
    for w in wls:
        t = w.get("trace") if isinstance(w, dict) and w.get("type") == "trace" else None
        if isinstance(t, dict) and isinstance(t.get("path"), str):
            out.append(t | {"path": os.path.join(base, t["path"])})
    return out


def drive_file_in(config_path: str) -> str | None:
    """The drive file a config's ``preset`` names (relative to the config file), if any."""
    preset = preset_in(config_path)
    return preset if preset is not None and is_path(preset) else None


def trace_summary(info: dict) -> str:
    n = info["records"]
    fp = info["footprint_bytes"]
    return (
        f"trace {info['path']} ({info['format']}): {n:,} requests, "
        f"{100 * info['read']['ios'] / n:.0f}% read / {100 * info['write']['ios'] / n:.0f}% write / "
        f"{100 * info['trim']['ios'] / n:.0f}% trim, {fmt_bytes(info['write']['bytes'])} written, "
        f"footprint {fmt_bytes(fp) if fp is not None else '-'}, span {fmt_bytes(info['max_end'] - info['min_offset'])}, "
        f"{info['duration_s']:.1f} s"
    )


def pts_iops_text(tab: dict) -> str:
    """The SNIA PTS IOPS table: block size (rows) x R/W mix (columns)."""
    a, b = tab["window"]
    which = "steady-state window" if tab["steady"] else "last rounds, steady state not reached"
    rows = [[bs] + [f"{v:,.0f}" for v in row] for bs, row in zip(tab["block_sizes"], tab["iops"])]
    return table(
        ["block size"] + [f"R/W {m}" for m in tab["mixes"]],
        rows,
        title=f"SNIA PTS IOPS (mean of rounds {a}-{b}, {which}; tracked: {tab['tracked']})",
    )


def run(args) -> Output:
    threads = getattr(args, "threads", None)
    if threads is not None:
        check_threads("--threads", threads)
    traces = traces_in(args.config)
    # the files the config names are inputs too: never let --json-file write over one of them
    named = [t["path"] for t in traces] + [drive_file_in(args.config)]
    check_output_not_input(getattr(args, "json_file", None), named, key="--json-file")
    # what the traces hold, before the (longer) simulation
    infos = []
    for t in traces:
        if not os.path.isfile(t["path"]):
            continue  # a pipe or FIFO can be read only once: the simulation reads it, not the summary
        opts = {
            k: v
            for k, v in t.items()
            if k in ("format", "device", "skip_bad", "columns", "delimiter", "skip_lines", "action")
        }
        info = trace.info(t["path"], **opts)
        infos.append(info)
        print(trace_summary(info), file=sys.stderr, flush=True)

    preset = simulate_interval.preset_in(args.config)
    prof = simulate_interval.profile_of(preset)
    if getattr(args, "interval", False) and prof is None:
        raise InputError(
            "--interval: the config's preset keeps no profile ([preset.calibration.profile], which "
            "`opsim calibrate -o FILE` writes when it fits the NAND)",
            key="interval",
        )
    r = simulate(args.config, threads=threads, on_interrupt="return")
    data = r.data | ({"trace_info": infos} if infos else {})
    text = summary_text(r.data, args.rounds)
    if prof is not None and preset is not None and not r.interrupted:
        if getattr(args, "interval", False):
            print("running at the profile's two ends for the interval", file=sys.stderr, flush=True)
            iv = simulate_interval.run_ends(args.config, preset, prof, r.data)
        else:
            iv = simulate_interval.how(args.config, preset, prof)
        data["interval"] = iv
        text += "\n\n" + simulate_interval.text(iv)
    return Output(data=data, text=text, exit_code=130 if r.interrupted else 0)
