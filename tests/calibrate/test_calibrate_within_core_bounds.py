"""Every value calibrate may try lies inside what the core accepts: the fit's parameter ranges
are checked against the core's own bounds (docs/timed.md, "Bounds"), so no trial config of any
drive is refused half-way through a fit."""

from __future__ import annotations

import math

import pytest

from opsim.calibrate import model as calibrate_model
from opsim.calibrate.inputs import read_datasheet
from opsim.calibrate.presets import INPUTS, preset_inputs
from opsim.errors import ConfigError
from opsim.sim import describe


def _ends(p: calibrate_model.Param) -> list[float]:
    return [v for v in (p.lower, p.upper) if math.isfinite(v) and (v > 0 or not p.log)]


@pytest.mark.parametrize("name", preset_inputs())
def test_every_fitted_range_is_inside_the_cores_bounds(name):
    path = str(INPUTS / f"{name}.toml")
    spec, _figures = read_datasheet(path)
    m = calibrate_model.build(spec)
    priors = {p.name: p.prior for p in m.params}
    timing = [p for p in m.params if p.key.startswith("timing.")]
    assert timing, "a datasheet with every timing value given fits nothing here"
    for p in timing:
        for v in _ends(p):
            try:
                describe(m.config(priors | {p.name: v}), model_limits=False)
            except ConfigError as e:  # pragma: no cover - the failure this test exists for
                pytest.fail(f"{path}: {p.key} = {v:g} (the fit's range {p.lower:g}..{p.upper:g}) is refused: {e}")


def test_an_unbounded_range_is_still_refused_past_the_cores_bound():
    """The check above can fail: a value past the core's bound is refused by describe."""
    spec, _ = read_datasheet(str(INPUTS / f"{preset_inputs()[0]}.toml"))
    m = calibrate_model.build(spec)
    cfg = m.config({p.name: p.prior for p in m.params})
    cfg["timing"]["t_erase_us"] = 1e15
    with pytest.raises(ConfigError, match="t_erase_us"):
        describe(cfg, model_limits=False)


@pytest.mark.parametrize("interface", ["sata", "nvme"])
@pytest.mark.parametrize("cell", ["slc", "mlc", "tlc", "qlc"])
def test_a_bare_datasheets_ranges_are_inside_the_cores_bounds(tmp_path, interface, cell):
    """A datasheet that gives no timing: every timing value is fitted from the core's defaults."""
    ds = tmp_path / "ds.toml"
    ds.write_text(
        f'[drive]\nname = "bare"\nnative = "480GB"\ninterface = "{interface}"\ncell = "{cell}"\n'
        "[datasheet]\nrand_write_iops = 20000\n"
    )
    spec, _ = read_datasheet(str(ds))
    m = calibrate_model.build(spec)
    priors = {p.name: p.prior for p in m.params}
    for p in m.params:
        for v in _ends(p):
            try:
                describe(m.config(priors | {p.name: v}), model_limits=False)
            except ConfigError as e:  # pragma: no cover - the failure this test exists for
                pytest.fail(f"{p.key} = {v:g} (the fit's range {p.lower:g}..{p.upper:g}) is refused: {e}")
