"""Single-zone WAF against zone size with the interval of the priors of what a datasheet never
states (issue 38, item 3): ``opsim.validation.single_zone``."""

from __future__ import annotations

import pytest

from opsim.calibrate.structure import SUPERBLOCK
from opsim.sim import describe
from opsim.validation import single_zone as S
from opsim.validation.zoned import base_config, gc_unit_bytes

PRESET = "micron-7450-pro-960gb"


def test_the_alternatives_are_the_superblock_and_floor_priors():
    cfg = base_config(PRESET)
    alts = S.alternatives(cfg)
    # the preset's own structure first, then every superblock multiple with and without a floor
    assert alts[0][1] == cfg
    assert len(alts) == 2 * len(SUPERBLOCK)
    units = sorted({gc_unit_bytes(c) for _, c in alts})
    own = gc_unit_bytes(cfg)
    assert units == sorted(int(own * m) for m in SUPERBLOCK)
    floors = {c.get("ftl", {}).get("meta_writes", 0.0) for _, c in alts}
    assert min(floors) == 0.0 and 0.1 < max(floors) < 0.25
    # the config the preset describes is untouched
    assert describe(cfg)["drive"]["gc_unit"]["bytes"] == own


@pytest.mark.slow
def test_a_zone_smaller_than_a_superblock_has_an_interval_holding_the_preset():
    cfg = base_config(PRESET)
    unit = gc_unit_bytes(cfg)
    (row,) = S.table(cfg, [unit // 2], 256, 1.0, 1.0)
    assert row["low"] <= row["waf"] <= row["high"]
    assert row["waf"] > 1.05  # a zone of half a superblock shares its units with other zones
    assert row["high"] > row["waf"] * 1.1 and len(row["runs"]) == 2 * len(SUPERBLOCK)
