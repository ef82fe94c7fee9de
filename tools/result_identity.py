"""Result JSON of many configs, minus wall-clock fields, to compare two builds bit for bit.

    .venv/bin/python tools/result_identity.py out.json           # in each build's checkout
    .venv/bin/python tools/result_identity.py --diff base.json head.json

    .venv/bin/python tools/result_identity.py --threads 2 out2.json  # every config with run.threads = 2

Configs: every seed preset's and four NVMe presets' scale models under uniform, Zipf and mixed
128 KiB read/write workloads, the hot-cold, sequential, JESD219 and SK hynix workloads
(functional and timed), ``describe`` of every preset, and drives of independent GC pools
(``ftl.gc_scope = "die"`` / ``"plane"``: every policy and workload kind, the peer knobs,
metadata pages, reads, trims, partial pages, a trace, a fio job, phases, SNIA PTS).  The
machine-dependent ``perf`` (wall clock, speed, the threads used) is left out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile

import opsim
import opsim.presets
from opsim.sim import describe

SEEDS = [
    "micron-1100-1tb",
    "micron-1100-1tb-dwa",
    "sandisk-x400-256gb",
    "intel-320-160gb",
    "intel-dc-s3700-200gb",
    "samsung-840-pro-256gb",
    "ocz-vector-256gb",
    "corsair-neutron-240gb",
    "sk-hynix-mobile-64gb",
]
NVME = ["micron-7450-pro-960gb", "samsung-pm9a3-960gb", "kioxia-cm7-r-3840gb", "solidigm-d5-p5336-61440gb"]
RUN = {"seed": 3, "warmup_drive_writes": 0.3, "measure_drive_writes": 0.3, "round_drive_writes": 0.1}
WORKLOADS = (
    {"type": "uniform"},
    {"type": "zipf", "zipf_exponent": 0.9},
    {"type": "uniform", "read_fraction": 0.3, "request_size": "128KiB"},
)


#: ``run.threads`` added to every config run (``--threads N``); None: the config's default
THREADS: list[int | None] = [None]


def strip(x):
    """``x`` without the wall-clock figures and ``perf`` (the machine, the threads used)."""
    if isinstance(x, dict):
        return {
            k: strip(v)
            for k, v in x.items()
            if k != "perf" and not any(w in k for w in ("wall", "elapsed", "per_s", "rate"))
        }
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def _run(cfg: dict):
    if THREADS[0] is not None:
        cfg = cfg | {"run": cfg.get("run", {}) | {"threads": THREADS[0]}}
    try:
        return strip(opsim.simulate(cfg).to_dict())
    except Exception as e:  # a refusal is a result to compare too
        return f"error {type(e).__name__}: {e}"


def _preset_model(name: str, workload: dict) -> dict:
    """The preset's largest scale model (256 to 1 times smaller) that the core accepts."""
    for k in (256, 64, 16, 4, 1):
        cfg = opsim.presets.scale_model(name, k) | {"workload": workload, "run": RUN}
        try:
            describe(cfg)
            return cfg
        except Exception:
            continue
    return cfg


def generate() -> dict:
    out: dict = {}
    for p in SEEDS + NVME:
        for wl in WORKLOADS:
            out[f"{p}/{json.dumps(wl, sort_keys=True)}"] = _run(_preset_model(p, wl))
        out[f"{p}/describe"] = strip(describe({"preset": p}, model_limits=False))
    for kind in ("hot-cold", "sequential", "jesd219", "sk-hynix"):
        kwl: dict = {"type": kind} | ({"hot_fraction": 0.2, "hot_write_fraction": 0.8} if kind == "hot-cold" else {})
        cfg = {"drive": {"user_capacity": "256MiB", "op": 0.1}, "workload": kwl, "run": RUN}
        out[f"{kind}/functional"] = _run(cfg)
        out[f"{kind}/timed"] = _run(cfg | {"timing": {"queue_depth": 8}})
    with tempfile.TemporaryDirectory() as tmp:
        for name, cfg in pool_configs(tmp).items():
            # the temporary directory's name differs from run to run: not a result
            out[f"pools/{name}"] = json.loads(json.dumps(_run(cfg)).replace(tmp, "$TMP"))
    return out


