"""How `make test` spreads the suite over the machine's cores (pytest-xdist, ``-n auto --dist loadgroup``).

Every test runs on its own, on whichever worker is free, except:

* the tests that use the machine itself: the QEMU guests of tests/vm/ (a guest under software
  emulation keeps a core busy for minutes) and the real fio runs (``@pytest.mark.fio``).  They form
  one group, run one after the other on one worker, so they never compete with each other; being the
  largest unit of work, the group starts first, and the other worker(s) take the rest meanwhile;
* the tests that calibrate the checked-in preset inputs (:data:`CALIBRATION_FILES`): one process
  calibrates each input once (``opsim.calibrate.presets.calibration`` keeps it), not once on each
  worker;
* the tests of a file that builds a fixture once for the file (``scope="module"``: a calibration, a
  validation table): they run on one worker, which builds it once, not once on every worker that
  happens to run one of them (:data:`SHARED_FIXTURE_FILES`).

pytest-xdist's own ``xdist_group`` mark does not work with pytest 9 (xdist 3.8 renames the item's
``_nodeid``, which pytest 9 no longer reads), so the group is named here by file, for the scheduler,
which sees only test ids: :data:`IO_FILES`.  ``check_io_files`` (called at collection) keeps the
list true: a fio test outside those files is an error."""

from __future__ import annotations

import pytest

#: the group of the tests that use the machine (guests, real fio)
IO_GROUP = "io"

#: test files whose tests all run in the io group: the guests, and every file with a fio test
IO_FILES = (
    "tests/vm/",
    "tests/calibrate/test_calibrate_roundtrip.py",
    "tests/measure/test_hardening_measure.py",
    "tests/measure/test_measure_fio.py",
    "tests/measure/test_measure_fio_progress.py",
    "tests/measure/test_measure_schema.py",
    "tests/workload/test_fio_jobs.py",
)

#: the group of the tests that calibrate the preset inputs, and its files
CALIBRATION_GROUP = "calibrations"
CALIBRATION_FILES = (
    "tests/calibrate/test_calibrate.py",
    "tests/calibrate/test_calibrate_presets.py",
    "tests/calibrate/test_calibrate_uncertainty.py",
    "tests/calibrate/test_gc_cost.py",
)


#: test files with a fixture of their own built once for the file: each runs on one worker
SHARED_FIXTURE_FILES = (
    "tests/calibrate/test_calibrate_gc_prior.py",
    "tests/calibrate/test_calibrate_structure.py",
    "tests/commands/test_hardening_output_targets.py",
    "tests/planner/test_advise_interval.py",
    "tests/planner/test_advise_tenants.py",
    "tests/planner/test_advise_trace.py",
    "tests/plots/test_plot_fleet.py",
    "tests/plots/test_plots.py",
    "tests/report/test_report.py",
    "tests/report/test_report_fleet.py",
    "tests/report/test_report_placement.py",
    "tests/sim/test_placement.py",
    "tests/sim/test_pts_iops.py",
    "tests/sim/test_slc_cache.py",
    "tests/smart/test_smart_fdp.py",
    "tests/smart/test_smart_fuzz.py",
    "tests/validation/test_seed_drives.py",
    "tests/validation/test_sk_hynix.py",
    "tests/validation/test_validate_real_drives.py",
)


def group_of(nodeid: str) -> str:
    """The scheduling unit of a test: the io group, the calibrations, its file, or the test itself."""
    if nodeid.startswith(IO_FILES):
        return IO_GROUP
    path = nodeid.split("::", 1)[0]
    if path in CALIBRATION_FILES:
        return CALIBRATION_GROUP
    return path if path in SHARED_FIXTURE_FILES else nodeid


def _shared_fixture_files(items: list) -> set[str]:
    """The files whose tests use a fixture defined in the file itself with a wider scope than a test."""
    files = set()
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        for defs in item._fixtureinfo.name2fixturedefs.values():
            if any(d.scope != "function" and d.baseid == path for d in defs):
                files.add(path)
    return files


def check_io_files(items: list) -> None:
    """Keep the lists true: a fio test outside :data:`IO_FILES`, or a file with a fixture of its own
    wider than a test outside :data:`SHARED_FIXTURE_FILES`, is an error at collection."""
    stray = [i.nodeid for i in items if i.get_closest_marker("fio") and group_of(i.nodeid) != IO_GROUP]
    if stray:
        raise pytest.UsageError(f"fio tests outside xdist_groups.IO_FILES (add their files there): {stray[:5]}")
    unlisted = sorted(f for f in _shared_fixture_files(items) if group_of(f + "::x") == f + "::x")
    if unlisted:
        raise pytest.UsageError(
            f"files with a module-scoped fixture outside xdist_groups.SHARED_FIXTURE_FILES (add them): {unlisted}"
        )


def make_scheduler(config, log):
    """The loadgroup scheduler with :func:`group_of` as its grouping (``pytest_xdist_make_scheduler``)."""
    from xdist.scheduler import LoadScopeScheduling

    class IoGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return IoGroupScheduling(config, log)
