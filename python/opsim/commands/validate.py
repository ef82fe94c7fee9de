"""``opsim validate``: simulated figures beside published models (docs/validation.md)."""

from __future__ import annotations

import sys

from .._output import Output, atomic_write_text, table


def register(sub, common):
    p = sub.add_parser("validate", parents=[common],
                       help="run the validation suite: simulator vs analytic models")
    p.add_argument("--suite", choices=["oracles"], default="oracles")
    p.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown to FILE")
    p.set_defaults(func=run)


def _progress(i, n):
    if sys.stderr.isatty():
        sys.stderr.write(f"\r  {i}/{n} cases")
        if i == n:
            sys.stderr.write("\n")
        sys.stderr.flush()


def run(args) -> Output:
    from ..validation import markdown, run_oracles

    rows = run_oracles(_progress)
    if args.markdown:
        atomic_write_text(args.markdown, markdown(rows))
    text = table(["case", "OP", "OP seen by GC", "WAF sim", "WAF model", "error"],
                 [[r["case"], f"{100 * r['op_user']:.0f}%", f"{100 * r['op_effective']:.3f}%",
                   f"{r['waf_sim']:.4f}", f"{r['waf_model']:.4f}", f"{100 * r['error']:+.2f}%"] for r in rows],
                 title="Simulator vs analytic models (uniform random 4 KiB writes, >= 16,000 blocks)")
    worst = max(abs(r["error"]) for r in rows)
    text += f"\nworst error {100 * worst:.2f}% over {len(rows)} cases"
    return Output(data={"suite": args.suite, "cases": rows, "worst_error": worst}, text=text)
