"""Temperature separation's validation table (opsim.validation.separation): the ideal
separation bound reduces to greedy's mean field when the classes are alike and lies below it
under skew; the table's rows run on a small preset scale model (the separations and the
analytic row, zipf against uniform as a signed share)."""

import pytest

from opsim import models
from opsim.validation import separation


def test_ideal_separation_bound():
    op, b = 0.156, 256
    # classes of the same temperature: the best split is even, the pools are the drive
    assert separation.ideal_separation(op, b, hot=0.5, hot_writes=0.5) == pytest.approx(
        models.waf_greedy(op, b), rel=1e-4
    )
    # skew separated ideally beats uniform writes, and a stronger skew more
    u = models.waf_greedy(op, b)
    a, c = separation.ideal_separation(op, b), separation.ideal_separation(op, b, hot=0.1, hot_writes=0.9)
    assert c < a < 0.8 * u


@pytest.mark.slow
def test_table_rows(monkeypatch):
    monkeypatch.setattr(separation, "RUN", separation.RUN | {"warmup_drive_writes": 1, "measure_drive_writes": 1})
    rows = separation.rows("micron-7450-pro-960gb", 1024)
    assert [r["separation"] for r in rows] == ["none", "gc-age", "sepbit"]
    for r in rows:
        assert r["zipf / uniform"] == pytest.approx(r["zipf 0.8"] / r["uniform"] - 1)
        assert all(r[w] > 1.0 for w in separation.WORKLOADS)
    a = separation.analytic("micron-7450-pro-960gb", 1024)
    assert a["uniform"] > 1.0 and "ideal" in a["hot-cold 20/80"]
