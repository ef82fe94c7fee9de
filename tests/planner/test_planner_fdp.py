"""opsim plan --placement fdp: the nvme-cli procedure for NVMe Flexible Data Placement on a real
drive (enable a configuration on an endurance group, one namespace per tenant with its placement
handle list), with LBA counts from the planner's capacity arithmetic and the traps."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from opsim.cli import main
from opsim.devices import nvme_fdp
from opsim.errors import InputError
from opsim.planner import fdp
from opsim.planner.capacity import idema_lba_count, parse_capacity, plan_capacity

FIX = Path(__file__).parent.parent / "fixtures" / "planner"
NATIVE_960 = idema_lba_count(960)  # 1,875,385,008 LBAs of 512 B

# `nvme fdp configs /dev/nvme0 --endgrp-id=1 -o json` in nvme-cli's JSON layout (n is zero-based:
# two configurations); numbers made up for the test: 8 handles of 1 GiB reclaim units in config
# 0, an invalid config 1
CONFIGS = {
    "n": 1,
    "configs": [
        {
            "fdpa": 0x80,
            "vss": 0,
            "nrg": 1,
            "nruh": 8,
            "nnss": 4,
            "runs": 2**30,
            "erutl": 0,
            "ruhs": [{"ruht": 1}] * 8,
        },
        {"fdpa": 0x00, "vss": 0, "nrg": 1, "nruh": 16, "nnss": 16, "runs": 2**29, "erutl": 0},
    ],
}


def _plan(capsys, *argv, code=0):
    rc = main(["plan", "--placement", "fdp", *argv, "--json"])
    out = capsys.readouterr()
    assert rc == code, out.err
    return json.loads(out.out) if code == 0 else out.err


def _described(*argv):
    return ["--interface", "nvme", "--native", "960GB", *argv]


def _commands(d):
    return [c for s in d["steps"] for c in s["commands"]]


def _first(cmds, needle):
    return next(i for i, c in enumerate(cmds) if needle in c)


def _records(tmp_path, ctratt=0x80010, configs=CONFIGS):
    """The recorded PM983 outputs plus a CTRATT and, if given, a saved `nvme fdp configs`."""
    d = tmp_path / "rec"
    shutil.copytree(FIX / "nvme-pm983", d)
    ctrl = (d / "nvme-id-ctrl.json").read_text()
    head, _, body = ctrl.partition("{")  # keep nvme-cli's warning line before the JSON
    doc = json.loads("{" + body)
    if ctratt is not None:
        doc["ctratt"] = ctratt
    (d / "nvme-id-ctrl.json").write_text(head + json.dumps(doc))
    if configs is not None:
        (d / "nvme-fdp-configs.json").write_text("Warning: a line before the JSON\n" + json.dumps(configs))
    return d


# ---------------------------------------------------------------- the sequence


def test_commands_in_the_order_a_drive_accepts_them(capsys):
    d = _plan(capsys, *_described("--namespace", "db=400GB:0", "--namespace", "log=200GB:1,2"))
    cmds = _commands(d)
    order = [
        _first(cmds, "nvme id-ctrl /dev/nvme0 -o json"),
        _first(cmds, "nvme fdp configs /dev/nvme0 --endgrp-id=1"),
        _first(cmds, "nvme detach-ns /dev/nvme0"),
        _first(cmds, "nvme delete-ns /dev/nvme0"),
        _first(cmds, "nvme fdp feature /dev/nvme0 --endgrp-id=1 --enable-conf-idx=0"),
        _first(cmds, "nvme create-ns /dev/nvme0"),
        _first(cmds, "nvme attach-ns /dev/nvme0"),
        _first(cmds, "nvme ns-rescan /dev/nvme0"),
        _first(cmds, "nvme fdp status /dev/nvme0n1"),
        _first(cmds, "nvme fdp stats /dev/nvme0 --endgrp-id=1 -o json > fdp-stats-before.json"),
        _first(cmds, "opsim measure wsat --device /dev/nvme0n1"),
        _first(cmds, "fdp-stats-after.json"),
    ]
    assert order == sorted(order), order
    # every namespace is deleted before FDP is enabled, and every one created after
    assert max(i for i, c in enumerate(cmds) if "delete-ns" in c) < _first(cmds, "--enable-conf-idx")
    assert min(i for i, c in enumerate(cmds) if "create-ns" in c) > _first(cmds, "--feature-id=0x1d --value")
    # the destructive steps say so
    destructive = [s["title"] for s in d["steps"] if s["destructive"]]
    assert any("delete every namespace" in t and "DESTRUCTIVE" in t for t in destructive)
    assert any("DATA LOSS" in w for w in d["warnings"])


def test_create_ns_carries_the_placement_handle_list(capsys):
    d = _plan(capsys, *_described("--namespace", "db=400GB:0", "--namespace", "log=200GB:1,2"))
    creates = [c for c in _commands(d) if c.startswith("nvme create-ns")]
    db, log = d["namespaces"]
    assert creates[0].startswith(
        f"nvme create-ns /dev/nvme0 --nsze={db['nsze']} --ncap={db['nsze']} --flbas=0 --nphndls=1 --phndls=0 "
        "--endg-id=1"
    )
    assert "--nphndls=2 --phndls=1,2 --endg-id=1" in creates[1]
    attaches = [c for c in _commands(d) if c.startswith("nvme attach-ns")]
    assert attaches == [
        "nvme attach-ns /dev/nvme0 --namespace-id=1 --controllers=<cntlid from id-ctrl>",
        "nvme attach-ns /dev/nvme0 --namespace-id=2 --controllers=<cntlid from id-ctrl>",
    ]
    # fio indexes the namespace's own handle list: log writes RUH 1 and 2 as fdp_pli 0,1
    assert (db["fio_pli"], log["fio_pli"]) == ("0", "0,1")
    assert (log["block_device"], log["char_device"]) == ("/dev/nvme0n2", "/dev/ng0n2")
    assert log["measure"].endswith("--device /dev/nvme0n2 --destroy-data=/dev/nvme0n2 --fdp --fdp-pli 0,1")


def test_enable_encodes_endurance_group_and_config_index(capsys):
    d = _plan(capsys, *_described("--tenants", "2", "--user", "800GB", "--endgrp-id", "3", "--fdp-config", "2"))
    cmds = _commands(d)
    assert "nvme fdp feature /dev/nvme0 --endgrp-id=3 --enable-conf-idx=2   # nvme-cli 2.13+" in cmds
    # the Set Features nvme-cli's `fdp feature` sends: FID 1Dh, CDW11 = endurance group,
    # CDW12 = index << 8 | enable
    setf = next(c for c in cmds if c.startswith("nvme set-feature"))
    assert setf.startswith("nvme set-feature /dev/nvme0 --feature-id=0x1d --value=3 --cdw12=0x201 --save")
    assert any(c.startswith("nvme fdp configs /dev/nvme0 --endgrp-id=3") for c in cmds)
    assert all("--endg-id=3" in c for c in cmds if c.startswith("nvme create-ns"))
    assert d["endurance_group"] == 3 and d["fdp_config"]["index"] == 2


# ---------------------------------------------------------------- the LBA counts


def test_namespace_sizes_come_from_the_capacity_arithmetic(capsys):
    d = _plan(capsys, *_described("--namespace", "db=400GB:0", "--namespace", "200GB", "--namespace", "cold=10%:5"))
    db, ns2, cold = d["namespaces"]
    native = parse_capacity("960GB", 512, "native")
    # IDEMA LBA1-03 counts for whole GB, truncated share of the native LBAs for a percentage:
    # the same function every other plan calls
    assert db["nsze"] == idema_lba_count(400) == plan_capacity(native, user="400GB")["user"]["sectors"]
    assert ns2["nsze"] == idema_lba_count(200) == 390_721_968
    assert cold["nsze"] == NATIVE_960 // 10 == plan_capacity(native, max_lba="10%")["user"]["sectors"]
    assert all(r["ncap"] == r["nsze"] and r["bytes"] == r["nsze"] * 512 for r in d["namespaces"])
    # the unnamed namespace takes the lowest handle no list names
    assert (db["phndls"], ns2["phndls"], cold["phndls"]) == ([0], [1], [5])
    cap = d["capacity"]
    allocated = db["nsze"] + ns2["nsze"] + cold["nsze"]
    assert cap["native"]["sectors"] == NATIVE_960
    assert cap["allocated"]["sectors"] == allocated
    assert cap["unallocated"]["sectors"] == NATIVE_960 - allocated
    # the unallocated capacity is OP, in every basis, as plan_capacity reports it
    ref = plan_capacity(native, user=f"{allocated}s")
    assert cap["op"] == ref["op"] and cap["op_exact"] == ref["op_exact"]
    assert cap["op"]["native"] == pytest.approx((NATIVE_960 - allocated) / NATIVE_960)


def test_tenants_split_a_target_equally(capsys):
    d = _plan(capsys, *_described("--tenants", "4", "--op", "20%", "--op-basis", "native"))
    each = idema_lba_count(768) // 4  # 960 GB x 0.8 = 768 GB, its IDEMA count, in four
    assert [r["nsze"] for r in d["namespaces"]] == [each] * 4
    assert [r["phndls"] for r in d["namespaces"]] == [[0], [1], [2], [3]]
    assert [r["name"] for r in d["namespaces"]] == ["tenant1", "tenant2", "tenant3", "tenant4"]
    assert d["capacity"]["op"]["native"] == pytest.approx(0.2, abs=1e-5)


def test_tenants_leftover_lbas_stay_spare_and_granularity_rounds_down(capsys):
    d = _plan(capsys, *_described("--tenants", "5", "--user", "800GB", "--ns-granularity", "1GiB"))
    g = 2**30 // 512
    assert idema_lba_count(800) % 5 == 3
    raw = idema_lba_count(800) // 5
    assert all(r["nsze"] == raw // g * g for r in d["namespaces"])
    assert any("left over stay unallocated" in n for n in d["capacity"]["notes"])
    assert any("granularity" in n for n in d["capacity"]["notes"])


def test_4k_lba_format_from_the_records(tmp_path, capsys):
    rec = _records(tmp_path)
    d = _plan(capsys, "/dev/nvme0n1", "--records", str(rec), "--sector-size", "4096", "--namespace", "400GB", code=0)
    assert d["namespaces"][0]["nsze"] == idema_lba_count(400, 4096)
    assert d["namespaces"][0]["flbas"] == 1  # the PM983's 4 KiB LBA format
    assert "--controllers=4" in _commands(d)[_first(_commands(d), "attach-ns")]


# ---------------------------------------------------------------- the FDP configuration log


def test_configs_from_the_records_check_handles_and_report_reclaim_units(tmp_path, capsys):
    rec = _records(tmp_path)
    d = _plan(capsys, "/dev/nvme0n1", "--records", str(rec), "--namespace", "a=200GB:0", "--namespace", "b=100GB:7")
    cfg = d["fdp_config"]
    assert (cfg["nruh"], cfg["nrg"], cfg["nnss"], cfg["runs"], cfg["valid"]) == (8, 1, 4, 2**30, True)
    assert cfg["ruh_types"] == ["initially isolated"] * 8
    assert cfg["source"].endswith("nvme-fdp-configs.json")
    a, b = d["namespaces"]
    assert a["reclaim_units"] == pytest.approx(a["bytes"] / 2**30)
    assert (a["phndls"], b["phndls"]) == ([0], [7])
    assert any("reclaim units of 1,073,741,824 bytes" in n for n in d["notes"])
    assert d["support"]["fdps"] is True and not any("DOES NOT REPORT FDP" in w for w in d["warnings"])
    # a handle beyond nruh is refused, naming the field
    err = _plan(capsys, "/dev/nvme0n1", "--records", str(rec), "--namespace", "a=200GB:8", code=2)
    assert "namespace" in err and "reclaim unit handle 8" in err and "has 8 (0-7)" in err


def test_configs_file_index_validity_and_namespace_limit(tmp_path, capsys):
    f = tmp_path / "configs.json"
    f.write_text(json.dumps(CONFIGS))
    base = [*_described(), "--fdp-configs-json", str(f)]
    err = _plan(capsys, *base, "--namespace", "100GB", "--fdp-config", "1", code=2)
    assert "fdp_config" in err and "not valid" in err
    err = _plan(capsys, *base, "--namespace", "100GB", "--fdp-config", "2", code=2)
    assert "fdp_config" in err and "lists 2 configuration(s)" in err
    err = _plan(capsys, *base, "--tenants", "5", "--user", "900GB", code=2)
    assert "supports 4" in err
    d = _plan(capsys, *base, "--tenants", "4", "--user", "900GB")
    assert d["fdp_config"]["source"] == str(f)
    (tmp_path / "bad.json").write_text('{"n": 0}')
    err = _plan(capsys, *_described("--fdp-configs-json", str(tmp_path / "bad.json"), "--namespace", "1GB"), code=2)
    assert "fdp_configs_json" in err


def test_a_controller_without_fdp_is_flagged(tmp_path, capsys):
    rec = _records(tmp_path, ctratt=0x10, configs=None)
    d = _plan(capsys, "/dev/nvme0n1", "--records", str(rec), "--namespace", "200GB")
    assert d["support"] == {"ctratt": 0x10, "fdps": False, "endurance_groups": True, "ns_management": True}
    assert "DOES NOT REPORT FDP" in d["warnings"][1] and "bit 19" in d["warnings"][1]
    assert any("not read" in n for n in d["notes"])  # no configuration log: nruh unknown, said so


def test_fdp_support_bits():
    s = nvme_fdp.fdp_support({"ctratt": "0x80010", "oacs": 15})
    assert s == {"ctratt": 0x80010, "fdps": True, "endurance_groups": True, "ns_management": True}
    assert nvme_fdp.fdp_support({"oacs": 6})["fdps"] is None  # older nvme-cli: CTRATT not printed


def test_parse_configs_keeps_log_order():
    cfgs = nvme_fdp.parse_fdp_configs(json.dumps(CONFIGS))
    assert [c["index"] for c in cfgs] == [0, 1]
    assert [c["valid"] for c in cfgs] == [True, False]
    assert cfgs[1]["nruh"] == 16 and cfgs[1]["ruh_types"] == []


# ---------------------------------------------------------------- the traps


def test_every_trap_is_stated(capsys):
    d = _plan(capsys, *_described("--tenants", "2", "--user", "800GB"))
    traps = {t["key"]: t["text"] for t in d["traps"]}
    assert set(traps) == {
        "endurance_group",
        "delete_first",
        "support",
        "config_index",
        "ruh_count_and_size",
        "unallocated_is_op",
        "pli_indexes",
        "default_handle",
        "isolation",
    }
    assert "endurance group" in traps["endurance_group"]
    assert "deleted first" in traps["delete_first"]
    assert "CTRATT bit 19" in traps["support"] and "nvme fdp configs" in traps["support"]
    assert "position of the configuration in `nvme fdp configs`" in traps["config_index"]
    assert "nruh" in traps["ruh_count_and_size"] and "runs" in traps["ruh_count_and_size"]
    assert "spare area" in traps["unallocated_is_op"] and "OP" in traps["unallocated_is_op"]
    assert "fdp_pli" in traps["pli_indexes"]


def test_shared_handles_warn(capsys):
    d = _plan(capsys, *_described("--namespace", "a=100GB:0", "--namespace", "b=100GB:0,1"))
    assert any("shared by several namespaces" in w for w in d["warnings"])


def test_text_output(capsys):
    assert main(["plan", "--placement", "fdp", *_described("--namespace", "db=400GB:0")]) == 0
    out = capsys.readouterr().out
    assert "opsim plan --placement fdp" in out and "unallocated (OP)" in out
    assert "nvme create-ns /dev/nvme0 --nsze=781422768" in out
    assert "traps:" in out and "Nothing was changed" in out


# ---------------------------------------------------------------- bad input: exit 2, the field named


@pytest.mark.parametrize(
    "argv,field",
    [
        (["--namespace", "400GB"], "namespace"),  # without --placement fdp
        (["--tenants", "2", "--user", "800GB"], "tenants"),
        (["--placement", "fdp", "--namespace", "ab c=1GB"], "namespace"),
        (["--placement", "fdp", "--namespace", "400GB:1,1"], "namespace"),
        (["--placement", "fdp", "--namespace", "400GB:"], "namespace"),
        (["--placement", "fdp", "--namespace", ":0"], "namespace"),
        (["--placement", "fdp", "--namespace", "600GB", "--namespace", "600GB"], "namespace"),
        (["--placement", "fdp", "--namespace", "a=0%"], "namespace: a (0%)"),
        (["--placement", "fdp", "--namespace", "a=2TB"], "namespace: a (2TB)"),
        (["--placement", "fdp", "--namespace", "a=12XB"], "namespace: a (12XB)"),
        (["--placement", "fdp", "--namespace", "400GB", "--tenants", "2"], "tenants"),
        (["--placement", "fdp", "--namespace", "400GB", "--op", "20%", "--op-basis", "native"], "op"),
        (["--placement", "fdp", "--tenants", "2"], "user"),
        (["--placement", "fdp", "--tenants", "0", "--user", "800GB"], "tenants"),
        (["--placement", "fdp"], "namespace"),
        (["--placement", "fdp", "--tenants", "2", "--user", "800GB", "--endgrp-id", "0"], "endgrp_id"),
        (["--placement", "fdp", "--tenants", "2", "--user", "800GB", "--fdp-config", "256"], "fdp_config"),
        (
            ["--placement", "fdp", "--tenants", "2", "--user", "800GB", "--fdp-configs-json", "/nonexistent"],
            "fdp_configs_json",
        ),
        (["--placement", "fdp", "--tenants", "2", "--user", "800GB", "--apply"], "apply"),
        (["--placement", "fdp", "--tenants", "x", "--user", "800GB"], "--tenants"),
        (["--placement", "zns", "--tenants", "2", "--user", "800GB"], "--placement"),
    ],
)
def test_bad_input_exits_2_naming_the_field(capsys, argv, field):
    try:
        rc = main(["plan", "--interface", "nvme", "--native", "960GB", *argv])
    except SystemExit as e:  # argparse's usage errors
        rc = e.code
    err = capsys.readouterr().err
    assert rc == 2, err
    assert field in err and "internal error" not in err


def test_fdp_needs_nvme(capsys):
    rc = main(
        ["plan", "--placement", "fdp", "--interface", "sata", "--native", "960GB", "--tenants", "2", "--user", "800GB"]
    )
    err = capsys.readouterr().err
    assert rc == 2 and "interface" in err and "NVMe" in err


def test_spec_parser():
    assert fdp.parse_namespace_spec("db=400GB:0,3", 0) == fdp.NamespaceSpec("db", "400GB", (0, 3))
    assert fdp.parse_namespace_spec(" 25% ", 2) == fdp.NamespaceSpec("ns3", "25%", None)
    with pytest.raises(InputError, match="at most 128"):
        fdp.parse_handles(",".join(str(i) for i in range(129)))


def test_reading_the_configurations_runs_only_the_read_only_log(tmp_path, monkeypatch):
    """On a real device the plan reads `nvme fdp configs` (a Get Log Page) and nothing else."""
    import sys

    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "calls.txt"
    (bindir / "nvme").write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"open({str(calls)!r}, 'a').write(' '.join(sys.argv[1:]) + '\\n')\n"
        "if sys.argv[1:3] != ['fdp', 'configs']:\n"
        "    sys.exit(1)\n"
        f"print(json.dumps({CONFIGS!r}))\n"
    )
    (bindir / "nvme").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:/usr/bin:/bin")
    text, why = nvme_fdp.read_fdp_configs("/dev/nvme3", 2)
    assert why is None and nvme_fdp.parse_fdp_configs(text)[0]["nruh"] == 8
    assert calls.read_text().splitlines() == ["fdp configs /dev/nvme3 --endgrp-id=2 -o json"]
    (bindir / "nvme").write_text("#!/bin/sh\necho 'NVMe status: Invalid Log Page' >&2\nexit 22\n")
    text, why = nvme_fdp.read_fdp_configs("/dev/nvme3", 2)
    assert text is None and "Invalid Log Page" in why and "no FDP on this drive?" in why
