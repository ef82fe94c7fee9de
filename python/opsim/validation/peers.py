"""Peer parity (docs/peers.md): opsim configured like MQSim and like a textbook greedy
simulator, side by side, with the same drive and workloads.

- ``textbook_greedy`` is an independent compact-in-place greedy simulator (numpy, no opsim
  code): when the write block is full, the block with the fewest valid pages is read,
  erased and rewritten in place with its valid pages, and host writes fill the rest.  It is
  the oracle for ``ftl.gc_frontier = "shared"``.
- ``table`` runs MQSim's 8 GiB drive (examples/mqsim-8gib.toml) at OP 7/12/28/50% (MQSim's
  (T - U) / T) under uniform random writes and hot/cold splits, in three opsim set-ups:
  opsim's defaults, MQSim-like (per-plane GC and reserve, 90% fill) and textbook (shared
  frontier), next to the greedy mean field and MQSim's published figures.

    python -m opsim.validation.peers          # the markdown tables (about 2 minutes)
"""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path

import numpy as np

from .. import models
from ..sim import simulate

ROOT = Path(__file__).resolve().parents[3]
MQSIM_EXAMPLE = ROOT / "examples" / "mqsim-8gib.toml"

#: MQSim's WAF on its 8 GiB drive, uniform 4 KiB random writes, greedy, QD32, by OP (T-U)/T
#: (the figures issue 16 quotes from a side-by-side run; no other MQSim output is known)
MQSIM_PUBLISHED = {0.07: 7.647, 0.28: 2.011}

OPS = (0.07, 0.12, 0.28, 0.50)
#: (share of writes, share of the logical space) of the hot part; None: uniform
WORKLOADS: tuple[tuple[float, float] | None, ...] = (None, (0.6, 0.4), (0.8, 0.2), (0.9, 0.1), (0.95, 0.05))


def workload_name(hot: tuple[float, float] | None) -> str:
    return "uniform" if hot is None else f"hot/cold {round(hot[0] * 100)}/{round(hot[1] * 100)}"


