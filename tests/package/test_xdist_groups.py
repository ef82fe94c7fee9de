"""How make test spreads the suite over the cores (tests/xdist_groups.py): the groups, and the
collection check that keeps their file lists true."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

import xdist_groups as xg


def _item(nodeid: str, fixtures: dict | None = None, fio: bool = False) -> SimpleNamespace:
    defs = {name: [SimpleNamespace(scope=scope, baseid=base)] for name, (scope, base) in (fixtures or {}).items()}
    return SimpleNamespace(
        nodeid=nodeid,
        _fixtureinfo=SimpleNamespace(name2fixturedefs=defs),
        get_closest_marker=lambda name: object() if (fio and name == "fio") else None,
    )


def test_guests_and_fio_share_one_group_a_shared_fixture_s_file_is_one_and_the_rest_run_alone():
    assert xg.group_of("tests/vm/test_vm_smart.py::test_x") == xg.IO_GROUP
    assert xg.group_of("tests/measure/test_measure_fio.py::test_y[a]") == xg.IO_GROUP
    f = xg.SHARED_FIXTURE_FILES[0]
    assert xg.group_of(f"{f}::test_a") == xg.group_of(f"{f}::test_b[1]") == f
    assert xg.group_of("tests/sim/test_simulator.py::test_a") == "tests/sim/test_simulator.py::test_a"


def test_the_files_that_calibrate_the_preset_inputs_are_one_group():
    """One worker calibrates each preset input once (opsim.calibrate.presets.calibration caches it)."""
    groups = {xg.group_of(f"{f}::test_a") for f in xg.CALIBRATION_FILES}
    assert groups == {xg.CALIBRATION_GROUP} != {xg.IO_GROUP}
    assert not set(xg.CALIBRATION_FILES) & set(xg.SHARED_FIXTURE_FILES)


def test_a_file_with_an_unlisted_module_fixture_is_an_error_at_collection():
    path = "tests/sim/test_new.py"
    with pytest.raises(pytest.UsageError, match=r"test_new\.py"):
        xg.check_io_files([_item(f"{path}::test_a", {"table": ("module", path)})])
    # a module fixture from a conftest, or a test's own fixture, does not bind the file to a worker
    xg.check_io_files([_item(f"{path}::test_a", {"table": ("module", "tests/sim"), "f": ("function", path)})])


def test_a_fio_test_outside_the_io_files_is_an_error_at_collection():
    with pytest.raises(pytest.UsageError, match="IO_FILES"):
        xg.check_io_files([_item("tests/sim/test_new.py::test_fio", fio=True)])
