"""Block traces: each reader on a fixture written from the format's documented layout
(tests/fixtures/traces/README.md names the sources), round trips through `opsim trace
convert`, the error cases, and replay in the functional and timed simulators."""

import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

import opsim
import opsim.trace as T
from opsim.errors import ConfigError, TraceError

FIX = os.path.join(os.path.dirname(os.path.dirname(__file__)), "fixtures", "traces")
OPSIM = [sys.executable, "-m", "opsim.cli"]
COLUMNS = dict(format="columns", columns="time=0:ms,device=1,op=2,offset=3:sectors,size=4", skip_lines=1)


def fx(name):
    return os.path.join(FIX, name)


def run(*args, code=None):
    p = subprocess.run(OPSIM + list(args), capture_output=True, text=True)
    if code is not None:
        assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return p


# ---------------------------------------------------------------- each reader, exact records

MS = 1_000_000
CASES = {
    # MSR Cambridge: Windows filetime (100 ns ticks), times relative to the first record
    "msr_hm_0.csv": (
        {},
        [
            (0, "read", 3129794560, 65536),
            (1332052600, "write", 2150825984, 4096),
            (2332061600, "write", 8192, 4096),
            (2342061600, "write", 2150830080, 8192),
            (3332061600, "read", 0, 512),
            (4332061600, "write", 4096, 1024),
        ],
    ),
    # blkparse: action D by default; Q/G/I/C/P/U/m lines, a flush without range and the
    # summary are not requests; RWBS D = discard, FWFS = write with flush and FUA
    "blkparse.txt": (
        {},
        [
            (0, "write", 1574944 * 512, 4096),
            (997940, "write", 2048 * 512, 8192),
            (1989940, "read", 4096 * 512, 4096),
            (2987940, "trim", 8192 * 512, 2048 * 512),
            (3987940, "write", 65536 * 512, 4096),
            (4987940, "write", 100 * 512, 4096),
        ],
    ),
    # fio iolog v2: `wait` = milliseconds since the start; sync and file actions skipped
    "fio_v2.iolog": (
        {},
        [
            (0, "write", 0, 4096),
            (0, "read", 4096, 4096),
            (5 * MS, "trim", 8192, 65536),
            (5 * MS, "write", 1048576, 131072),
        ],
    ),
    # fio iolog v3: microsecond timestamps
    "fio_v3.iolog": (
        {},
        [
            (0, "write", 0, 16384),
            (16000, "write", 16384, 16384),
            (628000, "read", 0, 4096),
            (1128000, "trim", 0, 32768),
        ],
    ),
    "disksim.trace": (
        {"format": "disksim"},
        [
            (0, "read", 1234 * 512, 4096),
            (250000, "write", 2048 * 512, 8192),
            (1500000, "write", 4096 * 512, 4096),
            (2 * MS, "write", 0, 512),
        ],
    ),
    # MQSim: the DiskSim layout with nanosecond times
    "mqsim.trace": (
        {"format": "mqsim"},
        [
            (0, "read", 1234 * 512, 4096),
            (250000, "write", 2048 * 512, 8192),
            (1500000, "write", 4096 * 512, 4096),
            (2 * MS, "write", 0, 512),
        ],
    ),
    # SPC / UMass: LBA in 512-byte blocks, size in bytes, seconds
    "spc_financial.csv": (
        {},
        [
            (0, "write", 303567 * 512, 3584),
            (0, "write", 55590 * 512, 3072),
            (26214000, "write", 303574 * 512, 3584),
            (26214000, "write", 240840 * 512, 3072),
            (78643000, "read", 55596 * 512, 3072),
            (117964000, "write", 303581 * 512, 3584),
        ],
    ),
    "columns.tsv": (
        COLUMNS,
        [
            (0, "write", 8192, 4096),
            (MS, "read", 8192, 4096),
            (int(1.5 * MS), "write", 0, 8192),
            (int(2.75 * MS), "trim", 0, 65536),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reader_gives_the_documented_records(name):
    opts, want = CASES[name]
    assert T.head(fx(name), 100, **opts) == want


@pytest.mark.parametrize(
    "name,opts,device,want",
    [
        ("msr_hm_0.csv", {}, "1", 1),
        ("msr_hm_0.csv", {}, "hm_0", 5),
        ("blkparse.txt", {}, "8,16", 1),
        ("fio_v3.iolog", {}, "/dev/nvme0n1", 4),
        ("disksim.trace", {"format": "disksim"}, "1", 1),
        ("spc_financial.csv", {}, "1", 3),
        ("columns.tsv", COLUMNS, "vol2", 1),
    ],
)
def test_device_filter(name, opts, device, want):
    assert T.info(fx(name), device=device, **opts)["records"] == want


def test_blkparse_action_choice():
    q = T.head(fx("blkparse.txt"), 10, action="Q")
    assert [r[1:] for r in q] == [
        ("write", 1574944 * 512, 4096),
        ("write", 2048 * 512, 8192),
        ("read", 4096 * 512, 4096),
    ]
    c = T.info(fx("blkparse.txt"), action="C")
    assert c["records"] == 1 and c["write"]["bytes"] == 4096


def test_info_summary():
    d = T.info(fx("msr_hm_0.csv"))
    assert d["format"] == "msr" and d["compression"] == "none" and d["records"] == 6
    assert d["read"] == {"ios": 2, "bytes": 65536 + 512}
    assert d["write"] == {"ios": 4, "bytes": 4096 + 4096 + 8192 + 1024}
    assert d["min_offset"] == 0 and d["max_end"] == 3129794560 + 65536
    # distinct 4 KiB blocks: 16 (64 KiB read) + 1 + 1 + 2 + 1 (block 0) + 1 (block 1)
    assert d["footprint_bytes"] == 22 * 4096
    assert d["write_footprint_bytes"] == (1 + 1 + 2 + 1) * 4096
    assert d["unaligned_4k"] == 2
    assert d["duration_s"] == pytest.approx((128166372046382245 - 128166372003061629) * 100e-9, abs=1e-9)
    assert d["top_sizes"][0] == [4096, 2]


def test_compressed_input_is_detected_from_the_content(tmp_path):
    plain = T.info(fx("msr_hm_0.csv"))
    gz = tmp_path / "t.csv.gz"
    gz.write_bytes(gzip.compress(Path(fx("msr_hm_0.csv")).read_bytes()))
    for path, comp in ((gz, "gzip"), (fx("msr_hm_0.csv.zst"), "zstd")):
        d = T.info(path)
        assert d["compression"] == comp
        assert {k: d[k] for k in ("records", "read", "write", "footprint_bytes", "duration_s")} == {
            k: plain[k] for k in ("records", "read", "write", "footprint_bytes", "duration_s")
        }
    # the name does not matter: a gzip file called .txt is read as gzip
    odd = tmp_path / "odd.txt"
    odd.write_bytes(gz.read_bytes())
    assert T.info(odd)["compression"] == "gzip"


# ---------------------------------------------------------------- round trips through convert


@pytest.mark.parametrize("name", sorted(CASES))
def test_convert_round_trip(name, tmp_path):
    opts, want = CASES[name]
    v3 = tmp_path / "a.iolog"
    assert T.convert(fx(name), v3, version=3, target="/dev/sdz", **opts) == len(want)
    # v3 keeps kind, offset, size and order exactly, times to the microsecond
    assert [(t // 1000, k, o, n) for t, k, o, n in T.head(v3, 100)] == [(t // 1000, k, o, n) for t, k, o, n in want]
    # converting the iolog again gives the same file
    again = tmp_path / "b.iolog"
    T.convert(v3, again, version=3, target="/dev/sdz")
    assert again.read_text() == v3.read_text()
    lines = v3.read_text().splitlines()
    assert lines[0] == "fio version 3 iolog" and lines[1].split()[1:] == ["/dev/sdz", "add"]
    assert lines[-1].split()[1:] == ["/dev/sdz", "close"]
    # v2 keeps times as `wait` lines in milliseconds
    v2 = tmp_path / "c.iolog"
    T.convert(fx(name), v2, version=2, target="/dev/sdz", **opts)
    assert [(t // MS, k, o, n) for t, k, o, n in T.head(v2, 100)] == [(t // MS, k, o, n) for t, k, o, n in want]
    assert all(len(x.split()) in (2, 4) for x in v2.read_text().splitlines()[1:]), "fio v2 lines"


def test_convert_cli_and_atomic_output(tmp_path):
    out = tmp_path / "r.iolog"
    p = run("trace", "convert", fx("msr_hm_0.csv"), "-o", str(out), "--target", "/dev/nvme1n1", "--json", code=0)
    assert json.loads(p.stdout)["requests"] == 6 and out.exists()
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372003061629,hm,0,Read,1,4096,1\n128166372003061630,hm,0,Bogus,1,4096,1\n")
    out2 = tmp_path / "never.iolog"
    p = run("trace", "convert", str(bad), "-o", str(out2), code=2)
    assert "bad.csv:2" in p.stderr and not out2.exists()
    assert [f for f in os.listdir(tmp_path) if f.startswith(".")] == []  # no temporary left


def test_fio_can_parse_our_iologs(tmp_path):
    """fio itself reads the converted iolog (a dry run against a regular file)."""
    import shutil

    if shutil.which("fio") is None:
        pytest.skip("fio not installed")
    target = tmp_path / "disk.img"
    target.write_bytes(b"\0" * (4 << 20))
    for v in (2, 3):
        log = tmp_path / f"v{v}.iolog"
        T.convert(fx("fio_v3.iolog"), log, version=v, target=str(target))
        p = subprocess.run(
            [
                "fio",
                "--name=r",
                f"--read_iolog={log}",
                "--ioengine=psync",
                "--output-format=json",
                "--replay_no_stall=1",
            ],
            capture_output=True,
            text=True,
        )
        assert p.returncode == 0, p.stderr
        job = json.loads(p.stdout[p.stdout.index("{") :])["jobs"][0]
        # (trims in iologs are replayed from fio 3.34 on; Debian 12 has 3.33, so not counted)
        assert job["write"]["total_ios"] == 2 and job["read"]["total_ios"] == 1


# ---------------------------------------------------------------- errors


def test_bad_line_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "128166372003061629,hm,0,Read,0,4096,1\n128166372003061630,hm,0,Write,12x4,4096,1\n"
        "128166372003061631,hm,0,Write,8192,4096,1\n"
    )
    with pytest.raises(TraceError) as e:
        T.info(bad)
    assert f"{bad}:2" in str(e.value) and '"12x4"' in str(e.value) and "Offset" in str(e.value)
    d = T.info(bad, skip_bad=True)
    assert d["records"] == 2 and d["skipped_bad_lines"] == 1 and d["first_bad_line"][0] == 2
    p = run("trace", "info", str(bad), code=2)
    assert "bad.csv:2" in p.stderr
    p = run("trace", "info", str(bad), "--skip-bad", "--json", code=0)
    assert json.loads(p.stdout)["skipped_bad_lines"] == 1


@pytest.mark.parametrize(
    "body,opts,needle",
    [
        ("0.0 0 12 8 1\n0.5 0 -3 8 0\n", {"format": "disksim"}, 'block "-3"'),
        ("0,12,4096,x,0.0\n", {"format": "spc"}, 'Opcode "x"'),
        ("0.1 0 12 8\n", {"format": "mqsim"}, "missing field: flags"),
        ("/dev/sdb write 0 4096\n", {"format": "fio-iolog"}, "first line must be"),
        ("fio version 3 iolog\nabc /dev/sdb write 0 4096\n", {}, 'timestamp "abc"'),
        ("fio version 2 iolog\n/dev/sdb frobnicate 0 4096\n", {}, 'unknown action "frobnicate"'),
        ("0,99999999999999999999999,4096,w,0.0\n", {}, "LBA"),
    ],
)
def test_bad_numbers_and_fields(tmp_path, body, opts, needle):
    f = tmp_path / "t.txt"
    f.write_text(body)
    with pytest.raises(TraceError) as e:
        T.info(f, **opts)
    assert needle in str(e.value) and str(f) in str(e.value)


def test_empty_and_undetectable_and_truncated(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(TraceError, match="file is empty"):
        T.info(empty)
    with pytest.raises(TraceError, match="holds no requests"):
        T.info(empty, format="msr")
    with pytest.raises(TraceError, match="holds no requests for device"):
        T.info(fx("msr_hm_0.csv"), device="7")
    junk = tmp_path / "junk.txt"
    junk.write_text("hello world\n")
    with pytest.raises(TraceError, match="cannot tell the trace format"):
        T.info(junk)
    big = "".join(f"{128166372003061629 + i},hm,0,Write,{i * 4096},4096,1\n" for i in range(20000))
    blob = gzip.compress(big.encode())
    cut = tmp_path / "cut.csv.gz"
    cut.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(TraceError, match="truncated or corrupt"):
        T.info(cut)
    with pytest.raises(TraceError, match="no such file"):
        T.info(tmp_path / "missing.csv")


def test_trace_options_are_checked():
    with pytest.raises(ConfigError, match="columns"):
        T.info(fx("columns.tsv"), format="columns", columns="op=2,offset=3:parsecs,size=4")
    with pytest.raises(ConfigError, match="is only used with format"):
        T.info(fx("msr_hm_0.csv"), action="Q")
    with pytest.raises(ConfigError, match=r"trace\.frob"):
        T.info(fx("msr_hm_0.csv"), frob=1)


# ---------------------------------------------------------------- replay in the simulator


def msr_random_writes(path, n, span_bytes, seed=3, gap_ns=0):
    rnd = random.Random(seed)
    pages = span_bytes // 4096
    t0 = 128166372003061629
    with open(path, "w") as f:
        for i in range(n):
            f.write(f"{t0 + i * gap_ns // 100},hm,0,Write,{rnd.randrange(pages) * 4096},4096,0\n")


def trace_cfg(path, user="64MiB", op=0.28, **trace):
    return {
        "drive": {"user_capacity": user, "op": op, "pages_per_block": 64},
        "workload": {"type": "trace", "trace": {"path": str(path)} | trace},
        "run": {"precondition": "fill", "warmup_drive_writes": 2, "measure_drive_writes": 3},
    }


def test_replay_matches_the_synthetic_workload(tmp_path):
    """A trace of uniform random 4 KiB writes gives the WAF of the same synthetic workload."""
    path = tmp_path / "u.csv"
    msr_random_writes(path, 30_000, 64 << 20)  # 1.8 drive writes per pass
    r = opsim.simulate(trace_cfg(path, repeat=True))
    syn = opsim.simulate(
        {
            "drive": {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64},
            "run": {"warmup_drive_writes": 2, "measure_drive_writes": 3},
        }
    )
    assert r.trace["passes"] >= 2 and r.trace["ended"] is False
    assert r.waf == pytest.approx(syn.waf, rel=0.03)
    # without repeat the replay ends with the trace and says so
    with pytest.raises(ConfigError, match="trace ended before the measurement window"):
        opsim.simulate(trace_cfg(path))
    once = trace_cfg(path)
    once["run"]["warmup_drive_writes"] = 0
    r1 = opsim.simulate(once)
    assert r1.trace == {"records": 30_000, "passes": 1, "skipped_bad_lines": 0, "ended": True}
    assert r1.measure_counters["host_write_cmds"] == 30_000


def test_remap(tmp_path):
    path = tmp_path / "wide.csv"
    msr_random_writes(path, 5000, 1 << 30)  # a 1 GiB span on a 64 MiB drive
    with pytest.raises(TraceError, match=r"ends past the simulated drive.*remap"):
        opsim.simulate(trace_cfg(path))
    for mode in ("wrap", "scale"):
        cfg = trace_cfg(path, remap=mode)
        cfg["run"] |= {"warmup_drive_writes": 0, "precondition": "none"}
        r = opsim.simulate(cfg)
        assert r.measure_counters["host_write_cmds"] == 5000


def test_relative_trace_path_is_relative_to_the_config(tmp_path):
    (tmp_path / "sub").mkdir()
    msr_random_writes(tmp_path / "sub" / "t.csv", 2000, 16 << 20)
    conf = tmp_path / "sub" / "c.toml"
    conf.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        '[workload]\ntype = "trace"\n[workload.trace]\npath = "t.csv"\n'
        '[run]\nprecondition = "none"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 1\n'
    )
    r = opsim.simulate(str(conf))
    assert r.trace["records"] == 2000
    p = run("simulate", str(conf), "--json", code=0)
    assert json.loads(p.stdout)["trace"]["records"] == 2000


def test_timed_replay_at_trace_time(tmp_path):
    """Open-loop replay at the trace's times: a 1,000 IOPS trace is served at 1,000 IOPS with
    low latency; replayed as fast as possible it runs at the drive's own rate."""
    path = tmp_path / "paced.csv"
    msr_random_writes(path, 5_000, 32 << 20, gap_ns=1_000_000)
    timing = {"queue_depth": 32}
    base = trace_cfg(path, user="64MiB")
    base["run"] = {"precondition": "fill", "warmup_drive_writes": 0, "measure_drive_writes": 10}
    paced = json.loads(json.dumps(base))
    paced["workload"]["trace"]["timing"] = "trace"
    paced["timing"] = timing
    r = opsim.simulate(paced)
    assert r.timed["measured_iops"] == pytest.approx(1_000, rel=0.02)
    assert r.timed["simulated_seconds"] == pytest.approx(5.0, rel=0.02)
    fast = json.loads(json.dumps(base))
    fast["timing"] = timing
    f = opsim.simulate(fast)
    assert f.timed["measured_iops"] > 3 * r.timed["measured_iops"]
    assert r.timed["latency_us"]["write"]["p50"] < f.timed["latency_us"]["write"]["p50"]
    # twice as fast
    paced["workload"]["trace"]["speed"] = 2.0
    assert opsim.simulate(paced).timed["simulated_seconds"] == pytest.approx(2.5, rel=0.02)


def test_simulate_summarises_the_trace_before_simulating(tmp_path):
    msr_random_writes(tmp_path / "t.csv", 3000, 16 << 20)
    conf = tmp_path / "c.toml"
    conf.write_text(
        '[drive]\nuser_capacity = "64MiB"\nop = 0.28\npages_per_block = 64\n'
        '[workload]\ntype = "trace"\n[workload.trace]\npath = "t.csv"\n'
        '[run]\nprecondition = "none"\nwarmup_drive_writes = 0\nmeasure_drive_writes = 1\n'
    )
    p = run("simulate", str(conf), code=0)
    assert "3,000 requests, 0% read / 100% write / 0% trim" in p.stderr
    assert "trace replayed" in p.stdout and "3,000 requests, 1 complete pass(es), ended" in p.stdout
    doc = json.loads(run("simulate", str(conf), "--json", code=0).stdout)
    assert doc["trace_info"][0]["records"] == 3000 and doc["trace"]["records"] == 3000
