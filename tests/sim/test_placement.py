"""Data placement (issue 15): namespaces, multi-stream and NVMe FDP in the simulator.

The issue's validation lines: the I/O blender (examples/fdp-blender.toml, WAF well above 1
without placement, about 1 with FDP); per-namespace and per-handle figures that add up to
the drive's; isolated tenants following the greedy mean-field model at the spare they
effectively get (unallocated capacity counting as spare); hot/cold separation by stream
against the non-uniform models of docs/models.md; misplacement losing FDP's benefit; off is
off; the timed model; the interleaving of tenants; config errors naming their key; direct
host commands on a drive with namespaces.  Small drives (256 MiB..1 GiB, 64-page blocks
where the case allows), a few seconds in all.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

import opsim
from opsim import models
from opsim.errors import ConfigError, DeviceError

ROOT = Path(__file__).parent.resolve().parent.parent
BLENDER = ROOT / "examples" / "fdp-blender.toml"
OPSIM = [sys.executable, "-m", "opsim.cli"]
PAGE = 4096
PPB = 64
HOT_COLD = {"type": "hot-cold", "hot_fraction": 0.1, "hot_write_fraction": 0.9}
CLASSES = [(0.1, 0.9), (0.9, 0.1)]  # (LBA fraction, write fraction): hot, cold


def cli_json(path) -> dict:
    p = subprocess.run([*OPSIM, "simulate", str(path), "--json"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def rel(a: float, b: float) -> float:
    return abs(a - b) / b


def drive(user="1GiB", op=0.2, gc="greedy", placement=None, namespaces=(), run=None) -> dict:
    cfg = {
        "drive": {"user_capacity": user, "op": op, "pages_per_block": PPB},
        "ftl": {"gc": gc},
        "run": {"seed": 1, "warmup_drive_writes": 6, "measure_drive_writes": 4, "round_drive_writes": 1} | (run or {}),
        "namespace": list(namespaces),
    }
    if placement is not None:
        cfg["ftl"]["placement"] = placement
    return cfg


def ns(name, capacity, workload, placement=None, share=None) -> dict:
    d = {"name": name, "capacity": capacity, "workload": workload}
    if placement is not None:
        d["placement"] = placement
    if share is not None:
        d["share"] = share
    return d


def fdp(**kw) -> dict:
    return {"mode": "fdp", "isolation": "persistently"} | kw


def op_of_handle(h: dict, data_pages: float) -> float:
    """The spare a handle effectively gets: its blocks' pages over the pages of data it holds."""
    return h["blocks"] * PPB / data_pages - 1


# ---------------------------------------------------------------- 1, 2: the I/O blender


@pytest.fixture(scope="module")
def blender(tmp_path_factory):
    """examples/fdp-blender.toml as is, and with only its mode changed to fdp (by the CLI)."""
    text = BLENDER.read_text()
    line = re.compile(r'(?m)^mode = "none"$')  # the setting, not the comment that names it
    assert len(line.findall(text)) == 1
    fdp_file = tmp_path_factory.mktemp("blender") / "fdp-blender-fdp.toml"
    fdp_file.write_text(line.sub('mode = "fdp"', text))
    return {"none": cli_json(BLENDER), "fdp": cli_json(fdp_file)}


