"""Config errors carry how the config does not fit the schema (issue 13): callers such as the
sweep's grid checks tell a key the schema lacks, a value of the wrong type and a value out of
range apart by class, never by reading the message."""

from __future__ import annotations

import pytest

import opsim.sim
from opsim.errors import ConfigError, SchemaError, UnknownKeyError

BASE = {"user_capacity": "64MiB", "op": 0.28, "pages_per_block": 64}


@pytest.mark.parametrize(
    "config,cls,key",
    [
        ({"drive": BASE | {"bogus": 1}}, UnknownKeyError, "drive.bogus"),
        ({"drive": BASE, "ftl": {"gc": "nope"}}, SchemaError, "ftl.gc"),
        ({"drive": BASE, "ftl": {"d": "x"}}, SchemaError, "ftl.d"),
        ({"preset": "no-such-drive"}, SchemaError, "preset"),
    ],
)
def test_schema_errors_have_their_class(config, cls, key):
    with pytest.raises(cls) as e:
        opsim.sim.describe(config)
    assert e.value.key == key
    assert isinstance(e.value, ConfigError) and e.value.exit_code == 2
    assert str(e.value) == f"{key}: {e.value.detail}"


def test_a_value_out_of_range_is_a_plain_config_error():
    with pytest.raises(ConfigError) as e:
        opsim.sim.describe({"drive": BASE | {"op": -1}})
    assert type(e.value) is ConfigError and e.value.key == "drive.op"