def _trace(tmp: str) -> str:
    """An MSR Cambridge CSV of 20,000 seeded reads and writes, unaligned ones among them."""
    rnd = random.Random(5)
    path = os.path.join(tmp, "t.csv")
    with open(path, "w") as f:
        for i in range(20_000):
            kind = "Read" if rnd.random() < 0.2 else "Write"
            off = rnd.randrange(0, 60 * 2**20 // 512) * 512
            size = rnd.choice([4096, 4096, 8192, 512, 6144, 65536])
            f.write(f"{128166372003061629 + i * 1000},hm,0,{kind},{off},{size},100\n")
    return path


def pool_configs(tmp: str) -> dict:
    """Drives of independent GC pools (die and plane scope): what the parallel driver splits."""
    drive = {"physical_capacity": "256MiB", "op": 0.12, "op_basis": "physical", "pages_per_block": 64, "dies": 4}
    run = {"seed": 5, "warmup_drive_writes": 0.6, "measure_drive_writes": 0.6, "round_drive_writes": 0.2}
    base = {"drive": drive, "ftl": {"gc_scope": "die"}, "run": run}
    job = os.path.join(tmp, "j.fio")
    with open(job, "w") as f:
        f.write("[j]\nrw=randrw\nrwmixread=30\nbssplit=4k/60:8k/30:64k/10\nrandom_distribution=zipf:0.9\n")
    wls = {
        "uniform": {"type": "uniform"},
        "zipf": {"type": "zipf", "zipf_exponent": 0.9},
        "hot-cold": {"type": "hot-cold", "hot_fraction": 0.2, "hot_write_fraction": 0.8},
        "sequential": {"type": "sequential", "request_size": "128KiB"},
        "jesd219": {"type": "jesd219"},
        "sk-hynix": {"type": "sk-hynix"},
        "mixed": {
            "type": "uniform",
            "read_fraction": 0.3,
            "trim_fraction": 0.1,
            "request_size": "6KiB",
            "align": "512B",
        },
        "zoned": {"type": "zoned", "zone_size": "1MiB", "active_zones": 3},
        "trace": {"type": "trace", "trace": {"path": _trace(tmp), "format": "msr", "repeat": True}},
        "fio": {"type": "fio", "job": job},
    }
    out = {f"die/greedy/{k}": base | {"workload": w} for k, w in wls.items()}
    for gc in ("fifo", "cost-benefit", "windowed-greedy", "random", "d-choices"):
        ftl: dict = (
            {"gc_scope": "die", "gc": gc}
            | ({"d": 4} if gc == "d-choices" else {})
            | ({"window": 8} if gc == "windowed-greedy" else {})
        )
        for k in ("uniform", "hot-cold", "mixed"):
            out[f"die/{gc}/{k}"] = base | {"ftl": ftl, "workload": wls[k]}
    plane = drive | {"planes_per_die": 2}
    knobs = {
        "plane-reserve-fill": {"gc_scope": "plane", "gc_reserve": "3 blocks per plane"},
        "plane-shared": {"gc_scope": "plane", "gc_frontier": "shared"},
        "die-meta-streams": {"gc_scope": "die", "meta_writes": 0.07, "streams": 2},
        "die-check": {"gc_scope": "die", "check_invariants": True, "gc_high_watermark": 4},
    }
    for name, knob in knobs.items():
        r = run | ({"precondition_fill": 0.8} if name == "plane-reserve-fill" else {})
        out[name] = {"drive": plane, "ftl": knob, "run": r, "workload": wls["hot-cold"]}
    out["die/phases"] = base | {
        "phase": [
            {"name": "seq", "drive_writes": 0.5, "workload": {"type": "sequential"}},
            {"name": "rand", "ios": 30_000, "workload": {"type": "uniform", "request_size": "8KiB"}},
            {"name": "m", "drive_writes": 0.4, "measure": True, "workload": wls["zipf"]},
        ]
    }
    out["die/snia-pts"] = base | {"workload": {"type": "snia-pts"}, "run": run | {"max_rounds": 6}}
    big = {
        "drive": drive | {"physical_capacity": "1GiB", "planes_per_die": 2},
        "run": run | {"round_drive_writes": 0.5},
    }
    big_run = run | {"warmup_drive_writes": 1.5, "measure_drive_writes": 1.0, "round_drive_writes": 0.5}
    out["die/greedy/uniform-1GiB"] = big | {"ftl": {"gc_scope": "die"}, "workload": wls["uniform"], "run": big_run}
    out["plane/cost-benefit/zipf-1GiB"] = big | {
        "ftl": {"gc_scope": "plane", "gc": "cost-benefit"},
        "workload": wls["zipf"],
    }
    out["die/sector4k"] = base | {
        "drive": drive | {"sector_size": 4096, "page_size": "16KiB"},
        "workload": wls["uniform"],
    }
    return out


def diff(x, y, path: str = "") -> list[str]:
    """Where two documents differ: "+" only in the second, "-" only in the first, "~" changed."""
    if isinstance(x, dict) and isinstance(y, dict):
        out = []
        for k in sorted(set(x) | set(y)):
            if k not in x:
                out.append(f"+{path}.{k}")
            elif k not in y:
                out.append(f"-{path}.{k}")
            else:
                out += diff(x[k], y[k], f"{path}.{k}")
        return out
    if isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        return [d for i, (u, v) in enumerate(zip(x, y)) for d in diff(u, v, f"{path}[{i}]")]
    return [] if x == y else [f"~{path}"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, help="run every config with run.threads = N")
    ap.add_argument("--diff", nargs=2, metavar=("BASE", "HEAD"), help="compare two outputs (exit 1 if they differ)")
    ap.add_argument("out", nargs="?", help="the JSON file to write")
    args = ap.parse_args()
    if args.diff:
        with open(args.diff[0]) as fa, open(args.diff[1]) as fb:
            found = diff(json.load(fa), json.load(fb))
        print("\n".join(found) or "identical")
        return 1 if found else 0
    if not args.out:
        ap.error("give the JSON file to write (or --diff BASE HEAD)")
    THREADS[0] = args.threads
    with open(args.out, "w") as f:
        json.dump(generate(), f, sort_keys=True, indent=0, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
