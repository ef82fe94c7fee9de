"""The speed of `opsim trace profile` on a large MSR trace (BENCHMARKS.md, issue 28).

    python tools/profile_bench.py --records 100000000 --trace /tmp/profile-100M.csv

writes (once; kept when it exists with the same size) an MSR Cambridge CSV of ``--records``
requests: 4 KiB writes (a fifth of them reads) over a ``--span`` of offsets, 80% of the
writes to a hot fifth of it (hot-cold 20/80), then profiles it once (the core's pass, no
fit) and prints records per wall second and per CPU second (the process's user + system
time: what the pass costs when other jobs share the cores), the load average and the
machine as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import time

import numpy as np

from opsim import trace_profile
from opsim.units import parse_size

CHUNK = 1_000_000


def write_trace(path: str, n: int, span_blocks: int, seed: int = 28) -> None:
    rng = np.random.default_rng(seed)
    t0 = 128166372003061629
    hot = span_blocks // 5
    tmp = path + ".part"
    with open(tmp, "w") as f:
        for start in range(0, n, CHUNK):
            k = min(CHUNK, n - start)
            is_hot = rng.random(k) < 0.8
            blocks = np.where(is_hot, rng.integers(0, hot, k), rng.integers(hot, span_blocks, k))
            kind = np.where(rng.random(k) < 0.2, "Read", "Write")
            ts = t0 + np.arange(start, start + k) * 1000
            f.write(
                "".join(
                    f"{t},hm,0,{c},{o},4096,100\n"
                    for t, c, o in zip(ts.tolist(), kind.tolist(), (blocks * 4096).tolist())
                )
            )
    os.replace(tmp, path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=100_000_000)
    ap.add_argument("--span", default="256GiB", help="offsets written (default 256GiB)")
    ap.add_argument("--trace", default="/tmp/opsim-profile-bench.csv", help="the trace file (made if missing)")
    args = ap.parse_args()
    span_blocks = parse_size(args.span) // 4096
    made = False
    if not os.path.exists(args.trace) or _records_of(args.trace) != args.records:
        t = time.perf_counter()
        write_trace(args.trace, args.records, span_blocks)
        made = True
        print(f"wrote {args.trace} in {time.perf_counter() - t:.0f} s", flush=True)
    load_before = os.getloadavg()
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    p = trace_profile.profile(args.trace, format="msr")
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    out = {
        "records": p.records,
        "wall_s": wall,
        "records_per_s": p.records / wall,
        "cpu_s": cpu,
        "records_per_cpu_s": p.records / cpu,
        "bytes": os.path.getsize(args.trace),
        "written_blocks": p.written_blocks,
        "memory_bytes": p.data["memory_bytes"],
        "load_average_before": load_before,
        "load_average_after": os.getloadavg(),
        "cpu": _cpu(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "trace_made_now": made,
    }
    print(json.dumps(out, indent=2))


def _records_of(path: str) -> int:
    with open(path, "rb") as f:
        return sum(buf.count(b"\n") for buf in iter(lambda: f.read(1 << 24), b""))


def _cpu() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


if __name__ == "__main__":
    main()
