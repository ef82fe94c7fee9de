"""Oracle tests: the functional simulator against published analytic models.

Uniform random single-page writes, drives of at least 16,000 blocks, warmed up past the
SNIA steady state and measured over several drive writes.  The cases are the ones
``opsim validate`` prints (opsim.validation.oracle_cases).  The models are evaluated at the
OP the garbage collector actually sees (``op.effective``: physical pages outside the
free-block reserve over user pages).  Tolerance: 1% (issue 2).
"""

import pytest

from opsim import models, simulate
from opsim.validation import MIN_BLOCKS, oracle_cases

TOL = 0.01
CASES = oracle_cases()


@pytest.mark.slow
@pytest.mark.parametrize("label,op,cfg,model,source", CASES, ids=[f"{c[0]}-op{c[1]}" for c in CASES])
def test_simulator_matches_model(label, op, cfg, model, source):
    r = simulate(cfg)
    assert r.drive["blocks"] >= MIN_BLOCKS
    ss = r.steady_state
    assert ss["reached"], f"no steady state: {ss}"
    assert ss["round"] < r.measure_window["first_round"], "measurement window starts before steady state"
    m = model(r.op["effective"])
    err = abs(r.waf - m) / m
    assert err < TOL, f"{label} op={op}: sim {r.waf:.4f} model {m:.4f} ({source})"


def test_cases_cover_the_issue():
    labels = {(c[0], c[1]) for c in CASES}
    for b in (32, 64, 256):
        for op in (0.07, 0.28, 0.50):
            assert (f"greedy b={b}", op) in labels
    assert any(lab.startswith("d-choices d=2") for lab, _ in labels)
    assert any(lab.startswith("d-choices d=10") for lab, _ in labels)
    assert any("hot/cold" in lab for lab, _ in labels)


def test_hot_cold_skew_hurts_fifo():
    """Desnoyers: LRW cannot exploit skew; the 80/20 model predicts more WA than uniform."""
    for op in (0.07, 0.28):
        assert models.waf_lrw_classes(op, [(0.2, 0.8), (0.8, 0.2)]) > models.waf_fifo(op)


def test_models_agree_at_their_limits():
    def close(a, b):
        return abs(a - b) / b

    for op in (0.07, 0.28, 0.5):
        assert close(models.waf_dchoices(op, 64, 1), models.waf_random(op)) < 1e-6
        assert close(models.waf_dchoices(op, 64, 2000), models.waf_greedy(op, 64)) < 2e-3
        assert close(models.waf_lrw_classes(op, [(1.0, 1.0)]), models.waf_fifo(op)) < 1e-9
        # greedy is best, random worst; greedy approaches FIFO as b grows (Hu 2009, Van Houdt 2013)
        g32, g256 = models.waf_greedy(op, 32), models.waf_greedy(op, 256)
        assert g32 < g256 < models.waf_fifo(op) < models.waf_random(op)
    x, _wa = models.greedy_occupancy(0.28, 64)
    assert abs(x.sum() - 1) < 1e-12
    assert abs((x * range(65)).sum() - 64 / 1.28) < 1e-9


def test_the_greedy_figure_is_its_occupancy_s_whatever_is_remembered():
    """``waf_greedy`` (remembered per (op, b), the occupancy not built) is the WA of
    ``greedy_occupancy`` to the last bit, at a block's b and a superblock's; the terms kept
    per b are read-only, so no caller can change a later figure."""
    for b in (16, 64, 3072, 196608):
        for op in (0.01, 0.07, 0.28, 2.0):
            x, wa = models.greedy_occupancy(op, b)
            assert models.waf_greedy(op, b) == wa == models.waf_greedy(op, b)
            assert abs(x.sum() - 1) < 1e-9
            assert abs((x * range(b + 1)).sum() - b / (1 + op)) < 1e-6 * b
    for t in models._greedy_terms(64):
        with pytest.raises(ValueError):
            t[0] = 0


def test_models_reject_bad_input():
    from opsim.errors import InputError

    with pytest.raises(InputError):
        models.waf_greedy(0, 64)
    with pytest.raises(InputError):
        models.waf_greedy(0.1, 1)
    with pytest.raises(InputError):
        models.waf_lrw_classes(0.1, [(0.5, 0.5), (0.2, 0.5)])