def test_blender_acceptance(blender):
    none, fdp_ = blender["none"], blender["fdp"]
    # the acceptance line of the issue (measured: 1.845 and 1.000)
    assert none["waf"] >= 1.2, none["waf"]
    assert fdp_["waf"] <= 1.05, fdp_["waf"]
    names = ["seq-4k", "seq-16k", "seq-64k", "seq-256k"]
    for r in (none, fdp_):
        assert [n["name"] for n in r["namespaces"]] == names
        assert all(isinstance(n["waf"], float) for n in r["namespaces"])
    assert none["placement"]["mode"] == "none" and none["placement"]["handles"] == 0
    assert fdp_["placement"] == {
        "mode": "fdp",
        "isolation": "initially",
        "handles": 4,
        "shared_blocks": 0,
    }
    # blended, the slow writers pay: a tenant's data sits in blocks the fast tenants
    # invalidate, and GC copies it (measured 8.49, 7.64, 2.79, 1.14); with FDP each tenant's
    # reclaim units are invalidated by its own sequential writes: nothing to copy
    wafs = [n["waf"] for n in none["namespaces"]]
    assert wafs == sorted(wafs, reverse=True) and wafs[0] > 4 * wafs[-1], wafs
    for n in fdp_["namespaces"]:
        assert n["waf"] <= 1.05 and n["placement"] == [names.index(n["name"])], n
    assert [h["handle"] for h in fdp_["handles"]] == [0, 1, 2, 3]
    # the FDP statistics log (drive lifetime): MBMW / HBMW is a WAF >= 1, over more than the window
    s = fdp_["fdp_stats"]
    assert s["host_bytes_with_metadata_written"] == fdp_["counters"]["host_write_bytes"]
    assert s["host_bytes_with_metadata_written"] > fdp_["measure_window"]["host_write_bytes"]
    assert s["media_bytes_with_metadata_written"] == fdp_["counters"]["nand_write_pages"] * PAGE
    assert s["media_bytes_erased"] == fdp_["counters"]["erases"] * PAGE * 256
    assert "fdp_stats" not in none and "handles" not in none


@pytest.mark.parametrize("mode", ["none", "fdp"])
def test_namespaces_and_handles_add_up_to_the_drive(blender, mode):
    r = blender[mode]
    w = r["measure_window"]
    nss = r["namespaces"]
    host = sum(n["host_write_bytes"] for n in nss)
    nand = sum(n["nand_write_bytes"] for n in nss)
    assert host == w["host_write_bytes"] and nand == w["nand_write_bytes"]
    assert sum(n["gc_copy_bytes"] for n in nss) == r["measure_counters"]["gc_copy_pages"] * PAGE
    for n in nss:
        assert n["waf"] == pytest.approx(n["nand_write_bytes"] / n["host_write_bytes"], rel=1e-15)
    # the host-weighted mean of the namespaces' WAF is the drive's
    mean = sum(n["waf"] * n["host_write_bytes"] for n in nss) / host
    assert mean == pytest.approx(r["waf"], rel=1e-12)
    if mode == "fdp":
        # every write is page-aligned: the handles' NAND bytes are the drive's too
        hs = r["handles"]
        assert sum(h["host_write_bytes"] for h in hs) == w["host_write_bytes"]
        assert sum(h["nand_write_bytes"] for h in hs) == w["nand_write_bytes"]
        # one namespace per handle: its figures are its handle's
        for n in nss:
            h = hs[n["placement"][0]]
            assert (h["host_write_bytes"], h["nand_write_bytes"]) == (n["host_write_bytes"], n["nand_write_bytes"])


# ---------------------------------------------------------------- 3: isolated tenants, greedy


def test_isolated_tenants_follow_greedy_at_their_effective_spare():
    cfg = drive(
        op=0.15,
        placement=fdp(),
        namespaces=[
            ns("a", "30%", {"type": "uniform"}, placement=0, share=0.6),
            ns("b", "60%", {"type": "uniform"}, placement=1, share=0.4),
        ],
    )
    r = opsim.simulate(cfg)
    assert r.placement["shared_blocks"] == 0, "persistently isolated: no shared GC destination"
    for n, h in zip(r.namespaces, r.handles, strict=True):
        # a handle's blocks hold its namespace's data and nothing else: the spare it gets
        # is its share of the blocks over its data (measured 0.282 and 0.275)
        op_eff = op_of_handle(h, n["capacity_bytes"] / PAGE)
        m = models.waf_greedy(op_eff, PPB)
        assert rel(n["waf"], m) < 0.03, (n["name"], n["waf"], op_eff, m)  # 2.422/2.392, 2.424/2.431
        assert n["waf"] == h["waf"]
        # the unallocated 10% is spare both tenants draw on: more than the configured OP each
        assert op_eff > r.op["user"] + 0.1, op_eff
    assert sum(h["blocks"] for h in r.handles) <= r.drive["blocks"]
    # unallocated capacity (10%) is never written, so it acts as spare: the drive follows the
    # greedy model at physical / (0.9 x user) - 1, not at the configured OP
    op_seen = r.op["physical_bytes"] / (0.9 * r.op["user_bytes"]) - 1
    assert rel(r.waf, models.waf_greedy(op_seen, PPB)) < 0.03, (r.waf, op_seen)  # 2.423 / 2.417
    assert r.waf < 0.75 * models.waf_greedy(r.op["effective"], PPB)