def textbook_greedy(
    blocks: int,
    pages_per_block: int,
    user_pages: int,
    hot: tuple[float, float] | None = None,
    warmup_drive_writes: float = 4.0,
    measure_drive_writes: float = 4.0,
    seed: int = 1,
) -> float:
    """WAF of compact-in-place greedy GC (one write block, no free pool) over the measured
    drive writes, after a sequential fill and the warm-up.  ``hot`` = (share of writes, share
    of logical pages) of the hot part, the first pages of the logical space."""
    if not 0 < user_pages < blocks * pages_per_block:
        raise ValueError("user_pages must leave some spare")
    rng = np.random.default_rng(seed)
    n_blk, ppb, users = blocks, pages_per_block, user_pages
    l2p = np.arange(users, dtype=np.int64)
    p2l = np.full(n_blk * ppb, -1, dtype=np.int64)
    p2l[:users] = np.arange(users)
    valid = np.clip(users - np.arange(n_blk) * ppb, 0, ppb).astype(np.int64)
    active, nxt = users // ppb, users % ppb
    copies = 0

    def lpns(n: int) -> list[int]:
        if hot is None:
            return rng.integers(0, users, n).tolist()
        n_hot = max(1, int(users * hot[1]))
        is_hot = rng.random(n) < hot[0]
        return np.where(is_hot, rng.integers(0, n_hot, n), rng.integers(n_hot, users, n)).tolist()

    def run(n: int) -> None:
        nonlocal active, nxt, copies
        for lpn in lpns(n):
            old = l2p[lpn]
            valid[old // ppb] -= 1
            p2l[old] = -1
            if nxt == ppb:
                cand = valid.copy()
                cand[active] = ppb + 1
                victim = int(np.argmin(cand))
                pages = p2l[victim * ppb : (victim + 1) * ppb]
                live = pages[pages >= 0].copy()
                if len(live) >= ppb:
                    raise RuntimeError("no block has an invalid page: the data does not fit")
                p2l[victim * ppb : (victim + 1) * ppb] = -1
                p2l[victim * ppb : victim * ppb + len(live)] = live
                l2p[live] = np.arange(victim * ppb, victim * ppb + len(live))
                copies += len(live)
                active, nxt = victim, len(live)
            ppn = active * ppb + nxt
            l2p[lpn] = ppn
            p2l[ppn] = lpn
            valid[active] += 1
            nxt += 1

    run(int(warmup_drive_writes * users))
    before = copies
    n = int(measure_drive_writes * users)
    run(n)
    return (n + copies - before) / n


def mqsim_config(op: float, hot: tuple[float, float] | None = None) -> dict:
    """examples/mqsim-8gib.toml at OP ``op`` (T-U)/T, under ``hot`` (None: uniform)."""
    cfg = tomllib.loads(MQSIM_EXAMPLE.read_text())
    cfg["drive"]["op"] = op
    if hot is not None:
        cfg["workload"].update(type="hot-cold", hot_write_fraction=hot[0], hot_fraction=hot[1])
    return cfg


def setups(op: float, hot: tuple[float, float] | None) -> dict[str, dict]:
    """The three opsim set-ups of the same drive and workload."""
    mq = mqsim_config(op, hot)
    default = copy.deepcopy(mq)
    for key in ("dies", "planes_per_die"):
        default["drive"].pop(key)
    default["ftl"] = {"gc": "greedy"}
    default["run"].pop("precondition_fill")
    textbook = copy.deepcopy(default)
    textbook["ftl"]["gc_frontier"] = "shared"
    return {"opsim": default, "mqsim-like": mq, "textbook": textbook}


def table(ops=OPS, workloads=WORKLOADS) -> list[dict]:
    """One row per OP and workload: each set-up's WAF, the greedy mean field (uniform) and
    MQSim's published figure where there is one."""
    rows = []
    for op in ops:
        for hot in workloads:
            row: dict = {"op": op, "workload": workload_name(hot)}
            for name, cfg in setups(op, hot).items():
                r = simulate(cfg).to_dict()
                row[name] = r["waf"]
                if name == "opsim":
                    ppb = r["drive"]["pages_per_block"]
                    row["mean_field"] = models.waf_greedy(r["op"]["effective"], ppb) if hot is None else None
            row["mqsim"] = MQSIM_PUBLISHED.get(op) if hot is None else None
            rows.append(row)
    return rows


def textbook_check(workloads=WORKLOADS, fill: float = 0.875) -> list[dict]:
    """opsim's shared frontier against the independent textbook simulator on a small drive
    (512 blocks of 128 pages, ``fill`` of the NAND holding data)."""
    blocks, ppb = 512, 128
    user_pages = int(blocks * ppb * fill)
    rows = []
    for hot in workloads:
        cfg: dict = {
            "drive": {
                "physical_capacity": blocks * ppb * 4096,
                "user_capacity": user_pages * 4096,
                "page_size": "4KiB",
                "pages_per_block": ppb,
            },
            "ftl": {"gc": "greedy", "gc_frontier": "shared"},
            "workload": {"type": "uniform", "request_size": "4KiB"},
            "run": {"warmup_drive_writes": 4, "measure_drive_writes": 4},
        }
        if hot is not None:
            cfg["workload"].update(type="hot-cold", hot_write_fraction=hot[0], hot_fraction=hot[1])
        separate = copy.deepcopy(cfg)
        separate["ftl"].pop("gc_frontier")
        rows.append(
            {
                "workload": workload_name(hot),
                "shared": simulate(cfg).waf,
                "textbook": textbook_greedy(blocks, ppb, user_pages, hot),
                "separate": simulate(separate).waf,
            }
        )
    return rows


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def main() -> None:
    print("| OP (T-U)/T | workload | opsim defaults | opsim MQSim-like | opsim textbook | mean field | MQSim |")
    print("|---|---|---|---|---|---|---|")
    for r in table():
        print(
            f"| {r['op']:.0%} | {r['workload']} | {_fmt(r['opsim'])} | {_fmt(r['mqsim-like'])} | "
            f"{_fmt(r['textbook'])} | {_fmt(r['mean_field'])} | {_fmt(r['mqsim'])} |"
        )
    print()
    print("| workload (12.5% spare, 512 x 128 pages) | opsim shared | textbook simulator | opsim separate |")
    print("|---|---|---|---|")
    for r in textbook_check():
        print(f"| {r['workload']} | {r['shared']:.3f} | {r['textbook']:.3f} | {r['separate']:.3f} |")


if __name__ == "__main__":
    main()
