"""``opsim advise --trace`` on traces of different shapes (docs/validation.md, "Advising from a
trace"): for each trace, the OP advised from its fitted workload (the analytic screen) against
the OP advised from replaying it (the simulator), and the WAF each predicts at the advice.

The traces: public excerpts kept under ``tests/fixtures/traces/public/`` (their sources and
licences in that folder's README: small, and said how small), and synthetic traces written by
the core's own generators with a known skew (``opsim trace synth``), the controls whose fit and
advice are known in advance.

    python -m opsim.validation.traces            # the table in docs/validation.md
    python -m opsim.validation.traces --json     # every figure
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

from .. import trace as T
from .._output import markdown_table
from ..planner import advise as A
from ..planner.advise.trace import advise_trace, load_trace
from ..units import fmt_bytes

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
PUBLIC = os.path.join(ROOT, "tests", "fixtures", "traces", "public")

PRESET = "micron-7450-pro-960gb"
MIN_DWPD = "3"
#: the replay's scale model (the advisor's --model-blocks): the smallest, to keep the run short
MODEL_BLOCKS = 512

#: public excerpts: (name, file under PUBLIC, reader options, shape, source)
PUBLIC_TRACES = (
    (
        "TPC-C (OLTP)",
        "tpcc-small.trace.zst",
        {"format": "mqsim"},
        "database / OLTP: 8 KiB random reads and writes",
        "MQSim repository, traces/tpcc-small.trace (CMU-SAFARI/MQSim, MIT licence)",
    ),
)

#: synthetic controls: (name, --skew, commands)
SYNTHETIC = (
    ("synthetic hot-cold 20/80", "hot-cold:20/80", 3_000_000),
    ("synthetic zipf 0.9", "zipf:0.9", 3_000_000),
)


def advise_one(path: str, opts: dict, model_blocks: int = MODEL_BLOCKS) -> dict:
    """``opsim advise --preset PRESET --trace path --min-dwpd 3``'s document (replayed)."""
    drive = A.load_drive(preset=PRESET)
    tg = A.Targets()
    tg.min_dwpd, _ = A.parse_target_number(MIN_DWPD, "min_dwpd")
    tg.dwpd_workload = "the workload given"
    src = load_trace(path, opts, drive)
    return advise_trace(drive, tg, src, model_blocks=model_blocks)


def row(name: str, shape: str, source: str, d: dict) -> dict:
    t = d["trace"]
    c = t["comparison"]
    return {
        "trace": name,
        "shape": shape,
        "source": source,
        "records": t["records"],
        "writes": t["write_ios"],
        "span_bytes": t["span_bytes"],
        "write_footprint_bytes": t["write_footprint_bytes"],
        "fit": t["fit"]["skew"],
        "fit_error": t["fit"]["error"],
        "screen_held_back": c["screen"]["advised_held_back"],
        "screen_waf": c["screen"].get("waf_at_its_pick"),
        "replay_held_back": c["replay"]["advised_held_back"],
        "replay_waf": c["waf_at_advised"]["replay"],
        "screen_waf_at_replay_advice": c["waf_at_advised"]["screen"],
        "notes": t["notes"],
    }


def run(model_blocks: int = MODEL_BLOCKS, only: str | None = None) -> list[dict]:
    rows = []
    for name, f, opts, shape, source in PUBLIC_TRACES:
        if only and only not in name:
            continue
        rows.append(row(name, shape, source, advise_one(os.path.join(PUBLIC, f), opts, model_blocks)))
    with tempfile.TemporaryDirectory() as tmp:
        for name, skew, count in SYNTHETIC:
            if only and only not in name:
                continue
            p = os.path.join(tmp, skew.replace(":", "_").replace("/", "_") + ".iolog")
            span = 64 << 30  # the span stands for the user area
            T.synth(p, skew=skew, span=span, count=count, interval_ns=0)
            shape = f"known skew {skew}, 4 KiB random writes over 64 GiB"
            rows.append(
                row(name, shape, f"opsim trace synth --skew {skew} --count {count:,}", advise_one(p, {}, model_blocks))
            )
    return rows


def markdown(rows: list[dict]) -> str:
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}%"

    def f3(x):
        return "-" if x is None else f"{x:.3f}"

    def size(x):
        return "-" if x is None else fmt_bytes(x)

    return markdown_table(
        [
            "trace",
            "requests (writes)",
            "span / write footprint",
            "fitted",
            "screen: OP held back",
            "screen: WAF there",
            "replay: OP held back",
            "replay: WAF there",
            "screen's WAF at the replay's OP",
            "source",
        ],
        "lrrlrrrrrl",
        (
            [
                r["trace"],
                f"{r['records']:,} ({r['writes']:,})",
                f"{size(r['span_bytes'])} / {size(r['write_footprint_bytes'])}",
                f"{r['fit']} (error {100 * r['fit_error']:.2f} pt)",
                pct(r["screen_held_back"]),
                f3(r["screen_waf"]),
                pct(r["replay_held_back"]),
                f3(r["replay_waf"]),
                f3(r["screen_waf_at_replay_advice"]),
                r["source"],
            ]
            for r in rows
        ),
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m opsim.validation.traces", description=__doc__.split("\n\n")[0])
    p.add_argument("--json", action="store_true", help="every figure as JSON")
    p.add_argument(
        "--model-blocks", type=int, default=MODEL_BLOCKS, help=f"the replay's scale model (default {MODEL_BLOCKS})"
    )
    p.add_argument("--only", help="only the traces whose name contains this")
    a = p.parse_args(argv)
    rows = run(a.model_blocks, a.only)
    print(json.dumps(rows, indent=2) if a.json else markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