# ---------------------------------------------------------------- 4: hot/cold by stream


def _hot_cold(gc, placement):
    pl = fdp() if placement else {"mode": "none"}
    return opsim.simulate(drive(gc=gc, placement=pl, namespaces=[ns("kv", "100%", HOT_COLD, placement=placement)]))


def test_hot_cold_mixed_follows_the_non_uniform_lrw_model():
    r = _hot_cold("fifo", None)
    op = r.op["effective"]  # the OP garbage collection sees, as in test_oracle.py
    m = models.waf_lrw_classes(op, CLASSES)
    assert rel(r.waf, m) < 0.05, (r.waf, m)  # measured 4.075 vs 4.082
    assert r.waf > 1.2 * models.waf_fifo(op), "the skew must cost FIFO more than uniform traffic"


def test_hot_cold_separated_by_stream():
    pages = 1 << 18  # 1 GiB of 4 KiB pages, all in the one namespace
    # FIFO: the victim is the drive's oldest block whichever handle wrote it, so a block of
    # either handle is collected after one pass of the whole log, and every page survives
    # that pass with the same probability exp(-t r_i / f_i) whether hot and cold data share
    # blocks or not.  Separation therefore changes nothing under FIFO: the drive stays at the
    # mixed LRW-classes model (measured 4.081 vs mixed 4.075, model 4.082).  What holds per
    # handle: each handle's blocks are a FIFO log of their own, turned over at the same pace,
    # so each follows the uniform FIFO model at the spare its blocks give it (cold: 31.1 at
    # op 0.017 vs model 30.6; hot: 1.077 at op 1.85 vs 1.076).
    sep, mixed = _hot_cold("fifo", [0, 1]), _hot_cold("fifo", None)
    m = models.waf_lrw_classes(sep.op["effective"], CLASSES)
    assert rel(sep.waf, m) < 0.02 and rel(sep.waf, mixed.waf) < 0.02, (sep.waf, mixed.waf, m)
    cold, hot = sep.handles
    for h, (f, r_) in ((hot, CLASSES[0]), (cold, CLASSES[1])):
        op_h = op_of_handle(h, f * pages)
        assert rel(h["waf"], models.waf_fifo(op_h)) < 0.05, (h, op_h, models.waf_fifo(op_h))
        assert h["host_write_bytes"] == pytest.approx(r_ * sep.measure_window["host_write_bytes"], rel=0.01)
    # Greedy exploits the separation: the victim with the fewest valid pages is in the cold
    # pool as often as its share of the writes needs, both pools follow the uniform greedy
    # model at their spare, and the skew costs nothing (measured 3.041 separated against
    # 3.601 mixed; the greedy model at the drive's OP 3.060; handles 3.064 and 3.038 at op
    # 0.199 and 0.204)
    sep, mixed = _hot_cold("greedy", [0, 1]), _hot_cold("greedy", None)
    op = sep.op["effective"]
    assert sep.waf < 0.9 * mixed.waf, (sep.waf, mixed.waf)
    assert sep.waf < 0.8 * models.waf_lrw_classes(op, CLASSES), "clearly under the mixed model"
    assert rel(sep.waf, models.waf_greedy(op, PPB)) < 0.03, (sep.waf, models.waf_greedy(op, PPB))
    cold, hot = sep.handles
    for h, f in ((hot, CLASSES[0][0]), (cold, CLASSES[1][0])):
        op_h = op_of_handle(h, f * pages)
        assert rel(h["waf"], models.waf_greedy(op_h, PPB)) < 0.03, (h, op_h)
    assert [n["placement"] for n in sep.namespaces] == [[0, 1]]


# ---------------------------------------------------------------- 5: misplacement


