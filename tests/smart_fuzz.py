"""A deterministic mutation fuzzer for the readers of `opsim smart`: smartctl ``-j`` documents,
nvme-cli JSON logs (SMART, Endurance Group, OCP C0, vendor logs) and opsim smart snapshots
(parser ``smart``), and saved NVMe FDP statistics (parser ``fdp``: ``nvme fdp stats`` JSON and
text, the 64-byte log page, ``nvme get-log`` hex dumps).

Every input must give a result or an :class:`opsim.errors.InputError`: any other exception, an
input that runs longer than ``timeout_s`` (a hang), or a peak memory above ``max_rss_mb`` is a
failure.  Inputs are the real outputs in the corpus folders plus built-in nvme-cli seeds, mutated
with a seeded RNG (input ``i`` of seed ``s`` is the same on every machine, so one failing input is
replayed with ``--only i``):

* most inputs mutate the decoded JSON object (keys dropped, renamed or added, values replaced by
  other types, huge, negative, NaN or infinite numbers, odd strings, deep nesting; lists cut,
  repeated or reordered), copying only the path to the change, and go through the snapshot
  reader, the lifetime WAF, the interval WAF against the unmutated seed, the text report and
  ``json.dumps``;
* a share (``byte_share``) are byte-level mutations of the serialised document (truncation, bit
  flips, inserted or deleted bytes, non-UTF-8 and NUL bytes, very long numbers, deep brackets)
  that go through the JSON decoder first.

FDP statistics inputs are the files in ``tests/fixtures/nvme-fdp`` and built-in seeds of every
form, mutated at the byte level with FDP-aware changes as well (a number replaced by an odd one,
a 16-byte counter of the log page overwritten, the page cut or padded, lines swapped or
repeated); each goes through :func:`opsim.smart.fdp.parse_fdp_stats`, the WAF since FDP was
enabled, the interval against the unmutated seed (one in five), the table and ``json.dumps``,
and the counters must come out as integers in 0..2**128-1.

It is a test tool, not part of the installed package: ``python tests/smart_fuzz.py --count 1000000
--seed 1`` runs it against the opsim in the environment (``make fuzz``: both parsers, ``--parser``
picks one), and tests/smart/test_smart_fuzz.py and tests/smart/test_smart_fdp.py run short passes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import signal
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from opsim.devices.jsondoc import loads_document
from opsim.errors import InputError
from opsim.smart import fdp
from opsim.smart.parse import as_snapshot
from opsim.smart.report import waf_text
from opsim.smart.waf import interval_waf, lifetime_waf

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = (
    REPO / "tests" / "fixtures" / "measure",
    REPO.parent / "shared" / "fixtures" / "smartctl",
    REPO.parent / "shared" / "fixtures" / "smartctl-exporter",
)
DEFAULT_FDP_CORPUS = (REPO / "tests" / "fixtures" / "nvme-fdp",)

_SMART_LOG = {
    "critical_warning": 0,
    "temperature": 310,
    "avail_spare": 100,
    "percent_used": 3,
    "data_units_read": "12,345,678",
    "data_units_written": "65,536,000",
    "host_read_commands": 1,
    "host_write_commands": 2,
    "power_cycles": 12,
    "power_on_hours": 4000,
    "unsafe_shutdowns": 3,
}
_OCP_C0 = {
    "Physical media units written": {"hi": 0, "lo": 40_000_000_000_000},
    "Physical media units read": {"hi": 0, "lo": 1},
    "Bad user nand blocks - Raw": 0,
    "Log page version": 3,
    "Log page GUID": "0xafd514c97c6f4f9ca4f2bfea2810afc5",
}
_ENDURANCE = {
    "critical_warning": 0,
    "avl_spare": 100,
    "percent_used": 3,
    "data_units_read": 10,
    "data_units_written": 30_000,
    "media_units_written": 42_000,
    "host_read_cmds": 1,
}
_INTEL_ADD = {
    "Intel Smart log": "nvme0",
    "Device stats": {
        "program_fail_count": {"normalized": 100, "raw": 0},
        "nand_bytes_written": {"normalized": 100, "raw": 1_234_567},
        "host_bytes_written": {"normalized": 100, "raw": 1_000_000},
    },
}
_NVME_SC = {
    "json_format_version": [1, 0],
    "smartctl": {"exit_status": 4, "messages": [{"string": "x"}]},
    "device": {"name": "/dev/nvme0", "type": "nvme", "protocol": "NVMe"},
    "model_name": "INTEL SSDPE2KX010T8",
    "serial_number": "S1",
    "firmware_version": "1",
    "nvme_pci_vendor": {"id": 0x8086, "subsystem_id": 0x8086},
    "power_on_time": {"hours": 4000},
    "power_cycle_count": 12,
    "nvme_smart_health_information_log": {"data_units_written": 65_536_000, "power_on_hours": 4000},
}
_ATA_SC = {
    "json_format_version": [1, 0],
    "smartctl": {"exit_status": 0},
    "device": {"name": "/dev/sda", "type": "sat", "protocol": "ATA"},
    "model_family": "Micron 5100 Pro / 52x0 / 5300 SSDs",
    "model_name": "Micron_5300_MTFDDAK240TDS",
    "serial_number": "S2",
    "rotation_rate": 0,
    "logical_block_size": 512,
    "power_on_time": {"hours": 10},
    "ata_smart_attributes": {
        "table": [
            {"id": 246, "name": "Total_LBAs_Written", "raw": {"value": 13081275632, "string": "13081275632"}},
            {"id": 247, "name": "Host_Program_Page_Count", "raw": {"value": 429271075, "string": "429271075"}},
            {"id": 248, "name": "Bckgnd_Program_Page_Cnt", "raw": {"value": 33907658, "string": "33907658"}},
        ]
    },
    "ata_device_statistics": {
        "pages": [
            {
                "number": 1,
                "table": [{"offset": 24, "name": "Logical Sectors Written", "value": 100, "flags": {"valid": True}}],
            }
        ]
    },
}
_SCSI_SC = {
    "json_format_version": [1, 0],
    "smartctl": {"exit_status": 0},
    "device": {"name": "/dev/sdb", "type": "scsi", "protocol": "SCSI"},
    "scsi_vendor": "TOSHIBA",
    "scsi_model_name": "TOSHIBA PX05SMB040",
    "serial_number": "S3",
    "rotation_rate": 0,
    "scsi_transport_protocol": {"name": "SAS (SPL-3)", "value": 6},
    "scsi_error_counter_log": {"write": {"gigabytes_processed": "1234.567"}},
}

BUILTIN_SEEDS = (
    ("builtin:nvme-cli smart-log", _SMART_LOG),
    ("builtin:nvme-cli ocp smart-add-log", _OCP_C0),
    ("builtin:smartctl ata", _ATA_SC),
    ("builtin:smartctl nvme", _NVME_SC),
    ("builtin:smartctl scsi", _SCSI_SC),
    (
        "builtin:snapshot nvme",
        {
            "format": "opsim-smart-snapshot",
            "version": 1,
            "device": "/dev/nvme0n1",
            "smartctl": _NVME_SC,
            "warnings": ["smartctl exit status 4: x"],
            "commands": [{"argv": ["nvme", "ocp", "smart-add-log", "/dev/nvme0"], "exit_status": 0}],
            "nvme": {
                "smart_log": _SMART_LOG,
                "ocp_c0": _OCP_C0,
                "endurance_log": _ENDURANCE,
                "vendor_log": {"vendor": "Intel", "plugin": "intel smart-log-add", "data": _INTEL_ADD},
            },
        },
    ),
    (
        "builtin:snapshot nvme intel only",
        {
            "format": "opsim-smart-snapshot",
            "smartctl": _NVME_SC,
            "nvme": {"vendor_log": {"plugin": "intel smart-log-add", "data": _INTEL_ADD}},
        },
    ),
)

_DEEP: list[Any] = [0]
for _ in range(150):
    _DEEP = [_DEEP]
WEIRD: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    1,
    -1,
    255,
    256,
    2**31,
    2**63,
    2**64,
    2**128 - 1,
    2**128,
    2**200,
    -(2**64),
    10**400,
    float("nan"),
    float("inf"),
    float("-inf"),
    1e308,
    -0.0,
    0.5,
    1e-300,
    7.0,
    "",
    " ",
    "0",
    "-1",
    "1.5",
    "abc",
    "NaN",
    "1,234",
    "1,969,459 (1.01 TB)",
    "0x",
    "0x" + "f" * 40,
    "9" * 5000,
    "\x00",
    "\ud800",
    "caf\u00e9",
    "\x1b[31mred",
    "A" * 10_000,
    "REDACTED",
    "NVMe",
    "ATA",
    "SCSI",
    "sat",
    [],
    {},
    [1, 2, 3],
    {"hi": 1, "lo": 2},
    {"hi": -1, "lo": 0},
    {"hi": 2**64, "lo": 0},
    {"value": "x"},
    {"value": float("nan")},
    {"raw": {"value": 2**70}},
    {"value": {"value": {"value": 3}}},
    _DEEP,
    {"id": 246, "raw": {"value": 1}},
    {"number": 1, "table": None},
    {"exit_status": 3},
)
KEYS = (
    "smartctl",
    "exit_status",
    "device",
    "protocol",
    "type",
    "model_name",
    "model_family",
    "serial_number",
    "rotation_rate",
    "logical_block_size",
    "ata_smart_attributes",
    "table",
    "id",
    "raw",
    "value",
    "pages",
    "number",
    "offset",
    "flags",
    "valid",
    "nvme_smart_health_information_log",
    "data_units_written",
    "power_on_time",
    "hours",
    "power_cycle_count",
    "format",
    "nvme",
    "smart_log",
    "ocp_c0",
    "endurance_log",
    "vendor_log",
    "plugin",
    "data",
    "Device stats",
    "Physical media units written",
    "media_units_written",
    "scsi_error_counter_log",
    "write",
    "gigabytes_processed",
    "scsi_vendor",
    "nvme_pci_vendor",
    "warnings",
    "commands",
    "argv",
    "wwn",
    "user_capacity",
    "bytes",
    "hi",
    "lo",
    "",
)


class _Hang(Exception):
    pass


def load_corpus(dirs=None) -> list[tuple[str, object, bytes]]:
    """(name, decoded object, original bytes) of every *.json in ``dirs`` plus the built-in seeds."""
    out = []
    for d in DEFAULT_CORPUS if dirs is None else dirs:
        d = Path(d)
        if d.is_dir():
            for p in sorted(d.glob("*.json")):
                data = p.read_bytes()
                out.append((p.name, json.loads(data), data))
    for name, obj in BUILTIN_SEEDS:
        out.append((name, obj, json.dumps(obj, indent=1).encode()))
    return out


# ----------------------------------------------------------------------------------- mutations


def _weird(rng: random.Random, old):
    r = rng.random()
    if r < 0.55:
        return rng.choice(WEIRD)
    if r < 0.7 and old is not None:  # the same value in another type
        return rng.choice((str(old)[:100], [old], {"value": old}, {"raw": old}, {"hi": 0, "lo": old}))
    if r < 0.85 and isinstance(old, (int, float)) and not isinstance(old, bool):
        op = rng.randrange(7)
        ops = (
            lambda: old - 1,
            lambda: old + 1,
            lambda: -old,
            lambda: old * 2**64,
            lambda: old / 3,
            lambda: float(old),
            lambda: str(old)[:100],
        )
        try:
            return ops[op]()
        except (OverflowError, ValueError):
            return float("inf")
    op = rng.randrange(3)
    if op == 0:
        return rng.randrange(-(2**70), 2**70)
    if op == 1:
        return rng.random() * float(f"1e{rng.randrange(-5, 400 if rng.random() < 0.1 else 20)}")
    return "".join(chr(rng.randrange(0, 0x3000)) for _ in range(rng.randrange(0, 12)))


def _mutate_container(rng: random.Random, node):
    """A mutated copy of one dict or list (the node itself is never changed)."""
    if isinstance(node, dict):
        new = dict(node)
        keys = list(new)
        op = rng.randrange(6) if keys else 4
        if op == 0:
            del new[rng.choice(keys)]
        elif op in (1, 2):
            k = rng.choice(keys)
            new[k] = _weird(rng, new[k])
        elif op == 3:  # rename a key
            k = rng.choice(keys)
            new[rng.choice(KEYS) if rng.random() < 0.7 else k.upper()] = new.pop(k)
        elif op == 4:
            new[rng.choice(KEYS)] = _weird(rng, None)
        else:  # keep only a few keys
            for k in rng.sample(keys, k=rng.randrange(len(keys))):
                del new[k]
        return new
    seq = list(node)
    op = rng.randrange(5) if seq else 4
    if op == 0:
        del seq[rng.randrange(len(seq))]
    elif op == 1:
        i = rng.randrange(len(seq))
        seq[i] = _weird(rng, seq[i])
    elif op == 2:
        i = rng.randrange(len(seq))
        seq[i:i] = [seq[i]] * rng.randrange(1, 4)
    elif op == 3:
        rng.shuffle(seq)
        del seq[rng.randrange(len(seq) + 1) :]
    else:
        seq.append(_weird(rng, None))
    return seq


def mutate(rng: random.Random, root):
    """``root`` with one change somewhere, copying only the containers on the path to it."""
    if not isinstance(root, (dict, list)):
        return _weird(rng, root)
    if rng.random() < 0.3:
        return _mutate_container(rng, root)
    items = list(root.items()) if isinstance(root, dict) else list(enumerate(root))
    inner = [(k, v) for k, v in items if isinstance(v, (dict, list)) and v]
    if not inner:
        return _mutate_container(rng, root)
    k, v = rng.choice(inner)
    new = dict(root) if isinstance(root, dict) else list(root)
    new[k] = mutate(rng, v)
    return new


def mutate_bytes(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        n = len(b)
        op = rng.randrange(9)
        i = rng.randrange(n + 1)
        if op == 0:
            del b[i:]  # truncate
        elif op == 1 and n:
            j = rng.randrange(n)
            b[j] ^= 1 << rng.randrange(8)  # bit flip
        elif op == 2:
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
        elif op == 3:
            del b[i : i + rng.randrange(1, 64)]
        elif op == 4 and n:
            j = rng.randrange(n)
            b[i:i] = b[j : j + rng.randrange(1, 200)]  # duplicate a range
        elif op == 5:
            b[i:i] = rng.choice((b"\xff\xfe", b"\xc3", b"\x00", b"\xed\xa0\x80", b"\xef\xbb\xbf"))
        elif op == 6:
            b[i:i] = rng.choice(
                (
                    b"NaN",
                    b"-Infinity",
                    b"1e999",
                    b"9" * rng.randrange(10, 6000),
                    b"-0",
                    b'"\\ud800"',
                    b"\\u0000",
                    b"null",
                    b"[" * rng.randrange(1, 100_000),
                )
            )
        elif op == 7:
            b[0:0] = rng.choice((b"warning: something\n", b"{\n", b"[notice]\n", b"}\n", b"\n" * 3))
        else:
            b = b.replace(b" ", b"", rng.randrange(1, 50))
    return bytes(b)


# ----------------------------------------------------------------------------------- the target


def exercise(obj, base_snap: dict | None, allow_no_serial: bool | None) -> None:
    """Everything `opsim smart waf` does with one document; raises what the code raises."""
    snap = as_snapshot(obj, "fuzz.json")
    r = lifetime_waf(snap)
    waf_text(r).encode("utf-8")
    json.dumps(r, allow_nan=False).encode("utf-8")
    if base_snap is not None and allow_no_serial is not None:
        a, b = (base_snap, snap) if allow_no_serial else (snap, base_snap)
        try:
            r = interval_waf(a, b, allow_no_serial=allow_no_serial)
        except InputError:
            return
        waf_text(r).encode("utf-8")
        json.dumps(r, allow_nan=False).encode("utf-8")


def one_input(corpus, seed: int, i: int, byte_share: float):
    """Input ``i`` of ``seed``: (seed file, "obj" | "bytes", the input, interval mode), where the
    interval mode is None (lifetime only) or the ``allow_no_serial`` of an interval against the
    unmutated seed (one in five inputs; as BEFORE when true, as AFTER when false)."""
    rng = random.Random(seed * 1_000_003 + i)
    name, obj, raw = corpus[rng.randrange(len(corpus))]
    interval = rng.random() < 0.5 if rng.random() < 0.2 else None
    if rng.random() < byte_share:
        if rng.random() < 0.5:
            obj = mutate(rng, obj)
            raw = json.dumps(obj).encode("utf-8", "surrogatepass")
        return name, "bytes", mutate_bytes(rng, raw), interval
    for _ in range(rng.randrange(1, 5)):
        obj = mutate(rng, obj)
    return name, "obj", obj, interval


def run(
    count: int,
    seed: int = 1,
    corpus=None,
    *,
    start: int = 0,
    byte_share: float = 0.15,
    timeout_s: float = 10.0,
    max_failures: int = 20,
    save_dir: str | None = None,
    progress=None,
) -> dict:
    """Run inputs ``start`` .. ``start + count - 1``; return counts and the first failures."""
    corpus = load_corpus() if corpus is None else corpus
    if not corpus:
        raise InputError("fuzz: empty corpus", key="corpus")
    bases: dict[str, dict | None] = {}
    for name, obj, _ in corpus:
        try:
            bases[name] = as_snapshot(obj, name)
        except InputError:
            bases[name] = None

    def target(name, kind, inp, allow):
        obj = loads_document(inp, "fuzz.json") if kind == "bytes" else inp
        exercise(obj, bases.get(name), allow)  # looked up at each call (tests replace it)

    return _loop(
        "smart",
        count,
        seed,
        len(corpus),
        start,
        lambda i: one_input(corpus, seed, i, byte_share),
        target,
        timeout_s=timeout_s,
        max_failures=max_failures,
        save_dir=save_dir,
        progress=progress,
    )


def _loop(
    parser: str,
    count: int,
    seed: int,
    corpus_len: int,
    start: int,
    make,
    target,
    *,
    timeout_s: float,
    max_failures: int,
    save_dir: str | None,
    progress,
) -> dict:
    """Inputs ``make(i)`` = (seed file, kind, input, extra) for i in ``start`` .. ``start +
    count - 1``, each through ``target(seed file, kind, input, extra)``: a result or an
    InputError is fine, any other exception or a hang is a failure."""
    use_alarm = hasattr(signal, "setitimer") and timeout_s > 0
    if use_alarm:

        def on_alarm(signum, frame):
            raise _Hang()

        old = signal.signal(signal.SIGALRM, on_alarm)
    stats: dict[str, Any] = {
        "parser": parser,
        "seed": seed,
        "start": start,
        "count": count,
        "ok": 0,
        "input_errors": 0,
        "bytes_inputs": 0,
        "failures": [],
        "failed": 0,
        "corpus": corpus_len,
    }
    t0 = time.perf_counter()
    try:
        for i in range(start, start + count):
            name, kind, inp, extra = make(i)
            stats["bytes_inputs"] += kind == "bytes"
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, timeout_s)
            try:
                target(name, kind, inp, extra)
                stats["ok"] += 1
            except InputError:
                stats["input_errors"] += 1
            except _Hang:
                _fail(stats, i, name, kind, inp, f"hang: still running after {timeout_s} s", max_failures, save_dir)
            except Exception as e:  # the point: anything else is a failure
                tb = traceback.extract_tb(e.__traceback__)[-1]
                _fail(
                    stats,
                    i,
                    name,
                    kind,
                    inp,
                    f"{type(e).__name__}: {str(e)[:200]} at {Path(tb.filename).name}:{tb.lineno}",
                    max_failures,
                    save_dir,
                )
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            if progress and (i - start + 1) % 100_000 == 0:
                progress(i - start + 1, stats)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    stats["seconds"] = round(time.perf_counter() - t0, 1)
    stats["max_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return stats


def _fail(stats, i, name, kind, inp, what, max_failures, save_dir):
    stats["failed"] += 1
    if len(stats["failures"]) < max_failures:
        stats["failures"].append({"index": i, "seed_file": name, "kind": kind, "error": what})
        if save_dir:
            fdp_input = stats.get("parser") == "fdp"
            p = Path(save_dir) / (
                f"fuzz-fdp-{stats['seed']}-{i}.bin" if fdp_input else f"fuzz-{stats['seed']}-{i}.json"
            )
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(inp if kind == "bytes" else json.dumps(inp).encode("utf-8", "surrogatepass"))


# ------------------------------------------------------------------------ FDP statistics


def _log_page(hbmw: int, mbmw: int, mbe: int, reserved: bytes = bytes(16)) -> bytes:
    return b"".join(v.to_bytes(16, "little") for v in (hbmw, mbmw, mbe)) + reserved


def _hexdump(page: bytes, log_id: int = 0x22) -> bytes:
    out = f"Device:nvme0 log-id:{log_id} namespace-id:0xffffffff\n     " + "".join(f"{i:3x}" for i in range(16))
    for off in range(0, len(page), 16):
        chunk = page[off : off + 16]
        out += f"\n{off:04x}:" + "".join(f" {b:02x}" for b in chunk)
        out += ' "' + "".join(chr(b) if 0x21 <= b <= 0x7E else "." for b in chunk) + '"'
    return (out + "\n").encode()


_FDP_TEXT = (
    "Host Bytes with Metadata Written (HBMW): {}\nMedia Bytes with Metadata Written (MBMW): {}\n"
    "Media Bytes Erased (MBE): {}\n"
)
FDP_SEEDS: tuple[tuple[str, bytes], ...] = (
    ("builtin:fdp json", b'{\n  "hbmw":12288,\n  "mbmw":12288,\n  "mbe":0\n}\n'),
    ("builtin:fdp json strings", b'{"hbmw": "5497558138880", "mbmw": "6047313952768", "mbe": "6442450944000"}'),
    (
        "builtin:fdp json 128-bit",
        json.dumps({"hbmw": 2**100 + 7, "mbmw": 2**101 + 3, "mbe": 2**128 - 1}).encode(),
    ),
    ("builtin:fdp text C", _FDP_TEXT.format(12288, 16384, 0).encode()),
    (
        "builtin:fdp text en_US",
        _FDP_TEXT.format("5,497,558,138,880", "6,047,313,952,768", "6,442,450,944,000").encode(),
    ),
    (
        "builtin:fdp text kv table",
        b"  Host Bytes with Metadata Written (HBMW)  : 1234567\n"
        b"  Media Bytes with Metadata Written (MBMW) : 2345678\n"
        b"  Media Bytes Erased (MBE)                 : 0\n",
    ),
    ("builtin:fdp log page", _log_page(5_497_558_138_880, 6_047_313_952_768, 6_442_450_944_000)),
    ("builtin:fdp log page max", _log_page(2**128 - 1, 2**128 - 1, 2**128 - 1)),
    ("builtin:fdp log page zero", bytes(64)),
    ("builtin:fdp log page 512", _log_page(4096, 8192, 2**30) + bytes(448)),
    ("builtin:fdp get-log hex", _hexdump(_log_page(5_497_558_138_880, 6_047_313_952_768, 6_442_450_944_000))),
    (
        "builtin:opsim fdp_stats",
        json.dumps(
            {
                "fdp_stats": {
                    "host_bytes_with_metadata_written": 1_000_000,
                    "media_bytes_with_metadata_written": 1_500_000,
                    "media_bytes_erased": 2_000_000,
                },
                "waf": 1.5,
            }
        ).encode(),
    ),
)
FDP_TOKENS: tuple[bytes, ...] = (
    b"",
    b"0",
    b"-1",
    b"1.5",
    b"1e5",
    b"1e999",
    b"NaN",
    b"Infinity",
    b"null",
    b"true",
    b"[]",
    b"{}",
    b'"12288"',
    b'"1,234"',
    b'"abc"',
    b"1,234,567",
    b"1.234.567",
    b"1 234 567",
    b"12,34",
    b"1,,234",
    str(2**64).encode(),
    str(2**128 - 1).encode(),
    str(2**128).encode(),
    b"9" * 60,
    b"9" * 5000,
    b"(HBMW)",
    b"(MBMW)",
    b"(MBE)",
    b"hbmw",
    b"mbmw",
    b"mbe",
    b'"fdp_stats"',
    b'"mode": "interval", ',
    b'"error": "FDP Disabled", ',
    b":",
    b"\n",
    b"\r\n",
    b" " * 3000,
    b"0000:",
    b"0040: 01 02",
    b"Device:nvme0 log-id:2 namespace-id:0x1\n",
    b"NVMe status: FDP Disabled(0x229)\n",
    b"\x00",
    b"\xff\xfe",
    b"\xc3",
    b"\xef\xbb\xbf",
    b"[" * 5000,
)


def load_fdp_corpus(dirs=None) -> list[tuple[str, bytes]]:
    """(name, bytes) of every file in ``dirs`` but README.md (at most 1 MiB each), then the
    built-in seeds."""
    out = []
    for d in DEFAULT_FDP_CORPUS if dirs is None else dirs:
        d = Path(d)
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.is_file() and p.name != "README.md" and not p.name.startswith(".") and p.stat().st_size <= 2**20:
                    out.append((p.name, p.read_bytes()))
    out.extend(FDP_SEEDS)
    return out


def mutate_fdp(rng: random.Random, data: bytes) -> bytes:
    """``data`` with one to three FDP-aware changes (or the generic byte mutations)."""
    if rng.random() < 0.3:
        return mutate_bytes(rng, data)
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        n = len(b)
        op = rng.randrange(8)
        if op == 0:  # a number (or a run of digits and separators) replaced
            spans = [m.span() for m in re.finditer(rb"[0-9][0-9,]*", b)]
            i, j = rng.choice(spans) if spans else (rng.randrange(n + 1),) * 2
            b[i:j] = rng.choice(FDP_TOKENS)
        elif op == 1:
            i = rng.randrange(n + 1)
            b[i:i] = rng.choice(FDP_TOKENS)
        elif op == 2:  # one 16-byte field of the log page overwritten
            off = rng.choice((0, 16, 32, 48))
            b[off : off + 16] = rng.choice((bytes(16), b"\xff" * 16, bytes(rng.randrange(256) for _ in range(16))))
        elif op == 3:
            del b[rng.randrange(n + 1) :]  # cut
        elif op == 4:  # padded: zeros (a larger --log-len) or other bytes
            pad = (
                bytes(rng.randrange(1, 600))
                if rng.random() < 0.6
                else bytes([rng.randrange(256)]) * rng.randrange(1, 9)
            )
            b += pad
        elif op == 5 and n:
            j = rng.randrange(n)
            b[j] ^= 1 << rng.randrange(8)
        else:  # lines swapped, repeated or dropped
            lines = bytes(b).split(b"\n")
            k = rng.randrange(len(lines))
            r = rng.randrange(3)
            if r == 0:
                k2 = rng.randrange(len(lines))
                lines[k], lines[k2] = lines[k2], lines[k]
            elif r == 1:
                lines.insert(k, lines[k])
            else:
                del lines[k]
            b = bytearray(b"\n".join(lines))
    return bytes(b)


def exercise_fdp(data: bytes, base: dict | None, before: bool | None) -> None:
    """Everything `opsim smart fdp` does with one file; raises what the code raises, and
    AssertionError when a parsed counter is not an integer in 0..2**128-1."""
    snap = fdp.parse_fdp_stats(data, "fuzz.fdp")
    for k in fdp.KEYS:
        v = snap["fdp_stats"][k]
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= fdp.MAX_COUNT:
            raise AssertionError(f"{k} parsed as {v!r}")
    r = fdp.lifetime_fdp_waf(snap)
    fdp.fdp_text(r).encode("utf-8")
    json.dumps(r, allow_nan=False).encode("utf-8")
    if base is not None and before is not None:
        a, b = (base, snap) if before else (snap, base)
        try:
            r = fdp.interval_fdp_waf(a, b)
        except InputError:
            return
        fdp.fdp_text(r).encode("utf-8")
        json.dumps(r, allow_nan=False).encode("utf-8")


def one_fdp_input(corpus, seed: int, i: int):
    """FDP input ``i`` of ``seed``: (seed file, "bytes", the input, interval mode): one in ten
    is a seed unchanged; one in five runs an interval against the unmutated seed (as AFTER when
    the mode is true, as BEFORE when false)."""
    rng = random.Random(f"opsim-fdp-fuzz:{seed}:{i}")
    name, data = corpus[rng.randrange(len(corpus))]
    interval = rng.random() < 0.5 if rng.random() < 0.2 else None
    if rng.random() >= 0.1:
        data = mutate_fdp(rng, data)
    return name, "bytes", data, interval


def run_fdp(
    count: int,
    seed: int = 1,
    corpus=None,
    *,
    start: int = 0,
    timeout_s: float = 10.0,
    max_failures: int = 20,
    save_dir: str | None = None,
    progress=None,
) -> dict:
    """Run FDP statistics inputs ``start`` .. ``start + count - 1``; counts and the first failures."""
    corpus = load_fdp_corpus() if corpus is None else corpus
    if not corpus:
        raise InputError("fuzz: empty FDP corpus", key="corpus")
    bases: dict[str, dict | None] = {}
    for name, data in corpus:
        try:
            bases[name] = fdp.parse_fdp_stats(data, name)
        except InputError:
            bases[name] = None

    def target(name, kind, inp, before):
        exercise_fdp(inp, bases.get(name), before)

    return _loop(
        "fdp",
        count,
        seed,
        len(corpus),
        start,
        lambda i: one_fdp_input(corpus, seed, i),
        target,
        timeout_s=timeout_s,
        max_failures=max_failures,
        save_dir=save_dir,
        progress=progress,
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python tests/smart_fuzz.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=100_000, help="inputs to try per parser (default 100000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="index of the first input")
    ap.add_argument("--only", type=int, metavar="INDEX", help="replay one input (same seed)")
    ap.add_argument(
        "--parser",
        choices=("all", "smart", "fdp"),
        default="all",
        help="smart: smartctl / nvme-cli JSON and snapshots; fdp: saved FDP statistics; all: both (default)",
    )
    ap.add_argument(
        "--corpus",
        action="append",
        metavar="DIR",
        help="folder of seed *.json (repeatable; default: " + ", ".join(map(str, DEFAULT_CORPUS)) + ")",
    )
    ap.add_argument(
        "--fdp-corpus",
        action="append",
        metavar="DIR",
        help="folder of saved FDP statistics files (repeatable; default: "
        + ", ".join(map(str, DEFAULT_FDP_CORPUS))
        + ")",
    )
    ap.add_argument("--byte-share", type=float, default=0.15, help="share of byte-level mutations (default 0.15)")
    ap.add_argument("--timeout", type=float, default=10.0, help="seconds one input may take (default 10)")
    ap.add_argument("--max-rss-mb", type=float, default=1024.0, help="peak memory allowed (default 1024 MiB)")
    ap.add_argument("--save-dir", help="write failing inputs here")
    a = ap.parse_args(argv)
    start, count = (a.only, 1) if a.only is not None else (a.start, a.count)
    failed = False
    if a.parser in ("all", "smart"):
        corpus = load_corpus(a.corpus)
        if a.only is not None:
            name, kind, inp, allow = one_input(corpus, a.seed, a.only, a.byte_share)
            print(f"input {a.only}: {kind} mutation of {name}; interval (allow_no_serial): {allow}")
            print((inp if kind == "bytes" else json.dumps(inp).encode("utf-8", "surrogatepass"))[:2000])
        print(
            f"opsim smart fuzz: seed {a.seed}, inputs {start}..{start + count - 1}, corpus {len(corpus)} documents",
            file=sys.stderr,
        )
        st = run(
            count,
            a.seed,
            corpus,
            start=start,
            byte_share=a.byte_share,
            timeout_s=a.timeout,
            save_dir=a.save_dir,
            progress=lambda n, s: print(f"  {n:,} inputs, {s['failed']} failures", file=sys.stderr, flush=True),
        )
        failed |= _report(st, "", a.max_rss_mb)
    if a.parser in ("all", "fdp"):
        fcorpus = load_fdp_corpus(a.fdp_corpus)
        if a.only is not None:
            name, kind, inp, before = one_fdp_input(fcorpus, a.seed, a.only)
            print(f"FDP input {a.only}: mutation of {name}; interval (as AFTER): {before}")
            print(inp[:2000])
        print(
            f"opsim smart fdp fuzz: seed {a.seed}, inputs {start}..{start + count - 1}, corpus {len(fcorpus)} files",
            file=sys.stderr,
        )
        st = run_fdp(
            count,
            a.seed,
            fcorpus,
            start=start,
            timeout_s=a.timeout,
            save_dir=a.save_dir,
            progress=lambda n, s: print(f"  {n:,} FDP inputs, {s['failed']} failures", file=sys.stderr, flush=True),
        )
        failed |= _report(st, "FDP statistics: ", a.max_rss_mb)
    return 1 if failed else 0


def _report(st: dict, prefix: str, max_rss_mb: float) -> bool:
    """Print a run's failures and summary line; True when it failed or used too much memory."""
    for f in st["failures"]:
        print(f"FAIL {prefix}input {f['index']} ({f['kind']} mutation of {f['seed_file']}): {f['error']}")
    over = st["max_rss_mb"] > max_rss_mb
    print(
        f"{prefix}{st['count']:,} inputs (seed {st['seed']}, {st['bytes_inputs']:,} byte-level) in {st['seconds']} s: "
        f"{st['ok']:,} results, {st['input_errors']:,} input errors, {st['failed']} failures; peak memory "
        f"{st['max_rss_mb']} MiB" + (f" (over the {max_rss_mb} MiB limit)" if over else "")
    )
    return bool(st["failed"]) or over


if __name__ == "__main__":
    sys.exit(main())
