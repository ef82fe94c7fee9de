"""The built-in presets' fitted values, produced by ``opsim calibrate`` from checked-in inputs.

Every fitted number in a preset comes from one mechanism: ``crates/opsim-core/presets/inputs/
NAME.toml`` (the drive's estimates in ``[model]``, the published figures it is fitted to)
calibrated by :func:`opsim.calibrate.calibrate`.  A family shares one fit: an input with
``[calibration] fit_from = "OTHER"`` takes OTHER's fitted values (the SanDisk X400 capacities
take the 256 GB drive's).  This module rewrites the fitted keys of the preset files (values and
sources) and checks that the checked-in presets are what their inputs produce, at the precision
a drive file stores a fitted figure (:mod:`.stored`: a fit's last bits differ by CPU, and a
figure on a rounding boundary can round either way on two machines)::

    python -m opsim.calibrate.presets --check      # exit 1 when a preset differs beyond that precision
    python -m opsim.calibrate.presets --write      # rewrite the fitted keys of every preset (this machine's)
    python -m opsim.calibrate.presets --table      # the fit table of the presets written whole (docs/calibrate.md)
"""

from __future__ import annotations

import re
import sys
import tomllib
from functools import cache

import tomli_w

from .._output import markdown_table
from ..presets import INPUTS
from . import calibrate, read_inputs, timed
from .stored import differences, interval_text

ROOT = INPUTS.parent


def preset_inputs() -> list[str]:
    """Names of the presets built from an input: every input that has figures to fit or a
    family fit to take (an input of no figures, like one whose datasheet could not be found,
    makes no preset)."""
    out = []
    for p in sorted(INPUTS.glob("*.toml")):
        doc = tomllib.loads(p.read_text())
        if doc.get("datasheet") or doc.get("point") or doc.get("ratio") or doc.get("calibration", {}).get("fit_from"):
            out.append(p.stem)
    return out


def _whole(name: str) -> bool:
    """A preset written whole by calibrate (``[calibration] whole = true``, or an input without
    ``[model]``: today's drives, from their datasheets and the estimates their ``[model]``
    gives with sources); the seed presets keep their hand-written estimates and sources, and
    only their fitted keys are rewritten."""
    doc = tomllib.loads((INPUTS / f"{name}.toml").read_text())
    return bool(doc.get("calibration", {}).get("whole", "model" not in doc))


@cache
def calibration(name: str):
    """The calibration of preset ``name``'s checked-in input (computed once per process)."""
    return calibrate(*read_inputs(str(INPUTS / f"{name}.toml")))


def _fit_from(name: str) -> str | None:
    doc = tomllib.loads((INPUTS / f"{name}.toml").read_text())
    return doc.get("calibration", {}).get("fit_from")


@cache
def fitted(name: str) -> tuple[tuple[str, float, str], ...]:
    """(key, value, source) of each fitted parameter of preset ``name``, from its input."""
    parent = _fit_from(name)
    if parent:
        return tuple(
            (
                k,
                v,
                src
                if src.startswith("fitted (family")
                else f"fitted (family, with {parent}): {src.removeprefix('fitted: ')}",
            )
            for k, v, src in fitted(parent)
        )
    cal = calibration(name)
    command = f"`opsim calibrate --datasheet crates/opsim-core/presets/inputs/{name}.toml`"
    out = []
    for p in cal.fitted.free:
        figs = "; ".join(sorted({f.source for f in cal.fitted.figures}))
        lo, hi = cal.fitted.interval(p)
        out.append(
            (p.key, cal.fitted.values[p.name], f"fitted: {p.what}, to {figs} (95%: {interval_text(lo, hi)}); {command}")
        )
    return tuple(out)


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(name: str) -> str:
    """Preset ``name``'s file: written whole by calibrate (:func:`_whole`), or the checked-in
    file with its fitted keys (values and sources) set from its input."""
    if _whole(name):
        return tomli_w.dumps(calibration(name).drive_toml())
    text = (ROOT / f"{name}.toml").read_text()
    for key, value, source in fitted(name):
        section, k = key.split(".", 1)
        text, n = re.subn(rf'(?m)^"{re.escape(key)}" = .*$', f'"{key}" = {_toml_str(source)}', text)
        if n != 1:
            raise ValueError(f"{name}: no source line for {key}")
        block = re.search(rf"(?ms)^\[{section}\]\n(.*?)(?=^\[|\Z)", text)
        if block is None:
            raise ValueError(f"{name}: no [{section}] table")
        shown = f"{int(value)}" if key == "drive.physical_capacity" else f"{value:.2f}"
        body, m = re.subn(rf"(?m)^{re.escape(k)} = .*$", f"{k} = {shown}", block.group(1))
        if m != 1:
            raise ValueError(f"{name}: no {key} value")
        text = text[: block.start(1)] + body + text[block.end(1) :]
    return text


def fit_table() -> str:
    """Each preset written whole against its own datasheet: every figure, the fit's value (the
    cost model's bound at the fitted values times the efficiency of the last timed run), the
    event model's figure on the preset as stored (a timed run of the figure's condition), their
    errors, the busiest resource and the parameters the figures fitted (docs/calibrate.md,
    "Presets of today's drives")."""
    rows = []
    for name in (n for n in preset_inputs() if _whole(n)):
        cal = calibration(name)
        report = cal.fit_report()
        fitted = ", ".join(report["fitted"])
        for i, (f, r) in enumerate(zip(cal.fitted.figures, report["figures"])):
            event = timed.run(cal.config(), f, cal.user_bytes).iops
            rows.append(
                (
                    f"`{name}`" if i == 0 else "",
                    r["figure"],
                    f"{r['observed']:,.0f}",
                    f"{r['model']:,.0f} ({r['error']:+.1%})",
                    f"{event:,.0f} ({event / r['observed'] - 1:+.1%})",
                    r["bottleneck"] or "",
                    fitted if i == 0 else "",
                )
            )
    headers = ["preset", "figure", "datasheet", "fit (error)", "event model (error)", "bound by", "fitted"]
    return markdown_table(headers, "llrrrll", rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--table"]:
        print(fit_table())
        return 0
    if argv not in (["--check"], ["--write"]):
        print("usage: python -m opsim.calibrate.presets --check | --write | --table", file=sys.stderr)
        return 2
    differ = []
    for name in preset_inputs():
        new = render(name)
        path = ROOT / f"{name}.toml"
        if argv == ["--write"] and (not path.exists() or new != path.read_text()):
            differ.append(name)
            path.write_text(new)
        elif argv == ["--check"] and (
            not path.exists() or differences(tomllib.loads(new), tomllib.loads(path.read_text()))
        ):
            differ.append(name)
    verb = "rewritten" if argv == ["--write"] else "differ from their inputs' fit"
    print(f"{len(differ)} of {len(preset_inputs())} presets {verb}" + (f": {', '.join(differ)}" if differ else ""))
    return 1 if differ and argv == ["--check"] else 0


if __name__ == "__main__":
    sys.exit(main())