def test_misplacement_loses_fdps_benefit():
    def run(mode, kv_placement):
        pl = fdp(handles=3) if mode == "fdp" else {"mode": "none"}
        log = ns("log", "50%", {"type": "sequential", "request_size": "4KiB"}, placement=0 if mode == "fdp" else None)
        kv = ns("kv", "50%", HOT_COLD, placement=kv_placement)
        r = opsim.simulate(drive(placement=pl, namespaces=[log, kv]))
        return r.waf, r.namespaces[1]["waf"]

    drive_none, kv_none = run("none", None)
    drive_mis, kv_mis = run("fdp", 1)  # short- and long-lived data on one handle
    drive_sep, kv_sep = run("fdp", [1, 2])  # cold on handle 1, hot on handle 2
    # measured: kv 2.44 / 2.31 / 1.89, drive 2.66 / 1.76 / 1.51
    assert kv_mis >= 1.15 * kv_sep, (kv_mis, kv_sep)
    assert drive_mis > drive_sep, (drive_mis, drive_sep)
    # misplacement loses most of what FDP gains for the mixed tenant
    assert kv_none - kv_mis < 0.5 * (kv_none - kv_sep), (kv_none, kv_mis, kv_sep)
    # (isolating the sequential log still helps the drive as a whole)
    assert drive_mis < drive_none


# ---------------------------------------------------------------- 6: off is off


def test_off_is_off():
    cfg = {
        "drive": {"user_capacity": "256MiB", "op": 0.12, "pages_per_block": PPB},
        "run": {"seed": 3, "warmup_drive_writes": 2, "measure_drive_writes": 1, "round_drive_writes": 0.5},
    }
    off = opsim.simulate(cfg).data
    for key in ("placement", "namespaces", "handles", "fdp_stats"):
        assert key not in off
    none = opsim.simulate(cfg | {"ftl": {"placement": {"mode": "none"}}}).data
    assert off["measure_counters"]["gc_copy_pages"] > 0
    assert none["rounds"] == off["rounds"] and none["waf"] == off["waf"]
    assert none["counters"] == off["counters"] and none["wear"] == off["wear"]
    # strictly off: nothing built, nothing reported; only the config echo differs
    assert {k: v for k, v in none.items() if k not in ("perf", "config")} == {
        k: v for k, v in off.items() if k not in ("perf", "config")
    }


# ---------------------------------------------------------------- 7: the timed model


def test_blender_on_the_timed_model(tmp_path):
    text = BLENDER.read_text()
    text = re.sub(r"(?m)^(page_size|pages_per_block) = .*\n", "", text)
    text = text.replace('user_capacity = "8GiB"\nop = 0.07', 'user_capacity = "1GiB"\nphysical_capacity = "1150MiB"')
    text = text.replace(
        "warmup_drive_writes = 4\nmeasure_drive_writes = 2\nround_drive_writes = 0.5",
        "warmup_drive_writes = 1\nmeasure_drive_writes = 0.5\nround_drive_writes = 0.25",
    )
    text = 'preset = "micron-7450-pro-960gb"\n' + text
    # the preset's 768 MiB superblocks, 64 times smaller (the core's scale rule): 95 of 12 MiB
    text = text.replace("[ftl]\n", "[ftl]\nsuperblock_scale = 64\n", 1)
    assert "1150MiB" in text and "0.25" in text and "pages_per_block" not in text and "superblock_scale" in text
    res = {}
    for mode in ("none", "fdp"):
        f = tmp_path / f"{mode}.toml"
        f.write_text(re.sub(r'(?m)^mode = "none"$', f'mode = "{mode}"', text))
        res[mode] = opsim.simulate(f).data
    none, fdp_ = res["none"], res["fdp"]
    assert none["waf"] >= 1.2 and fdp_["waf"] <= 1.05, (none["waf"], fdp_["waf"])  # 1.315, 1.000
    for r in (none, fdp_):
        assert r["timed"]["measured_iops"] > 0 and r["timed"]["simulated_seconds"] > 0
        assert len(r["namespaces"]) == 4
    # without GC copies competing for the NAND the same commands run faster (9.7k vs 14.6k)
    assert fdp_["timed"]["measured_iops"] > 1.2 * none["timed"]["measured_iops"]


# ---------------------------------------------------------------- 8: interleaving


