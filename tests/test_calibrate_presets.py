"""One mechanism for every fitted number: each built-in preset with fitted values is what
``opsim calibrate`` makes of its checked-in input (crates/opsim-core/presets/inputs/)."""

from __future__ import annotations

import tomllib

import pytest

from opsim.calibrate import presets as cp


def test_every_fitted_preset_has_an_input():
    fitted = []
    for path in sorted(cp.ROOT.glob("*.toml")):
        doc = tomllib.loads(path.read_text())
        if any(str(v).startswith("fitted") for v in doc["preset"]["sources"].values()):
            fitted.append(path.stem)
    assert fitted and set(fitted) <= set(cp.preset_inputs()), set(fitted) - set(cp.preset_inputs())


@pytest.mark.parametrize("name", cp.preset_inputs())
def test_checked_in_preset_is_what_its_input_produces(name):
    assert cp.render(name) == (cp.ROOT / f"{name}.toml").read_text(), (
        f"{name}: the checked-in preset differs from its input's calibration; "
        "run `python -m opsim.calibrate.presets --write` and review the change"
    )


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
