"""The WAF floor (``ftl.meta_writes``) on a synthetic span sweep (docs/calibrate.md): a drive with
a known floor, its datasheet figures and its steady WAF and 4 KiB random-write IOPS at six spans
given by the core, calibrated from that datasheet and the two end spans with and without the
floor, and the four spans between predicted.  No six-span measurement of a real drive is in the
repository; this checks the mechanism the acceptance line asks of one.

The drive: the Micron 7450 PRO 960 GB datasheet input's fit (no timed rounds) with the floor
added; its WAF curve simulated at the true floor on the whole OP ladder (not interpolated); the
fits use no timed rounds either (the figures are the cost model's bound, efficiency 1).

    python -m opsim.validation.waf_floor        # the table in docs/calibrate.md (a few minutes)
"""

from __future__ import annotations

import sys
from dataclasses import replace

from .._output import markdown_table
from ..calibrate import calibrate, read_inputs
from ..calibrate import curve as cv
from ..calibrate.fit import fit
from ..calibrate.inputs import SIGMA_MEASURED, Figure
from ..calibrate.model import build, predict
from ..presets import INPUTS

#: the spans of the sweep, as fractions of the user capacity; the first and last are fitted
SPANS = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
#: the true floors checked
FLOORS = (0.04, 0.07)


def sweep(floor: float) -> list[dict]:
    """The fits of the drive with ``floor``: for each (without, with the floor) the fitted floor
    and each middle span's WAF and IOPS error against the truth."""
    spec, sheet = read_inputs(str(INPUTS / "micron-7450-pro-960gb.toml"))
    base = calibrate(spec, sheet, timed_rounds=0)
    spans = [int(base.user_bytes * f) // 4096 * 4096 for f in SPANS]
    qd = spec.rand_write_qd

    def figs(s: int) -> list[Figure]:
        return [
            Figure("waf", 1.0, "-", span=s, queue_depth=qd),
            Figure("steady_iops", 1.0, "-", span=s, queue_depth=qd),
        ]

    truth_model = build(spec, figs(spans[0]) + figs(spans[-1]))
    values = dict(base.fitted.values) | {"meta_writes": floor}
    saved = (cv.META_GRID, cv.META_LEVELS)
    cv.META_GRID, cv.META_LEVELS = (0.0, floor, 1.0), tuple(range(len(cv.LADDER)))
    try:
        truth = [tuple(p.value for p in predict(truth_model, values, figs(s))) for s in spans]
        sheet = [replace(f, value=p.value) for f, p in zip(sheet, predict(truth_model, values, sheet))]
    finally:
        cv.META_GRID, cv.META_LEVELS = saved
    points = [
        replace(f, value=v, source="synthetic", sigma=SIGMA_MEASURED)
        for k in (0, -1)
        for f, v in zip(figs(spans[k]), truth[k])
    ]
    rows = []
    for with_floor in (False, True):
        model = build(spec, sheet + points if with_floor else None)
        f = fit(model, sheet + points, timed_rounds=0)
        errs = []
        for s, (w, i) in list(zip(spans, truth))[1:-1]:
            pw, pi = predict(model, f.values, figs(s))
            errs.append((pw.value / w - 1, pi.value / i - 1))
        rows.append({"floor": floor, "fit": with_floor, "fitted": f.values.get("meta_writes"), "errors": errs})
    return rows


def markdown(rows: list[dict]) -> str:
    def pct(xs: list[float]) -> str:
        return " / ".join(f"{x:+.1%}" for x in xs)

    return markdown_table(
        ["true floor", "fit", f"WAF error at {' / '.join(f'{s:.0%}' for s in SPANS[1:-1])}", "IOPS error"],
        "rlll",
        (
            [
                f"{r['floor']:g}",
                f"floor fitted: {r['fitted']:.3f}" if r["fit"] else "without a floor",
                pct([e[0] for e in r["errors"]]),
                pct([e[1] for e in r["errors"]]),
            ]
            for r in rows
        ),
    )


def main(argv=None) -> int:
    print(markdown([r for m in FLOORS for r in sweep(m)]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