def _two_sequential(interleave):
    small = ns("small", "50%", {"type": "sequential", "request_size": "4KiB"}, share=0.25)
    large = ns("large", "50%", {"type": "sequential", "request_size": "64KiB"}, share=0.75)
    run = {"precondition": "none", "interleave": interleave, "warmup_drive_writes": 0, "measure_drive_writes": 16}
    r = opsim.simulate(drive(namespaces=[small, large], run=run | {"round_drive_writes": 4}))
    a, b = (n["host_write_bytes"] for n in r.namespaces)
    assert r.counters["host_write_cmds"] == a // 4096 + b // 65536
    return a, b


def test_interleave_by_bytes_and_by_iops():
    a, b = _two_sequential("bytes")
    assert rel(b / a, 3.0) < 0.02, b / a  # shares of the bytes
    a, b = _two_sequential("iops")
    assert rel((b // 65536) / (a // 4096), 3.0) < 0.02  # shares of the commands
    assert rel(b / a, 3 * 16) < 0.02, b / a  # so bytes 4 KiB : 3 x 64 KiB


def _iolog(path: Path, records):
    lines = ["fio version 3 iolog", "0 /dev/x add", "0 /dev/x open"]
    lines += [f"{t_us} /dev/x write {off} 4096" for t_us, off in records]
    path.write_text("\n".join([*lines, "99999999 /dev/x close", ""]))


def _two_traces(tmp_path, interleave):
    # tenant a writes pages 0, 1, 2 at 0, 2, 4 ms; tenant b pages 0..4 at 1, 3, 5, 6, 7 ms
    _iolog(tmp_path / "a.iolog", [(0, 0), (2000, 4096), (4000, 8192)])
    _iolog(tmp_path / "b.iolog", [(1000, 0), (3000, 4096), (5000, 8192), (6000, 12288), (7000, 16384)])
    trace = lambda p: {"type": "trace", "trace": {"path": str(tmp_path / p)}}  # noqa: E731
    cfg = drive(
        user="256MiB",
        namespaces=[ns("a", "50%", trace("a.iolog")), ns("b", "50%", trace("b.iolog"))],
        run={"precondition": "none", "interleave": interleave, "track_data": True, "warmup_drive_writes": 0},
        placement=fdp(),
    )
    cfg["namespace"][0]["placement"], cfg["namespace"][1]["placement"] = 0, 1
    s = opsim.Simulator(cfg)
    return s, s.run()


def test_interleave_by_timestamps_merges_the_traces_in_time_order(tmp_path):
    s, r = _two_traces(tmp_path, "timestamps")
    # both traces replayed to their end, which ends the run (the window asked for 4 drive writes)
    assert r.trace["ended"] and r.trace["records"] == 8
    assert r.counters["host_write_cmds"] == 8
    assert [n["host_write_bytes"] for n in r.namespaces] == [3 * 4096, 5 * 4096]
    assert [n["share"] for n in r.namespaces] == [0, 0]
    # the data token of a page is the number of the host write that wrote it: the commands
    # ran in timestamp order, alternating until a's trace ended
    b0 = r.namespaces[1]["first_lba"]
    assert [s.read_token(lba) for lba in (0, 8, 16)] == [1, 3, 5]
    assert [s.read_token(b0 + lba) for lba in (0, 8, 16, 24, 32)] == [2, 4, 6, 7, 8]
    assert [h["host_write_bytes"] for h in r.handles] == [3 * 4096, 5 * 4096]


def test_interleave_by_iops_ends_with_the_first_trace_and_reports_what_ran(tmp_path):
    _, r = _two_traces(tmp_path, "iops")
    cmds = r.counters["host_write_cmds"]
    assert cmds < 8, "the stream ends when one tenant's trace ends"
    assert r.trace["ended"]
    assert r.trace["records"] == cmds, r.trace


# ---------------------------------------------------------------- 9: config errors

BASE_TOML = """\
[drive]
user_capacity = "256MiB"
op = 0.2
pages_per_block = 64
{drive}
[ftl.placement]
mode = "fdp"
handles = 2
{placement}
[run]
warmup_drive_writes = 0.1
measure_drive_writes = 0.1
round_drive_writes = 0.1
{run}
[[namespace]]
capacity = "{cap0}"
placement = {pl0}
[namespace.workload]
type = "uniform"

[[namespace]]
capacity = "{cap1}"
placement = 1
{extra}
"""


def _toml(**kw):
    d = {"drive": "", "placement": "", "run": "", "cap0": "50%", "cap1": "50%", "pl0": "0", "extra": ""}
    return BASE_TOML.format(**(d | kw))


ERRORS = {
    "over-capacity": (_toml(cap1="60%"), "namespace[1].capacity"),
    "handle-out-of-range": (_toml(pl0="2"), "namespace[0].placement"),
    "workload-with-namespaces": (_toml(extra='[workload]\ntype = "sequential"\n'), "workload"),
    "phase-with-namespaces": (
        _toml(extra='[[phase]]\ndrive_writes = 0.1\n[phase.workload]\ntype = "uniform"\n'),
        "phase",
    ),
    "reclaim-unit": (_toml(placement='reclaim_unit = "1MiB"'), "ftl.placement.reclaim_unit"),
    "reclaim-groups": (_toml(placement="reclaim_groups = 2"), "ftl.placement.reclaim_groups"),
    "isolation-with-streams": (
        _toml(placement='isolation = "persistently"').replace('mode = "fdp"', 'mode = "streams"'),
        "ftl.placement.isolation",
    ),
    "analytic-precondition": (_toml(run='precondition = "analytic"'), "run.precondition"),
    "smaller-than-a-page": (_toml(cap0="2KiB"), "namespace[0].capacity"),
    "default-handle": (_toml(placement="default_handle = 2"), "ftl.placement.default_handle"),
    "share": (_toml(extra="share = 0"), "namespace[1].share"),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_config_errors_exit_2_naming_the_key(tmp_path, case):
    text, key = ERRORS[case]
    f = tmp_path / "bad.toml"
    f.write_text(text)
    p = subprocess.run([*OPSIM, "simulate", str(f)], capture_output=True, text=True)
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert f"error: {key}: " in p.stderr, p.stderr
    with pytest.raises(ConfigError) as e:
        opsim.simulate(f)
    assert e.value.key == key and e.value.exit_code == 2


def test_the_error_cases_are_errors_only_for_their_key():
    """The base config of the error cases runs, and the values next to each bad one pass."""
    for text in (_toml(), _toml(placement='reclaim_unit = "256KiB"\nreclaim_groups = 1'), _toml(cap0=4096 * 32)):
        r = opsim.simulate(text)
        assert len(r.namespaces) == 2 and r.placement["handles"] == 2


def test_a_namespace_under_one_fill_command_is_filled():
    r = opsim.simulate(_toml(cap0=4096 * 16))
    assert r.namespaces[0]["capacity_bytes"] == 65536


def test_the_fill_writes_every_page_of_every_namespace():
    s = opsim.Simulator(_toml(cap0="50%", cap1=33 * 4096))
    s.precondition()
    assert s.mapped_pages == (1 << 15) + 33


# ---------------------------------------------------------------- 10: direct host commands


def test_direct_commands_outside_every_namespace_and_on_a_missing_handle():
    cfg = drive(
        user="256MiB",
        placement={"mode": "fdp", "handles": 2},
        namespaces=[
            ns("a", "25%", {"type": "uniform"}, placement=0),
            ns("b", "25%", {"type": "uniform"}, placement=1),
        ],
        run={
            "precondition": "none",
            "warmup_drive_writes": 0,
            "measure_drive_writes": 0.25,
            "round_drive_writes": 0.25,
        },
    )
    s = opsim.Simulator(cfg)
    half = (256 << 20) // 512 // 2  # the first LBA after both namespaces
    s.write(half + 800, 8, 1)  # in the unallocated half, through handle 1
    with pytest.raises(DeviceError, match="stream 2 does not exist"):
        s.write(0, 8, 2)
    assert s.counters["host_write_cmds"] == 1, "the refused write is not counted"
    r = s.run()
    un = r.namespaces[-1]
    assert [n["name"] for n in r.namespaces] == ["a", "b", "(unallocated)"]
    assert (un["first_lba"], un["sectors"]) == (half, half)
    assert (un["host_write_bytes"], un["nand_write_bytes"], un["placement"]) == (4096, 4096, [])
    # still every byte accounted for, the direct write included
    w = r.measure_window
    assert sum(n["host_write_bytes"] for n in r.namespaces) == w["host_write_bytes"]
    assert sum(h["host_write_bytes"] for h in r.handles) == w["host_write_bytes"]
    assert r.handles[1]["host_write_bytes"] == r.namespaces[1]["host_write_bytes"] + 4096


def test_a_namespace_without_placement_writes_through_the_default_handle():
    cfg = drive(
        user="256MiB",
        placement={"mode": "fdp", "handles": 3, "default_handle": 2},
        namespaces=[ns("a", "40%", {"type": "uniform"}, placement=0), ns("b", "40%", {"type": "uniform"})],
        run={"warmup_drive_writes": 1, "measure_drive_writes": 1, "round_drive_writes": 0.5},
    )
    r = opsim.simulate(cfg)
    assert [n["placement"] for n in r.namespaces] == [[0], [2]]
    assert r.handles[1]["host_write_bytes"] == 0
    assert r.handles[2]["host_write_bytes"] == r.namespaces[1]["host_write_bytes"] > 0


def test_a_config_round_trips_through_toml(tmp_path):
    """The dict form and the TOML form of a placement config give the same result."""
    cfg = drive(
        user="256MiB",
        placement=fdp(),
        namespaces=[ns("kv", "80%", HOT_COLD, placement=[0, 1], share=1.0)],
        run={"warmup_drive_writes": 1, "measure_drive_writes": 1},
    )
    f = tmp_path / "c.toml"
    f.write_text(tomli_w.dumps(cfg))
    a, b = opsim.simulate(cfg).data, opsim.simulate(f).data
    assert a["rounds"] == b["rounds"] and a["handles"] == b["handles"] and a["namespaces"] == b["namespaces"]


# ---------------------------------------------------------------- per-request handles from a trace


def _handle_trace_config(tmp_path, rows: list[str], columns: str) -> str:
    (tmp_path / "t.csv").write_text("".join(rows))
    return f"""
[drive]
user_capacity = "64MiB"
op = 0.2
pages_per_block = {PPB}
[ftl.placement]
mode = "fdp"
handles = 3
[run]
precondition = "none"
warmup_drive_writes = 0.25
measure_drive_writes = 0.25
round_drive_writes = 0.125
[[namespace]]
capacity = "50%"
placement = [2, 0]
[namespace.workload]
type = "trace"
[namespace.workload.trace]
path = "{tmp_path / "t.csv"}"
format = "columns"
columns = "{columns}"
repeat = true
"""


def test_a_trace_column_names_each_writes_handle(tmp_path):
    # a third of the writes name handle 1 of the namespace's list [2, 0] (drive handle 0), a third
    # handle 0 (drive handle 2), a third handle 5, past the list: written through its handle 0
    rows = [f"w,{(i * 7 % 4096) * 4096},4096,{1 if i % 3 == 0 else (5 if i % 3 == 1 else 0)}\n" for i in range(3000)]
    r = opsim.simulate(_handle_trace_config(tmp_path, rows, "op=0,offset=1,size=2,handle=3"))
    by = {h["handle"]: h["host_write_bytes"] for h in r.handles}
    total = sum(by.values())
    assert by[1] == 0
    assert by[0] / total == pytest.approx(1 / 3, rel=0.02)
    assert by[2] / total == pytest.approx(2 / 3, rel=0.01)
    # without the column every write goes through the namespace's first handle
    r = opsim.simulate(_handle_trace_config(tmp_path, rows, "op=0,offset=1,size=2"))
    assert {h["handle"]: h["host_write_bytes"] > 0 for h in r.handles} == {0: False, 1: False, 2: True}


def test_a_handle_out_of_range_in_a_trace_names_the_line(tmp_path):
    rows = ["w,0,4096,1\n", "w,4096,4096,99999\n"]
    with pytest.raises(opsim.errors.TraceError) as e:
        opsim.simulate(_handle_trace_config(tmp_path, rows, "op=0,offset=1,size=2,handle=3"))
    assert ":2" in str(e.value) and "handle" in str(e.value)
