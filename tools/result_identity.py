"""Result JSON of many configs, minus wall-clock fields, to compare two builds bit for bit.

    .venv/bin/python tools/result_identity.py out.json           # in each build's checkout
    .venv/bin/python tools/result_identity.py --diff base.json head.json

Configs: every seed preset's and four NVMe presets' scale models under uniform, Zipf and mixed
128 KiB read/write workloads, the hot-cold, sequential, JESD219 and SK hynix workloads
(functional and timed), and ``describe`` of every preset.
"""

from __future__ import annotations

import json
import sys

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


def strip(x):
    """``x`` without the wall-clock figures."""
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if not any(w in k for w in ("wall", "elapsed", "per_s", "rate"))}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def _run(cfg: dict):
    import opsim

    try:
        return strip(opsim.simulate(cfg).to_dict())
    except Exception as e:  # a refusal is a result to compare too
        return f"error {type(e).__name__}: {e}"


def _preset_model(name: str, workload: dict) -> dict:
    """The preset's largest scale model (256 to 1 times smaller) that the core accepts."""
    import opsim.presets
    from opsim.sim import describe

    for k in (256, 64, 16, 4, 1):
        cfg = opsim.presets.scale_model(name, k) | {"workload": workload, "run": RUN}
        try:
            describe(cfg)
            return cfg
        except Exception:
            continue
    return cfg


def generate() -> dict:
    from opsim.sim import describe

    out: dict = {}
    for p in SEEDS + NVME:
        for wl in WORKLOADS:
            out[f"{p}/{json.dumps(wl, sort_keys=True)}"] = _run(_preset_model(p, wl))
        out[f"{p}/describe"] = strip(describe({"preset": p}, model_limits=False))
    for kind in ("hot-cold", "sequential", "jesd219", "sk-hynix"):
        wl = {"type": kind} | ({"hot_fraction": 0.2, "hot_write_fraction": 0.8} if kind == "hot-cold" else {})
        cfg = {"drive": {"user_capacity": "256MiB", "op": 0.1}, "workload": wl, "run": RUN}
        out[f"{kind}/functional"] = _run(cfg)
        out[f"{kind}/timed"] = _run(cfg | {"timing": {"queue_depth": 8}})
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


if __name__ == "__main__":
    if sys.argv[1] == "--diff":
        with open(sys.argv[2]) as fa, open(sys.argv[3]) as fb:
            found = diff(json.load(fa), json.load(fb))
        print("\n".join(found) or "identical")
        sys.exit(1 if found else 0)
    with open(sys.argv[1], "w") as f:
        json.dump(generate(), f, sort_keys=True, indent=0, default=str)
