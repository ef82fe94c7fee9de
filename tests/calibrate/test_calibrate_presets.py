"""One mechanism for every fitted number: each built-in preset with fitted values is what
``opsim calibrate`` makes of its checked-in input (crates/opsim-core/presets/inputs/)."""

from __future__ import annotations

import math
import tomllib
from decimal import Decimal

import numpy as np
import pytest

from opsim.calibrate import presets as cp
from opsim.calibrate import stored


def test_every_fitted_preset_has_an_input():
    fitted = []
    for path in sorted(cp.ROOT.glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        if any(str(v).startswith("fitted") for v in doc["preset"]["sources"].values()):
            fitted.append(path.stem)
    assert fitted and set(fitted) <= set(cp.preset_inputs()), set(fitted) - set(cp.preset_inputs())


def _differences(name: str) -> list[str]:
    return stored.differences(tomllib.loads(cp.render(name)), tomllib.loads((cp.ROOT / f"{name}.toml").read_text()))


@pytest.mark.slow
@pytest.mark.parametrize("name", cp.preset_inputs())
def test_checked_in_preset_is_what_its_input_produces(name):
    """At the stored precision (opsim.calibrate.stored): a fit's last bits are the CPU's."""
    assert _differences(name) == [], (
        f"{name}: the checked-in preset differs from its input's calibration; "
        "run `python -m opsim.calibrate.presets --write` and review the change"
    )


def _digits(v: float) -> int:
    return len(Decimal(repr(v)).normalize().as_tuple().digits)


def assert_stored_bounds(intervals: dict) -> None:
    """Each bound has no more significant digits than the stored rule gives it (one more for a
    width that rounding carried over a power of ten): never a raw float's 15-17."""
    for key, (lo, hi) in intervals.items():
        for v in (lo, hi):
            allowed = math.floor(math.log10(abs(v))) - stored._exponent(v, lo, hi) + 1 if v else 1
            assert _digits(v) <= allowed + 1, (key, lo, hi)


@pytest.mark.parametrize("name", cp.preset_inputs())
def test_presets_store_fitted_figures_at_their_precision(name):
    """Interval bounds at 4 significant digits (more only for a narrow interval), never the
    17 digits of a float whose last ones the machine's BLAS chose; values at 0.01."""
    doc = tomllib.loads((cp.ROOT / f"{name}.toml").read_text())
    cal = doc["preset"].get("calibration", {})
    assert_stored_bounds(cal.get("intervals_95", {}))
    for key, source in doc["preset"]["sources"].items():
        section, k = key.split(".", 1)
        if source.startswith("fitted") and isinstance(doc[section][k], float):
            assert doc[section][k] == round(doc[section][k], 2), key
    if "pe_cycles" in cal:
        assert cal["pe_cycles"] == round(cal["pe_cycles"], 1)


#: presets whose calibration the last-bits test repeats: a whole one (datasheet) and a seed
PERTURBED = ("micron-7450-pro-960gb", "micron-1100-1tb")


@pytest.fixture
def fresh_calibrations():
    """Calibrations made after the test's own clear are fresh, and none outlives the test (the
    unperturbed one it starts from may be the process's: a calibration is deterministic)."""
    yield
    cp.calibration.cache_clear()
    cp.fitted.cache_clear()


@pytest.mark.slow
@pytest.mark.parametrize("name", PERTURBED)
def test_a_fit_that_differs_in_its_last_bits_still_matches(name, monkeypatch, fresh_calibrations):
    """Another CPU's BLAS (another OpenBLAS kernel or thread count) changes a fit's last bits:
    the covariance a few ulps larger here.  The raw intervals move, the preset does not."""
    before = [(p["low"], p["high"]) for p in cp.calibration(name).parameters() if p["low"] is not None]
    cp.calibration.cache_clear()
    cp.fitted.cache_clear()
    pinv = np.linalg.pinv
    monkeypatch.setattr(np.linalg, "pinv", lambda a, *k, **kw: pinv(a, *k, **kw) * (1 + 2.0**-48))
    after = [(p["low"], p["high"]) for p in cp.calibration(name).parameters() if p["low"] is not None]
    assert before != after, "the perturbation did not reach the intervals"
    assert _differences(name) == []


@pytest.mark.parametrize("name", cp.preset_inputs())
def test_given_values_of_the_input_are_the_presets(name):
    """The preset's other values are the input's [model] and [drive] values, with their sources."""
    inp = tomllib.loads((cp.INPUTS / f"{name}.toml").read_text())
    pre = tomllib.loads((cp.ROOT / f"{name}.toml").read_text())
    for key, value in inp.get("model", {}).items():
        if key == "sources":
            continue
        section, k = key.split(".", 1)
        assert pre[section][k] == value, key
        assert pre["preset"]["sources"][key] == inp["model"]["sources"][key], key
