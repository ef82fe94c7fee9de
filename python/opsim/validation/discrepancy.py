"""The discrepancy of the uncertainty model (docs/calibrate.md, "The discrepancy"): how far
``opsim calibrate``'s predictions of real drives' figures it was not fitted to fall from the
published measurements, from the real-drives suite (:mod:`.real_drives`).

    python -m opsim.validation.discrepancy           # the rows and their spread
    python -m opsim.validation.discrepancy --write   # rewrite python/opsim/calibrate/discrepancy.toml
    python -m opsim.validation.discrepancy --check   # exit 1 when the stored spread is off by more than CHECK_REL
    python -m opsim.validation.discrepancy --all     # every fit's rows and their spread, for comparison

The rows: every held-out prediction of a fit of two or more figures, at least one of them a
steady state, of every case but the drives the uncertainty model is judged on (:data:`JUDGED`:
their measured WAFs are predicted with the discrepancy, never used to set it).  Why two: the
discrepancy is what the model cannot reproduce of a drive whose parameters the figures pin
(the structural error the profile adds to each datasheet figure); the profile itself carries
what the figures leave loose (it refits every other parameter at each NAND capacity).  A fit
of one figure pins no parameter pair (the SanDisk X400's 0% point is met by any split of its
cost between the program time and the controller's), so its far predictions miss by what the
priors of the loose parameters allow (the X400's 28% from its 0% point: 48-70% high; with the
28% point too, the 7% prediction is within 12%): that is the uncertainty the profile
computes, and counting it again here would count it twice.  A fit of a datasheet without a
steady-state figure (the X400's client datasheets give a fresh-out-of-box burst) pins no
steady state at all and is left out too.  ``--all`` prints every fit's rows and their spread,
for comparison.

The spread is the root mean square of log(predicted / measured) over the rows
(:func:`opsim.calibrate.uncertainty.spread`); ``opsim calibrate`` reads the stored rows
(``python/opsim/calibrate/discrepancy.toml``), so a calibration does not rerun the suite.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import tomli_w

from ..calibrate.inputs import read_datasheet
from ..calibrate.uncertainty import DISCREPANCY, DISCREPANCY_DATA, spread
from . import real_drives as rd

#: the cases whose measured WAF the uncertainty model is judged on (issue 26): left out
JUDGED = ("solidigm-d7-p5520", "micron-7450")
#: --check passes while the stored spread is within this share of a fresh run's (a fit's last
#: bits and small model changes move single rows; a change of the model that moves the spread
#: more must rewrite the file)
CHECK_REL = 0.10


def _data() -> Path:
    return DISCREPANCY_DATA


#: a fit is counted when it holds at least this many figures (see the module's text)
LEAST_FIGURES = 2


def _datasheet_kinds(case: rd.Case, fit: rd.Fit) -> list[str]:
    """The kinds of the datasheet figures ``fit`` fits (none when it fits no datasheet)."""
    if not fit.datasheet:
        return []
    if case.datasheet:
        return [k for k in case.datasheet if k.endswith(("_iops", "_mbps"))]
    _, figs = read_datasheet(str(rd._inputs_dir() / f"{case.input}.toml"))
    return [f.kind for f in figs]


def _steady(case: rd.Case, fit: rd.Fit) -> bool:
    """A steady state among the fit's figures: a measured point, or a datasheet's steady
    random writes."""
    return bool(fit.points) or any(k in ("steady_iops", "rand_write_iops") for k in _datasheet_kinds(case, fit))


def counted(case: rd.Case, fit: rd.Fit, every: bool = False) -> bool:
    """Two or more figures, one of them a steady state (``every``: one figure is enough)."""
    least = 1 if every else LEAST_FIGURES
    return _steady(case, fit) and len(fit.points) + len(_datasheet_kinds(case, fit)) >= least


def cases(every: bool = False) -> list[rd.Case]:
    """The suite's cases and the fits the discrepancy is made of (``every``: every fit with a
    steady state, one-figure fits too, for comparison)."""
    out = []
    for c in rd.load():
        if any(c.id.startswith(j) for j in JUDGED):
            continue
        fits = tuple(f for f in c.fits if counted(c, f, every))
        if fits:
            out.append(replace(c, fits=fits))
    return out


def rows(progress=None, every: bool = False) -> list[dict]:
    """The held-out predictions (case, fit, figure, measured, predicted)."""
    return [
        {k: r[k] for k in ("case", "fit", "figure", "what", "measured", "predicted")}
        for r in rd.run(cases(every), progress)
    ]


def document(rs: list[dict]) -> dict:
    """The file's document: each prediction to 6 significant digits (more says nothing of a
    model good to a few percent), the spread computed from the rows as stored."""
    rs = [r | {"predicted": float(f"{r['predicted']:.6g}")} for r in rs]
    return {
        "about": (
            "written by `python -m opsim.validation.discrepancy --write`: opsim calibrate's held-out predictions "
            "of the real-drives suite (python/opsim/validation/real_drives.toml; sources there), every fit of two "
            "or more figures with a steady state among them, the D7-P5520 and 7450 cases left out; the discrepancy "
            "is their root mean square log error (docs/calibrate.md, 'The discrepancy')"
        ),
        "spread": round(spread(rs), 6),
        "row": rs,
    }


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv not in ([], ["--write"], ["--check"], ["--all"]):
        print("usage: python -m opsim.validation.discrepancy [--write | --check | --all]", file=sys.stderr)
        return 2

    def progress(i, n, case, fit):
        if case is not None:
            print(f"[{i + 1}/{n}] {case.id}: {fit.name}", file=sys.stderr)

    rs = rows(progress, every=argv == ["--all"])
    new = spread(rs)
    for r in rs:
        print(f"{r['case']:24s} {r['fit']:14s} {r['figure']:18s} {r['measured']:>12.4g} {r['predicted']:>12.4g}")
    print(
        f"spread (root mean square log error) of {len(rs)} held-out predictions: {new:.4f}; stored: {DISCREPANCY:.4f}"
    )
    if argv == ["--write"]:
        _data().write_text(tomli_w.dumps(document(rs)))
        print(f"written: {_data()}")
    if argv == ["--check"] and abs(new / DISCREPANCY - 1) > CHECK_REL:
        print(f"the stored discrepancy is off by more than {CHECK_REL:.0%}: rewrite it (--write)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
