"""A ratio of two steady WAFs as a figure calibrate fits (``[[ratio]] of = "waf"``): sources
that publish only endurance at several OP levels (one drive's TBW is its P/E budget over its
WAF) give WAF ratios, and the ends of a sweep pin the WAF curve's shape (with the WAF floor)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opsim.calibrate import calibrate, read_inputs
from opsim.calibrate.model import parts, pins_floor, predict
from opsim.errors import InputError

DRIVE = """
[drive]
native = "160GB"
physical = "160GiB"
interface = "sata"
cell = "mlc"
"""


def _write(tmp_path: Path, ratio: str) -> str:
    p = tmp_path / "d.toml"
    p.write_text(DRIVE + "\n[[ratio]]\n" + ratio)
    return str(p)


@pytest.mark.slow
def test_a_waf_ratio_is_the_ratio_of_the_model_s_wafs(tmp_path):
    path = _write(
        tmp_path,
        # the model without a floor says 5.3: a ratio of 4 needs NAND written beyond the data
        'numerator = { user = "160GB" }\ndenominator = { user = "96GB" }\nvalue = 4.0\nof = "waf"\nqueue_depth = 32\n',
    )
    spec, figs = read_inputs(path)
    (f,) = figs
    assert f.kind == "waf_ratio" and f.ref is not None and f.ref.kind == "waf"
    assert "WAF" in f.label() and "relative to" in f.label()
    num, den = parts(f)
    assert (num.kind, den.kind) == ("waf", "waf")
    cal = calibrate(spec, figs, timed_rounds=0)
    m = cal.fitted.model
    (p,) = predict(m, cal.fitted.values, [f])
    a, b = predict(m, cal.fitted.values, [num, den])
    assert p.value == pytest.approx(a.value / b.value)
    # two WAFs at two capacities: the floor is fitted, and meets the ratio
    assert pins_floor(figs, spec.native)
    assert "meta_writes" in [q.name for q in cal.fitted.free] and cal.fitted.values["meta_writes"] > 0.05
    # pulled from 5.3 towards 4 (the floor's prior holds it from meeting 4 exactly)
    assert 4.0 < p.value < 4.8


def test_an_iops_ratio_stays_the_default(tmp_path):
    path = _write(tmp_path, 'numerator = { user = "128GB" }\ndenominator = { user = "160GB" }\nvalue = 3.0\n')
    _, (f,) = read_inputs(path)
    assert f.kind == "steady_ratio" and f.ref is not None and f.ref.kind == "steady_iops"


def test_a_ratio_of_something_else_is_refused_by_key(tmp_path):
    path = _write(tmp_path, 'numerator = { user = "128GB" }\nvalue = 3.0\nof = "latency"\n')
    with pytest.raises(InputError) as e:
        read_inputs(path)
    assert e.value.key == "ratio[0].of" and "latency" in str(e.value)
